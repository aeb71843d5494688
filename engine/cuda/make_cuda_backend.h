// The engine's entry to the CUDA backend, free of CUDA types so engine/runtime can include it. Declared
// only in builds with the CUDA backend (QWENCHAT_HAVE_CUDA_BACKEND).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "generate/backend.h"
#include "model/config.h"
#include "model/weights.h"
#include "qwenchat/kernel_config.h"
#include "qwenchat/result.h"

namespace qc {

struct CudaLoadOptions {
  int n_ctx = 4096;
  KernelConfig kernels;  // probes included
  uint64_t memory_limit = 0;  // EngineOptions::gpu_memory_limit
  std::function<void(uint64_t done, uint64_t total, const std::string& tensor)> progress;  // may be empty
};

// Error "no CUDA device: <reason>" when the runtime finds none; "... does not fit" with the sizes when
// the estimate exceeds the free device memory.
Result<std::unique_ptr<Backend>> make_cuda_backend(const ModelConfig& config, const ModelWeights& weights,
                                                   const CudaLoadOptions& options);

// What a load would put on the device, asked before loading (the app's model panel): the same plan the load
// makes (cuda/device_plan.h), without allocating. Errors as make_cuda_backend's, except that a model that
// does not fit is an estimate with fits = false and the largest context that does.
struct CudaLoadEstimate {
  std::string device;      // the card's name
  uint64_t needs = 0;      // bytes the load allocates on the device
  uint64_t avail = 0;      // free device memory, or the memory limit
  bool fits = false;       // needs + the runtime's reserve <= avail
  int fit_ctx = -1;        // !fits: the largest context that fits (0: none)
  std::string parts;       // "19.23 GiB (weights 15.65, KV cache 2.12 for n_ctx=32768, ...)"
};
Result<CudaLoadEstimate> estimate_cuda_load(const ModelConfig& config, const ModelWeights& weights,
                                            const CudaLoadOptions& options);

}  // namespace qc
