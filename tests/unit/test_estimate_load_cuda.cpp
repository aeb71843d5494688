// estimate_load for the CUDA backend (engine.h LoadEstimate's device part): with a device it is the load's
// own plan (cuda/device_plan.h), so it agrees with what the load then allocates and with the load's "does
// not fit" answer; without one (CI) the estimate still succeeds and says why the device part is missing.
#include <cstdio>

#include <gtest/gtest.h>

#include "runtime/engine.h"
#include "temp_dir.h"
#include "worker_test_model.h"

namespace qc {
namespace {

TEST(EstimateLoadCuda, IsTheDevicePlanOrSaysWhyNot) {
  test::TempDir dir;
  const std::string model = dir.file("tiny.gguf");
  ASSERT_TRUE(test::write_chat_model(model, test::cuda_test_shape(), 3).ok());  // a shape CUDA runs
  EngineOptions o;
  o.model_path = model;
  o.n_ctx = 256;
  o.backend = BackendKind::kCuda;
  auto e = estimate_load(o);
  ASSERT_TRUE(e.ok()) << e.error().describe();
  if (e->device.empty()) {
    EXPECT_TRUE(e->device_error.rfind("no CUDA device", 0) == 0 ||
                e->device_error.find("not available in this build") != std::string::npos)
        << e->device_error;
    GTEST_SKIP() << "no device part here: " << e->device_error;
  }
  EXPECT_TRUE(e->device_error.empty()) << e->device_error;
  EXPECT_TRUE(e->device_fits);
  EXPECT_EQ(e->device_fit_ctx, -1);
  {
    auto engine = Engine::open(o);
    ASSERT_TRUE(engine.ok()) << engine.error().describe();
    // The load allocates the plan's resident parts; the estimate adds the one state snapshot it reserves.
    const uint64_t loaded = (*engine)->backend().info().memory_bytes;
    std::printf("[ estimate ] %s: estimate %llu bytes, loaded %llu\n", e->device.c_str(),
                static_cast<unsigned long long>(e->device_bytes), static_cast<unsigned long long>(loaded));
    EXPECT_GE(e->device_bytes, loaded);
  }
  // 64 MiB is below the runtime's reserve: nothing fits, and the load says the same.
  o.gpu_memory_limit = uint64_t{64} << 20;
  auto small = estimate_load(o);
  ASSERT_TRUE(small.ok()) << small.error().describe();
  EXPECT_FALSE(small->device_fits);
  EXPECT_EQ(small->device_fit_ctx, 0);
  auto refused = Engine::open(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().hint.find("the weights alone do not fit"), std::string::npos) << refused.error().describe();
}

}  // namespace
}  // namespace qc
