// The layer math of the reference forward pass (QWEN35.md sections 2-4), one comment per step. Member
// functions of ReferenceModel<T>; explicitly instantiated for float and double at the bottom.
#include <cmath>

#include "reference/ops.h"
#include "reference/reference_model.h"

namespace qc::ref {

namespace {
// transformers' l2norm (used inside the GDN kernel with use_qk_l2norm_in_kernel) has eps = 1e-6, independent
// of the model's rms_norm_eps.
constexpr double kL2NormEps = 1e-6;

// Per-thread work below which a head loop stays on the caller (see ThreadPool).
constexpr int64_t kMinWorkPerThread = 32768;
}  // namespace

// One decoder layer, QWEN35.md section 2.
template <class T>
void ReferenceModel<T>::decoder_layer(const LayerWeights& lw, const SmallWeights& sw, KvCache* kv,
                                      GdnState* gdn, int pos, T* h) {
  const int64_t H = config_.n_embd;
  const T eps = static_cast<T>(config_.rms_eps);
  // x = rmsnorm(h, attn_norm)   (r = h stays in h)
  rmsnorm(h, sw.attn_norm.data(), H, eps, xn_.data());
  // x = gated_attention(x) or gated_deltanet(x)
  if (lw.recurrent) {
    gated_deltanet(lw, sw, *gdn, xn_.data(), mix_.data());
  } else {
    gated_attention(lw, sw, *kv, pos, xn_.data(), mix_.data());
  }
  // h = r + x
  for (int64_t i = 0; i < H; ++i) h[i] += mix_[i];
  // x = rmsnorm(h, post_attention_norm);  h = h + down(silu(gate(x)) * up(x))
  rmsnorm(h, sw.post_norm.data(), H, eps, xn_.data());
  swiglu_ffn(lw.ffn, xn_.data(), ffn_out_.data());
  for (int64_t i = 0; i < H; ++i) h[i] += ffn_out_[i];
}

// Gated DeltaNet, one token, QWEN35.md section 3.
template <class T>
void ReferenceModel<T>::gated_deltanet(const LayerWeights& lw, const SmallWeights& sw, GdnState& st,
                                       const T* x, T* out) {
  const DeltaNetWeights& w = lw.gdn;
  const int Nk = config_.ssm_n_k_heads;
  const int Nv = config_.ssm_n_v_heads;
  const int Dk = config_.ssm_head_k_dim;
  const int Dv = config_.ssm_head_v_dim;
  const int64_t C = config_.ssm_qkv_dim();
  const T eps = static_cast<T>(config_.rms_eps);

  // Projections: qkv (C), z = output gate (Nv*Dv), b (Nv), a (Nv).
  matvec(pool_, w.wqkv, x, qkv_.data());
  matvec(pool_, w.wgate, x, z_.data());
  matvec(pool_, w.wbeta, x, beta_.data());
  matvec(pool_, w.walpha, x, g_.data());

  // 1. u = silu(causal depthwise conv over the last K inputs of every qkv channel); the window advances.
  conv_step(qkv_.data(), st.window.data(), sw.conv_taps.data(), ConvShape{C, config_.ssm_conv_kernel},
            conv_out_.data());

  // 2. Split u into q (Nk heads of Dk) | k (Nk heads of Dk) | v (Nv heads of Dv).
  T* q = conv_out_.data();
  T* k = q + int64_t{Nk} * Dk;
  const T* v = k + int64_t{Nk} * Dk;

  // 3. L2-normalise every q and k head, then q *= 1/sqrt(Dk).
  const T q_scale = T(1) / std::sqrt(static_cast<T>(Dk));
  for (int hk = 0; hk < Nk; ++hk) {
    T* qh = q + int64_t{hk} * Dk;
    l2norm(qh, Dk, static_cast<T>(kL2NormEps));
    for (int i = 0; i < Dk; ++i) qh[i] *= q_scale;
    l2norm(k + int64_t{hk} * Dk, Dk, static_cast<T>(kL2NormEps));
  }

  // 4. beta = sigmoid(b);  g = softplus(a + dt_bias) * ssm_a   (ssm_a = -exp(A_log), so g <= 0).
  for (int j = 0; j < Nv; ++j) {
    beta_[j] = sigmoid(beta_[j]);
    g_[j] = softplus(g_[j] + sw.dt_bias[j]) * sw.a[j];
  }

  // 5-6. Per value head j (reading key head j % Nk, the GGUF's tiled order): the delta rule on S_j, then
  //      the gated output norm y_j = rmsnorm(o_j, ssm_norm) * silu(z_j). Heads are independent: split
  //      over threads, each head computed by one thread.
  const int64_t work_per_head = int64_t{4} * Dk * Dv;
  pool_.parallel_for(
      Nv, std::max<int64_t>(1, kMinWorkPerThread / work_per_head), [&](int64_t b, int64_t e, int) {
        for (int64_t j = b; j < e; ++j) {
          const int64_t hk = j % Nk;
          T* o = gdn_o_.data() + j * Dv;
          delta_rule_step(st.S.data() + j * Dk * Dv, q + hk * Dk, k + hk * Dk, v + j * Dv, g_[j], beta_[j],
                          DeltaShape{Dk, Dv}, delta_scratch_.data() + j * Dv, o);
          rmsnorm(o, sw.ssm_norm.data(), Dv, eps, o);
          const T* zj = z_.data() + j * Dv;
          for (int i = 0; i < Dv; ++i) o[i] *= silu(zj[i]);
        }
      });

  // 7. out = ssm_out . y
  matvec(pool_, w.wout, gdn_o_.data(), out);
}

// Gated full attention, one token at position pos, QWEN35.md section 4.
template <class T>
void ReferenceModel<T>::gated_attention(const LayerWeights& lw, const SmallWeights& sw, KvCache& kv, int pos,
                                        const T* x, T* out) {
  const AttentionWeights& w = lw.attn;
  const int n_head = config_.n_head;
  const int n_kv = kv.n_kv;
  const int hd = config_.head_dim;
  const T eps = static_cast<T>(config_.rms_eps);

  // 1-2. q|gate per head (n_head x [query hd | gate hd]), k and v (n_kv x hd).
  matvec(pool_, w.wq, x, q_gate_.data());
  matvec(pool_, w.wk, x, k_.data());
  matvec(pool_, w.wv, x, v_.data());

  // 3-4. RMSNorm each query head (q_norm) and key head (k_norm), then RoPE on their first rope_dims dims.
  for (int h = 0; h < n_head; ++h) {
    T* qh = q_gate_.data() + int64_t{h} * 2 * hd;
    rmsnorm(qh, sw.q_norm.data(), hd, eps, qh);
    rope(qh, inv_freq_.data(), config_.rope_dims, pos);
  }
  for (int g = 0; g < n_kv; ++g) {
    T* kh = k_.data() + int64_t{g} * hd;
    rmsnorm(kh, sw.k_norm.data(), hd, eps, kh);
    rope(kh, inv_freq_.data(), config_.rope_dims, pos);
  }

  // 5. Store k, v at position pos; each query head h attends over positions 0..pos of KV head
  //    h / (n_head / n_kv) with softmax(q k^T / sqrt(hd)).
  const int64_t row = int64_t{n_kv} * hd;
  std::copy(k_.begin(), k_.begin() + row, kv.k.begin() + pos * row);
  std::copy(v_.begin(), v_.begin() + row, kv.v.begin() + pos * row);
  const int group = n_head / n_kv;
  const int64_t work_per_head = int64_t{2} * (pos + 1) * hd;
  pool_.parallel_for(n_head, std::max<int64_t>(1, kMinWorkPerThread / work_per_head),
                     [&](int64_t b, int64_t e, int) {
                       for (int64_t h = b; h < e; ++h) {
                         const int64_t g = h / group;
                         const T* qh = q_gate_.data() + h * 2 * hd;
                         T* oh = attn_o_.data() + h * hd;
                         attention_head(qh, kv.k.data() + g * hd, kv.v.data() + g * hd,
                                        AttentionShape{hd, pos + 1, row}, scores_.data() + h * n_ctx_, oh);
                         // 6. o_h *= sigmoid(gate_h)
                         const T* gate = qh + hd;
                         for (int i = 0; i < hd; ++i) oh[i] *= sigmoid(gate[i]);
                       }
                     });

  // 6. out = attn_output . o
  matvec(pool_, w.wo, attn_o_.data(), out);
}

// SwiGLU FFN: out = down( silu(gate . x) * (up . x) ).
template <class T>
void ReferenceModel<T>::swiglu_ffn(const FfnWeights& w, const T* x, T* out) {
  matvec(pool_, w.gate, x, ffn_gate_.data());
  matvec(pool_, w.up, x, ffn_up_.data());
  swiglu(ffn_gate_.data(), ffn_up_.data(), config_.n_ff, ffn_gate_.data());
  matvec(pool_, w.down, ffn_gate_.data(), out);
}

#define QC_INSTANTIATE_LAYERS(T)                                                                            \
  template void ReferenceModel<T>::decoder_layer(const LayerWeights&, const SmallWeights&, KvCache*,        \
                                                 GdnState*, int, T*);                                       \
  template void ReferenceModel<T>::gated_deltanet(const LayerWeights&, const SmallWeights&, GdnState&,      \
                                                  const T*, T*);                                            \
  template void ReferenceModel<T>::gated_attention(const LayerWeights&, const SmallWeights&, KvCache&, int, \
                                                   const T*, T*);                                           \
  template void ReferenceModel<T>::swiglu_ffn(const FfnWeights&, const T*, T*);

QC_INSTANTIATE_LAYERS(float)
QC_INSTANTIATE_LAYERS(double)
#undef QC_INSTANTIATE_LAYERS

}  // namespace qc::ref
