#include "import/hf_config.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/config.h"
#include "qwenchat/json_depth.h"
#include "util/read_file.h"

namespace qc {
namespace {

using nlohmann::json;

// Typed field access on one JSON object, with messages naming the file and the field path.
class Fields {
 public:
  Fields(const json& obj, std::string src, std::string prefix)
      : obj_(obj), src_(std::move(src)), prefix_(std::move(prefix)) {}

  bool has(const char* key) const { return obj_.contains(key) && !obj_[key].is_null(); }
  const json& at(const char* key) const { return obj_[key]; }
  Error bad(const char* key, const std::string& what) const {
    return make_error(src_ + ": " + prefix_ + key + ": " + what);
  }

  // A positive integer; `fallback` when absent (required when fallback is 0).
  Result<int> positive(const char* key, int fallback = 0) const {
    if (!has(key)) {
      if (fallback > 0) return fallback;
      return make_error(src_ + ": " + prefix_ + key + " is missing", "config.json must give this field");
    }
    const json& v = obj_[key];
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (int64_t{1} << 30)) {
      return bad(key, "expected a positive integer, got " + v.dump());
    }
    return static_cast<int>(v.get<int64_t>());
  }
  Result<int> non_negative(const char* key, int fallback) const {
    if (!has(key)) return fallback;
    const json& v = obj_[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t{1} << 30)) {
      return bad(key, "expected a non-negative integer, got " + v.dump());
    }
    return static_cast<int>(v.get<int64_t>());
  }
  Result<double> number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    if (!obj_[key].is_number()) return bad(key, "expected a number, got " + obj_[key].dump());
    return obj_[key].get<double>();
  }
  Result<bool> boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!obj_[key].is_boolean()) return bad(key, "expected true or false, got " + obj_[key].dump());
    return obj_[key].get<bool>();
  }
  Result<std::string> string(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!obj_[key].is_string()) return bad(key, "expected a string, got " + obj_[key].dump());
    return obj_[key].get<std::string>();
  }
  // An id given as an integer or a list of integers (eos_token_id): the first, -1 when absent.
  Result<int> first_id(const char* key) const {
    if (!has(key)) return -1;
    const json& v = obj_[key];
    const json& first = v.is_array() && !v.empty() ? v[0] : v;
    if (!first.is_number_integer() || first.get<int64_t>() < 0 || first.get<int64_t>() > INT32_MAX) {
      return bad(key, "expected a token id or a list of ids, got " + v.dump());
    }
    return static_cast<int>(first.get<int64_t>());
  }

 private:
  const json& obj_;
  std::string src_, prefix_;
};

Status read_rope(const Fields& text, const std::string& src, HfTextConfig& c) {
  // transformers 5 keeps RoPE settings in rope_parameters; older files in rope_scaling plus top-level keys.
  const char* rope_key = text.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  static const json kEmpty = json::object();
  const bool have = text.has(rope_key);
  if (have && !text.at(rope_key).is_object()) return text.bad(rope_key, "expected an object");
  const std::string prefix = std::string(c.nested ? "text_config." : "") + rope_key + ".";
  const Fields rope(have ? text.at(rope_key) : kEmpty, src, prefix);

  QC_ASSIGN(std::string type, rope.string("rope_type", ""));
  if (type.empty()) {
    QC_ASSIGN(type, rope.string("type", "default"));
  }
  if (type != "default" && type != "mrope") {
    return rope.bad("rope_type", "\"" + type + "\" is not supported (expected \"default\": no RoPE scaling)");
  }
  QC_ASSIGN(c.rope_theta, rope.number("rope_theta", 0.0));
  if (c.rope_theta == 0.0) {
    QC_ASSIGN(c.rope_theta, text.number("rope_theta", 0.0));
  }
  if (!(c.rope_theta > 1.0 && c.rope_theta < 1e12)) {
    return make_error(src + ": rope_theta is missing or out of range (looked in " + prefix +
                      "rope_theta and rope_theta), got " + std::to_string(c.rope_theta));
  }
  QC_ASSIGN(const double top_factor, text.number("partial_rotary_factor", 0.25));
  QC_ASSIGN(c.partial_rotary_factor, rope.number("partial_rotary_factor", top_factor));
  if (rope.has("mrope_section")) {
    const json& s = rope.at("mrope_section");
    if (!s.is_array() || s.size() > 4) return rope.bad("mrope_section", "expected up to 4 integers");
    for (const json& x : s) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > 65536) {
        return rope.bad("mrope_section", "expected non-negative integers, got " + s.dump());
      }
      c.mrope_section.push_back(static_cast<int>(x.get<int64_t>()));
    }
  }
  return {};
}

Status read_layer_types(const Fields& text, HfTextConfig& c) {
  const int n = c.num_hidden_layers;
  c.is_full_attention.assign(static_cast<size_t>(n), false);
  QC_ASSIGN(c.full_attention_interval, text.positive("full_attention_interval", 4));
  if (text.has("layer_types")) {
    const json& lt = text.at("layer_types");
    if (!lt.is_array() || lt.size() != static_cast<size_t>(n)) {
      return text.bad("layer_types", "expected a list of " + std::to_string(n) + " layer types");
    }
    for (int i = 0; i < n; ++i) {
      const json& t = lt[static_cast<size_t>(i)];
      if (t == "full_attention") {
        c.is_full_attention[static_cast<size_t>(i)] = true;
      } else if (t != "linear_attention") {
        return text.bad("layer_types", "entry " + std::to_string(i) + " is " + t.dump() +
                                           ": expected \"linear_attention\" or \"full_attention\"");
      }
    }
    // The GGUF describes the pattern by its period (qwen35.full_attention_interval), as llama.cpp does.
    int first = -1;
    for (int i = 0; i < n && first < 0; ++i) first = c.is_full_attention[static_cast<size_t>(i)] ? i : -1;
    if (first < 0) return text.bad("layer_types", "has no full_attention layer");
    c.full_attention_interval = first + 1;
    for (int i = 0; i < n; ++i) {
      if (c.is_full_attention[static_cast<size_t>(i)] != ((i + 1) % c.full_attention_interval == 0)) {
        return text.bad("layer_types", "is not periodic (layer " + std::to_string(i) +
                                           " breaks the pattern of one full_attention layer every " +
                                           std::to_string(c.full_attention_interval) + ")");
      }
    }
  } else {
    for (int i = 0; i < n; ++i)
      c.is_full_attention[static_cast<size_t>(i)] = (i + 1) % c.full_attention_interval == 0;
  }
  return {};
}

Result<HfTextConfig> parse(const json& top, const std::string& src) {
  if (!top.is_object()) return make_error(src + ": expected a JSON object at the top level");
  HfTextConfig c;
  const Fields root(top, src, "");
  QC_ASSIGN(c.model_type, root.string("model_type", ""));
  if (root.has("architectures") && top["architectures"].is_array() && !top["architectures"].empty() &&
      top["architectures"][0].is_string()) {
    c.architecture = top["architectures"][0].get<std::string>();
  }
  if (c.model_type != "qwen3_5" && c.model_type != "qwen3_5_text") {
    return make_error(
        src + ": model_type \"" + c.model_type +
            "\" is not supported: expected \"qwen3_5\" or \"qwen3_5_text\"",
        "qwenchat-convert converts dense Qwen3.5-class checkpoints (Qwen3.5/3.6/3.8 27B and the "
        "small dense sizes); mixture-of-experts (qwen3_5_moe) and Qwen3-Next are not supported");
  }
  const json* text_obj = &top;
  if (c.model_type == "qwen3_5" && top.contains("text_config") && !top["text_config"].is_null()) {
    if (!top["text_config"].is_object()) return make_error(src + ": text_config: expected an object");
    text_obj = &top["text_config"];
    c.nested = true;
  }
  const Fields text(*text_obj, src, c.nested ? "text_config." : "");
  QC_ASSIGN(const std::string text_type, text.string("model_type", "qwen3_5_text"));
  if (c.nested && text_type != "qwen3_5_text") {
    return text.bad("model_type", "\"" + text_type + "\" is not supported: expected \"qwen3_5_text\"");
  }

  QC_ASSIGN(c.vocab_size, text.positive("vocab_size"));
  QC_ASSIGN(c.hidden_size, text.positive("hidden_size"));
  QC_ASSIGN(c.num_hidden_layers, text.positive("num_hidden_layers"));
  if (c.num_hidden_layers > kMaxBlockCount) {
    return text.bad("num_hidden_layers", std::to_string(c.num_hidden_layers) + ": expected at most " +
                                             std::to_string(kMaxBlockCount) + " layers");
  }
  QC_ASSIGN(c.intermediate_size, text.positive("intermediate_size"));
  QC_ASSIGN(c.num_attention_heads, text.positive("num_attention_heads"));
  QC_ASSIGN(c.num_key_value_heads, text.positive("num_key_value_heads"));
  QC_ASSIGN(c.head_dim, text.positive("head_dim", 256));
  QC_ASSIGN(c.rms_norm_eps, text.number("rms_norm_eps", 1e-6));
  if (!(c.rms_norm_eps > 0.0 && c.rms_norm_eps < 1e-2)) {
    return text.bad("rms_norm_eps",
                    "expected a small positive number, got " + std::to_string(c.rms_norm_eps));
  }
  QC_ASSIGN(c.linear_num_key_heads, text.positive("linear_num_key_heads", 16));
  QC_ASSIGN(c.linear_num_value_heads, text.positive("linear_num_value_heads", 32));
  QC_ASSIGN(c.linear_key_head_dim, text.positive("linear_key_head_dim", 128));
  QC_ASSIGN(c.linear_value_head_dim, text.positive("linear_value_head_dim", 128));
  QC_ASSIGN(c.linear_conv_kernel_dim, text.positive("linear_conv_kernel_dim", 4));
  QC_ASSIGN(c.max_position_embeddings, text.positive("max_position_embeddings", 32768));
  QC_ASSIGN(c.mtp_num_hidden_layers, text.non_negative("mtp_num_hidden_layers", 0));
  QC_TRY(read_rope(text, src, c));
  QC_TRY(read_layer_types(text, c));

  // Tying: the text config's flag and the top-level one (multimodal files carry both) must agree.
  QC_ASSIGN(const bool tie_text, text.boolean("tie_word_embeddings", false));
  c.tie_word_embeddings = tie_text;
  if (c.nested && root.has("tie_word_embeddings")) {
    QC_ASSIGN(const bool tie_top, root.boolean("tie_word_embeddings", false));
    if (text.has("tie_word_embeddings") && tie_top != tie_text) {
      return make_error(src + ": tie_word_embeddings is " + (tie_top ? "true" : "false") +
                        " but text_config.tie_word_embeddings is " + (tie_text ? "true" : "false"));
    }
    c.tie_word_embeddings = tie_top;
  }
  QC_ASSIGN(c.eos_token_id, text.first_id("eos_token_id"));
  if (c.eos_token_id < 0) {
    QC_ASSIGN(c.eos_token_id, root.first_id("eos_token_id"));
  }
  QC_ASSIGN(c.bos_token_id, text.first_id("bos_token_id"));
  if (c.bos_token_id < 0) {
    QC_ASSIGN(c.bos_token_id, root.first_id("bos_token_id"));
  }

  // Variants whose math the engine does not implement.
  QC_ASSIGN(const bool gate, text.boolean("attn_output_gate", true));
  if (!gate)
    return text.bad("attn_output_gate", "false is not supported (qwen35 attention has an output gate)");
  QC_ASSIGN(const bool bias, text.boolean("attention_bias", false));
  if (bias) return text.bad("attention_bias", "true is not supported (qwen35 projections have no biases)");
  QC_ASSIGN(const std::string act, text.string("hidden_act", "silu"));
  if (act != "silu") return text.bad("hidden_act", "\"" + act + "\" is not supported (expected \"silu\")");
  if (c.mtp_num_hidden_layers > 1) {
    return text.bad("mtp_num_hidden_layers", std::to_string(c.mtp_num_hidden_layers) +
                                                 " is not supported (the engine runs one MTP layer)");
  }
  QC_ASSIGN(const bool dedicated, text.boolean("mtp_use_dedicated_embeddings", false));
  if (dedicated) return text.bad("mtp_use_dedicated_embeddings", "true is not supported");
  const double rope_dims = c.head_dim * c.partial_rotary_factor;
  if (!(c.partial_rotary_factor > 0.0 && c.partial_rotary_factor <= 1.0) ||
      rope_dims != std::floor(rope_dims) || static_cast<int>(rope_dims) % 2 != 0) {
    return make_error(src + ": partial_rotary_factor " + std::to_string(c.partial_rotary_factor) +
                      " x head_dim " + std::to_string(c.head_dim) +
                      " must give an even number of rotated dims");
  }
  return c;
}

}  // namespace

Result<HfTextConfig> parse_hf_config(std::string_view json_text, const std::string& source) {
  QC_TRY(check_json_depth(json_text, source));
  const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error(source + ": not valid JSON");
  try {
    return parse(j, source);
  } catch (const json::exception& e) {  // a field of an unexpected type that a check above missed
    return make_error(source + ": unexpected JSON content: " + e.what());
  }
}

Result<HfTextConfig> read_hf_config(const std::string& path) {
  QC_ASSIGN(const std::string text, read_whole_file(path, "a checkpoint folder needs its config.json"));
  return parse_hf_config(text, path);
}

Result<ModelShape> shape_from_hf_config(const HfTextConfig& c, int n_mtp, const std::string& name) {
  ModelShape s;
  s.name = name;
  s.n_embd = c.hidden_size;
  s.n_layer = c.num_hidden_layers;
  s.n_ff = c.intermediate_size;
  s.n_head = c.num_attention_heads;
  s.n_head_kv = c.num_key_value_heads;
  s.head_dim = c.head_dim;
  s.rope_dims = c.rope_dims();
  s.rope_theta = static_cast<float>(c.rope_theta);
  s.ssm_conv_kernel = c.linear_conv_kernel_dim;
  s.ssm_n_k_heads = c.linear_num_key_heads;
  s.ssm_n_v_heads = c.linear_num_value_heads;
  s.ssm_head_k_dim = c.linear_key_head_dim;
  s.ssm_head_v_dim = c.linear_value_head_dim;
  s.full_attention_interval = c.full_attention_interval;
  s.n_vocab = c.vocab_size;
  s.n_mtp = n_mtp;
  s.tied_embeddings = c.tie_word_embeddings;
  s.n_ctx_train = c.max_position_embeddings;
  s.rms_eps = static_cast<float>(c.rms_norm_eps);
  QC_TRY(s.validate());
  return s;
}

}  // namespace qc
