#include "model/presets.h"

namespace qc {

namespace {

ModelShape make(const std::string& name, int H, int layers, int ff, int heads, int kv, int head_dim, int gdn_k,
                int gdn_v, int gdn_dim, int vocab, bool tied) {
  ModelShape s;
  s.name = name;
  s.n_embd = H;
  s.n_layer = layers;
  s.n_ff = ff;
  s.n_head = heads;
  s.n_head_kv = kv;
  s.head_dim = head_dim;
  s.rope_dims = head_dim / 4;  // partial rotary factor 0.25 across the family
  s.ssm_n_k_heads = gdn_k;
  s.ssm_n_v_heads = gdn_v;
  s.ssm_head_k_dim = gdn_dim;
  s.ssm_head_v_dim = gdn_dim;
  s.n_vocab = vocab;
  s.tied_embeddings = tied;
  return s;
}

std::vector<ModelShape> all_presets() {
  std::vector<ModelShape> p;
  // tiny: fast tests. Value heads != key heads (4 vs 2), two attention layers (8 layers, interval 4),
  // an MTP block; K dims not multiples of 512 so kernels' tail paths are exercised. Vocabulary rows are
  // set by the generated tokenizer (the preset value is a minimum).
  ModelShape tiny = make("tiny", 96, 8, 160, 4, 2, 32, 2, 4, 16, 512, true);
  tiny.rope_dims = 8;
  tiny.n_ctx_train = 4096;
  p.push_back(tiny);
  // small: the default generated asset until a trained model ships; chats interactively on 2 cores.
  ModelShape small = make("small", 256, 8, 704, 4, 2, 64, 4, 8, 32, 4096, true);
  small.rope_dims = 16;
  small.n_ctx_train = 8192;
  p.push_back(small);
  // Real shapes (QWEN35.md section 1 and the public configs of the dense siblings).
  p.push_back(make("0.8b", 1024, 24, 3584, 8, 2, 256, 16, 16, 128, 248320, true));
  p.push_back(make("2b", 2048, 24, 6144, 8, 2, 256, 16, 16, 128, 248320, true));
  p.push_back(make("4b", 2560, 32, 9216, 16, 4, 256, 16, 32, 128, 248320, true));
  p.push_back(make("9b", 4096, 32, 12288, 16, 4, 256, 16, 32, 128, 248320, false));
  p.push_back(make("27b", 5120, 64, 17408, 24, 4, 256, 16, 48, 128, 248320, false));
  return p;
}

}  // namespace

Status ModelShape::validate() const {
  auto fail = [&](const std::string& m) { return Status(make_error("model shape " + name + ": " + m)); };
  if (n_embd <= 0 || n_layer <= 0 || n_ff <= 0 || n_head <= 0 || n_head_kv <= 0 || head_dim <= 0) {
    return fail("every size must be positive");
  }
  if (n_embd % 32 != 0 || n_ff % 32 != 0) return fail("n_embd and n_ff must be multiples of 32 (Q8_0 blocks)");
  if (n_head % n_head_kv != 0) return fail("n_head must be a multiple of n_head_kv");
  if (rope_dims <= 0 || rope_dims > head_dim || rope_dims % 2 != 0) return fail("rope_dims must be even, <= head_dim");
  if (ssm_n_k_heads <= 0 || ssm_n_v_heads % ssm_n_k_heads != 0) return fail("value heads must be a multiple of key heads");
  if ((n_head * head_dim) % 32 != 0 || (ssm_n_v_heads * ssm_head_v_dim) % 32 != 0) {
    return fail("attention and GDN inner sizes must be multiples of 32");
  }
  if (full_attention_interval <= 0 || n_layer < full_attention_interval) {
    return fail("need at least one full-attention layer (n_layer >= full_attention_interval)");
  }
  if (n_vocab <= 0 || n_mtp < 0 || n_mtp > 1) return fail("n_vocab > 0 and n_mtp in 0..1");
  return {};
}

uint64_t ModelShape::n_params() const {
  const uint64_t H = static_cast<uint64_t>(n_embd);
  const uint64_t attn = H * static_cast<uint64_t>(n_head * head_dim * 2 + 2 * n_head_kv * head_dim) +
                        static_cast<uint64_t>(n_head * head_dim) * H + 2 * static_cast<uint64_t>(head_dim);
  const uint64_t qkv = static_cast<uint64_t>(2 * ssm_n_k_heads * ssm_head_k_dim + ssm_n_v_heads * ssm_head_v_dim);
  const uint64_t inner = static_cast<uint64_t>(ssm_n_v_heads * ssm_head_v_dim);
  const uint64_t gdn = H * (qkv + inner + 2 * static_cast<uint64_t>(ssm_n_v_heads)) + qkv * ssm_conv_kernel +
                       2 * static_cast<uint64_t>(ssm_n_v_heads) + static_cast<uint64_t>(ssm_head_v_dim) + inner * H;
  const uint64_t ffn = 3 * H * static_cast<uint64_t>(n_ff) + 2 * H;
  uint64_t total = static_cast<uint64_t>(n_vocab) * H * (tied_embeddings ? 1 : 2) + H;
  for (int i = 0; i < n_layer; ++i) total += ffn + (((i + 1) % full_attention_interval == 0) ? attn : gdn);
  if (n_mtp > 0) total += 2 * H * H + 3 * H + attn + ffn;
  return total;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const ModelShape& s : all_presets()) names.push_back(s.name);
  return names;
}

Result<ModelShape> preset_shape(const std::string& name) {
  for (const ModelShape& s : all_presets()) {
    if (s.name == name) return s;
  }
  std::string known;
  for (const std::string& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  return make_error("unknown model preset \"" + name + "\": expected one of " + known);
}

}  // namespace qc
