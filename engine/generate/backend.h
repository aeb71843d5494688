// The one interface both backends implement (reference on the CPU, cuda on the GPU). Same calls, so any
// run can be diffed between them: load (construction), reset, forward N tokens, MTP draft, snapshot/restore.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/config.h"
#include "qwenchat/kernel_config.h"
#include "qwenchat/result.h"

namespace qc {

// What a forward pass returns. Spans point into the backend's own buffers and stay valid until the next
// call on the backend (no allocation per token).
struct StepOutput {
  int n_tokens = 0;
  int n_vocab = 0;
  int n_embd = 0;
  std::span<const float> logits;  // [n_tokens][n_vocab]
  std::span<const float> hidden;  // [n_tokens][n_embd]: final hidden state after output_norm (MTP input)
};

// Opaque copy of the recurrent state (GDN states, conv windows, position). KV entries past the restored
// position are simply overwritten later, so a snapshot costs the same at any context length.
class StateSnapshot {
 public:
  virtual ~StateSnapshot() = default;
  virtual int position() const = 0;
};

struct BackendInfo {
  std::string name;           // "cpu-f32", "cpu-f64", "cuda"
  std::string device;         // "2 threads", "NVIDIA H200"
  uint64_t memory_bytes = 0;  // state + scratch (+ weights when copied)
  // Read-only bandwidth of the device measured at load (cuda/read_ceiling.h); 0 = not measured (the CPU
  // backend, or a card with no room for the measurement).
  double read_ceiling_gbs = 0.0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual BackendInfo info() const = 0;
  virtual const ModelConfig& config() const = 0;
  virtual int n_ctx() const = 0;     // positions the KV cache holds
  virtual int position() const = 0;  // tokens already processed (next token's position)
  virtual int max_batch() const = 0;  // most tokens one forward() call takes (prompts go in chunks)

  virtual void reset() = 0;  // empty context
  // Runs tokens at positions pos .. pos+n-1. pos must equal position() (the recurrent state has no
  // random access); an error when it does not, when a token id is out of range, or when the context is
  // full. Logits of every token are returned (N>1 = prompt or MTP verification).
  virtual Result<StepOutput> forward(std::span<const int32_t> tokens, int pos) = 0;

  // MTP block (QWEN35.md section 6). `token` is t_{p+1}, `hidden` the post-norm hidden state the main
  // model produced at position p, `pos` = p. Writes the MTP KV cache at p and returns the draft logits
  // ([n_vocab]) for t_{p+2}, plus the MTP block's own normed output (for chained drafts) in hidden.
  // Does not touch the main model's state.
  virtual bool has_mtp() const = 0;
  virtual Result<StepOutput> mtp_forward(int32_t token, std::span<const float> hidden, int pos) = 0;

  virtual std::unique_ptr<StateSnapshot> snapshot() const = 0;
  virtual Status restore(const StateSnapshot& snap) = 0;

  // Per-layer L2 norm of the hidden state (residual stream) after each main layer, for the last token of
  // the last forward call. Empty when probes are off.
  virtual std::span<const float> layer_norms() const = 0;

  // Kernel settings (GEMV variant, fusions, CUDA graph, probes), applied at the next forward call. The CPU
  // backends have no kernels to switch and accept any valid config unchanged.
  virtual Status set_kernel_config(const KernelConfig& config) {
    const std::string bad = config.validate();
    if (!bad.empty()) return make_error("kernel config: " + bad);
    return Status::success();
  }
};

}  // namespace qc
