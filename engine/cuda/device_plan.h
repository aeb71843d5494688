// The memory plan (memory_plan.h) on this machine's device: the device checks, the card's free memory (or
// the user's cap), the plan at the asked context and, when it does not fit, the largest context that does.
// One function for the load (CudaBackend::build, which then allocates what the plan says) and for the
// estimate before loading (make_cuda_backend.h estimate_cuda_load, the app's model panel), so both say
// the same numbers. Touches the device only to query it (count, properties, cudaMemGetInfo).
#pragma once

#include <cstdint>
#include <string>

#include "cuda/cuda_backend.h"
#include "cuda/memory_plan.h"

namespace qc::cuda {

struct DevicePlan {
  MemoryPlanRequest req;  // what was planned (config and weights pointers are the caller's)
  MemoryPlan plan;
  std::string device_name;
  uint64_t total = 0;    // the card's memory
  bool limited = false;  // planned under the user's memory limit
  int fit_ctx = -1;    // plan.fits: -1; otherwise the largest context that fits (rounded down to 256 from
                       // 512 up: a number to type), 0 when none does
  // "the model does not fit in GPU memory: it needs ..." with its hint, for !plan.fits.
  Error does_not_fit() const;
};

// Errors: the weight types (model/cuda_weight_types.h), no device ("no CUDA device: ...", hint: the CPU
// backend), a device index that does not exist, options out of range, a plan that cannot be had as asked.
// A model that does not fit is a DevicePlan with plan.fits = false.
Result<DevicePlan> plan_on_device(const ModelConfig& config, const ModelWeights& weights, bool have_data,
                                  const CudaBackendOptions& options);

}  // namespace qc::cuda
