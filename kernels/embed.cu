// One thread per output element, grid (ceil(dim/256), M); block-quantised tables one thread per 32-value
// piece (block_quant.cuh). A row is a few KB; the lookup is launch latency.
#include "block_quant.cuh"
#include "common.cuh"
#include "embed.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) embed_kernel(const EmbedArgs a) {
  pdl_wait();
  pdl_trigger();
  const int m = blockIdx.y;
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= a.dim) return;
  const int tok = a.d_tokens[m];
  float v = __int_as_float(0x7fc00000);  // NaN for an id out of range
  if (tok >= 0 && tok < a.n_vocab) {
    const size_t row = static_cast<size_t>(tok);
    switch (a.type) {
      case EmbedType::kQ8:
        v = __fmul_rn(h2f(a.q8.d[row * (a.dim / kQBlock) + i / kQBlock]),
                      static_cast<float>(a.q8.q[row * a.q8.row_stride + i]));
        break;
      case EmbedType::kF32:
        v = static_cast<const float*>(a.dense)[row * a.dim + i];
        break;
      case EmbedType::kF16:
        v = h2f(static_cast<const uint16_t*>(a.dense)[row * a.dim + i]);
        break;
      case EmbedType::kBF16:
        v = bf2f(static_cast<const uint16_t*>(a.dense)[row * a.dim + i]);
        break;
      case EmbedType::kBlock:
        break;  // embed_block_kernel
    }
  }
  a.out[m * a.ld_out + i] = v;
}

__global__ void __launch_bounds__(kThreads) embed_block_kernel(const EmbedArgs a) {
  pdl_wait();
  pdl_trigger();
  const int m = blockIdx.y;
  const int p = blockIdx.x * kThreads + threadIdx.x;
  if (p >= a.dim / 32) return;
  const int tok = a.d_tokens[m];
  float v[32];
  if (tok >= 0 && tok < a.n_vocab) {
    decode_piece_any(a.blocks.type, piece_block(a.blocks, tok, p), p % block_pieces(a.blocks.type), v);
  } else {
#pragma unroll
    for (int j = 0; j < 32; ++j) v[j] = __int_as_float(0x7fc00000);  // NaN for an id out of range
  }
  float* out = a.out + static_cast<size_t>(m) * a.ld_out + p * 32;
#pragma unroll
  for (int j = 0; j < 32; ++j) out[j] = v[j];
}

}  // namespace

GpuStatus embed(const EmbedArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.d_tokens && a.out, "embed: d_tokens and out must be non-null");
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxRows,
                 "embed: M must be in [1, " + std::to_string(kMaxRows) + "], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.dim > 0 && a.n_vocab > 0, "embed: dim and n_vocab must be positive");
  QC_GPU_REQUIRE(a.ld_out >= a.dim, "embed: ld_out must be >= dim=" + std::to_string(a.dim) + ", got " +
                                        std::to_string(a.ld_out));
  if (a.type == EmbedType::kQ8) {
    QC_GPU_REQUIRE(a.q8.q && a.q8.d, "embed: Q8 table pointers are null");
    QC_GPU_REQUIRE(a.q8.rows == a.n_vocab && a.q8.cols == a.dim && a.dim % kQBlock == 0,
                   "embed: Q8 table must be n_vocab x dim (" + std::to_string(a.n_vocab) + " x " +
                       std::to_string(a.dim) + ", dim multiple of 32), got " + std::to_string(a.q8.rows) +
                       " x " + std::to_string(a.q8.cols));
  } else if (a.type == EmbedType::kBlock) {
    QC_GPU_REQUIRE(a.blocks.data, "embed: block table pointer is null");
    QC_GPU_REQUIRE(a.blocks.rows == a.n_vocab && a.blocks.cols == a.dim && a.dim % block_elems(a.blocks.type) == 0,
                   std::string("embed: ") + block_type_name(a.blocks.type) + " table must be n_vocab x dim (" +
                       std::to_string(a.n_vocab) + " x " + std::to_string(a.dim) + ", dim a multiple of " +
                       std::to_string(block_elems(a.blocks.type)) + "), got " + std::to_string(a.blocks.rows) +
                       " x " + std::to_string(a.blocks.cols));
    QC_GPU_REQUIRE(block_elems(a.blocks.type) != 256 || aligned16(a.blocks.data),
                   "embed: K-quant tables must start 16-byte aligned");
    const int pieces = a.dim / 32;
    QC_CUDA_CHECK(launch_kernel(embed_block_kernel, dim3((pieces + kThreads - 1) / kThreads, a.m), dim3(kThreads), 0,
                                stream, a.pdl, a));
    QC_LAUNCH_CHECK("embed_block_kernel", stream);
    return GpuStatus::success();
  } else {
    QC_GPU_REQUIRE(a.dense, "embed: dense table pointer is null");
  }
  QC_CUDA_CHECK(launch_kernel(embed_kernel, dim3((a.dim + kThreads - 1) / kThreads, a.m), dim3(kThreads), 0,
                              stream, a.pdl, a));
  QC_LAUNCH_CHECK("embed_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
