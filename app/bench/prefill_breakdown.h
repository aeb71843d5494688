// Where a prompt's time goes: device time per phase of the CUDA prompt path (cuda/prefill_profile.h), and
// the cuBLASLt algorithm each projection's shape ran, for a prompt of random tokens from position 0 or after
// a history (prefilled first, not profiled: the second turn's case), against its wall time.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cuda/cuda_backend.h"

namespace qc::bench_app {

// Prints the table under a heading that names `setup` (the GEMM, chunk size and scan, as the caller
// describes them) and returns {"tokens", "after", "phases", "wall_ms", "gemm_algorithms"}; on a failed
// prefill prints the error and returns null. Resets the backend's state.
nlohmann::json profile_prefill(cuda::CudaBackend& backend, int tokens, int after, const std::string& setup);

}  // namespace qc::bench_app
