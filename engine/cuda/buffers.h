// Device memory of the CUDA backend besides the weights: the recurrent state (GDN states and conv rings,
// one contiguous block so a snapshot is one copy), the GDN state history of a speculative forward (MTP
// models only), the KV caches (f16), and the scratch of one step (activations of up to kMaxTokens token
// rows, outputs, split-K and attention partials). Laid out with Carver like the weights, so the memory
// estimate is the allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/cuda_util.h"
#include "cuda/device_model.h"
#include "gdn.h"
#include "layout.h"
#include "model/config.h"

namespace qc::cuda {

// Activations of up to kMaxTokens token rows: f32 and the quantised words (formats h and hl).
struct QBuf {
  float* f = nullptr;  // [M][ld_f]
  int ld_f = 0;
  int8_t* hi = nullptr;  // [M][ld]
  int8_t* lo = nullptr;
  float* scale = nullptr;  // [M][ld_scale]
  int ld = 0;
  int ld_scale = 0;
  gpu::QActIn in() const { return gpu::QActIn{hi, lo, scale, ld, ld_scale}; }
  gpu::QActOut out(bool hl) const { return gpu::QActOut{hi, hl ? lo : nullptr, scale, ld, ld_scale}; }
};

struct StateBuffers {
  // Recurrent block, copied whole by snapshot(): states [n_gdn][Nv][Dk][Dv], then rings [n_gdn][8][conv_dim].
  float* gdn_state = nullptr;
  float* conv_ring = nullptr;
  size_t state_floats = 0;  // per GDN layer
  size_t ring_floats = 0;   // per GDN layer
  void* recurrent_base = nullptr;
  size_t recurrent_bytes = 0;
  // GDN state history, its own block (not snapshotted): [kMaxTokens-1 slots][n_gdn][Nv][Dk][Dv]. A
  // speculative forward of M tokens writes the states after tokens 0..M-2 into slots 0..M-2 (gdn_step's
  // state_per_token); slot s is laid out exactly like gdn_state, so commit(m) is one copy of slot m-1.
  // Null when the model has no MTP block (no speculation).
  float* gdn_history = nullptr;
  size_t history_slot_floats = 0;  // n_gdn * state_floats: one slot, and the stride between slots
  // KV caches: per attention layer (main layers in order, then the MTP block) [n_kv][n_ctx][head_dim] f16.
  std::vector<uint16_t*> k_cache, v_cache;
  std::vector<size_t> kv_elems;  // elements of one of k/v per layer
  std::vector<int> kv_heads;     // KV heads per layer
  float* state(int gdn_index) const { return gdn_state + static_cast<size_t>(gdn_index) * state_floats; }
  float* ring(int gdn_index) const { return conv_ring + static_cast<size_t>(gdn_index) * ring_floats; }
  // Layer gdn_index's state in history slot 0 (slot s is history_slot_floats * s further on).
  float* history(int gdn_index) const {
    return gdn_history ? gdn_history + static_cast<size_t>(gdn_index) * state_floats : nullptr;
  }
};

struct Scratch {
  int* step = nullptr;      // [8]: position, then kMaxTokens token ids (main model)
  int* mtp_step = nullptr;  // [8]: position, token (MTP block)
  float* h = nullptr;       // [M][H] residual stream
  QBuf x;                   // K = H: normed layer inputs; the final norm's quantised words
  float* proj = nullptr;    // [M][n_proj] input-projection outputs (and gate|up when not fused)
  int n_proj = 0;
  QBuf mix;                 // K = max(GDN inner, n_head*head_dim): mixer outputs
  QBuf ffn;                 // K = n_ff: SwiGLU outputs
  float* hidden = nullptr;  // [M][H] post-norm hidden state (returned)
  float* logits = nullptr;  // [M][n_vocab]
  float* split = nullptr;   // split-K partials: kMaxSplitK * M * max N
  float* attn_q = nullptr;
  float* attn_partials = nullptr;
  float* norms = nullptr;  // [n_layer] probes
  // MTP block (one token row)
  float* mtp_e = nullptr;       // [H] embedding
  QBuf mtp_cat;                 // K = 2H
  float* mtp_hin = nullptr;     // [H] main model's hidden (input)
  float* mtp_x = nullptr;       // [H] the block's residual stream
  float* mtp_hidden = nullptr;  // [H]
  float* mtp_logits = nullptr;  // [n_vocab]
};

inline constexpr int kMaxSplitK = 16;  // KernelConfig::split_k upper bound: sizes the split-K partials
inline constexpr int kMinCtxBucket = 256;

// Attention is launched with a host-side context hint that sizes its split grid; graphs are captured
// per bucket: the smallest power of two >= need (at least kMinCtxBucket), capped at n_ctx.
int ctx_bucket(int need, int n_ctx);

// with_history: lay out the GDN state history (MTP models only); without it the speculative forward is
// not available and MTP verification falls back to snapshot + restore + re-run.
Status layout_state(const ModelConfig& c, const DeviceModel& m, int n_ctx, Carver& recurrent, Carver& history,
                    Carver& kv, StateBuffers* out, bool with_history = true);
Status layout_scratch(const ModelConfig& c, const DeviceModel& m, int sm_count, Carver& carver, Scratch* out);

// Bytes of device memory the backend needs, by part. `history` is the GDN state history of the
// speculative forward (MTP models: kMaxTokens - 1 copies of the GDN states, 432 MiB for the 27B).
// `snapshot` is one copy of the recurrent block, allocated on the first snapshot() (the generator no
// longer takes one on this backend; tests and callers of snapshot() do).
struct MemoryEstimate {
  uint64_t weights = 0, kv_cache = 0, recurrent = 0, history = 0, scratch = 0, snapshot = 0;
  uint64_t prefill = 0;          // the prompt path's chunk buffers (cuda/prefill_program.h)
  uint64_t prefill_weights = 0;  // its resident f16 weights (cuda/prefill_weights.h), 0 when per chunk
  uint64_t resident() const {
    return weights + kv_cache + recurrent + history + scratch + prefill + prefill_weights;
  }
  uint64_t total() const { return resident() + snapshot; }
  std::string describe() const;  // "28.9 GiB (weights 27.0, KV cache 1.0 for n_ctx=16384, ...)"
  int n_ctx = 0;
};

// prefill_rows: the prompt path's chunk (0 = no prompt path); prefill_f16: with the f16 GEMM's buffers.
Result<MemoryEstimate> estimate_memory(const ModelConfig& c, const ModelWeights& w, bool have_data, int n_ctx,
                                       bool with_history, int sm_count, int prefill_rows, bool prefill_f16,
                                       gpu::GdnScan gdn_scan);

}  // namespace qc::cuda
