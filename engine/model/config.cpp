#include "model/config.h"

#include <sstream>

#include "gguf/reader.h"

namespace qc {

int ModelConfig::n_attention_layers() const {
  int n = 0;
  for (int i = 0; i < n_layer; ++i) n += is_recurrent[static_cast<size_t>(i)] ? 0 : 1;
  return n;
}

int ModelConfig::n_recurrent_layers() const { return n_layer - n_attention_layers(); }

std::string ModelConfig::summary() const {
  std::ostringstream s;
  s << architecture << ": H=" << n_embd << " layers=" << n_layer << " (" << n_recurrent_layers() << " GDN + "
    << n_attention_layers() << " attention) ffn=" << n_ff << " heads=" << n_head << "/" << n_head_kv.front()
    << "x" << head_dim << " gdn=" << ssm_n_k_heads << "k/" << ssm_n_v_heads << "v x" << ssm_head_k_dim << "/"
    << ssm_head_v_dim << " vocab=" << n_vocab << " mtp=" << n_mtp;
  return s.str();
}

namespace {

// Reads `<arch>.<key>` as a positive int, naming the key in the error.
Result<int> positive(const gguf::File& f, const std::string& key) {
  QC_ASSIGN(const uint32_t v, f.get_u32(key));
  if (v == 0 || v > (1u << 30)) {
    return make_error(f.path() + ": metadata " + key + ": expected a positive integer up to 2^30, got " +
                      std::to_string(v));
  }
  return static_cast<int>(v);
}

Error bad(const gguf::File& f, const std::string& what) { return make_error(f.path() + ": " + what); }

}  // namespace

Result<ModelConfig> read_config(const gguf::File& f) {
  ModelConfig c;
  QC_ASSIGN(c.architecture, f.get_string("general.architecture"));
  if (c.architecture != "qwen35") {
    return make_error(f.path() + ": general.architecture: expected \"qwen35\", got \"" + c.architecture + "\"",
                      "qwenchat runs Qwen3.5-class hybrid models (llama.cpp architecture qwen35)");
  }
  if (const gguf::Value* v = f.find("general.name"); v && v->type == gguf::ValueType::kString) c.name = v->str;
  const std::string a = c.architecture + ".";

  QC_ASSIGN(const int block_count, positive(f, a + "block_count"));
  if (block_count > kMaxBlockCount) {
    return bad(f, a + "block_count = " + std::to_string(block_count) + ": expected at most " +
                      std::to_string(kMaxBlockCount) + " layers (corrupt file?)");
  }
  QC_ASSIGN(c.n_embd, positive(f, a + "embedding_length"));
  QC_ASSIGN(c.n_ff, positive(f, a + "feed_forward_length"));
  QC_ASSIGN(c.n_head, positive(f, a + "attention.head_count"));
  if (f.find(a + "context_length")) {
    QC_ASSIGN(c.n_ctx_train, positive(f, a + "context_length"));
  }
  QC_ASSIGN(c.rms_eps, f.get_f32(a + "attention.layer_norm_rms_epsilon"));
  if (!(c.rms_eps > 0.0f && c.rms_eps < 1e-2f)) {
    return bad(f, a + "attention.layer_norm_rms_epsilon: expected a small positive number, got " +
                      std::to_string(c.rms_eps));
  }

  // MTP layers are counted in block_count.
  if (f.find(a + "nextn_predict_layers")) {
    QC_ASSIGN(const uint32_t n, f.get_u32(a + "nextn_predict_layers"));
    c.n_mtp = static_cast<int>(n);
  }
  if (c.n_mtp >= block_count) {
    return bad(f, a + "nextn_predict_layers = " + std::to_string(c.n_mtp) + " must be below block_count = " +
                      std::to_string(block_count));
  }
  c.n_layer = block_count - c.n_mtp;

  // Attention geometry.
  QC_ASSIGN(c.head_dim, positive(f, a + "attention.key_length"));
  QC_ASSIGN(const int value_length, positive(f, a + "attention.value_length"));
  if (value_length != c.head_dim) {
    return bad(f, a + "attention.value_length = " + std::to_string(value_length) +
                      ": expected equal to key_length = " + std::to_string(c.head_dim));
  }
  const gguf::Value* kv = f.find(a + "attention.head_count_kv");
  if (!kv) return bad(f, "metadata " + a + "attention.head_count_kv is missing");
  c.n_head_kv.assign(static_cast<size_t>(block_count), 0);
  if (kv->type == gguf::ValueType::kArray) {
    QC_ASSIGN(const std::vector<int64_t> per_layer, f.get_ints(a + "attention.head_count_kv"));
    if (per_layer.size() != static_cast<size_t>(block_count)) {
      return bad(f, a + "attention.head_count_kv: expected " + std::to_string(block_count) + " entries, got " +
                        std::to_string(per_layer.size()));
    }
    for (size_t i = 0; i < per_layer.size(); ++i) {
      if (per_layer[i] < 0 || per_layer[i] > c.n_head) {
        return bad(f, a + "attention.head_count_kv[" + std::to_string(i) + "] = " + std::to_string(per_layer[i]) +
                          " is outside 0.." + std::to_string(c.n_head));
      }
      c.n_head_kv[i] = static_cast<int>(per_layer[i]);
    }
  } else {
    QC_ASSIGN(const int n, positive(f, a + "attention.head_count_kv"));
    c.n_head_kv.assign(static_cast<size_t>(block_count), n);
  }

  QC_ASSIGN(c.rope_theta, f.get_f32(a + "rope.freq_base"));
  QC_ASSIGN(c.rope_dims, positive(f, a + "rope.dimension_count"));
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0) {
    return bad(f, a + "rope.dimension_count = " + std::to_string(c.rope_dims) +
                      ": expected an even number <= key_length " + std::to_string(c.head_dim));
  }
  if (f.find(a + "rope.dimension_sections")) {
    QC_ASSIGN(const std::vector<int64_t> s, f.get_ints(a + "rope.dimension_sections"));
    for (int64_t x : s) c.rope_sections.push_back(static_cast<int>(x));
  }

  // Gated DeltaNet geometry.
  QC_ASSIGN(c.ssm_conv_kernel, positive(f, a + "ssm.conv_kernel"));
  QC_ASSIGN(c.ssm_head_k_dim, positive(f, a + "ssm.state_size"));
  QC_ASSIGN(c.ssm_n_k_heads, positive(f, a + "ssm.group_count"));
  QC_ASSIGN(c.ssm_n_v_heads, positive(f, a + "ssm.time_step_rank"));
  QC_ASSIGN(const int inner, positive(f, a + "ssm.inner_size"));
  if (inner % c.ssm_n_v_heads != 0) {
    return bad(f, a + "ssm.inner_size = " + std::to_string(inner) + ": expected a multiple of ssm.time_step_rank = " +
                      std::to_string(c.ssm_n_v_heads));
  }
  c.ssm_head_v_dim = inner / c.ssm_n_v_heads;
  if (c.ssm_n_v_heads % c.ssm_n_k_heads != 0) {
    return bad(f, a + "ssm.time_step_rank = " + std::to_string(c.ssm_n_v_heads) +
                      ": expected a multiple of ssm.group_count = " + std::to_string(c.ssm_n_k_heads));
  }

  // Which layers are recurrent: the per-layer flags when present, else every interval-th layer is attention.
  c.is_recurrent.assign(static_cast<size_t>(c.n_layer), true);
  if (f.find(a + "attention.recurrent_layers")) {
    QC_ASSIGN(const std::vector<int64_t> flags, f.get_ints(a + "attention.recurrent_layers"));
    if (flags.size() < static_cast<size_t>(c.n_layer)) {
      return bad(f, a + "attention.recurrent_layers: expected at least " + std::to_string(c.n_layer) +
                        " entries, got " + std::to_string(flags.size()));
    }
    for (int i = 0; i < c.n_layer; ++i) c.is_recurrent[static_cast<size_t>(i)] = flags[static_cast<size_t>(i)] != 0;
    if (f.find(a + "full_attention_interval")) {
      QC_ASSIGN(c.full_attention_interval, positive(f, a + "full_attention_interval"));
    }
  } else {
    // llama.cpp's loader defaults the interval to 4 when the key is absent; so do we.
    c.full_attention_interval = 4;
    if (f.find(a + "full_attention_interval")) {
      QC_ASSIGN(c.full_attention_interval, positive(f, a + "full_attention_interval"));
    }
    for (int i = 0; i < c.n_layer; ++i) {
      c.is_recurrent[static_cast<size_t>(i)] = (i + 1) % c.full_attention_interval != 0;
    }
  }

  // Attention layers (and the MTP block) need KV heads that divide the query heads.
  for (int i = 0; i < block_count; ++i) {
    const bool attention = i >= c.n_layer || !c.is_recurrent[static_cast<size_t>(i)];
    const int nkv = c.n_head_kv[static_cast<size_t>(i)];
    if (attention && (nkv <= 0 || c.n_head % nkv != 0)) {
      return bad(f, "layer " + std::to_string(i) + ": attention.head_count_kv = " + std::to_string(nkv) +
                        ": expected a positive divisor of head_count = " + std::to_string(c.n_head));
    }
  }
  return c;
}

}  // namespace qc
