#include "random_weights.h"

#include <cmath>
#include <string>

#include "device_fill.h"
#include "model/quant.h"

namespace qc::bench_app {

Status RandomWeights::fill(const cuda::TensorSlot& t, cudaStream_t s) {
  using cuda::TensorSlot;
  using cuda::WeightRole;
  const uint64_t seed = seed_ * 0x9E3779B97F4A7C15ull + (++n_) * 0x100000001B3ull;
  const size_t n = static_cast<size_t>(t.rows) * static_cast<size_t>(t.cols);
  const double sd = t.role == WeightRole::kEmbedding ? 1.0 : 1.0 / std::sqrt(static_cast<double>(t.cols));
  switch (t.kind) {
    case TensorSlot::Kind::kQ8: {
      const auto d = static_cast<float>(sd / 73.3);
      fill_int8(t.q, static_cast<size_t>(t.rows) * static_cast<size_t>(t.row_stride), seed, s);
      fill_scales_f16(t.d, n / 32, seed ^ 0x5bd1e995ull, 0.8f * d, 1.2f * d, s);
      break;
    }
    case TensorSlot::Kind::kDense:
      if (t.type != DType::kF32)
        return make_error("qwenchat-bench: generated dense weights must be F32, " + t.name + " is " +
                          dtype_name(t.type));
      fill_normal_f32(static_cast<float*>(t.data), n, seed, 0.0f, static_cast<float>(sd), s);
      break;
    case TensorSlot::Kind::kBlock: {
      // Random bytes (quants, packed sub-block scales), then each block's f16 scale fields set so a weight
      // is about sd: typical |weight| = d * (sub-scale ~32, or ~64 for Q6_K's signed bytes) * (quant ~8, or
      // ~16 for Q6_K), so d = sd / 256 (sd / 1024 for Q6_K, sd / 4 for Q4_0/Q5_0's single scale).
      gpu::BlockType bt{};
      if (!cuda::block_type(t.type, &bt))
        return make_error("qwenchat-bench: " + t.name + ": " + dtype_name(t.type) + " is not a block format");
      const size_t blocks = n / static_cast<size_t>(gpu::block_elems(bt));
      const int bytes = gpu::block_bytes(bt);
      auto* base = static_cast<uint8_t*>(t.data);
      fill_int8(reinterpret_cast<int8_t*>(base), blocks * static_cast<size_t>(bytes), seed, s);
      const bool k = gpu::block_elems(bt) == 256, q6 = bt == gpu::BlockType::kQ6_K;
      const double d = sd / (q6 ? 1024.0 : k ? 256.0 : 4.0);
      fill_block_scales_f16(base, blocks, bytes, gpu::block_d_offset(bt), seed ^ 0x5bd1e995ull,
                            static_cast<float>(0.8 * d), static_cast<float>(1.2 * d), s);
      if (gpu::block_dmin_offset(bt) >= 0)
        fill_block_scales_f16(base, blocks, bytes, gpu::block_dmin_offset(bt), seed ^ 0x27d4eb2full,
                              static_cast<float>(0.8 * d), static_cast<float>(1.2 * d), s);
      break;
    }
    case TensorSlot::Kind::kF32Vector: {
      auto* p = static_cast<float*>(t.data);
      switch (t.role) {
        case WeightRole::kSsmA:
          fill_uniform_f32(p, n, seed, -16.0f, -1.0f, s);
          break;
        case WeightRole::kDtBias:  // softplus^-1(dt) ~ log(dt) for dt in [1e-3, 1e-1]
          fill_uniform_f32(p, n, seed, -6.9f, -2.25f, s);
          break;
        case WeightRole::kConv:
          fill_normal_f32(p, n, seed, 0.0f, 0.5f, s);
          break;
        default:
          fill_uniform_f32(p, n, seed, 0.9f, 1.1f, s);
          break;
      }
      break;
    }
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return make_error("qwenchat-bench: fill " + t.name + ": " + cudaGetErrorString(e));
  return Status::success();
}

Status fill_state_random(const std::vector<cuda::CudaProbe::Region>& regions, uint64_t seed, cudaStream_t s) {
  uint64_t i = 0;
  for (const auto& r : regions) {
    const uint64_t sd = seed * 0x9E3779B97F4A7C15ull + (++i) * 0xD6E8FEB86659FD93ull;
    if (r.f16)
      fill_normal_f16(static_cast<uint16_t*>(r.ptr), r.count, sd, 0.0f, 1.0f, s);
    else
      fill_normal_f32(static_cast<float*>(r.ptr), r.count, sd, 0.0f, 0.05f, s);
  }
  const cudaError_t e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) return make_error(std::string("fill_state_random: ") + cudaGetErrorString(e));
  return Status::success();
}

}  // namespace qc::bench_app
