// Grid (2, M): block (half, m) normalises one half of one row with the shared block routine (norm.cuh),
// writing into columns [half*H, half*H + H) of the output.
#include "mtp.h"
#include "norm.cuh"

namespace qc::gpu {
namespace {

constexpr int kThreads = 512;
constexpr int kMaxN = 12 * 1024;

__global__ void __launch_bounds__(kThreads) mtp_concat_kernel(const MtpConcatArgs a) {
  extern __shared__ float buf[];
  __shared__ float scratch[32];
  pdl_wait();
  pdl_trigger();
  const int half = blockIdx.x, m = blockIdx.y;
  const int col = half * a.n;
  NormRow r;
  r.x = half == 0 ? a.e + m * a.ld_e : a.h + m * a.ld_h;
  r.add = nullptr;
  r.x_out = nullptr;
  r.w = half == 0 ? a.enorm : a.hnorm;
  r.out = a.out ? a.out + m * a.ld_out + col : nullptr;
  r.q_hi = a.out_q.hi ? a.out_q.hi + m * a.out_q.ld + col : nullptr;
  r.q_lo = (a.out_q.hi && a.out_q.lo) ? a.out_q.lo + m * a.out_q.ld + col : nullptr;
  r.q_scale = a.out_q.hi ? a.out_q.scale + m * a.out_q.ld_scale + col / kQBlock : nullptr;
  r.n = a.n;
  r.eps = a.eps;
  rmsnorm_row_block(r, buf, scratch);
}

}  // namespace

GpuStatus mtp_concat(const MtpConcatArgs& a, cudaStream_t stream) {
  const std::string n = std::to_string(a.n);
  QC_GPU_REQUIRE(a.e && a.h && a.enorm && a.hnorm, "mtp_concat: e, h, enorm and hnorm must be non-null");
  QC_GPU_REQUIRE(a.n > 0 && a.n <= kMaxN && a.n % kQBlock == 0,
                 "mtp_concat: H must be a multiple of 32 in [32, 12288], got " + n);
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxRows,
                 "mtp_concat: M must be in [1, " + std::to_string(kMaxRows) + "], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_e >= a.n && a.ld_h >= a.n, "mtp_concat: ld_e and ld_h must be >= H=" + n);
  QC_GPU_REQUIRE(a.out || a.out_q.hi, "mtp_concat: no output requested");
  QC_GPU_REQUIRE(!a.out || a.ld_out >= 2 * a.n,
                 "mtp_concat: ld_out must be >= 2H=" + std::to_string(2 * a.n));
  QC_GPU_REQUIRE(
      !a.out_q.hi || (a.out_q.scale && a.out_q.ld >= 2 * a.n && a.out_q.ld_scale >= 2 * a.n / kQBlock),
      "mtp_concat: out_q needs scale, ld >= 2H and ld_scale >= 2H/32 (H=" + n + ")");
  const size_t smem = a.n * sizeof(float);
  if (smem > 40 * 1024)  // beyond the default dynamic limit (the static scratch shares the 48 KB)
    QC_CUDA_CHECK(cudaFuncSetAttribute(mtp_concat_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem)));
  QC_CUDA_CHECK(launch_kernel(mtp_concat_kernel, dim3(2, a.m), dim3(kThreads), smem, stream, a.pdl, a));
  QC_LAUNCH_CHECK("mtp_concat_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
