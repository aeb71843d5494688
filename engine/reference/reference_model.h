// ReferenceModel<T>: the qwen35 forward pass in scalar type T (float or double), implementing qc::Backend.
// One class template so the f32 path and the f64 oracle are the same code. Construct through
// make_reference_backend (reference_backend.h), which validates the weights first; the tests also use
// this class directly.
//
// State (all in T, allocated once at construction):
//   per GDN layer     S [Nv][Dk][Dv] recurrent state, conv window [qkv channels][K-1] (oldest first), and
//                     speculative_tokens - 1 copies of both kept by forward_speculative() for commit()
//   per attention     K, V caches [n_ctx][n_kv][head_dim]; the MTP block has its own pair
// Main-model layer math lives in reference_layers.cpp, the token loop, MTP and state in reference_model.cpp.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "generate/backend.h"
#include "model/config.h"
#include "model/weights.h"
#include "reference/reference_backend.h"
#include "reference/thread_pool.h"

namespace qc::ref {

template <class T>
class ReferenceModel final : public Backend {
 public:
  // `config` and `weights` must have passed validate_reference_model and outlive the model.
  ReferenceModel(const ModelConfig& config, const ModelWeights& weights, const ReferenceOptions& options);

  BackendInfo info() const override;
  const ModelConfig& config() const override { return config_; }
  int n_ctx() const override { return n_ctx_; }
  int position() const override { return pos_; }
  int max_batch() const override { return options_.max_batch; }
  void reset() override;
  Result<StepOutput> forward(std::span<const int32_t> tokens, int pos) override;
  bool has_mtp() const override { return mtp_ != nullptr; }
  Result<StepOutput> mtp_forward(int32_t token, std::span<const float> hidden, int pos) override;
  std::unique_ptr<StateSnapshot> snapshot() const override;
  std::unique_ptr<StateSnapshot> snapshot_context() const override;
  Status restore(const StateSnapshot& snap) override;
  int max_speculative_tokens() const override { return speculative_limit_; }
  Result<StepOutput> forward_speculative(std::span<const int32_t> tokens, int pos) override;
  Status commit(int m) override;
  std::span<const float> layer_norms() const override;

  // FNV-1a 64 over the bits of every GDN state and conv window, in layer order (tests compare the
  // recurrent state of two paths with it).
  uint64_t recurrent_state_hash() const;

  int n_threads() const { return pool_.size(); }
  // Bytes actually allocated (state, scratch, outputs, decoded small weights); equals
  // reference_state_bytes() for the same config and options (a test checks it).
  uint64_t allocated_bytes() const;

 protected:
  Status apply_kernel_config(const KernelConfig& config) override;  // probes only

 private:
  // Norm weights and the other small per-layer vectors, decoded into T once.
  struct SmallWeights {
    std::vector<T> attn_norm, post_norm;  // [H]
    std::vector<T> q_norm, k_norm;        // [head_dim], attention layers
    std::vector<T> conv_taps;             // [qkv channels][K], GDN layers
    std::vector<T> dt_bias, a;            // [Nv]
    std::vector<T> ssm_norm;              // [Dv]
  };
  struct KvCache {
    int n_kv = 0;
    std::vector<T> k, v;  // [n_ctx][n_kv][head_dim]
  };
  struct GdnState {
    std::vector<T> S;       // [Nv][Dk][Dv]
    std::vector<T> window;  // [qkv channels][K-1]
  };
  class Snapshot;

  SmallWeights decode_small(const LayerWeights& lw) const;
  // The checks forward() and forward_speculative() share; `who` prefixes the message.
  Status check_forward(std::span<const int32_t> tokens, int pos, const char* who) const;
  // Runs the checked tokens; after token i < n-1 copies the GDN states into kept_[i] when `keep`.
  StepOutput run_tokens(std::span<const int32_t> tokens, bool keep);
  // One token of the main model at position pos_: logits [n_vocab] and post-norm hidden [H] out.
  void step(int32_t token, float* logits, float* hidden);
  // One decoder layer (QWEN35.md section 2) on the residual stream h at position pos; `kv` is the layer's
  // cache when it is an attention layer, `gdn` its state when recurrent.
  void decoder_layer(const LayerWeights& lw, const SmallWeights& sw, KvCache* kv, GdnState* gdn, int pos,
                     T* h);
  void gated_deltanet(const LayerWeights& lw, const SmallWeights& sw, GdnState& st, const T* x, T* out);
  void gated_attention(const LayerWeights& lw, const SmallWeights& sw, KvCache& kv, int pos, const T* x,
                       T* out);
  void swiglu_ffn(const FfnWeights& w, const T* x, T* out);
  // rmsnorm(h, norm) into hidden_t_, then lm_head into logits; both copied out as float.
  void head(const T* h, const std::vector<T>& norm, float* logits, float* hidden);
  void embed(int32_t token, T* out) const;

  const ModelConfig& config_;
  const ModelWeights& weights_;
  ReferenceOptions options_;
  int n_ctx_ = 0;
  int pos_ = 0;
  uint64_t epoch_ = 0;  // bumped by reset(); restore() rejects snapshots of an earlier epoch
  mutable ThreadPool pool_;

  // Decoded small weights.
  std::vector<SmallWeights> small_;  // per main layer
  std::vector<T> output_norm_;       // [H]
  std::vector<T> inv_freq_;          // [rope_dims / 2]: theta^(-2i/rope_dims)
  struct Mtp {
    std::vector<T> enorm, hnorm, head_norm;  // [H]; head_norm = shared_head_norm or output_norm
    SmallWeights layer;
    KvCache kv;
  };
  std::unique_ptr<Mtp> mtp_;

  // State.
  std::vector<KvCache*> kv_of_;    // per main layer: its cache or nullptr
  std::vector<GdnState*> gdn_of_;  // per main layer: its state or nullptr
  std::vector<KvCache> kv_;        // attention layers in order
  std::vector<GdnState> gdn_;      // GDN layers in order
  // Speculative forward: kept_[i] = every GDN layer's state after token i of the pending speculation
  // (i < speculative_limit_ - 1; the state after the last token is gdn_ itself).
  int speculative_limit_ = 0;
  std::vector<std::vector<GdnState>> kept_;
  int spec_n_ = 0;    // tokens of the pending speculation, 0 = none
  int spec_pos_ = 0;  // its first position

  // Scratch in T.
  std::vector<T> h_, xn_, mix_, ffn_out_;  // [H]
  std::vector<T> qkv_, conv_out_;          // [qkv channels]
  std::vector<T> z_, gdn_o_;               // [Nv*Dv]
  std::vector<T> beta_, g_;                // [Nv] (projection outputs, then gates in place)
  std::vector<T> delta_scratch_;           // [Nv][Dv]
  std::vector<T> q_gate_;                  // [n_head][2*head_dim]
  std::vector<T> k_, v_;                   // [max n_kv * head_dim]
  std::vector<T> attn_o_;                  // [n_head * head_dim]
  std::vector<T> scores_;                  // [n_head][n_ctx]
  std::vector<T> ffn_gate_, ffn_up_;       // [n_ff]
  std::vector<T> cat_;                     // [2H] MTP input
  std::vector<T> hidden_t_;                // [H]
  std::vector<T> logits_t_;                // [n_vocab]

  // Outputs (float, as StepOutput hands them out).
  std::vector<float> logits_out_;      // [max_batch][n_vocab]
  std::vector<float> hidden_out_;      // [max_batch][H]
  std::vector<float> mtp_logits_out_;  // [n_vocab]
  std::vector<float> mtp_hidden_out_;  // [H]
  std::vector<float> layer_norms_;     // [n_layer]; written while probes_ is on
  bool probes_ = false;                // KernelConfig::probes (set_kernel_config)
  bool norms_valid_ = false;           // layer_norms_ describe the last token
};

extern template class ReferenceModel<float>;
extern template class ReferenceModel<double>;

}  // namespace qc::ref
