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
  KernelConfig kernels;
  bool probes = false;
  uint64_t memory_limit = 0;  // EngineOptions::gpu_memory_limit
  std::function<void(uint64_t done, uint64_t total, const std::string& tensor)> progress;  // may be empty
};

// Error "no CUDA device: <reason>" when the runtime finds none; "... does not fit" with the sizes when
// the estimate exceeds the free device memory.
Result<std::unique_ptr<Backend>> make_cuda_backend(const ModelConfig& config, const ModelWeights& weights,
                                                   const CudaLoadOptions& options);

}  // namespace qc
