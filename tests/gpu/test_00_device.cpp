// First in the log (files are globbed in name order): which device the GPU tests ran on, or why they skip.
#include <cstdio>

#include "gpu_test_util.h"

namespace qc::gpu::test {
namespace {

TEST(DeviceInfo, Print) {
  QC_REQUIRE_DEVICE();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, dev), cudaSuccess);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf(
      "[ device   ] %s, compute capability %d.%d, %d SMs, %.1f GiB, L2 %.0f MB, driver %d, runtime %d\n",
      p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.l2CacheSize / 1e6,
      driver, runtime);
  EXPECT_GE(p.major, 8) << "the kernels are built for sm_80 and newer";
}

}  // namespace
}  // namespace qc::gpu::test
