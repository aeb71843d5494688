// Kernels of norm_quant.h. RMSNorm: blocks of 512 threads, one per token row (the row in registers or staged
// in shared memory between the reduction and the scaling pass), or for the token path's few rows the row
// split over n / 512 blocks that each reduce it (norm.cuh); quantiser: one warp per 32-element block.
#include "norm.cuh"
#include "norm_quant.h"

namespace qc::gpu {
namespace {

constexpr int kNormThreads = 512;
constexpr int kMaxNormN = 12 * 1024;  // 48 KB of shared memory for the staged row
constexpr size_t kDefaultSmem = 40 * 1024;

// Row m of the arguments as norm.cuh's NormRow.
__device__ NormRow norm_row(const RmsNormArgs& a, int m) {
  NormRow r;
  r.x = a.x + m * a.ld_x;
  r.add = a.add ? a.add + m * a.ld_add : nullptr;
  r.x_out = a.add ? a.x_out + m * a.ld_x_out : nullptr;
  r.w = a.weight;
  r.out = a.out ? a.out + m * a.ld_out : nullptr;
  r.q_hi = a.out_q.hi ? a.out_q.hi + m * a.out_q.ld : nullptr;
  r.q_lo = (a.out_q.hi && a.out_q.lo) ? a.out_q.lo + m * a.out_q.ld : nullptr;
  r.q_scale = a.out_q.hi ? a.out_q.scale + m * a.out_q.ld_scale : nullptr;
  r.n = a.n;
  r.eps = a.eps;
  r.out16 = a.out16 ? a.out16 + static_cast<size_t>(m) * a.ld_out16 : nullptr;
  r.scale16 = ldexpf(1.0f, -a.shift16);
  return r;
}

// One block per row (grid.x = M).
__global__ void __launch_bounds__(kNormThreads) rmsnorm_kernel(const RmsNormArgs a) {
  extern __shared__ float buf[];
  __shared__ float scratch[32];
  pdl_wait();
  pdl_trigger();
  rmsnorm_row_block(norm_row(a, blockIdx.x), buf, scratch);
}

// The row split over blocks (grid.x = slices, grid.y = M; norm.cuh rmsnorm_row_slice): the same bits.
__global__ void __launch_bounds__(kNormThreads) rmsnorm_slice_kernel(const RmsNormArgs a) {
  __shared__ float scratch[32];
  pdl_wait();
  pdl_trigger();
  rmsnorm_row_slice(norm_row(a, blockIdx.y), blockIdx.x, scratch);
}

// Split a row over blocks only for the token path's few rows without the residual add: the prompt path's
// hundreds of rows already fill the card one block a row, and a split there would multiply its reads of x
// by n / 512; x_out aliasing x (the in-place add) would let one block's store reach another's sum.
bool split_rows(const RmsNormArgs& a) {
  return !a.add && a.m <= kMaxTokens && a.n <= kNormRegs * kNormThreads;
}

constexpr int kQuantThreads = 256;

__global__ void __launch_bounds__(kQuantThreads) quantize_kernel(const QuantizeArgs a) {
  pdl_wait();
  pdl_trigger();
  const int blocks_per_row = a.n / kQBlock;
  const int b = blockIdx.x * (kQuantThreads / 32) + (threadIdx.x >> 5);
  if (b >= a.m * blocks_per_row) return;
  const int m = b / blocks_per_row, blk = b - m * blocks_per_row;
  const int lane = threadIdx.x & 31;
  const float v = a.x[m * a.ld_x + blk * kQBlock + lane];
  int8_t* hi = a.out.hi + m * a.out.ld + blk * kQBlock;
  int8_t* lo = a.out.lo ? a.out.lo + m * a.out.ld + blk * kQBlock : nullptr;
  quantize_block_warp(v, hi, lo, a.out.scale + m * a.out.ld_scale + blk);
}

GpuStatus check_qout(const char* who, const QActOut& q, int n) {
  if (!q.hi) return GpuStatus::success();
  QC_GPU_REQUIRE(n % kQBlock == 0,
                 std::string(who) + ": a quantised output needs n multiple of 32, got " + std::to_string(n));
  QC_GPU_REQUIRE(q.scale, std::string(who) + ": out_q.scale is null");
  QC_GPU_REQUIRE(q.ld >= n && q.ld_scale >= n / kQBlock,
                 std::string(who) + ": out_q ld must be >= n=" + std::to_string(n) +
                     " and ld_scale >= n/32, got " + std::to_string(q.ld) + ", " +
                     std::to_string(q.ld_scale));
  return GpuStatus::success();
}

}  // namespace

GpuStatus rmsnorm(const RmsNormArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.x && a.weight, "rmsnorm: x and weight must be non-null");
  QC_GPU_REQUIRE(a.n > 0 && a.n <= kMaxNormN,
                 "rmsnorm: n must be in [1, " + std::to_string(kMaxNormN) + "], got " + std::to_string(a.n));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxRows,
                 "rmsnorm: M must be in [1, " + std::to_string(kMaxRows) + "], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_x >= a.n,
                 "rmsnorm: ld_x must be >= n=" + std::to_string(a.n) + ", got " + std::to_string(a.ld_x));
  QC_GPU_REQUIRE(!a.add || (a.x_out && a.ld_add >= a.n && a.ld_x_out >= a.n),
                 "rmsnorm: the residual add needs x_out and ld_add, ld_x_out >= n=" + std::to_string(a.n));
  QC_GPU_REQUIRE(a.out || a.out_q.hi || a.add || a.out16, "rmsnorm: no output requested");
  QC_GPU_REQUIRE(!a.out16 || (a.ld_out16 >= a.n && a.shift16 >= -24 && a.shift16 <= 24),
                 "rmsnorm: out16 needs ld_out16 >= n=" + std::to_string(a.n) + " and shift16 in [-24, 24]");
  QC_GPU_REQUIRE(!a.out || a.ld_out >= a.n,
                 "rmsnorm: ld_out must be >= n=" + std::to_string(a.n) + ", got " + std::to_string(a.ld_out));
  QC_GPU_TRY(check_qout("rmsnorm", a.out_q, a.n));
  if (split_rows(a)) {
    const int slices = (a.n + kNormThreads - 1) / kNormThreads;
    QC_CUDA_CHECK(
        launch_kernel(rmsnorm_slice_kernel, dim3(slices, a.m), dim3(kNormThreads), 0, stream, a.pdl, a));
    QC_LAUNCH_CHECK("rmsnorm_slice_kernel", stream);
    return GpuStatus::success();
  }
  const size_t smem = a.n * sizeof(float);
  if (smem > kDefaultSmem)  // beyond the default dynamic limit (the static scratch shares the 48 KB)
    QC_CUDA_CHECK(cudaFuncSetAttribute(rmsnorm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem)));
  QC_CUDA_CHECK(launch_kernel(rmsnorm_kernel, dim3(a.m), dim3(kNormThreads), smem, stream, a.pdl, a));
  QC_LAUNCH_CHECK("rmsnorm_kernel", stream);
  return GpuStatus::success();
}

GpuStatus quantize_act(const QuantizeArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.x && a.out.hi, "quantize_act: x and out.hi must be non-null");
  QC_GPU_REQUIRE(a.n > 0, "quantize_act: n must be positive, got " + std::to_string(a.n));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxRows, "quantize_act: M must be in [1, " + std::to_string(kMaxRows) +
                                                  "], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_x >= a.n, "quantize_act: ld_x must be >= n=" + std::to_string(a.n) + ", got " +
                                    std::to_string(a.ld_x));
  QC_GPU_TRY(check_qout("quantize_act", a.out, a.n));
  const int blocks = a.m * (a.n / kQBlock);
  const int warps = kQuantThreads / 32;
  QC_CUDA_CHECK(launch_kernel(quantize_kernel, dim3((blocks + warps - 1) / warps), dim3(kQuantThreads), 0,
                              stream, a.pdl, a));
  QC_LAUNCH_CHECK("quantize_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
