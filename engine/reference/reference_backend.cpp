// make_reference_backend: validation of config + weights (so the forward pass can index freely), the
// choice of precision, and the memory estimate.
#include "reference/reference_backend.h"

#include <algorithm>
#include <string>

#include "reference/reference_model.h"

namespace qc {

namespace {

std::string shape(int64_t rows, int64_t cols) {
  return "[" + std::to_string(rows) + "][" + std::to_string(cols) + "]";
}

std::string name_of(const TensorView& t, const std::string& what) {
  return t.name.empty() ? what : t.name;
}

// Rows of a block format (Q8_0, Q4_0, ... Q6_K) must be whole blocks: the decode reads block by block.
Status check_blocks(const TensorView& t, const std::string& what) {
  const int64_t block = dtype_block(t.type);
  if (t.cols % block != 0) {
    return make_error(name_of(t, what) + ": " + dtype_name(t.type) + " rows must be a multiple of " +
                      std::to_string(block) + " values, got " + std::to_string(t.cols));
  }
  return Status::success();
}

// A projection [rows][cols] = [out][in] of any dtype, rows of whole blocks.
Status check_matrix(const TensorView& t, const std::string& what, int64_t rows, int64_t cols) {
  if (!t.present()) return make_error(what + ": tensor missing (expected " + shape(rows, cols) + ")");
  if (t.rows != rows || t.cols != cols) {
    return make_error(name_of(t, what) + ": expected " + std::string(dtype_name(t.type)) + " " +
                      shape(rows, cols) + ", got " + shape(t.rows, t.cols));
  }
  return check_blocks(t, what);
}

// A vector of n values (stored as one row, or rows x cols with rows * cols = n).
Status check_vector(const TensorView& t, const std::string& what, int64_t n) {
  if (!t.present()) return make_error(what + ": tensor missing (expected " + std::to_string(n) + " values)");
  if (t.rows * t.cols != n) {
    return make_error(name_of(t, what) + ": expected " + std::to_string(n) + " values, got " +
                      shape(t.rows, t.cols));
  }
  return check_blocks(t, what);
}

Status check_attention_config(const ModelConfig& c, int il, const std::string& what) {
  if (c.n_head <= 0 || c.head_dim <= 0) {
    return make_error(what + ": attention needs head_count and key_length > 0, got " +
                      std::to_string(c.n_head) + " and " + std::to_string(c.head_dim));
  }
  if (c.rope_dims < 0 || c.rope_dims % 2 != 0 || c.rope_dims > c.head_dim) {
    return make_error("rope.dimension_count = " + std::to_string(c.rope_dims) +
                      ": expected an even number <= " + std::to_string(c.head_dim));
  }
  if (static_cast<int>(c.n_head_kv.size()) <= il) {
    return make_error(what + ": no head_count_kv entry (have " + std::to_string(c.n_head_kv.size()) + ")");
  }
  const int nkv = c.n_head_kv[static_cast<size_t>(il)];
  if (nkv <= 0 || c.n_head % nkv != 0) {
    return make_error(what + ": head_count_kv = " + std::to_string(nkv) +
                      ": expected a positive divisor of " + std::to_string(c.n_head));
  }
  return Status::success();
}

Status check_attention_layer(const ModelConfig& c, const LayerWeights& l, int il, const std::string& p) {
  QC_TRY(check_attention_config(c, il, p));
  const int64_t H = c.n_embd;
  const int64_t hd = c.head_dim;
  const int64_t nkv = c.n_head_kv[static_cast<size_t>(il)];
  QC_TRY(check_matrix(l.attn.wq, p + "attn_q", c.n_head * hd * 2, H));
  QC_TRY(check_matrix(l.attn.wk, p + "attn_k", nkv * hd, H));
  QC_TRY(check_matrix(l.attn.wv, p + "attn_v", nkv * hd, H));
  QC_TRY(check_matrix(l.attn.wo, p + "attn_output", H, c.n_head * hd));
  QC_TRY(check_vector(l.attn.q_norm, p + "attn_q_norm", hd));
  QC_TRY(check_vector(l.attn.k_norm, p + "attn_k_norm", hd));
  return Status::success();
}

Status check_gdn_layer(const ModelConfig& c, const LayerWeights& l, const std::string& p) {
  if (c.ssm_n_k_heads <= 0 || c.ssm_n_v_heads <= 0 || c.ssm_head_k_dim <= 0 || c.ssm_head_v_dim <= 0 ||
      c.ssm_conv_kernel <= 0) {
    return make_error(p + "GDN layer: ssm sizes must be positive (group_count " +
                      std::to_string(c.ssm_n_k_heads) + ", time_step_rank " +
                      std::to_string(c.ssm_n_v_heads) + ", state_size " + std::to_string(c.ssm_head_k_dim) +
                      ", value head dim " + std::to_string(c.ssm_head_v_dim) + ", conv_kernel " +
                      std::to_string(c.ssm_conv_kernel) + ")");
  }
  if (c.ssm_n_v_heads % c.ssm_n_k_heads != 0) {
    return make_error("ssm.time_step_rank = " + std::to_string(c.ssm_n_v_heads) +
                      ": expected a multiple of ssm.group_count = " + std::to_string(c.ssm_n_k_heads));
  }
  const int64_t H = c.n_embd;
  const int64_t Nv = c.ssm_n_v_heads;
  QC_TRY(check_matrix(l.gdn.wqkv, p + "attn_qkv", c.ssm_qkv_dim(), H));
  QC_TRY(check_matrix(l.gdn.wgate, p + "attn_gate", c.ssm_d_inner(), H));
  QC_TRY(check_matrix(l.gdn.wbeta, p + "ssm_beta", Nv, H));
  QC_TRY(check_matrix(l.gdn.walpha, p + "ssm_alpha", Nv, H));
  QC_TRY(check_matrix(l.gdn.conv1d, p + "ssm_conv1d", c.ssm_qkv_dim(), c.ssm_conv_kernel));
  QC_TRY(check_vector(l.gdn.dt_bias, p + "ssm_dt.bias", Nv));
  QC_TRY(check_vector(l.gdn.a, p + "ssm_a", Nv));
  QC_TRY(check_vector(l.gdn.norm, p + "ssm_norm", c.ssm_head_v_dim));
  QC_TRY(check_matrix(l.gdn.wout, p + "ssm_out", H, c.ssm_d_inner()));
  return Status::success();
}

Status check_layer(const ModelConfig& c, const LayerWeights& l, int il) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const int64_t H = c.n_embd;
  QC_TRY(check_vector(l.attn_norm, p + "attn_norm", H));
  QC_TRY(check_vector(l.post_norm, p + "post_attention_norm", H));
  QC_TRY(l.recurrent ? check_gdn_layer(c, l, p) : check_attention_layer(c, l, il, p));
  QC_TRY(check_matrix(l.ffn.gate, p + "ffn_gate", c.n_ff, H));
  QC_TRY(check_matrix(l.ffn.up, p + "ffn_up", c.n_ff, H));
  QC_TRY(check_matrix(l.ffn.down, p + "ffn_down", H, c.n_ff));
  return Status::success();
}

Status check_options(const ReferenceOptions& o) {
  if (o.n_ctx <= 0)
    return make_error("reference backend: n_ctx must be positive, got " + std::to_string(o.n_ctx));
  if (o.max_batch <= 0) {
    return make_error("reference backend: max_batch must be positive, got " + std::to_string(o.max_batch));
  }
  if (o.speculative_tokens < 0 || o.speculative_tokens > 64) {
    return make_error("reference backend: speculative_tokens must be in 0..64, got " +
                      std::to_string(o.speculative_tokens));
  }
  if (o.n_threads < 0 || o.n_threads > 1024) {
    return make_error("reference backend: n_threads must be in 0..1024 (0 = all cores), got " +
                      std::to_string(o.n_threads));
  }
  return Status::success();
}

}  // namespace

Status validate_reference_model(const ModelConfig& c, const ModelWeights& w) {
  if (c.n_vocab <= 0 || c.n_embd <= 0 || c.n_layer <= 0 || c.n_ff <= 0) {
    return make_error("model config: n_vocab, n_embd, n_layer and n_ff must be positive, got " +
                      std::to_string(c.n_vocab) + ", " + std::to_string(c.n_embd) + ", " +
                      std::to_string(c.n_layer) + ", " + std::to_string(c.n_ff));
  }
  if (w.layers.size() != static_cast<size_t>(c.n_layer)) {
    return make_error("model weights: expected " + std::to_string(c.n_layer) + " layers, got " +
                      std::to_string(w.layers.size()));
  }
  if (c.is_recurrent.size() < static_cast<size_t>(c.n_layer)) {
    return make_error("model config: is_recurrent has " + std::to_string(c.is_recurrent.size()) +
                      " entries, expected " + std::to_string(c.n_layer));
  }
  QC_TRY(check_matrix(w.token_embd, "token_embd", c.n_vocab, c.n_embd));
  QC_TRY(check_vector(w.output_norm, "output_norm", c.n_embd));
  QC_TRY(check_matrix(w.output, "output", c.n_vocab, c.n_embd));
  for (int il = 0; il < c.n_layer; ++il) {
    const LayerWeights& l = w.layers[static_cast<size_t>(il)];
    if (l.recurrent != c.is_recurrent[static_cast<size_t>(il)]) {
      return make_error("blk." + std::to_string(il) + ": weights say " + (l.recurrent ? "GDN" : "attention") +
                        ", config says " + (c.is_recurrent[static_cast<size_t>(il)] ? "GDN" : "attention"));
    }
    QC_TRY(check_layer(c, l, il));
  }
  if (w.mtp) {
    const MtpWeights& m = *w.mtp;
    const std::string p = "blk." + std::to_string(c.n_layer) + ".";
    if (m.layer.recurrent)
      return make_error(p + "MTP block: expected a full-attention layer, got a GDN layer");
    QC_TRY(check_layer(c, m.layer, c.n_layer));
    QC_TRY(check_matrix(m.eh_proj, p + "nextn.eh_proj", c.n_embd, 2 * int64_t{c.n_embd}));
    QC_TRY(check_vector(m.enorm, p + "nextn.enorm", c.n_embd));
    QC_TRY(check_vector(m.hnorm, p + "nextn.hnorm", c.n_embd));
    if (m.shared_head_norm.present())
      QC_TRY(check_vector(m.shared_head_norm, p + "nextn.shared_head_norm", c.n_embd));
  }
  return Status::success();
}

Result<std::unique_ptr<Backend>> make_reference_backend(const ModelConfig& config,
                                                        const ModelWeights& weights,
                                                        const ReferenceOptions& options) {
  QC_TRY(check_options(options));
  QC_TRY(validate_reference_model(config, weights));
  std::unique_ptr<Backend> b;
  if (options.precision == RefPrecision::kDouble) {
    b = std::make_unique<ref::ReferenceModel<double>>(config, weights, options);
  } else {
    b = std::make_unique<ref::ReferenceModel<float>>(config, weights, options);
  }
  return b;
}

// Mirrors the allocations of ReferenceModel's constructor (a test keeps the two in step).
uint64_t reference_state_bytes(const ModelConfig& c, const ReferenceOptions& o) {
  const uint64_t t = o.precision == RefPrecision::kDouble ? 8 : 4;
  const uint64_t H = static_cast<uint64_t>(c.n_embd);
  const uint64_t V = static_cast<uint64_t>(c.n_vocab);
  const uint64_t ctx = static_cast<uint64_t>(o.n_ctx);
  const uint64_t hd = static_cast<uint64_t>(c.head_dim);
  const uint64_t C = static_cast<uint64_t>(c.ssm_qkv_dim());
  const uint64_t d_inner = static_cast<uint64_t>(c.ssm_d_inner());
  const uint64_t Nv = static_cast<uint64_t>(c.ssm_n_v_heads);
  const uint64_t K = static_cast<uint64_t>(c.ssm_conv_kernel);
  const uint64_t heads = static_cast<uint64_t>(c.n_head);
  const bool mtp = c.n_mtp > 0;

  uint64_t values = 0;  // in T
  uint64_t max_kv = 0;
  for (int il = 0; il < c.n_layer + (mtp ? 1 : 0); ++il) {
    const bool recurrent = il < c.n_layer && c.is_recurrent[static_cast<size_t>(il)];
    values += 2 * H;  // attn_norm, post_norm
    if (recurrent) {
      values += C * K + 2 * Nv + static_cast<uint64_t>(c.ssm_head_v_dim);  // small weights
      values += Nv * static_cast<uint64_t>(c.ssm_head_k_dim) * static_cast<uint64_t>(c.ssm_head_v_dim);  // S
      values += C * (K - 1);  // conv window
      // Per-position copies of both for commit() after a speculative forward.
      const uint64_t kept = static_cast<uint64_t>(std::max(speculative_token_limit(o) - 1, 0));
      values +=
          kept * (Nv * static_cast<uint64_t>(c.ssm_head_k_dim) * static_cast<uint64_t>(c.ssm_head_v_dim) +
                  C * (K - 1));
    } else {
      const uint64_t nkv = static_cast<uint64_t>(c.n_head_kv[static_cast<size_t>(il)]);
      values += 2 * hd;              // q_norm, k_norm
      values += 2 * ctx * nkv * hd;  // K, V caches
      max_kv = std::max(max_kv, nkv);
    }
  }
  values += H + static_cast<uint64_t>(c.rope_dims / 2);  // output_norm, inv_freq
  if (mtp) values += 3 * H;                              // enorm, hnorm, head norm
  // Scratch.
  values += 5 * H + 2 * C + 3 * d_inner + 2 * Nv + heads * 2 * hd + 2 * max_kv * hd + heads * hd +
            heads * ctx + 2 * static_cast<uint64_t>(c.n_ff) + 2 * H + V;
  // Float outputs.
  uint64_t floats = static_cast<uint64_t>(o.max_batch) * (V + H);
  if (mtp) floats += V + H;
  floats += static_cast<uint64_t>(c.n_layer);  // the probes' per-layer norms (set_kernel_config)
  return values * t + floats * 4;
}

}  // namespace qc
