// Block-quantised GEMV. A block of 8 warps; `warps_per_row` (1 or 8) warps share a row, as in gemv_dense
// (small N needs the whole block on a row, or too few loads are in flight). A lane takes 32-value pieces
// of the row (block_quant.cuh), lane-strided so a warp reads consecutive blocks; per piece it dequantises
// the 32 weights into registers and runs an FMA chain over them for each of the M token rows. Per lane
// the pieces go in ascending k, then warp_sum, then the row's warps in ascending order: deterministic.
//
// What it costs (first version, #16): the activations are f32 and read from L1 per piece, 128 bytes per
// token per 32 weights against 16-26 bytes of weights from DRAM, so M = 4 is L1-bound; an int8-activation
// (dp4a) form like ggml's MMVQ is the next step where the benchmark says so (docs/PERFORMANCE.md).
#include "block_quant.cuh"
#include "common.cuh"
#include "gemv_block.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <BlockType T, int M>
__global__ void __launch_bounds__(kThreads) gemv_block_kernel(const GemvBlockArgs a) {
  __shared__ float part[M][kWarps];
  pdl_wait();
  pdl_trigger();
  constexpr int P = block_pieces(T);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wpr = a.warps_per_row;
  const int row = blockIdx.x * (kWarps / wpr) + warp / wpr;
  const int piece0 = warp % wpr;
  float acc[M];
#pragma unroll
  for (int m = 0; m < M; ++m) acc[m] = 0.0f;
  if (row < a.w.rows) {
    const uint8_t* wrow = a.w.data + static_cast<size_t>(row) * a.w.row_bytes();
    const int pieces = a.w.cols / 32;
    for (int p = piece0 * 32 + lane; p < pieces; p += 32 * wpr) {
      float v[32];
      decode_piece<T>(wrow + static_cast<size_t>(p / P) * block_bytes(T), p % P, v);
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const float4* x = reinterpret_cast<const float4*>(a.x + static_cast<size_t>(m) * a.ld_x + p * 32);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float4 xv = x[j];
          acc[m] = __fmaf_rn(v[4 * j], xv.x, acc[m]);
          acc[m] = __fmaf_rn(v[4 * j + 1], xv.y, acc[m]);
          acc[m] = __fmaf_rn(v[4 * j + 2], xv.z, acc[m]);
          acc[m] = __fmaf_rn(v[4 * j + 3], xv.w, acc[m]);
        }
      }
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) acc[m] = warp_sum(acc[m]);
  if (wpr > 1) {
    if (lane == 0) {
#pragma unroll
      for (int m = 0; m < M; ++m) part[m][warp] = acc[m];
    }
    __syncthreads();
    if (piece0 == 0) {
#pragma unroll
      for (int m = 0; m < M; ++m) {
        float s = part[m][warp];
        for (int q = 1; q < wpr; ++q) s = __fadd_rn(s, part[m][warp + q]);
        acc[m] = s;
      }
    }
  }
  if (piece0 == 0 && row < a.w.rows && lane < M) {
#pragma unroll
    for (int m = 0; m < M; ++m)
      if (lane == m)
        a.y[m * a.ld_y + row] = a.residual ? __fadd_rn(acc[m], a.residual[m * a.ld_residual + row]) : acc[m];
  }
}

template <BlockType T>
cudaError_t launch_m(const GemvBlockArgs& a, dim3 grid, cudaStream_t s) {
  switch (a.m) {
    case 1:
      return launch_kernel(gemv_block_kernel<T, 1>, grid, dim3(kThreads), 0, s, a.pdl, a);
    case 2:
      return launch_kernel(gemv_block_kernel<T, 2>, grid, dim3(kThreads), 0, s, a.pdl, a);
    case 3:
      return launch_kernel(gemv_block_kernel<T, 3>, grid, dim3(kThreads), 0, s, a.pdl, a);
    default:
      return launch_kernel(gemv_block_kernel<T, 4>, grid, dim3(kThreads), 0, s, a.pdl, a);
  }
}

}  // namespace

GpuStatus gemv_block(const GemvBlockArgs& in, cudaStream_t stream) {
  GemvBlockArgs a = in;
  QC_GPU_REQUIRE(a.w.data && a.x && a.y, "gemv_block: w, x and y must be non-null");
  QC_GPU_REQUIRE(a.w.rows > 0 && a.w.cols > 0,
                 "gemv_block: empty matrix " + std::to_string(a.w.rows) + " x " + std::to_string(a.w.cols));
  QC_GPU_REQUIRE(a.w.cols % block_elems(a.w.type) == 0,
                 std::string("gemv_block: K must be a multiple of the ") + block_type_name(a.w.type) +
                     " block (" + std::to_string(block_elems(a.w.type)) + "), got " + std::to_string(a.w.cols));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens, "gemv_block: M must be in [1, 4], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_x >= a.w.cols && a.ld_x % 4 == 0 && aligned16(a.x),
                 "gemv_block: x must be 16-byte aligned with ld_x a multiple of 4 and >= K=" +
                     std::to_string(a.w.cols) + ", got ld_x=" + std::to_string(a.ld_x));
  QC_GPU_REQUIRE(a.ld_y >= a.w.rows, "gemv_block: ld_y must be >= N=" + std::to_string(a.w.rows));
  QC_GPU_REQUIRE(!a.residual || a.ld_residual >= a.w.rows,
                 "gemv_block: ld_residual must be >= N=" + std::to_string(a.w.rows));
  const bool k_types = block_elems(a.w.type) == 256;
  QC_GPU_REQUIRE(!k_types || aligned16(a.w.data),
                 "gemv_block: K-quant weights must start 16-byte aligned (block_quant.cuh loads 16-byte vectors)");
  QC_GPU_REQUIRE(k_types || reinterpret_cast<uintptr_t>(a.w.data) % 2 == 0,
                 "gemv_block: Q4_0/Q5_0 weights must start 2-byte aligned");
  if (a.warps_per_row == 0) {
    const int sms = device_sm_count();
    a.warps_per_row = a.w.rows < 2 * kWarps * (sms > 0 ? sms : 100) ? kWarps : 1;
  }
  QC_GPU_REQUIRE(a.warps_per_row == 1 || a.warps_per_row == 2 || a.warps_per_row == 4 || a.warps_per_row == 8,
                 "gemv_block: warps_per_row must be 1, 2, 4 or 8, got " + std::to_string(a.warps_per_row));
  const int rows_per_block = kWarps / a.warps_per_row;
  const dim3 grid((a.w.rows + rows_per_block - 1) / rows_per_block);
  const cudaError_t e =
      with_block_type(a.w.type, [&](auto type) { return launch_m<decltype(type)::value>(a, grid, stream); });
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_block_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_block_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
