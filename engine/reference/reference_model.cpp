// ReferenceModel<T>: construction (all allocation happens here), the token loop, the MTP block
// (QWEN35.md section 6), snapshots, the speculative forward and commit(). The layer math is in
// reference_layers.cpp.
#include "reference/reference_model.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "reference/ops.h"

namespace qc::ref {

namespace {

// A small weight (norm, bias, conv taps) decoded whole into T; validation guaranteed the element count.
template <class T>
std::vector<T> decode_all(const TensorView& w) {
  std::vector<T> out(static_cast<size_t>(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r) decode_row_as(w, r, out.data() + r * w.cols);
  return out;
}

template <class T>
void to_float(const std::vector<T>& in, float* out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = static_cast<float>(in[i]);
}

}  // namespace

template <class T>
class ReferenceModel<T>::Snapshot final : public StateSnapshot {
 public:
  int position() const override { return pos; }
  uint64_t bytes() const override {
    uint64_t b = 0;
    for (const GdnState& g : gdn) b += (g.S.size() + g.window.size()) * sizeof(g.S[0]);
    for (size_t i = 0; i < k.size(); ++i) b += (k[i].size() + v[i].size()) * sizeof(T);
    return b;
  }
  const ReferenceModel* owner = nullptr;
  uint64_t epoch = 0;
  int pos = 0;
  std::vector<GdnState> gdn;
  // snapshot_context(): the KV entries of positions [0, pos) of every cache (main layers, then MTP).
  bool with_kv = false;
  std::vector<std::vector<T>> k, v;
};

template <class T>
typename ReferenceModel<T>::SmallWeights ReferenceModel<T>::decode_small(const LayerWeights& lw) const {
  SmallWeights s;
  s.attn_norm = decode_all<T>(lw.attn_norm);
  s.post_norm = decode_all<T>(lw.post_norm);
  if (lw.recurrent) {
    s.conv_taps = decode_all<T>(lw.gdn.conv1d);
    s.dt_bias = decode_all<T>(lw.gdn.dt_bias);
    s.a = decode_all<T>(lw.gdn.a);
    s.ssm_norm = decode_all<T>(lw.gdn.norm);
  } else {
    s.q_norm = decode_all<T>(lw.attn.q_norm);
    s.k_norm = decode_all<T>(lw.attn.k_norm);
  }
  return s;
}

template <class T>
ReferenceModel<T>::ReferenceModel(const ModelConfig& config, const ModelWeights& weights,
                                  const ReferenceOptions& options)
    : config_(config), weights_(weights), options_(options), n_ctx_(options.n_ctx), pool_(options.n_threads) {
  const auto H = static_cast<size_t>(config.n_embd);
  const auto V = static_cast<size_t>(config.n_vocab);
  const auto ctx = static_cast<size_t>(n_ctx_);
  const auto hd = static_cast<size_t>(config.head_dim);
  const auto C = static_cast<size_t>(config.ssm_qkv_dim());
  const auto d_inner = static_cast<size_t>(config.ssm_d_inner());
  const auto Nv = static_cast<size_t>(config.ssm_n_v_heads);
  const auto K = static_cast<size_t>(config.ssm_conv_kernel);

  // Small weights and RoPE frequencies inv_freq_i = theta^(-2i/rope_dims), computed in T.
  for (const LayerWeights& lw : weights.layers) small_.push_back(decode_small(lw));
  output_norm_ = decode_all<T>(weights.output_norm);
  for (int i = 0; i < config.rope_dims / 2; ++i) {
    inv_freq_.push_back(std::pow(static_cast<T>(config.rope_theta),
                                 -static_cast<T>(2 * i) / static_cast<T>(config.rope_dims)));
  }

  // State: one KV cache per attention layer, one GDN state per recurrent layer.
  size_t max_kv = 0;
  int n_attn = 0;
  int n_gdn = 0;
  for (int il = 0; il < config.n_layer; ++il) (weights.layers[il].recurrent ? n_gdn : n_attn) += 1;
  kv_.resize(static_cast<size_t>(n_attn));
  gdn_.resize(static_cast<size_t>(n_gdn));
  int ia = 0;
  int ig = 0;
  for (int il = 0; il < config.n_layer; ++il) {
    if (weights.layers[il].recurrent) {
      GdnState& g = gdn_[ig++];
      g.S.assign(Nv * static_cast<size_t>(config.ssm_head_k_dim) * static_cast<size_t>(config.ssm_head_v_dim),
                 T(0));
      g.window.assign(C * (K - 1), T(0));
      gdn_of_.push_back(&g);
      kv_of_.push_back(nullptr);
    } else {
      KvCache& c = kv_[ia++];
      c.n_kv = config.n_kv_heads(il);
      c.k.assign(ctx * static_cast<size_t>(c.n_kv) * hd, T(0));
      c.v.assign(ctx * static_cast<size_t>(c.n_kv) * hd, T(0));
      max_kv = std::max(max_kv, static_cast<size_t>(c.n_kv));
      kv_of_.push_back(&c);
      gdn_of_.push_back(nullptr);
    }
  }
  // Per-position copies for commit() after a speculative forward (same shapes as gdn_).
  speculative_limit_ = speculative_token_limit(options);
  kept_.assign(static_cast<size_t>(std::max(speculative_limit_ - 1, 0)), gdn_);
  if (weights.mtp) {
    mtp_ = std::make_unique<Mtp>();
    mtp_->enorm = decode_all<T>(weights.mtp->enorm);
    mtp_->hnorm = decode_all<T>(weights.mtp->hnorm);
    mtp_->head_norm =
        weights.mtp->shared_head_norm.present() ? decode_all<T>(weights.mtp->shared_head_norm) : output_norm_;
    mtp_->layer = decode_small(weights.mtp->layer);
    mtp_->kv.n_kv = config.n_kv_heads(config.n_layer);
    mtp_->kv.k.assign(ctx * static_cast<size_t>(mtp_->kv.n_kv) * hd, T(0));
    mtp_->kv.v.assign(ctx * static_cast<size_t>(mtp_->kv.n_kv) * hd, T(0));
    max_kv = std::max(max_kv, static_cast<size_t>(mtp_->kv.n_kv));
  }

  // Scratch.
  for (std::vector<T>* v : {&h_, &xn_, &mix_, &ffn_out_, &hidden_t_}) v->assign(H, T(0));
  qkv_.assign(C, T(0));
  conv_out_.assign(C, T(0));
  z_.assign(d_inner, T(0));
  gdn_o_.assign(d_inner, T(0));
  beta_.assign(Nv, T(0));
  g_.assign(Nv, T(0));
  delta_scratch_.assign(d_inner, T(0));
  q_gate_.assign(static_cast<size_t>(config.n_head) * 2 * hd, T(0));
  k_.assign(max_kv * hd, T(0));
  v_.assign(max_kv * hd, T(0));
  attn_o_.assign(static_cast<size_t>(config.n_head) * hd, T(0));
  scores_.assign(static_cast<size_t>(config.n_head) * ctx, T(0));
  ffn_gate_.assign(static_cast<size_t>(config.n_ff), T(0));
  ffn_up_.assign(static_cast<size_t>(config.n_ff), T(0));
  cat_.assign(2 * H, T(0));
  logits_t_.assign(V, T(0));

  // Outputs.
  logits_out_.assign(static_cast<size_t>(options.max_batch) * V, 0.0f);
  hidden_out_.assign(static_cast<size_t>(options.max_batch) * H, 0.0f);
  if (mtp_) {
    mtp_logits_out_.assign(V, 0.0f);
    mtp_hidden_out_.assign(H, 0.0f);
  }
  // Always there (n_layer floats), so that probes switch on between tokens with nothing allocated.
  layer_norms_.assign(static_cast<size_t>(config.n_layer), 0.0f);
}

template <class T>
BackendInfo ReferenceModel<T>::info() const {
  BackendInfo b;
  b.name = std::is_same_v<T, double> ? "cpu-f64" : "cpu-f32";
  b.device = std::to_string(pool_.size()) + (pool_.size() == 1 ? " thread" : " threads");
  b.memory_bytes = allocated_bytes();
  return b;
}

template <class T>
void ReferenceModel<T>::reset() {
  pos_ = 0;
  ++epoch_;
  spec_n_ = 0;
  for (GdnState& g : gdn_) {
    std::fill(g.S.begin(), g.S.end(), T(0));
    std::fill(g.window.begin(), g.window.end(), T(0));
  }
  // KV entries are written before they are read, except when the MTP block is run at a position whose
  // predecessors it never saw; zeroing keeps even that case independent of earlier conversations.
  for (KvCache& c : kv_) {
    std::fill(c.k.begin(), c.k.end(), T(0));
    std::fill(c.v.begin(), c.v.end(), T(0));
  }
  if (mtp_) {
    std::fill(mtp_->kv.k.begin(), mtp_->kv.k.end(), T(0));
    std::fill(mtp_->kv.v.begin(), mtp_->kv.v.end(), T(0));
  }
}

template <class T>
void ReferenceModel<T>::embed(int32_t token, T* out) const {
  decode_row_as(weights_.token_embd, token, out);
}

// h_final = rmsnorm(h, norm);  logits = output . h_final.
template <class T>
void ReferenceModel<T>::head(const T* h, const std::vector<T>& norm, float* logits, float* hidden) {
  rmsnorm(h, norm.data(), config_.n_embd, static_cast<T>(config_.rms_eps), hidden_t_.data());
  matvec(pool_, weights_.output, hidden_t_.data(), logits_t_.data());
  to_float(logits_t_, logits);
  to_float(hidden_t_, hidden);
}

// One token through the main model at position pos_.
template <class T>
void ReferenceModel<T>::step(int32_t token, float* logits, float* hidden) {
  // h = embed(token)
  embed(token, h_.data());
  // h = layer_i(h) for every main layer
  for (int il = 0; il < config_.n_layer; ++il) {
    decoder_layer(weights_.layers[il], small_[il], kv_of_[il], gdn_of_[il], pos_, h_.data());
    if (probes_)
      layer_norms_[il] = static_cast<float>(std::sqrt(dot(h_.data(), h_.data(), config_.n_embd)));
  }
  norms_valid_ = probes_;
  // logits = output . rmsnorm(h, output_norm)
  head(h_.data(), output_norm_, logits, hidden);
  ++pos_;
}

template <class T>
Status ReferenceModel<T>::check_forward(std::span<const int32_t> tokens, int pos, const char* who) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const std::string w = std::string("reference ") + who + ": ";
  if (spec_n_ > 0) {
    return make_error(w + "a speculative forward of " + std::to_string(spec_n_) + " tokens at position " +
                          std::to_string(spec_pos_) + " is pending",
                      "commit(m) it (or reset) first");
  }
  if (n == 0) return make_error(w + "expected at least one token, got none");
  if (pos != pos_) {
    return make_error(w + "position " + std::to_string(pos) + " does not continue the context (expected " +
                          std::to_string(pos_) + ")",
                      "the recurrent state has no random access: restore a snapshot or reset first");
  }
  if (n > options_.max_batch) {
    return make_error(w + std::to_string(n) +
                          " tokens in one call, at most max_batch = " + std::to_string(options_.max_batch),
                      "split the prompt into chunks of max_batch tokens");
  }
  if (pos + n > n_ctx_) {
    return make_error(w + "context full: " + std::to_string(pos) + " + " + std::to_string(n) +
                          " tokens exceed n_ctx = " + std::to_string(n_ctx_),
                      "start a new conversation or raise n_ctx");
  }
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= config_.n_vocab) {
      return make_error(w + "token " + std::to_string(i) + " = " + std::to_string(tokens[i]) +
                        " is outside the vocabulary 0.." + std::to_string(config_.n_vocab - 1));
    }
  }
  return Status::success();
}

template <class T>
StepOutput ReferenceModel<T>::run_tokens(std::span<const int32_t> tokens, bool keep) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t V = config_.n_vocab;
  const int64_t H = config_.n_embd;
  // Tokens one after another: the recurrence makes the prompt equal to N single steps, bit for bit, and
  // the state after token i of a speculative call is the state forward() of tokens 0..i would leave.
  for (int64_t i = 0; i < n; ++i) {
    step(tokens[i], logits_out_.data() + i * V, hidden_out_.data() + i * H);
    if (keep && i + 1 < n) {
      std::vector<GdnState>& dst = kept_[static_cast<size_t>(i)];
      for (size_t g = 0; g < gdn_.size(); ++g) {
        std::copy(gdn_[g].S.begin(), gdn_[g].S.end(), dst[g].S.begin());
        std::copy(gdn_[g].window.begin(), gdn_[g].window.end(), dst[g].window.begin());
      }
    }
  }
  StepOutput out;
  out.n_tokens = static_cast<int>(n);
  out.n_vocab = config_.n_vocab;
  out.n_embd = config_.n_embd;
  out.logits = std::span<const float>(logits_out_.data(), static_cast<size_t>(n * V));
  out.hidden = std::span<const float>(hidden_out_.data(), static_cast<size_t>(n * H));
  return out;
}

template <class T>
Result<StepOutput> ReferenceModel<T>::forward(std::span<const int32_t> tokens, int pos) {
  // Check everything before touching the state, so an error leaves the backend as it was.
  QC_TRY(check_forward(tokens, pos, "forward"));
  return run_tokens(tokens, false);
}

template <class T>
Result<StepOutput> ReferenceModel<T>::forward_speculative(std::span<const int32_t> tokens, int pos) {
  QC_TRY(check_forward(tokens, pos, "forward_speculative"));
  if (static_cast<int64_t>(tokens.size()) > speculative_limit_) {
    return make_error("reference forward_speculative: " + std::to_string(tokens.size()) +
                      " tokens, at most max_speculative_tokens() = " + std::to_string(speculative_limit_));
  }
  StepOutput out = run_tokens(tokens, true);
  spec_n_ = out.n_tokens;
  spec_pos_ = pos;
  return out;
}

template <class T>
Status ReferenceModel<T>::commit(int m) {
  if (spec_n_ == 0) return make_error("reference commit: no speculative forward is pending");
  if (m < 1 || m > spec_n_) {
    return make_error("reference commit: m = " + std::to_string(m) + ", expected 1.." +
                      std::to_string(spec_n_) + " (tokens of the pending speculative forward)");
  }
  if (m < spec_n_) {  // the state after token m-1; after the last token it is already in place
    const std::vector<GdnState>& src = kept_[static_cast<size_t>(m - 1)];
    for (size_t g = 0; g < gdn_.size(); ++g) {
      std::copy(src[g].S.begin(), src[g].S.end(), gdn_[g].S.begin());
      std::copy(src[g].window.begin(), src[g].window.end(), gdn_[g].window.begin());
    }
  }
  pos_ = spec_pos_ + m;
  spec_n_ = 0;
  return Status::success();
}

// MTP block, QWEN35.md section 6.
template <class T>
Result<StepOutput> ReferenceModel<T>::mtp_forward(int32_t token, std::span<const float> hidden, int pos) {
  if (!mtp_) return make_error("reference mtp_forward: the model has no MTP block (nextn layer)");
  if (spec_n_ > 0)
    return make_error("reference mtp_forward: a speculative forward is pending", "commit(m) it first");
  if (token < 0 || token >= config_.n_vocab) {
    return make_error("reference mtp_forward: token " + std::to_string(token) +
                      " is outside the vocabulary 0.." + std::to_string(config_.n_vocab - 1));
  }
  if (hidden.size() != static_cast<size_t>(config_.n_embd)) {
    return make_error("reference mtp_forward: hidden state has " + std::to_string(hidden.size()) +
                      " values, expected n_embd = " + std::to_string(config_.n_embd));
  }
  if (pos < 0 || pos >= n_ctx_) {
    return make_error("reference mtp_forward: position " + std::to_string(pos) + " is outside 0.." +
                      std::to_string(n_ctx_ - 1));
  }
  const int64_t H = config_.n_embd;
  const T eps = static_cast<T>(config_.rms_eps);
  const MtpWeights& w = *weights_.mtp;
  // `hidden` may point into this backend's own output buffers (chained drafts): read it all first.
  for (int64_t i = 0; i < H; ++i) xn_[i] = static_cast<T>(hidden[i]);
  // cat = [ rmsnorm(embed(token), enorm) | rmsnorm(h, hnorm) ]   (embedding half first)
  rmsnorm(xn_.data(), mtp_->hnorm.data(), H, eps, cat_.data() + H);
  embed(token, mix_.data());
  rmsnorm(mix_.data(), mtp_->enorm.data(), H, eps, cat_.data());
  // x = eh_proj . cat
  matvec(pool_, w.eh_proj, cat_.data(), h_.data());
  // x = full-attention decoder block (own weights, own KV cache) at position pos
  decoder_layer(w.layer, mtp_->layer, &mtp_->kv, nullptr, pos, h_.data());
  // logits = output . rmsnorm(x, shared_head_norm or output_norm)
  head(h_.data(), mtp_->head_norm, mtp_logits_out_.data(), mtp_hidden_out_.data());
  StepOutput out;
  out.n_tokens = 1;
  out.n_vocab = config_.n_vocab;
  out.n_embd = config_.n_embd;
  out.logits = mtp_logits_out_;
  out.hidden = mtp_hidden_out_;
  return out;
}

template <class T>
std::unique_ptr<StateSnapshot> ReferenceModel<T>::snapshot() const {
  if (spec_n_ > 0) return nullptr;  // the state of a pending speculation is not a context
  auto s = std::make_unique<Snapshot>();
  s->owner = this;
  s->epoch = epoch_;
  s->pos = pos_;
  s->gdn = gdn_;
  return s;
}

template <class T>
std::unique_ptr<StateSnapshot> ReferenceModel<T>::snapshot_context() const {
  auto base = snapshot();
  if (!base) return nullptr;
  auto* s = static_cast<Snapshot*>(base.get());
  s->with_kv = true;
  auto keep = [&](const KvCache& c) {
    const size_t per_pos = c.k.size() / static_cast<size_t>(std::max(n_ctx_, 1));
    const auto n = static_cast<std::ptrdiff_t>(per_pos * static_cast<size_t>(pos_));
    s->k.emplace_back(c.k.begin(), c.k.begin() + n);
    s->v.emplace_back(c.v.begin(), c.v.begin() + n);
  };
  for (const KvCache& c : kv_) keep(c);
  if (mtp_) keep(mtp_->kv);
  return base;
}

template <class T>
Status ReferenceModel<T>::restore(const StateSnapshot& snap) {
  const auto* s = dynamic_cast<const Snapshot*>(&snap);
  if (s == nullptr || s->owner != this) {
    return make_error("reference restore: the snapshot was taken from another backend");
  }
  if (spec_n_ > 0) {
    return make_error("reference restore: a speculative forward is pending", "commit(m) it (or reset) first");
  }
  if (!s->with_kv && s->epoch != epoch_) {
    return make_error("reference restore: the snapshot (position " + std::to_string(s->pos) +
                      ") predates the last reset(); its KV cache entries are gone");
  }
  if (s->with_kv) {
    const size_t n_caches = kv_.size() + (mtp_ ? 1 : 0);
    if (s->k.size() != n_caches || s->pos > n_ctx_)
      return make_error("reference restore: the context snapshot does not fit this backend's caches");
    for (size_t i = 0; i < n_caches; ++i) {
      KvCache& c = i < kv_.size() ? kv_[i] : mtp_->kv;
      std::copy(s->k[i].begin(), s->k[i].end(), c.k.begin());
      std::copy(s->v[i].begin(), s->v[i].end(), c.v.begin());
    }
  }
  for (size_t i = 0; i < gdn_.size(); ++i) {
    std::copy(s->gdn[i].S.begin(), s->gdn[i].S.end(), gdn_[i].S.begin());
    std::copy(s->gdn[i].window.begin(), s->gdn[i].window.end(), gdn_[i].window.begin());
  }
  pos_ = s->pos;
  return Status::success();
}

template <class T>
std::span<const float> ReferenceModel<T>::layer_norms() const {
  if (!norms_valid_) return {};
  return layer_norms_;
}

template <class T>
Status ReferenceModel<T>::apply_kernel_config(const KernelConfig& config) {
  // Norms computed before the switch describe a token of the old setting: none until the next forward.
  if (config.probes != probes_) norms_valid_ = false;
  probes_ = config.probes;
  return Status::success();
}

template <class T>
uint64_t ReferenceModel<T>::recurrent_state_hash() const {
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&h](const std::vector<T>& v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    for (size_t i = 0; i < v.size() * sizeof(T); ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  for (const GdnState& g : gdn_) {
    add(g.S);
    add(g.window);
  }
  return h;
}

template <class T>
uint64_t ReferenceModel<T>::allocated_bytes() const {
  uint64_t values = 0;
  auto add_small = [&](const SmallWeights& s) {
    for (const std::vector<T>* v :
         {&s.attn_norm, &s.post_norm, &s.q_norm, &s.k_norm, &s.conv_taps, &s.dt_bias, &s.a, &s.ssm_norm}) {
      values += v->size();
    }
  };
  for (const SmallWeights& s : small_) add_small(s);
  for (const KvCache& c : kv_) values += c.k.size() + c.v.size();
  for (const GdnState& g : gdn_) values += g.S.size() + g.window.size();
  for (const std::vector<GdnState>& kept : kept_)
    for (const GdnState& g : kept) values += g.S.size() + g.window.size();
  values += output_norm_.size() + inv_freq_.size();
  if (mtp_) {
    values += mtp_->enorm.size() + mtp_->hnorm.size() + mtp_->head_norm.size() + mtp_->kv.k.size() +
              mtp_->kv.v.size();
    add_small(mtp_->layer);
  }
  for (const std::vector<T>* v :
       {&h_,      &xn_,     &mix_,      &ffn_out_,       &qkv_,    &conv_out_, &z_,
        &gdn_o_,  &beta_,   &g_,        &delta_scratch_, &q_gate_, &k_,        &v_,
        &attn_o_, &scores_, &ffn_gate_, &ffn_up_,        &cat_,    &hidden_t_, &logits_t_}) {
    values += v->size();
  }
  uint64_t floats = 0;
  for (const std::vector<float>* v :
       {&logits_out_, &hidden_out_, &mtp_logits_out_, &mtp_hidden_out_, &layer_norms_}) {
    floats += v->size();
  }
  return values * sizeof(T) + floats * sizeof(float);
}

template class ReferenceModel<float>;
template class ReferenceModel<double>;

}  // namespace qc::ref
