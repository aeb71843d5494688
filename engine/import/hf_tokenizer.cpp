#include "import/hf_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "qwenchat/json_depth.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/spm_proto.h"
#include "util/read_file.h"

namespace qc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// tokenizer_config.json names special tokens as a string or as an AddedToken object {"content": ...}.
std::string token_text(const json& cfg, const char* key) {
  if (!cfg.contains(key)) return {};
  const json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return {};
}

// The chat template of tokenizer_config.json: a string, or a list of {name, template} (the "default" one).
Result<std::string> config_template(const json& cfg, const std::string& src) {
  if (!cfg.contains("chat_template") || cfg["chat_template"].is_null()) return std::string();
  const json& t = cfg["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {
    for (const json& e : t) {
      if (e.is_object() && e.value("name", "") == "default" && e.contains("template") &&
          e["template"].is_string()) {
        return e["template"].get<std::string>();
      }
    }
  }
  return make_error(src +
                    ": chat_template: expected a string or a list with a {\"name\": \"default\"} entry");
}

// Special ids, the chat template and padding from the files beside the vocabulary.
struct SideFiles {
  int32_t eos = -1, bos = -1, pad = -1;  // -1: not named (or not a token of the vocabulary)
  std::string chat_template;
  std::string template_source;
};

Result<SideFiles> read_side_files(const std::string& dir,
                                  const std::function<int32_t(const std::string&)>& id_of) {
  SideFiles out;
  std::error_code ec;
  const std::string cfg_path = (fs::path(dir) / "tokenizer_config.json").string();
  if (fs::exists(cfg_path, ec)) {
    QC_ASSIGN(const std::string cfg_text, read_whole_file(cfg_path));
    QC_TRY(check_json_depth(cfg_text, cfg_path));
    const json cfg = json::parse(cfg_text, nullptr, /*allow_exceptions=*/false);
    if (cfg.is_discarded() || !cfg.is_object()) return make_error(cfg_path + ": not a JSON object");
    out.eos = id_of(token_text(cfg, "eos_token"));
    out.bos = id_of(token_text(cfg, "bos_token"));
    out.pad = id_of(token_text(cfg, "pad_token"));
    QC_ASSIGN(out.chat_template, config_template(cfg, cfg_path));
    if (!out.chat_template.empty()) out.template_source = "tokenizer_config.json";
  }
  const std::string jinja_path = (fs::path(dir) / "chat_template.jinja").string();
  if (fs::exists(jinja_path, ec)) {
    QC_ASSIGN(out.chat_template, read_whole_file(jinja_path));
    out.template_source = "chat_template.jinja";
  }
  return out;
}

Status check_rows(const std::string& path, int32_t n_tokens, int n_rows) {
  if (n_rows > 0 && n_tokens > n_rows) {
    return make_error(path + ": " + std::to_string(n_tokens) + " tokens but the model has only " +
                      std::to_string(n_rows) + " embedding rows (config.json vocab_size)");
  }
  return Status::success();
}

std::unordered_map<std::string, int32_t> index_of(const std::vector<std::string>& tokens) {
  std::unordered_map<std::string, int32_t> ids;
  for (size_t i = 0; i < tokens.size(); ++i) ids.emplace(tokens[i], static_cast<int32_t>(i));
  return ids;
}

Result<HfTokenizer> read_sentencepiece(const std::string& dir, const std::string& path,
                                       const HfTokenizerOptions& options) {
  HfTokenizer out;
  out.sentencepiece = true;
  QC_ASSIGN(const std::string bytes, read_whole_file(path));
  std::string normalizer;
  QC_ASSIGN(out.spm, parse_spm_model_proto(bytes, path, &normalizer));
  SpmVocab& v = out.spm;
  if (!normalizer.empty() && normalizer != "identity") {
    out.notices.push_back(path + ": normalizer \"" + normalizer +
                          "\" is not applied (a GGUF llama vocabulary has none; llama.cpp does the same)");
  }
  if (v.unigram) {
    out.notices.push_back(path +
                          ": a unigram model; the engine segments a llama vocabulary by piece score "
                          "(BPE), which may split some words differently");
  }
  const auto ids = index_of(v.pieces);
  const auto id_of = [&](const std::string& text) -> int32_t {
    const auto it = ids.find(text);
    return it == ids.end() || text.empty() ? -1 : it->second;
  };
  QC_ASSIGN(const SideFiles side, read_side_files(dir, id_of));
  out.chat_template = side.chat_template;
  out.template_source = side.template_source;
  const int32_t n_tokens = static_cast<int32_t>(v.pieces.size());
  const auto in_range = [&](int32_t id) { return id >= 0 && id < n_tokens; };
  // tokenizer_config.json first, then the model's own ids, then config.json.
  if (side.eos >= 0) v.eos = side.eos;
  if (side.bos >= 0) v.bos = side.bos;
  if (side.pad >= 0) v.pad = side.pad;
  if (!in_range(v.eos)) v.eos = in_range(options.config_eos) ? options.config_eos : -1;
  if (!in_range(v.bos)) v.bos = in_range(options.config_bos) ? options.config_bos : -1;
  if (!in_range(v.pad)) v.pad = -1;

  QC_TRY(check_rows(path, n_tokens, options.n_rows));
  if (v.types.empty()) v.types.assign(v.pieces.size(), static_cast<int32_t>(TokenType::kNormal));
  if (v.scores.empty()) v.scores.assign(v.pieces.size(), 0.0f);
  for (int32_t i = n_tokens; i < options.n_rows; ++i) {
    v.pieces.push_back("[PAD" + std::to_string(i) + "]");
    v.scores.push_back(0.0f);
    v.types.push_back(static_cast<int32_t>(TokenType::kUnused));
  }
  v.remove_extra_whitespaces = false;  // what spm_vocab_from_gguf reads back for every llama vocabulary
  auto check = make_spm_tokenizer(v);
  if (!check.ok()) return make_error(path + ": " + check.error().message, check.error().hint);
  return out;
}

}  // namespace

Result<HfTokenizer> read_hf_tokenizer(const std::string& dir, const HfTokenizerOptions& options) {
  std::error_code ec;
  const std::string spm_path = (fs::path(dir) / "tokenizer.model").string();
  if (fs::exists(spm_path, ec)) return read_sentencepiece(dir, spm_path, options);

  HfTokenizer out;
  const std::string tok_path = (fs::path(dir) / "tokenizer.json").string();
  if (!fs::exists(tok_path, ec)) {
    return make_error(tok_path + ": missing",
                      "the checkpoint folder needs a byte-level BPE tokenizer.json or a "
                      "SentencePiece tokenizer.model");
  }
  QC_ASSIGN(const std::string tok_text, read_whole_file(tok_path));
  QC_ASSIGN(out.vocab, bpe_vocab_from_tokenizer_json(tok_text, tok_path));
  BpeVocab& v = out.vocab;

  const auto ids = index_of(v.tokens);
  const auto id_of = [&](const std::string& text) -> int32_t {
    const auto it = ids.find(text);
    return it == ids.end() ? -1 : it->second;
  };
  QC_ASSIGN(const SideFiles side, read_side_files(dir, id_of));
  v.eos = side.eos;
  v.bos = side.bos;
  v.pad = side.pad;
  out.chat_template = side.chat_template;
  out.template_source = side.template_source;
  const int32_t n_tokens = static_cast<int32_t>(v.tokens.size());
  if (v.eos < 0 && options.config_eos >= 0 && options.config_eos < n_tokens) v.eos = options.config_eos;
  if (v.bos < 0 && options.config_bos >= 0 && options.config_bos < n_tokens) v.bos = options.config_bos;

  QC_TRY(check_rows(tok_path, n_tokens, options.n_rows));
  if (options.n_rows > 0) {
    if (v.token_types.empty())
      v.token_types.assign(v.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
    for (int32_t i = n_tokens; i < options.n_rows; ++i) {
      v.tokens.push_back("[PAD" + std::to_string(i) + "]");
      v.token_types.push_back(static_cast<int32_t>(TokenType::kUnused));
    }
  }
  // Fail here, not when the converted file is first loaded.
  auto check = make_bpe_tokenizer(v);
  if (!check.ok()) return make_error(tok_path + ": " + check.error().message, check.error().hint);
  return out;
}

Result<std::string> bpe_vocab_to_tokenizer_json(const BpeVocab& v) {
  const std::string_view regex = pretokenizer_regex(v.pre);
  if (regex.empty()) return make_error("pre-tokenizer \"" + v.pre + "\" is unknown");
  json vocab = json::object();
  json added = json::array();
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    const int32_t type = v.token_types.empty() ? static_cast<int32_t>(TokenType::kNormal) : v.token_types[i];
    if (type == static_cast<int32_t>(TokenType::kControl) ||
        type == static_cast<int32_t>(TokenType::kUserDefined)) {
      added.push_back({{"id", i},
                       {"content", v.tokens[i]},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", type == static_cast<int32_t>(TokenType::kControl)}});
    } else if (type != static_cast<int32_t>(TokenType::kUnused)) {
      vocab[v.tokens[i]] = i;
    }
  }
  json merges = json::array();
  for (const std::string& m : v.merges) {
    const size_t sp = m.find(' ');
    if (sp == std::string::npos) return make_error("merge \"" + m + "\" is not \"left right\"");
    merges.push_back(json::array({m.substr(0, sp), m.substr(sp + 1)}));
  }
  const json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers", json::array({{{"type", "Split"},
                                        {"pattern", {{"Regex", std::string(regex)}}},
                                        {"behavior", "Isolated"},
                                        {"invert", false}},
                                       {{"type", "ByteLevel"},
                                        {"add_prefix_space", false},
                                        {"trim_offsets", false},
                                        {"use_regex", false}}})}}},
      {"post_processor", nullptr},
      {"decoder",
       {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", v.ignore_merges},
        {"vocab", vocab},
        {"merges", merges}}},
  };
  return j.dump(1, ' ', false, json::error_handler_t::replace);
}

}  // namespace qc
