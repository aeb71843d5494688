// One block, fixed-order sum of squares (common.cuh), correctly rounded square root.
#include "common.cuh"
#include "probe.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) probe_kernel(const ProbeArgs a) {
  __shared__ float scratch[32];
  pdl_wait();
  pdl_trigger();
  float ss = 0.0f;
  for (int i = threadIdx.x; i < a.n; i += kThreads) ss = __fmaf_rn(a.x[i], a.x[i], ss);
  const float total = block_sum(ss, scratch);
  if (threadIdx.x == 0) a.out[a.index] = __fsqrt_rn(total);
}

}  // namespace

GpuStatus probe_l2(const ProbeArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.x && a.out, "probe_l2: x and out must be non-null");
  QC_GPU_REQUIRE(a.n > 0 && a.index >= 0, "probe_l2: need n > 0 and index >= 0, got n=" +
                                              std::to_string(a.n) + " index=" + std::to_string(a.index));
  QC_CUDA_CHECK(launch_kernel(probe_kernel, dim3(1), dim3(kThreads), 0, stream, a.pdl, a));
  QC_LAUNCH_CHECK("probe_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
