// The one interface both backends implement (reference on the CPU, cuda on the GPU). Same calls, so any
// run can be diffed between them: load (construction), reset, forward N tokens, MTP draft, snapshot/restore,
// and the speculative forward + commit(m) that MTP verification uses to roll back without recomputation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/config.h"
#include "qwenchat/kernel_config.h"
#include "qwenchat/result.h"
#include "qwenchat/stats.h"

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
  // Memory the copy holds (device or host), for budgets (runtime/prefix_cache.h); 0 = not known.
  virtual uint64_t bytes() const { return 0; }
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

  // ---- The prompt path (optional): prompt chunks on kernels of their own ----
  // Most tokens one prefill() call takes; 0 = none, prompts go through forward() in chunks of max_batch().
  virtual int prefill_rows() const { return 0; }
  // Positions the prompt path's calls must start at for its bits not to depend on how a prompt is split:
  // a call starting at a multiple of prefill_grid() gives the bits of an uninterrupted run; one starting
  // elsewhere gives the same values within the rounding (the CUDA backend's chunked Gated DeltaNet works
  // on an absolute grid of 64 positions). The generator ends its chunks and the prefix cache keeps its
  // states on this grid. 1 = any position.
  virtual int prefill_grid() const { return 1; }
  // The grid point at or before pos (where a kept state or a chunk's end goes).
  int prefill_grid_floor(int pos) const {
    const int g = prefill_grid() > 1 ? prefill_grid() : 1;
    return pos / g * g;
  }
  // Runs prompt tokens at pos .. pos+n-1 (1 <= n <= prefill_rows(), same checks as forward()) and returns
  // the last token's logits and hidden state only (n_tokens == 1). The path's bits differ from forward()'s
  // (other kernels) but do not depend on how a prompt is split into calls starting on prefill_grid(): a
  // state that a prefill reached is reproducible, one that decoded tokens reached is not
  // (runtime/prefix_cache.h keeps to the first).
  // With mtp.entries (and an MTP block) it also writes the MTP cache entries whose next token it knows
  // (generator.cpp's notation: the entry at q comes from x_{q+1} and h_q): q = pos-1 when prev_hidden holds
  // h_{pos-1}, q = pos .. pos+n-2 from the chunk, and q = pos+n-1 when next_token >= 0.
  struct PrefillMtp {
    bool entries = false;
    std::span<const float> prev_hidden;  // empty or [n_embd]
    int32_t next_token = -1;
  };
  virtual Result<StepOutput> prefill(std::span<const int32_t> tokens, int pos, const PrefillMtp& mtp) {
    (void)tokens;
    (void)pos;
    (void)mtp;
    return make_error(info().name + ": no prompt path of its own (prefill_rows() == 0)");
  }

  virtual std::unique_ptr<StateSnapshot> snapshot() const = 0;
  // restore(snapshot()) needs the KV entries of the positions before it still in the caches (same epoch,
  // no other tokens written there since). restore(snapshot_context()) does not: that copy also holds the
  // KV entries of positions [0, position()) (MTP block included), in host memory, and brings the whole
  // context back after reset() or another conversation's tokens. Costs position() x the KV bytes of a
  // position (27B: 64 KB) plus the recurrent state. nullptr: not supported, a pending speculation, or no
  // memory.
  virtual std::unique_ptr<StateSnapshot> snapshot_context() const { return nullptr; }
  virtual Status restore(const StateSnapshot& snap) = 0;

  // ---- Speculative verification (MTP): one weight pass over [t, d1..dk], then keep a prefix ----
  // Most tokens forward_speculative() takes; 0 = the backend cannot keep per-position states, and the
  // generator falls back to snapshot() + forward() + restore() + a re-run of the accepted prefix.
  virtual int max_speculative_tokens() const { return 0; }
  // Runs tokens at pos .. pos+n-1 exactly like forward() (same checks, same outputs, same bits), and also
  // keeps the recurrent state (GDN states, conv windows) after every position, so that commit(m) can
  // keep the first m tokens without running anything again. 1 <= n <= max_speculative_tokens().
  // Afterwards the backend holds a pending speculation: position() == pos + n (as if all were kept) and
  // the only valid calls until commit() are commit(), reset() (which drops the speculation), the const
  // queries and set_kernel_config(); forward(), forward_speculative(), mtp_forward() and restore() return
  // an error and snapshot() returns nullptr. A refused call (position, token, size, a pending speculation)
  // changes nothing.
  virtual Result<StepOutput> forward_speculative(std::span<const int32_t> tokens, int pos) {
    (void)tokens;
    (void)pos;
    return make_error(info().name + ": speculative forward is not supported (max_speculative_tokens() == 0)");
  }
  // Ends the pending speculation keeping its first m tokens (1 <= m <= n): the recurrent state becomes
  // the one after token m-1 -- the exact bits that forward() of those m tokens would have produced -- and
  // position() == pos + m. KV entries at pos+m .. pos+n-1 stay in the caches; nothing reads them before
  // the tokens run at those positions overwrite them. The StepOutput spans of the speculative forward stay
  // valid. layer_norms() keep describing token n-1. An error (no pending speculation, m out of range)
  // leaves the backend as it was.
  virtual Status commit(int m) {
    (void)m;
    return make_error(info().name + ": commit without speculative forward support");
  }

  // Per-layer L2 norm of the hidden state (residual stream) after each main layer, for the last token of
  // the last forward call. Empty when probes are off.
  virtual std::span<const float> layer_norms() const = 0;

  // Kernel settings (GEMV variant, fusions, CUDA graph, probes), applied at the next forward call. The one
  // place a KernelConfig is validated (issue #11: a setting is checked once, where it enters the engine): an
  // invalid one changes nothing and the error names the field. The CPU backends have no kernels to switch;
  // of the config they honour only `probes`.
  Status set_kernel_config(const KernelConfig& config) {
    const std::string bad = config.validate();
    if (!bad.empty()) return make_error("kernel config: " + bad);
    return apply_kernel_config(config);
  }

 protected:
  // set_kernel_config() after validation: the backend takes what it uses of the config (by default nothing).
  virtual Status apply_kernel_config(const KernelConfig& config) {
    (void)config;
    return Status::success();
  }
};

}  // namespace qc
