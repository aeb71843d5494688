// The CUDA backend's measurement interface, for the benchmark (app/bench) and the GPU tests only: what the
// load chose, the bytes a token reads, the state regions the benchmark fills with random data, a position set
// without running the tokens before it, timed replays of the step graphs, the graph's kernel count, one eager
// step timed per kernel-layer call, the prompt path's per-phase profile, and a backend over weights generated
// on the device. The runtime never uses it: CudaBackend (cuda_backend.h) carries only what qc::Backend and
// its construction need and lets this class in as a friend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda/cuda_backend.h"

namespace qc::cuda {

class CudaProbe {
 public:
  CudaProbe() = delete;

  // ---- construction ----
  // Weights generated on the device by `source` (the benchmark): `described` carries names, types and
  // shapes only (describe_generated_weights).
  static Result<std::unique_ptr<CudaBackend>> create_generated(const ModelConfig& config,
                                                               const ModelWeights& described,
                                                               WeightSource& source,
                                                               const CudaBackendOptions& options);

  // ---- what the load chose ----
  static const MemoryEstimate& memory(const CudaBackend& b) { return b.mem_; }
  // The prompt path's GEMM as loaded: "f16", "int8" or "off" (the load note says why not f16).
  static const char* prefill_gemm(const CudaBackend& b) {
    return b.pb_.rows == 0 ? "off" : b.gemm_f16_ ? "f16" : "int8";
  }
  // Where the f16 GEMM's weights come from: "resident" (prefill_weights.h), "per chunk", or "-" (no f16).
  static const char* prefill_weights(const CudaBackend& b) {
    return b.pb_.rows == 0 || !b.gemm_f16_ ? "-" : b.mem_.prefill_weights > 0 ? "resident" : "per chunk";
  }

  // ---- bytes ----
  // Weight bytes a decoded token reads: every matrix and vector except the embedding table, of which one
  // row (lm_head counted once, also when tied).
  static uint64_t weight_bytes_per_token(const CudaBackend& b);
  // KV-cache bytes the attention layers read for a token at position pos (positions 0..pos, K and V).
  static uint64_t kv_bytes_per_token(const CudaBackend& b, int pos);
  // Recurrent-state bytes a step reads and writes (GDN states, once per step whatever M).
  static uint64_t recurrent_bytes_per_step(const CudaBackend& b);
  struct Region {
    void* ptr;
    size_t count;
    bool f16;  // else f32
  };
  // KV caches (f16) and GDN states (f32): what the benchmark fills with random data.
  static std::vector<Region> state_regions(const CudaBackend& b);

  // ---- driving the backend ----
  // Moves to `pos` without running the tokens before it (the benchmark's long-context runs).
  static Status set_position_unchecked(CudaBackend& b, int pos);
  // Per-phase device time of the following prefill() calls (cuda/prefill_profile.h; null: off).
  static void set_prefill_profile(CudaBackend& b, PrefillProfile* p) {
    if (b.prefill_) b.prefill_->set_profile(p);
  }
  // Seconds per step of `reps` back-to-back steps of M tokens at the current position (the graph replayed,
  // or eager launches with cuda_graph off), median of `trials`. The recurrent state advances, the
  // position does not; no host copies.
  // keep_states: the verification step of forward_speculative (also writes the per-position GDN states;
  // needs an MTP model, which has the history block).
  static Result<double> time_steps(CudaBackend& b, int m, int reps, int trials, bool keep_states = false);
  // The same for the MTP block's draft step (one token, graph or eager per the config).
  static Result<double> time_mtp_steps(CudaBackend& b, int reps, int trials);
  // Kernel nodes of the M-token step's graph at the current position: kernel boundaries per step.
  static Result<int> graph_kernel_nodes(CudaBackend& b, int m);
  // One eager M-token step with every kernel-layer call timed by label.
  static Result<std::vector<LaunchProfiler::Entry>> profile_step(CudaBackend& b, int m);

 private:
  // Median seconds per step of `reps` back-to-back steps (after a warm-up), the step inputs already uploaded.
  static Result<double> time_replays(CudaBackend& b, CudaBackend::Kind kind, int m, int ctx_hint, int reps,
                                     int trials);
};

}  // namespace qc::cuda
