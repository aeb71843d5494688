// "deq": Q8_0 weights against f32 activations. The weight traffic is byte for byte that of the int8 forms;
// what changes is arithmetic (16 int->float conversions and 16 FMAs per 16 weights instead of 4 dp4a) and
// 4x the activation bytes. It removes the activation quantisation error entirely, which makes it the
// accuracy reference among the variants. Measured on H200 with the seed's version: 1290-1980 GB/s, bound by
// the conversions (PERFORMANCE.md). Its own bit-identity class.
//
// Per lane and segment: p = sum_j w_j * x_j over its 16 weights (j ascending, an FMA chain), then
// acc = fma(p, f16(d), acc) once per half-block; the lanes are summed by warp_sum.
#include "gemv_q8_internal.h"
#include "gemv_q8_lane.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Sign-extended byte `i` of a 32-bit word, kept in registers (no aliasing through memory).
__device__ __forceinline__ float byte_f(int w, int i) {
  return __int2float_rn((w << (24 - 8 * i)) >> 24);
}

__device__ __forceinline__ float dot4(int w, float4 x, float acc) {
  acc = __fmaf_rn(byte_f(w, 0), x.x, acc);
  acc = __fmaf_rn(byte_f(w, 1), x.y, acc);
  acc = __fmaf_rn(byte_f(w, 2), x.z, acc);
  return __fmaf_rn(byte_f(w, 3), x.w, acc);
}

template <int M>
__global__ void __launch_bounds__(kThreads)
    gemv_deq_kernel(const int8_t* wq, const uint16_t* wd, int n, int k, int w_stride, const float* x,
                    int ld_x, float* y, int ld_y, const float* res, int ld_res) {
  pdl_wait();
  pdl_trigger();
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarps + (threadIdx.x >> 5);
  if (row >= n) return;
  const int nseg = num_segments(k);
  const int8_t* wrow = wq + static_cast<size_t>(row) * w_stride + 16 * lane;
  const uint16_t* drow = wd + static_cast<size_t>(row) * (k / kQBlock);
  float acc[M];
#pragma unroll
  for (int m = 0; m < M; ++m) acc[m] = 0.0f;
  for (int s = 0; s < nseg; ++s) {
    if (!lane_active(s, lane, k)) continue;
    const int4 w = __ldg(reinterpret_cast<const int4*>(wrow + s * kSegBytes));
    const float d = h2f(__ldg(drow + s * kSegBlocks + lane / 2));
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const float4* x4 = reinterpret_cast<const float4*>(x + m * ld_x + s * kSegBytes + 16 * lane);
      float p = 0.0f;
      p = dot4(w.x, x4[0], p);
      p = dot4(w.y, x4[1], p);
      p = dot4(w.z, x4[2], p);
      p = dot4(w.w, x4[3], p);
      acc[m] = __fmaf_rn(p, d, acc[m]);
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) {
    const float v = warp_sum(acc[m]);
    if (lane == m) y[m * ld_y + row] = res ? __fadd_rn(v, res[m * ld_res + row]) : v;
  }
}

}  // namespace

GpuStatus launch_gemv_deq(const GemvQ8Args& a, cudaStream_t stream) {
  const int n = a.w.rows;
  const dim3 grid((n + kWarps - 1) / kWarps);
  cudaError_t e = cudaErrorInvalidValue;
#define QC_DEQ_CASE(M)                                                                                       \
  case M:                                                                                                    \
    e = launch_kernel(gemv_deq_kernel<M>, grid, dim3(kThreads), 0, stream, a.pdl, a.w.q, a.w.d, n, a.w.cols, \
                      a.w.row_stride, a.x_f32, a.ld_x_f32, a.y, a.ld_y, a.residual, a.ld_residual);          \
    break;
  switch (a.m) {
    QC_DEQ_CASE(1)
    QC_DEQ_CASE(2)
    QC_DEQ_CASE(3)
    QC_DEQ_CASE(4)
    default:
      break;
  }
#undef QC_DEQ_CASE
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_deq_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_deq_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu::detail
