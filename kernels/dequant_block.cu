// One thread per 32-value piece: the piece's loads (block_quant.cuh), 32 conversions, four 16-byte stores.
#include <algorithm>

#include "block_quant.cuh"
#include "common.cuh"
#include "dequant_block.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;

template <BlockType T>
__global__ void __launch_bounds__(kThreads) dequant_block_f16_kernel(const BlockWeights w, int row0, int rows,
                                                                     uint16_t* __restrict__ out, int ld_out) {
  constexpr int P = block_pieces(T);
  const int per_row = w.cols / 32;
  const size_t total = static_cast<size_t>(rows) * per_row;
  const size_t row_bytes = w.row_bytes();
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int r = static_cast<int>(i / per_row), p = static_cast<int>(i % per_row);
    float v[32];
    decode_piece<T>(w.data + static_cast<size_t>(row0 + r) * row_bytes + static_cast<size_t>(p / P) * block_bytes(T),
                    p % P, v);
    uint4* o = reinterpret_cast<uint4*>(out + static_cast<size_t>(r) * ld_out + p * 32);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      uint32_t h[4];
#pragma unroll
      for (int t = 0; t < 4; ++t)
        h[t] = static_cast<uint32_t>(f2h(saturate_f16(v[8 * j + 2 * t]))) |
               (static_cast<uint32_t>(f2h(saturate_f16(v[8 * j + 2 * t + 1]))) << 16);
      o[j] = make_uint4(h[0], h[1], h[2], h[3]);
    }
  }
}

}  // namespace

GpuStatus dequant_block_f16(const BlockWeights& w, int row0, int rows, uint16_t* out, int ld_out,
                            cudaStream_t stream) {
  QC_GPU_REQUIRE(w.data && out, "dequant_block_f16: null pointer");
  QC_GPU_REQUIRE(w.cols > 0 && w.cols % block_elems(w.type) == 0,
                 std::string("dequant_block_f16: K must be a positive multiple of the ") + block_type_name(w.type) +
                     " block, got " + std::to_string(w.cols));
  QC_GPU_REQUIRE(row0 >= 0 && rows >= 1 && row0 + rows <= w.rows,
                 "dequant_block_f16: rows [" + std::to_string(row0) + ", " + std::to_string(row0 + rows) +
                     ") outside the matrix's " + std::to_string(w.rows));
  QC_GPU_REQUIRE(ld_out >= w.cols && ld_out % 8 == 0 && aligned16(out),
                 "dequant_block_f16: ld_out must be >= K and a multiple of 8, out 16-byte aligned");
  QC_GPU_REQUIRE(block_elems(w.type) != 256 || aligned16(w.data),
                 "dequant_block_f16: K-quant weights must start 16-byte aligned");
  const size_t items = static_cast<size_t>(rows) * (w.cols / 32);
  const int grid = static_cast<int>(std::min<size_t>(std::max<size_t>((items + kThreads - 1) / kThreads, 1), 65535u * 4u));
  with_block_type(w.type, [&](auto type) {
    dequant_block_f16_kernel<decltype(type)::value><<<grid, kThreads, 0, stream>>>(w, row0, rows, out, ld_out);
  });
  QC_CUDA_CHECK(cudaGetLastError());
  return GpuStatus::success();
}

}  // namespace qc::gpu
