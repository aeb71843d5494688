// What the app chooses and asks before a load: the backend kinds, the options a load takes (EngineOptions,
// which the worker builds from a LoadModelCommand) and what a load would cost (estimate_load, read from
// the file's header). The loaded engine itself (Engine, make_backend) is internal: engine/runtime/engine.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "qwenchat/kernel_config.h"
#include "qwenchat/result.h"

namespace qc {

enum class BackendKind { kCpu, kCpuF64, kCuda };
const char* backend_kind_name(BackendKind k);  // "cpu", "cpu-f64", "cuda"
Result<BackendKind> parse_backend_kind(const std::string& s);
bool cuda_backend_compiled();  // true when this build includes the CUDA backend

struct EngineOptions {
  std::string model_path;
  BackendKind backend = BackendKind::kCpu;
  int n_ctx = 4096;       // positions of context the backend allocates (clamped to the model's training context)
  int n_threads = 0;      // CPU backend threads; 0 = all cores
  // Per-layer norms (probes) on every backend; GEMV variant, fusions, graph, PDL on the CUDA backend.
  KernelConfig kernels;
  // CUDA backend: device bytes to plan the load against, at most the free memory; 0 = the free memory.
  // Simulates a smaller card (a 24 GB card on the H200); the load error names the largest context that fits.
  uint64_t gpu_memory_limit = 0;
  // Weight upload progress of the CUDA backend (bytes done, total, tensor name); may be empty.
  std::function<void(uint64_t done, uint64_t total, const std::string& tensor)> load_progress;
};

// What loading `options.model_path` with `options` would cost, read from the file's header only (no weight
// is touched): for the GUI's Model tab before Load. state_bytes is the CPU backend's allocation (KV caches,
// Gated DeltaNet states, scratch: exact, reference_state_bytes); the CUDA backend allocates about the same
// state on the device plus a copy of the weights.
struct LoadEstimate {
  uint64_t file_bytes = 0;   // the GGUF, memory-mapped (the weights)
  int n_ctx = 0;             // the context the backend would allocate (options.n_ctx capped at training)
  int n_ctx_train = 0;       // 0 when the file does not say
  uint64_t state_bytes = 0;  // caches and scratch for n_ctx positions
  std::string architecture;
  // Backend kCuda: the device's own plan (what the load would allocate there) or why there is none.
  std::string device;        // the card's name; empty when not planned
  std::string device_error;  // why not ("no CUDA device: ...", "the CUDA backend is not available ...")
  uint64_t device_bytes = 0;  // what the load allocates on the device
  uint64_t device_avail = 0;  // free device memory, or the GPU memory limit
  bool device_fits = false;
  int device_fit_ctx = -1;    // !device_fits: the largest context that fits (0: none)
  uint64_t total_bytes() const { return file_bytes + state_bytes; }
};
Result<LoadEstimate> estimate_load(const EngineOptions& options);

}  // namespace qc
