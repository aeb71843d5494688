// Test helper: small Hugging Face-style Qwen3.5 checkpoints written from C++ (no Python here): a minimal
// safetensors writer, HF-named random weights for a tiny config (value heads != key heads, GDN and
// attention layers, an MTP block), sharding with model.safetensors.index.json, config.json in the
// multimodal (text_config) or text-only form, and a tokenizer.json made from our BPE trainer's vocabulary.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "import/hf_tokenizer.h"
#include "model/quant.h"
#include "tokenizer/bpe_trainer.h"

namespace qc::test {

// One tensor of a safetensors file: raw bytes with a dtype name and shape.
struct StEntry {
  std::string name;
  std::string dtype;  // "F32", "BF16", ...
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

// A safetensors image: header JSON padded with spaces to 8 bytes (as the reference writer does), then the
// tensors back to back in the given order.
inline std::vector<uint8_t> safetensors_bytes(const std::vector<StEntry>& entries,
                                              const std::map<std::string, std::string>& metadata = {}) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t off = 0;
  for (const StEntry& e : entries) {
    h[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {off, off + e.bytes.size()}}};
    off += e.bytes.size();
  }
  std::string text = h.dump();
  while ((8 + text.size()) % 8 != 0) text += ' ';
  // Sized once and filled with memcpy: GCC 12 at -O3 misreads vector::insert after an 8-byte vector as
  // out of bounds (-Warray-bounds false positive, GCC bug 107852).
  std::vector<uint8_t> out(8 + text.size() + off);
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  size_t at = 8 + text.size();
  for (const StEntry& e : entries) {
    if (!e.bytes.empty()) std::memcpy(out.data() + at, e.bytes.data(), e.bytes.size());
    at += e.bytes.size();
  }
  return out;
}

// A raw image from a header text and a data section (for malformed-file tests).
inline std::vector<uint8_t> safetensors_raw(const std::string& header, size_t data_bytes,
                                            uint64_t claimed_len) {
  std::vector<uint8_t> out(8 + header.size() + data_bytes, 0x5a);  // memcpy: see safetensors_bytes
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(claimed_len >> (8 * i));
  if (!header.empty()) std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}
inline std::vector<uint8_t> safetensors_raw(const std::string& header, size_t data_bytes) {
  return safetensors_raw(header, data_bytes, header.size());
}

inline void write_file(const std::string& path, const void* data, size_t n) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
}
inline void write_file(const std::string& path, const std::string& text) {
  write_file(path, text.data(), text.size());
}
inline void write_file(const std::string& path, const std::vector<uint8_t>& b) {
  write_file(path, b.data(), b.size());
}

// Sizes of the tiny model; keep Nv/Nk > 1 so the value-head order matters.
struct TinyHfSpec {
  int vocab_size = 320;  // embedding rows; the trained vocabulary is smaller (the rest is padding)
  int hidden = 64;
  int layers = 4;  // GDN, attention, GDN, attention
  int interval = 2;
  int ff = 96;
  int heads = 4, kv_heads = 2, head_dim = 32;
  double partial_rotary = 0.25;  // 8 rotated dims
  double rope_theta = 10000.0;
  std::vector<int> mrope_section = {1, 1, 2};  // what our generator writes for 8 rotated dims
  int nk = 2, nv = 6, dk = 16, dv = 32, conv = 4;
  bool mtp = true;
  bool tied = false;
  bool nested = true;         // config.json with text_config and model.language_model.* names
  std::string dtype = "F32";  // stored dtype of every weight: F32 or BF16
  int shards = 2;             // 1 = a single model.safetensors without index
  uint32_t seed = 5;
};

// HF weights by name: shape (PyTorch order) and the exact stored values (BF16-rounded when stored BF16).
struct HfWeights {
  std::map<std::string, std::vector<uint64_t>> shape;
  std::map<std::string, std::vector<float>> value;
  std::vector<std::string> order;  // insertion order (the order written to the shards)

  void add(const std::string& name, std::vector<uint64_t> s, std::vector<float> v) {
    shape[name] = std::move(s);
    value[name] = std::move(v);
    order.push_back(name);
  }
  const std::vector<float>& operator[](const std::string& n) const { return value.at(n); }
};

inline std::string text_prefix(const TinyHfSpec& s) {
  return s.nested ? "model.language_model." : "model.";
}

inline HfWeights make_hf_weights(const TinyHfSpec& s) {
  std::mt19937 rng(s.seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  HfWeights w;
  const auto fill = [&](uint64_t n, float center, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = center + scale * u(rng);
    if (s.dtype == "BF16") {
      for (float& x : v) x = bf16_to_f32(f32_to_bf16(x));
    }
    return v;
  };
  const auto proj = [&](const std::string& n, uint64_t out, uint64_t in) {
    w.add(n, {out, in}, fill(out * in, 0.0f, 1.0f / std::sqrt(static_cast<float>(in))));
  };
  const auto norm = [&](const std::string& n, uint64_t len) { w.add(n, {len}, fill(len, 0.0f, 0.2f)); };
  const uint64_t H = static_cast<uint64_t>(s.hidden), FF = static_cast<uint64_t>(s.ff);
  const uint64_t hd = static_cast<uint64_t>(s.head_dim);
  const uint64_t qkv = static_cast<uint64_t>(2 * s.nk * s.dk + s.nv * s.dv);
  const uint64_t inner = static_cast<uint64_t>(s.nv * s.dv);
  const std::string P = text_prefix(s);
  w.add(P + "embed_tokens.weight", {static_cast<uint64_t>(s.vocab_size), H},
        fill(static_cast<uint64_t>(s.vocab_size) * H, 0.0f, 1.0f));
  const auto attention = [&](const std::string& p) {
    proj(p + "self_attn.q_proj.weight", static_cast<uint64_t>(s.heads) * hd * 2, H);
    proj(p + "self_attn.k_proj.weight", static_cast<uint64_t>(s.kv_heads) * hd, H);
    proj(p + "self_attn.v_proj.weight", static_cast<uint64_t>(s.kv_heads) * hd, H);
    proj(p + "self_attn.o_proj.weight", H, static_cast<uint64_t>(s.heads) * hd);
    norm(p + "self_attn.q_norm.weight", hd);
    norm(p + "self_attn.k_norm.weight", hd);
  };
  const auto common = [&](const std::string& p) {
    norm(p + "input_layernorm.weight", H);
    norm(p + "post_attention_layernorm.weight", H);
    proj(p + "mlp.gate_proj.weight", FF, H);
    proj(p + "mlp.up_proj.weight", FF, H);
    proj(p + "mlp.down_proj.weight", H, FF);
  };
  for (int il = 0; il < s.layers; ++il) {
    const std::string p = P + "layers." + std::to_string(il) + ".";
    common(p);
    if ((il + 1) % s.interval == 0) {
      attention(p);
    } else {
      const std::string a = p + "linear_attn.";
      proj(a + "in_proj_qkv.weight", qkv, H);
      proj(a + "in_proj_z.weight", inner, H);
      proj(a + "in_proj_b.weight", static_cast<uint64_t>(s.nv), H);
      proj(a + "in_proj_a.weight", static_cast<uint64_t>(s.nv), H);
      w.add(a + "conv1d.weight", {qkv, 1, static_cast<uint64_t>(s.conv)},
            fill(qkv * static_cast<uint64_t>(s.conv), 0.0f, 0.6f));
      w.add(a + "dt_bias", {static_cast<uint64_t>(s.nv)}, fill(static_cast<uint64_t>(s.nv), 0.0f, 1.0f));
      w.add(a + "A_log", {static_cast<uint64_t>(s.nv)}, fill(static_cast<uint64_t>(s.nv), 0.0f, 0.7f));
      w.add(a + "norm.weight", {static_cast<uint64_t>(s.dv)}, fill(static_cast<uint64_t>(s.dv), 1.0f, 0.2f));
      proj(a + "out_proj.weight", H, inner);
    }
  }
  norm(P + "norm.weight", H);
  if (!s.tied) proj("lm_head.weight", static_cast<uint64_t>(s.vocab_size), H);
  if (s.mtp) {
    proj("mtp.fc.weight", H, 2 * H);
    norm("mtp.pre_fc_norm_embedding.weight", H);
    norm("mtp.pre_fc_norm_hidden.weight", H);
    norm("mtp.norm.weight", H);
    common("mtp.layers.0.");
    attention("mtp.layers.0.");
  }
  return w;
}

inline StEntry entry_of(const HfWeights& w, const std::string& name, const std::string& dtype) {
  StEntry e{name, dtype, w.shape.at(name), {}};
  const std::vector<float>& v = w[name];
  const DType d = dtype == "BF16" ? DType::kBF16 : dtype == "F16" ? DType::kF16 : DType::kF32;
  e.bytes.resize(dtype_bytes(d, v.size()));
  encode_row(d, v.data(), e.bytes.data(), static_cast<int64_t>(v.size()));
  return e;
}

inline nlohmann::json hf_config_json(const TinyHfSpec& s) {
  nlohmann::json layer_types = nlohmann::json::array();
  for (int i = 0; i < s.layers; ++i) {
    layer_types.push_back((i + 1) % s.interval == 0 ? "full_attention" : "linear_attention");
  }
  nlohmann::json rope = {{"rope_type", "default"},
                         {"rope_theta", s.rope_theta},
                         {"partial_rotary_factor", s.partial_rotary},
                         {"mrope_section", s.mrope_section},
                         {"mrope_interleaved", true}};
  nlohmann::json text = {
      {"model_type", "qwen3_5_text"},
      {"vocab_size", s.vocab_size},
      {"hidden_size", s.hidden},
      {"intermediate_size", s.ff},
      {"num_hidden_layers", s.layers},
      {"num_attention_heads", s.heads},
      {"num_key_value_heads", s.kv_heads},
      {"head_dim", s.head_dim},
      {"rms_norm_eps", 1e-6},
      {"rope_parameters", rope},
      {"partial_rotary_factor", s.partial_rotary},
      {"linear_num_key_heads", s.nk},
      {"linear_num_value_heads", s.nv},
      {"linear_key_head_dim", s.dk},
      {"linear_value_head_dim", s.dv},
      {"linear_conv_kernel_dim", s.conv},
      {"layer_types", layer_types},
      {"full_attention_interval", s.interval},
      {"tie_word_embeddings", s.tied},
      {"max_position_embeddings", 4096},
      {"mtp_num_hidden_layers", s.mtp ? 1 : 0},
      {"mtp_use_dedicated_embeddings", false},
      {"attn_output_gate", true},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"eos_token_id", nullptr},
  };
  if (!s.nested) {
    text["architectures"] = {"Qwen3_5ForCausalLM"};
    return text;
  }
  return {{"architectures", {"Qwen3_5ForConditionalGeneration"}},
          {"model_type", "qwen3_5"},
          {"text_config", text},
          {"vision_config", {{"model_type", "qwen3_5"}, {"depth", 2}}},
          {"tie_word_embeddings", s.tied}};
}

// Our BPE trainer's vocabulary (ChatML specials included), small enough for the embedding rows.
inline BpeVocab tiny_vocab(int max_tokens) {
  BpeTrainOptions o;
  o.n_merges = std::max(0, max_tokens - 256 - static_cast<int>(o.special_tokens.size()));
  auto v = train_bpe(builtin_training_corpus(), o);
  return *v;  // the built-in corpus always trains
}

inline const char* kTinyChatTemplate =
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

// Writes the whole checkpoint folder. `skip` names HF tensors to leave out, `extra` adds tensors.
inline void write_hf_checkpoint(const std::string& dir, const TinyHfSpec& s, const HfWeights& w,
                                const std::vector<std::string>& skip = {},
                                const std::vector<StEntry>& extra = {}) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::vector<std::vector<StEntry>> shards(static_cast<size_t>(std::max(1, s.shards)));
  size_t i = 0;
  for (const std::string& name : w.order) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    shards[i++ % shards.size()].push_back(entry_of(w, name, s.dtype));
  }
  for (const StEntry& e : extra) shards[0].push_back(e);
  if (shards.size() == 1) {
    write_file(dir + "/model.safetensors", safetensors_bytes(shards[0], {{"format", "pt"}}));
  } else {
    nlohmann::json map = nlohmann::json::object();
    for (size_t k = 0; k < shards.size(); ++k) {
      const std::string file =
          "model-0000" + std::to_string(k + 1) + "-of-0000" + std::to_string(shards.size()) + ".safetensors";
      write_file(dir + "/" + file, safetensors_bytes(shards[k], {{"format", "pt"}}));
      for (const StEntry& e : shards[k]) map[e.name] = file;
    }
    write_file(dir + "/model.safetensors.index.json",
               nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump(1));
  }
  write_file(dir + "/config.json", hf_config_json(s).dump(1));
  const BpeVocab vocab = tiny_vocab(s.vocab_size - 20);
  write_file(dir + "/tokenizer.json", *bpe_vocab_to_tokenizer_json(vocab));
  write_file(dir + "/tokenizer_config.json", nlohmann::json{{"eos_token", "<|im_end|>"},
                                                            {"pad_token", "<|endoftext|>"},
                                                            {"bos_token", nullptr},
                                                            {"chat_template", kTinyChatTemplate}}
                                                 .dump(1));
}

}  // namespace qc::test
