// Hugging Face tokenizer.json -> BpeVocab. Only what our byte-level BPE reproduces exactly is accepted:
// model BPE (no dropout, no byte fallback, no subword affixes), a Split pre-tokenizer whose regex is one of
// ours followed by ByteLevel without its own regex, and a normalizer of the steps tokenizer/normalizer.h
// implements (applied as Hugging Face applies it; llama.cpp skips normalizers).
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "qwenchat/json_depth.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/read_file.h"

namespace qc {
namespace {

using nlohmann::json;

// The Split regex, or an error naming what was found instead.
Result<std::string> split_regex(const json& pre, const std::string& src) {
  const auto bad = [&](const std::string& what) {
    return make_error(src + ": pre_tokenizer: " + what + "; supported: a Split regex of one of (" +
                      supported_pretokenizers() + ") followed by ByteLevel with use_regex false");
  };
  if (!pre.is_object()) return bad("expected an object, got " + std::string(pre.type_name()));
  const std::string type = pre.value("type", "");
  if (type != "Sequence") return bad("type \"" + type + "\" is not supported");
  const json& list = pre.contains("pretokenizers") ? pre["pretokenizers"] : json();
  if (!list.is_array() || list.size() != 2) return bad("expected a Sequence of [Split, ByteLevel]");
  const json& split = list[0];
  const json& bytes = list[1];
  if (split.value("type", "") != "Split")
    return bad("first step is \"" + split.value("type", "") + "\", not Split");
  if (bytes.value("type", "") != "ByteLevel") {
    return bad("second step is \"" + bytes.value("type", "") + "\", not ByteLevel");
  }
  if (bytes.value("use_regex", true) || bytes.value("add_prefix_space", false)) {
    return bad("ByteLevel with use_regex or add_prefix_space on");
  }
  if (split.value("behavior", "") != "Isolated" || split.value("invert", false)) {
    return bad("Split behavior \"" + split.value("behavior", "") + "\" (expected Isolated, not inverted)");
  }
  const json& pattern = split.contains("pattern") ? split["pattern"] : json();
  if (!pattern.is_object() || !pattern.contains("Regex") || !pattern["Regex"].is_string()) {
    return bad("Split pattern is not a {\"Regex\": ...}");
  }
  return pattern["Regex"].get<std::string>();
}

Result<BpeVocab> parse(const json& j, const std::string& src) {
  if (!j.is_object()) return make_error(src + ": expected a JSON object at the top level");
  const json& model = j.contains("model") ? j["model"] : json();
  if (!model.is_object()) return make_error(src + ": no \"model\" object");
  const std::string type = model.value("type", "BPE");
  if (type != "BPE") {
    return make_error(
        src + ": model.type: expected \"BPE\", got \"" + type + "\"",
        "only byte-level BPE tokenizer.json files are supported; SentencePiece models load from .model");
  }
  if (model.contains("dropout") && !model["dropout"].is_null()) {
    return make_error(src + ": model.dropout is set; BPE dropout is not supported");
  }
  if (model.value("byte_fallback", false)) return make_error(src + ": model.byte_fallback is not supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty()) {
      return make_error(src + ": model." + key + " is not supported");
    }
  }
  BpeVocab v;
  if (j.contains("normalizer") && !j["normalizer"].is_null()) {
    QC_ASSIGN(const Normalizer n, Normalizer::from_json(j["normalizer"].dump(), src));  // refuses unknown steps
    v.normalizer = n.json();
  }
  QC_ASSIGN(const std::string regex,
            split_regex(j.contains("pre_tokenizer") ? j["pre_tokenizer"] : json(), src));
  v.pre = std::string(pretokenizer_for_regex(regex));
  if (v.pre.empty()) {
    return make_error(src + ": pre_tokenizer Split regex is not one we implement: " + regex +
                      " (supported: " + supported_pretokenizers() + ")");
  }
  v.ignore_merges = model.value("ignore_merges", false);

  // id -> (text, type); vocabulary first, added tokens override the type of an id they share.
  std::map<int64_t, std::pair<std::string, TokenType>> by_id;
  const auto put = [&](int64_t id, const std::string& text, TokenType t, const char* where) -> Status {
    if (id < 0 || id >= INT32_MAX)
      return make_error(src + ": " + where + " \"" + text + "\": bad id " + std::to_string(id));
    auto [it, fresh] = by_id.emplace(id, std::pair{text, t});
    if (!fresh) {
      if (it->second.first != text) {
        return make_error(src + ": id " + std::to_string(id) + " is both \"" + it->second.first +
                          "\" and \"" + text + "\"");
      }
      it->second.second = t;
    }
    return Status::success();
  };
  const json& vocab = model.contains("vocab") ? model["vocab"] : json();
  if (!vocab.is_object()) return make_error(src + ": model.vocab: expected an object of token -> id");
  for (const auto& [text, id] : vocab.items()) {
    if (!id.is_number_integer())
      return make_error(src + ": model.vocab[\"" + text + "\"]: id is not an integer");
    QC_TRY(put(id.get<int64_t>(), text, TokenType::kNormal, "model.vocab"));
  }
  const json& added = j.contains("added_tokens") ? j["added_tokens"] : json::array();
  if (!added.is_array()) return make_error(src + ": added_tokens: expected an array");
  for (const json& a : added) {
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
        !a["content"].is_string()) {
      return make_error(src + ": added_tokens: expected objects with an integer id and a string content");
    }
    const std::string content = a["content"].get<std::string>();
    for (const char* flag : {"lstrip", "rstrip", "single_word"}) {
      if (a.value(flag, false)) {
        return make_error(src + ": added token \"" + content + "\" sets " + flag +
                          ", which is not supported");
      }
    }
    const TokenType t = a.value("special", false) ? TokenType::kControl : TokenType::kUserDefined;
    QC_TRY(put(a["id"].get<int64_t>(), content, t, "added token"));
  }
  if (by_id.empty()) return make_error(src + ": the vocabulary is empty");

  // Ids missing between 0 and the highest become "[PADn]" tokens, as llama.cpp does. Real vocabularies
  // are dense (Qwen's tokenizer.json has no gap at all), so the number of gaps is bounded by the number
  // of tokens (and a small floor): a single stray id of 2e9 would otherwise allocate 2e9 strings.
  const auto n = static_cast<size_t>(by_id.rbegin()->first + 1);
  const size_t max_gaps = std::max<size_t>(by_id.size(), 4096);
  if (n - by_id.size() > max_gaps) {
    return make_error(src + ": the highest id " + std::to_string(n - 1) + " leaves " +
                      std::to_string(n - by_id.size()) + " ids without a token; expected at most " +
                      std::to_string(max_gaps) + " gaps for " + std::to_string(by_id.size()) + " tokens");
  }
  v.tokens.resize(n);
  v.token_types.assign(n, static_cast<int32_t>(TokenType::kUnused));
  for (size_t id = 0; id < n; ++id) v.tokens[id] = "[PAD" + std::to_string(id) + "]";  // gaps, as llama.cpp
  for (const auto& [id, tt] : by_id) {
    v.tokens[static_cast<size_t>(id)] = tt.first;
    v.token_types[static_cast<size_t>(id)] = static_cast<int32_t>(tt.second);
  }

  const json& merges = model.contains("merges") ? model["merges"] : json::array();
  if (!merges.is_array()) return make_error(src + ": model.merges: expected an array");
  v.merges.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const json& m = merges[r];
    if (m.is_string()) {
      v.merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      const std::string a = m[0].get<std::string>(), b = m[1].get<std::string>();
      // GGUF joins the pair with a space, so a part holding one could not be stored either.
      if (a.empty() || b.empty() || a.find(' ') != std::string::npos || b.find(' ') != std::string::npos) {
        return make_error(src + ": model.merges[" + std::to_string(r) +
                          "]: parts must be non-empty, without spaces");
      }
      v.merges.push_back(a + " " + b);
    } else {
      return make_error(src + ": model.merges[" + std::to_string(r) +
                        "]: expected \"a b\" or [\"a\", \"b\"]");
    }
  }
  return v;
}

}  // namespace

Result<BpeVocab> bpe_vocab_from_tokenizer_json(std::string_view json_text, const std::string& source) {
  QC_TRY(check_json_depth(json_text, source));
  const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error(source + ": not valid JSON");
  try {
    return parse(j, source);
  } catch (const json::exception& e) {  // a field of an unexpected type that a check above missed
    return make_error(source + ": unexpected JSON content: " + e.what());
  }
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer_json(const std::string& path) {
  QC_ASSIGN(const std::string text, read_whole_file(path));
  QC_ASSIGN(const BpeVocab v, bpe_vocab_from_tokenizer_json(text, path));
  auto t = make_bpe_tokenizer(v);
  if (!t.ok()) return make_error(path + ": " + t.error().message, t.error().hint);
  return t;
}

}  // namespace qc
