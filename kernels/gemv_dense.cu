// Dense-weight GEMV. A block of 8 warps; `warps_per_row` (1 or 8) warps share a row. Small N (the 48-row
// GDN projections: 48 x 5120 f32 = 983 KB) needs the whole block on one row, or 48 warps would each walk
// 20 KB with one load in flight; large N uses a warp per row. Each lane reads 16-byte vectors (4 f32 or
// 8 f16/bf16) when rows and x are 16-byte aligned, else scalars; per lane an FMA chain in ascending k, then
// warp_sum, then the row's warps are added in ascending warp order: deterministic.
#include "common.cuh"
#include "gemv_dense.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <DenseType T>
struct Elems;
template <>
struct Elems<DenseType::kF32> {
  static constexpr int kVec = 4;
  __device__ static float get(const void* p, size_t i) { return static_cast<const float*>(p)[i]; }
};
template <>
struct Elems<DenseType::kF16> {
  static constexpr int kVec = 8;
  __device__ static float get(const void* p, size_t i) { return h2f(static_cast<const uint16_t*>(p)[i]); }
};
template <>
struct Elems<DenseType::kBF16> {
  static constexpr int kVec = 8;
  __device__ static float get(const void* p, size_t i) { return bf2f(static_cast<const uint16_t*>(p)[i]); }
};

// The kVec weights of one 16-byte vector as floats.
template <DenseType T>
__device__ __forceinline__ void unpack(int4 raw, float* out) {
  if constexpr (T == DenseType::kF32) {
    out[0] = __int_as_float(raw.x);
    out[1] = __int_as_float(raw.y);
    out[2] = __int_as_float(raw.z);
    out[3] = __int_as_float(raw.w);
  } else {
    const uint32_t words[4] = {static_cast<uint32_t>(raw.x), static_cast<uint32_t>(raw.y),
                               static_cast<uint32_t>(raw.z), static_cast<uint32_t>(raw.w)};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint16_t lo = static_cast<uint16_t>(words[j] & 0xffffu),
                     hi = static_cast<uint16_t>(words[j] >> 16);
      out[2 * j] = T == DenseType::kF16 ? h2f(lo) : bf2f(lo);
      out[2 * j + 1] = T == DenseType::kF16 ? h2f(hi) : bf2f(hi);
    }
  }
}

template <DenseType T, int M, bool kVector>
__global__ void __launch_bounds__(kThreads) gemv_dense_kernel(const GemvDenseArgs a) {
  __shared__ float part[M][kWarps];
  pdl_wait();
  pdl_trigger();
  constexpr int V = Elems<T>::kVec;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wpr = a.warps_per_row;
  const int rows_per_block = kWarps / wpr;
  const int row = blockIdx.x * rows_per_block + warp / wpr;
  const int piece = warp % wpr;
  float acc[M];
#pragma unroll
  for (int m = 0; m < M; ++m) acc[m] = 0.0f;
  if (row < a.n) {
    const size_t base = static_cast<size_t>(row) * a.ld_w;
    int k0 = 0;
    if constexpr (kVector) {
      const int chunk = 32 * V;  // elements per warp-wide vector load
      const int full = a.k / chunk;
      const int esize = T == DenseType::kF32 ? 4 : 2;
      const char* wrow = static_cast<const char*>(a.w) + base * esize;
#pragma unroll 4
      for (int c = piece; c < full; c += wpr) {
        const int k = c * chunk + lane * V;
        float wv[V];
        unpack<T>(__ldg(reinterpret_cast<const int4*>(wrow + static_cast<size_t>(k) * esize)), wv);
#pragma unroll
        for (int m = 0; m < M; ++m) {
#pragma unroll
          for (int j = 0; j < V; j += 4) {
            const float4 xv = *reinterpret_cast<const float4*>(a.x + m * a.ld_x + k + j);
            acc[m] = __fmaf_rn(wv[j], xv.x, acc[m]);
            acc[m] = __fmaf_rn(wv[j + 1], xv.y, acc[m]);
            acc[m] = __fmaf_rn(wv[j + 2], xv.z, acc[m]);
            acc[m] = __fmaf_rn(wv[j + 3], xv.w, acc[m]);
          }
        }
      }
      k0 = full * chunk;
    }
    // Scalar part (the whole row without alignment, else the tail), spread over the row's warps.
    for (int k = k0 + piece * 32 + lane; k < a.k; k += 32 * wpr) {
      const float wv = Elems<T>::get(a.w, base + k);
#pragma unroll
      for (int m = 0; m < M; ++m) acc[m] = __fmaf_rn(wv, a.x[m * a.ld_x + k], acc[m]);
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) acc[m] = warp_sum(acc[m]);
  if (wpr > 1) {
    if (lane < M) {
#pragma unroll
      for (int m = 0; m < M; ++m)
        if (lane == m) part[m][warp] = acc[m];
    }
    __syncthreads();
    if (piece == 0) {
#pragma unroll
      for (int m = 0; m < M; ++m) {
        float s = part[m][warp];
        for (int p = 1; p < wpr; ++p) s = __fadd_rn(s, part[m][warp + p]);
        acc[m] = s;
      }
    }
  }
  if (piece == 0 && row < a.n && lane < M) {
#pragma unroll
    for (int m = 0; m < M; ++m)
      if (lane == m)
        a.y[m * a.ld_y + row] = a.residual ? __fadd_rn(acc[m], a.residual[m * a.ld_residual + row]) : acc[m];
  }
}

template <DenseType T, bool kVector>
cudaError_t launch_m(const GemvDenseArgs& a, dim3 grid, cudaStream_t s) {
  switch (a.m) {
    case 1:
      return launch_kernel(gemv_dense_kernel<T, 1, kVector>, grid, dim3(kThreads), 0, s, a.pdl, a);
    case 2:
      return launch_kernel(gemv_dense_kernel<T, 2, kVector>, grid, dim3(kThreads), 0, s, a.pdl, a);
    case 3:
      return launch_kernel(gemv_dense_kernel<T, 3, kVector>, grid, dim3(kThreads), 0, s, a.pdl, a);
    default:
      return launch_kernel(gemv_dense_kernel<T, 4, kVector>, grid, dim3(kThreads), 0, s, a.pdl, a);
  }
}

template <DenseType T>
cudaError_t launch_t(const GemvDenseArgs& a, bool vec, dim3 grid, cudaStream_t s) {
  return vec ? launch_m<T, true>(a, grid, s) : launch_m<T, false>(a, grid, s);
}

}  // namespace

GpuStatus gemv_dense(const GemvDenseArgs& in, cudaStream_t stream) {
  GemvDenseArgs a = in;
  QC_GPU_REQUIRE(a.w && a.x && a.y, "gemv_dense: w, x and y must be non-null");
  QC_GPU_REQUIRE(a.n > 0 && a.k > 0,
                 "gemv_dense: empty matrix " + std::to_string(a.n) + " x " + std::to_string(a.k));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens,
                 "gemv_dense: M must be in [1, 4], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_w >= a.k && a.ld_x >= a.k && a.ld_y >= a.n,
                 "gemv_dense: need ld_w >= K, ld_x >= K, ld_y >= N (K=" + std::to_string(a.k) +
                     ", N=" + std::to_string(a.n) + ")");
  QC_GPU_REQUIRE(!a.residual || a.ld_residual >= a.n,
                 "gemv_dense: ld_residual must be >= N=" + std::to_string(a.n));
  if (a.warps_per_row == 0) {
    const int sms = device_sm_count();
    a.warps_per_row = a.n < 2 * kWarps * (sms > 0 ? sms : 100) ? kWarps : 1;
  }
  QC_GPU_REQUIRE(a.warps_per_row == 1 || a.warps_per_row == 2 || a.warps_per_row == 4 || a.warps_per_row == 8,
                 "gemv_dense: warps_per_row must be 1, 2, 4 or 8, got " + std::to_string(a.warps_per_row));
  const int esize = a.type == DenseType::kF32 ? 4 : 2;
  const bool vec =
      aligned16(a.w) && aligned16(a.x) && (static_cast<size_t>(a.ld_w) * esize) % 16 == 0 && a.ld_x % 4 == 0;
  const int rows_per_block = kWarps / a.warps_per_row;
  const dim3 grid((a.n + rows_per_block - 1) / rows_per_block);
  cudaError_t e = cudaErrorInvalidValue;
  switch (a.type) {
    case DenseType::kF32:
      e = launch_t<DenseType::kF32>(a, vec, grid, stream);
      break;
    case DenseType::kF16:
      e = launch_t<DenseType::kF16>(a, vec, grid, stream);
      break;
    case DenseType::kBF16:
      e = launch_t<DenseType::kBF16>(a, vec, grid, stream);
      break;
  }
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_dense_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_dense_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
