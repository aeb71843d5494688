// One warp per 32 outputs: lane j computes h = silu(g) * u (common.cuh's silu, the same expression as the
// gate+up GEMV epilogue) and the warp quantises the block. Elementwise, so the cost is reading 2 and
// writing 1-1.3 floats per element: ~200 KB for the 27B FFN, a latency kernel.
#include <algorithm>
#include <cstdint>

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
  if (a.out16 && i < a.n)
    a.out16[static_cast<size_t>(m) * a.ld_out16 + i] =
        f2h(saturate_f16(__fmul_rn(h, ldexpf(1.0f, -a.shift16))));
  if (a.out_q.hi)  // n is a multiple of 32 here (checked by the launcher)
    quantize_block_warp(h, a.out_q.hi + m * a.out_q.ld + blk * kQBlock,
                        a.out_q.lo ? a.out_q.lo + m * a.out_q.ld + blk * kQBlock : nullptr,
                        a.out_q.scale + m * a.out_q.ld_scale + blk);
}

// The f16-only output (the prompt path): four elements per thread, 16-byte loads of gate and up and an
// 8-byte store, instead of a warp per 32 elements with 4-byte loads (measured on the H200 at 2048 rows of
// the 27B FFN: 14.9 ms for the 64 layers with the warp kernel, a third of the read ceiling).
__global__ void __launch_bounds__(kThreads) swiglu_f16_kernel(const SwigluArgs a, float scale) {
  pdl_wait();
  pdl_trigger();
  const int per_row = a.n / 4;
  const size_t total = static_cast<size_t>(a.m) * per_row;
  for (size_t i = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * kThreads) {
    const size_t m = i / per_row;
    const int c = static_cast<int>(i - m * per_row) * 4;
    const float4 g = *reinterpret_cast<const float4*>(a.gate + m * a.ld_gate + c);
    const float4 u = *reinterpret_cast<const float4*>(a.up + m * a.ld_up + c);
    auto h16 = [&](float gv, float uv) -> uint32_t {
      return f2h(saturate_f16(__fmul_rn(__fmul_rn(silu(gv), uv), scale)));
    };
    const uint2 o = make_uint2(h16(g.x, u.x) | (h16(g.y, u.y) << 16), h16(g.z, u.z) | (h16(g.w, u.w) << 16));
    *reinterpret_cast<uint2*>(a.out16 + m * a.ld_out16 + c) = o;
  }
}

bool aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace

GpuStatus swiglu(const SwigluArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.gate && a.up, "swiglu: gate and up must be non-null");
  QC_GPU_REQUIRE(a.n > 0 && a.m >= 1 && a.m <= kMaxRows,
                 "swiglu: need n > 0 and M in [1, " + std::to_string(kMaxRows) +
                     "], got n=" + std::to_string(a.n) + " M=" + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_gate >= a.n && a.ld_up >= a.n,
                 "swiglu: ld_gate and ld_up must be >= n=" + std::to_string(a.n));
  QC_GPU_REQUIRE(a.out || a.out_q.hi || a.out16, "swiglu: no output requested");
  QC_GPU_REQUIRE(!a.out16 || (a.ld_out16 >= a.n && a.shift16 >= -24 && a.shift16 <= 24),
                 "swiglu: out16 needs ld_out16 >= n=" + std::to_string(a.n) + " and shift16 in [-24, 24]");
  QC_GPU_REQUIRE(!a.out || a.ld_out >= a.n, "swiglu: ld_out must be >= n=" + std::to_string(a.n));
  if (a.out_q.hi) {
    QC_GPU_REQUIRE(a.n % kQBlock == 0,
                   "swiglu: a quantised output needs n multiple of 32, got " + std::to_string(a.n));
    QC_GPU_REQUIRE(a.out_q.scale && a.out_q.ld >= a.n && a.out_q.ld_scale >= a.n / kQBlock,
                   "swiglu: out_q needs scale, ld >= n and ld_scale >= n/32 (n=" + std::to_string(a.n) + ")");
  }
  if (a.out16 && !a.out && !a.out_q.hi && a.n % 4 == 0 && a.ld_gate % 4 == 0 && a.ld_up % 4 == 0 &&
      a.ld_out16 % 4 == 0 && aligned(a.gate, 16) && aligned(a.up, 16) && aligned(a.out16, 8)) {
    const size_t items = static_cast<size_t>(a.m) * (a.n / 4);
    const int grid = static_cast<int>(std::min<size_t>((items + kThreads - 1) / kThreads, 65535u * 4u));
    QC_CUDA_CHECK(launch_kernel(swiglu_f16_kernel, dim3(grid), dim3(kThreads), 0, stream, a.pdl, a,
                                ldexpf(1.0f, -a.shift16)));
    QC_LAUNCH_CHECK("swiglu_f16_kernel", stream);
    return GpuStatus::success();
  }
  const int blocks = a.m * ((a.n + kQBlock - 1) / kQBlock);
  const int warps = kThreads / 32;
  QC_CUDA_CHECK(
      launch_kernel(swiglu_kernel, dim3((blocks + warps - 1) / warps), dim3(kThreads), 0, stream, a.pdl, a));
  QC_LAUNCH_CHECK("swiglu_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
