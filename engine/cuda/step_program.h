// The decode step as a sequence of kernel-layer calls: one forward pass of M <= kMaxTokens tokens through
// the main model, and one pass of the MTP block. The same code runs eagerly on a stream, inside a CUDA
// graph capture, or with per-launch timing (LaunchProfiler) for the benchmark's breakdown.
//
// One layer (QWEN35.md section 2), with the default KernelConfig (fused norm+quantise, fused gate+up):
//   rmsnorm(h, attn_norm) -> x (f32 + quantised)                        1 kernel
//   in_proj: [qkv|z|beta|alpha] or [q+gate|k|v] = W x                   1 GEMV per storage type
//   gdn_step (1 kernel) or attention_decode (prep, split, merge: 3)     -> y (f32 + quantised)
//   h += W_out y  (GEMV residual epilogue, in place)                    1 GEMV
//   rmsnorm(h, post_norm) -> x                                          1
//   gate+up+SwiGLU+quantise (1; unfused: stacked gate|up GEMV + swiglu) -> f
//   h += W_down f                                                       1
// then rmsnorm(h, output_norm) -> hidden (+ quantised) and logits = lm_head . hidden.
// The f32 form of every activation is always written (a few KB; dense weights and the deq variant read
// it); the quantised form when the GEMV variant reads quantised activations.
#pragma once

#include <string>
#include <vector>

#include "cuda/buffers.h"
#include "cuda/cuda_util.h"
#include "cuda/device_model.h"
#include "model/config.h"
#include "qwenchat/kernel_config.h"

namespace qc::cuda {

// Wall time of each kernel-layer call by label, from events around every call (eager passes only; the
// events themselves cost a little and break the PDL overlap between neighbours).
class LaunchProfiler {
 public:
  struct Entry {
    std::string label;
    double ms = 0.0;
    int calls = 0;
  };
  Status begin(const char* label, cudaStream_t s);
  Status end(cudaStream_t s);
  // Synchronises the stream, adds the recorded intervals to the totals and forgets them.
  Status collect(cudaStream_t s);
  const std::vector<Entry>& entries() const { return entries_; }
  void clear() { entries_.clear(); }

 private:
  struct Pending {
    size_t entry;
    size_t ev0, ev1;
  };
  Result<size_t> event();
  std::vector<Event> events_;
  size_t next_event_ = 0;
  std::vector<Pending> pending_;
  std::vector<Entry> entries_;
  size_t open_entry_ = 0;
  size_t open_ev_ = 0;
};

class StepProgram {
 public:
  // kv_ahead: the decode attention's K / V batch (CudaBackendOptions::attention_kv_ahead).
  StepProgram(const ModelConfig& c, const DeviceModel& m, const StateBuffers& st, const Scratch& sc,
              int n_ctx, int kv_ahead)
      : c_(c), m_(m), st_(st), sc_(sc), n_ctx_(n_ctx), kv_ahead_(kv_ahead) {}

  // Main model, M token rows: tokens at sc.step[1..M], positions sc.step[0] + 0..M-1 (device memory).
  // ctx_hint >= position + M sizes the attention grid (a graph captured with it replays for any position
  // below it). Writes sc.logits [M][V], sc.hidden [M][H] and, with cfg.probes, sc.norms. keep_states
  // (speculative forward; needs st.gdn_history): every GDN layer also writes its state after tokens
  // 0..M-2 into history slots 0..M-2 -- a different program, so a different graph.
  Status enqueue_main(int m, int ctx_hint, const KernelConfig& cfg, cudaStream_t s, LaunchProfiler* prof,
                      bool keep_states = false) const;
  // MTP block: token sc.mtp_step[1] at position sc.mtp_step[0], main-model hidden in sc.mtp_hin. Writes
  // sc.mtp_logits [V] and sc.mtp_hidden [H].
  Status enqueue_mtp(int ctx_hint, const KernelConfig& cfg, cudaStream_t s, LaunchProfiler* prof) const;

  // Whether the FFN runs the fused gate+up kernel under cfg (tile variants on an all-Q8_0 gate|up).
  bool fused_gate_up(const DevLayer& L, const KernelConfig& cfg) const;

  struct Run;  // one pass's settings (step_program.cpp)

 private:
  // One decoder layer, step by step as QWEN35.md section 2 writes it (step_program.cpp).
  Status layer(Run& r, const DevLayer& L, float* h, const int* d_pos, int m, int ctx_hint) const;
  // Its steps that take more than one GEMV: the two mixers and the SwiGLU FFN's gate and up.
  Status gated_deltanet(Run& r, const DevLayer& L, const int* d_pos, int m) const;
  Status gated_attention(Run& r, const DevLayer& L, const int* d_pos, int m, int ctx_hint) const;
  Status swiglu_gate_up(Run& r, const DevLayer& L, int m) const;
  Status norm(Run& r, const float* x, const float* w, int m, const QBuf& out) const;
  Status site(Run& r, const char* label, const Site& s, const QBuf& in, int m, float* y, int ld_y,
              const float* residual) const;

  const ModelConfig& c_;
  const DeviceModel& m_;
  const StateBuffers& st_;
  const Scratch& sc_;
  int n_ctx_;
  int kv_ahead_;
};

}  // namespace qc::cuda
