// One warp per 32 outputs: lane j computes h = silu(g) * u (common.cuh's silu, the same expression as the
// gate+up GEMV epilogue) and the warp quantises the block. Elementwise, so the cost is reading 2 and
// writing 1-1.3 floats per element: ~200 KB for the 27B FFN, a latency kernel.
#include "common.cuh"
#include "swiglu.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) swiglu_kernel(const SwigluArgs a) {
  pdl_wait();
  pdl_trigger();
  const int per_row = (a.n + kQBlock - 1) / kQBlock;
  const int b = blockIdx.x * (kThreads / 32) + (threadIdx.x >> 5);
  if (b >= a.m * per_row) return;
  const int m = b / per_row, blk = b - m * per_row, lane = threadIdx.x & 31;
  const int i = blk * kQBlock + lane;
  float h = 0.0f;
  if (i < a.n) h = __fmul_rn(silu(a.gate[m * a.ld_gate + i]), a.up[m * a.ld_up + i]);
  if (a.out && i < a.n) a.out[m * a.ld_out + i] = h;
  if (a.out_q.hi)  // n is a multiple of 32 here (checked by the launcher)
    quantize_block_warp(h, a.out_q.hi + m * a.out_q.ld + blk * kQBlock,
                        a.out_q.lo ? a.out_q.lo + m * a.out_q.ld + blk * kQBlock : nullptr,
                        a.out_q.scale + m * a.out_q.ld_scale + blk);
}

std::string num(long long v) {
  return std::to_string(v);
}

}  // namespace

GpuStatus swiglu(const SwigluArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.gate && a.up, "swiglu: gate and up must be non-null");
  QC_GPU_REQUIRE(a.n > 0 && a.m >= 1 && a.m <= kMaxRows,
                 "swiglu: need n > 0 and M in [1, " + num(kMaxRows) + "], got n=" + num(a.n) + " M=" + num(a.m));
  QC_GPU_REQUIRE(a.ld_gate >= a.n && a.ld_up >= a.n, "swiglu: ld_gate and ld_up must be >= n=" + num(a.n));
  QC_GPU_REQUIRE(a.out || a.out_q.hi, "swiglu: no output requested");
  QC_GPU_REQUIRE(!a.out || a.ld_out >= a.n, "swiglu: ld_out must be >= n=" + num(a.n));
  if (a.out_q.hi) {
    QC_GPU_REQUIRE(a.n % kQBlock == 0, "swiglu: a quantised output needs n multiple of 32, got " + num(a.n));
    QC_GPU_REQUIRE(a.out_q.scale && a.out_q.ld >= a.n && a.out_q.ld_scale >= a.n / kQBlock,
                   "swiglu: out_q needs scale, ld >= n and ld_scale >= n/32 (n=" + num(a.n) + ")");
  }
  const int blocks = a.m * ((a.n + kQBlock - 1) / kQBlock);
  const int warps = kThreads / 32;
  QC_CUDA_CHECK(
      launch_kernel(swiglu_kernel, dim3((blocks + warps - 1) / warps), dim3(kThreads), 0, stream, a.pdl, a));
  QC_LAUNCH_CHECK("swiglu_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
