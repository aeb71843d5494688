// Kernel of gemm_dense.h: grid (ceil(N / 8), ceil(M / kRows)), 8 warps, warp w owns weight row
// blockIdx.x * 8 + w and the block's kRows token rows; each lane walks k = lane, lane + 32, ... with one
// FMA chain per token row, then the warp reduces each chain.
#include "common.cuh"
#include "gemm_dense.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRows = 16;

template <DenseType T>
__device__ __forceinline__ float weight(const void* p, size_t i) {
  if constexpr (T == DenseType::kF32) return static_cast<const float*>(p)[i];
  if constexpr (T == DenseType::kF16) return h2f(static_cast<const uint16_t*>(p)[i]);
  return bf2f(static_cast<const uint16_t*>(p)[i]);
}

template <DenseType T>
__global__ void __launch_bounds__(kThreads) gemm_dense_kernel(const GemmDenseArgs a) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int n = blockIdx.x * kWarps + warp;
  const int m0 = blockIdx.y * kRows;
  const int rows = min(kRows, a.m - m0);
  if (n >= a.n) return;  // warp-uniform; no block-level synchronisation below
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  const size_t wrow = static_cast<size_t>(n) * a.ld_w;
  for (int k = lane; k < a.k; k += 32) {
    const float wv = weight<T>(a.w, wrow + k);
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (r < rows) acc[r] = __fmaf_rn(wv, a.x[static_cast<size_t>(m0 + r) * a.ld_x + k], acc[r]);
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float s = warp_sum(acc[r]);
    if (r < rows && lane == 0) {
      const size_t m = static_cast<size_t>(m0 + r);
      const float base = a.residual ? a.residual[m * a.ld_residual + n] : 0.0f;
      a.y[m * a.ld_y + n] = a.residual ? __fadd_rn(base, s) : s;
    }
  }
}

}  // namespace

GpuStatus gemm_dense(const GemmDenseArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.w && a.x && a.y, "gemm_dense: w, x and y must be non-null");
  QC_GPU_REQUIRE(a.n > 0 && a.k > 0, "gemm_dense: n and k must be positive, got n=" + std::to_string(a.n) +
                                         " k=" + std::to_string(a.k));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxRows, "gemm_dense: M must be in [1, " + std::to_string(kMaxRows) +
                                                  "], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(
      a.ld_w >= a.k && a.ld_x >= a.k && a.ld_y >= a.n,
      "gemm_dense: need ld_w, ld_x >= k=" + std::to_string(a.k) + " and ld_y >= n=" + std::to_string(a.n));
  QC_GPU_REQUIRE(!a.residual || a.ld_residual >= a.n,
                 "gemm_dense: ld_residual must be >= n=" + std::to_string(a.n));
  const dim3 grid((a.n + kWarps - 1) / kWarps, (a.m + kRows - 1) / kRows);
  switch (a.type) {
    case DenseType::kF32:
      gemm_dense_kernel<DenseType::kF32><<<grid, kThreads, 0, stream>>>(a);
      break;
    case DenseType::kF16:
      gemm_dense_kernel<DenseType::kF16><<<grid, kThreads, 0, stream>>>(a);
      break;
    case DenseType::kBF16:
      gemm_dense_kernel<DenseType::kBF16><<<grid, kThreads, 0, stream>>>(a);
      break;
  }
  QC_LAUNCH_CHECK("gemm_dense_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
