// What a CUDA load puts in device memory, decided before anything is allocated: the estimate of each part
// (buffers.h estimate_memory, exact to the byte) and the fallbacks that let a model load on a smaller card,
// in this order: without the MTP state history (MTP still exact, slower after a rejection), the prompt path
// on int8 instead of f16 buffers, without the prompt path (prompts at decode speed); and the prompt path's
// resident f16 weights only where a quarter of the card stays free. Host code only (no device call), so a
// 24 GB card can be planned for on any machine (tests/unit/test_cuda_memory_plan.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "cuda/buffers.h"
#include "cuda/cuda_backend.h"

namespace qc::cuda {

// The chunk size a larger prompt chunk falls back to when it does not fit (plan_memory).
inline constexpr int kFallbackPrefillRows = 1024;

struct MemoryPlanRequest {
  const ModelConfig* config = nullptr;
  const ModelWeights* weights = nullptr;
  bool have_data = true;  // views into a file (false: generated weights, judged by name)
  int n_ctx = 4096;
  int sm_count = 132;
  int prefill_rows = 2048;  // asked for; capped at n_ctx, halved to 1024 when it does not fit
  PrefillGemm prefill_gemm = PrefillGemm::kAuto;
  PrefillWeights prefill_weights = PrefillWeights::kAuto;
  gpu::GdnScan gdn_scan = gpu::GdnScan::kToken;  // CudaBackendOptions::gdn_scan (its scratch)
  bool cublaslt = false;    // the toolkit's libcublasLt loaded (the f16 prompt path needs it)
  std::string cublaslt_why;  // why not, for the errors and notes
  uint64_t avail = 0;        // device bytes to plan against (free memory, or the user's cap)
  uint64_t card = 0;         // the card's total bytes (the resident f16 weights' headroom is a quarter of it)
};

struct MemoryPlan {
  MemoryEstimate mem;
  bool fits = false;  // mem.total() + kMemoryReserve <= avail
  bool with_history = true;
  int prefill_rows = 0;
  bool prefill_f16 = false;
  bool f16_resident = false;
  std::string note;  // what was given up, for the load note ("; "-separated)
};

// The plan. Errors only for what was asked for explicitly and cannot be had (the f16 prompt path without
// cuBLASLt or without room for its buffers, resident f16 weights without room); a model that does not fit
// at all is a plan with fits = false.
Result<MemoryPlan> plan_memory(const MemoryPlanRequest& r);

// The largest context in [1, r.n_ctx] at which plan_memory fits (binary search: every part grows with the
// context), 0 when none does (the weights and fixed buffers alone exceed r.avail).
Result<int> largest_fitting_context(const MemoryPlanRequest& r);

}  // namespace qc::cuda
