#include "tokenizer/normalizer.h"

#include <pcre2.h>
#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "qwenchat/json_depth.h"
#include "tokenizer/utf8.h"

namespace qc {

struct Normalizer::Step {
  enum class Kind { kNfc, kNfd, kNfkc, kNfkd, kLowercase, kReplaceString, kReplaceRegex, kPrepend, kStrip };
  Kind kind = Kind::kNfc;
  std::string pattern, content;  // Replace (pattern, content), Prepend (content)
  bool left = false, right = false;  // Strip
  std::shared_ptr<pcre2_code> regex;  // kReplaceRegex
};

namespace {

using nlohmann::json;
using Step = Normalizer::Step;

std::string unicode_form(std::string_view text, int options) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &out, static_cast<utf8proc_option_t>(options));
  if (n < 0) return std::string(text);  // invalid UTF-8: encode() made it valid before, so never here
  std::string s(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return s;
}

// Rust's char::to_lowercase per character (what Hugging Face's Lowercase runs): the simple mapping plus
// SpecialCasing's one unconditional multi-character lowercase, U+0130 -> "i\u0307".
std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const utf8::Char c = utf8::next(text, i);
    if (c.scan != utf8::Scan::kValid) {
      out.append(text.substr(i, c.length));
      i += c.length;
      continue;
    }
    if (c.code == 0x130) {
      out += "i\xCC\x87";
    } else {
      utf8::append(&out, static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c.code))));
    }
    i += c.length;
  }
  return out;
}

bool white_space(uint32_t c) {  // Rust's char::is_whitespace: the White_Space property
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view text, bool left, bool right) {
  size_t b = 0, e = text.size();
  if (left) {
    while (b < e) {
      const utf8::Char c = utf8::next(text, b);
      if (c.scan != utf8::Scan::kValid || !white_space(c.code)) break;
      b += c.length;
    }
  }
  if (right) {
    while (e > b) {  // step back to the start of the last character
      size_t s = e - 1;
      while (s > b && (static_cast<uint8_t>(text[s]) & 0xC0) == 0x80) --s;
      const utf8::Char c = utf8::next(text, s);
      if (c.scan != utf8::Scan::kValid || s + c.length != e || !white_space(c.code)) break;
      e = s;
    }
  }
  return std::string(text.substr(b, e - b));
}

std::string replace_string(std::string_view text, const std::string& pattern, const std::string& content) {
  if (pattern.empty()) return std::string(text);
  std::string out;
  size_t at = 0;
  for (size_t hit; (hit = text.find(pattern, at)) != std::string_view::npos; at = hit + pattern.size()) {
    out.append(text.substr(at, hit - at));
    out += content;
  }
  out.append(text.substr(at));
  return out;
}

std::string replace_regex(std::string_view text, pcre2_code* code, const std::string& content) {
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(pcre2_match_data_create_from_pattern(code, nullptr),
                                                                   pcre2_match_data_free);
  if (!md) return std::string(text);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::string out;
  size_t pos = 0, emitted = 0;
  while (pos <= text.size()) {
    const int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md.get(), nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    out.append(text.substr(emitted, ov[0] - emitted));
    out += content;
    emitted = ov[1];
    if (ov[1] > ov[0]) {
      pos = ov[1];
    } else {  // an empty match: replaced once, then step over one character
      if (ov[0] >= text.size()) break;
      const size_t len = utf8::next(text, ov[0]).length;
      out.append(text.substr(ov[0], len));
      emitted = ov[0] + len;
      pos = emitted;
    }
  }
  out.append(text.substr(std::min(emitted, text.size())));
  return out;
}

Result<std::string> pattern_of(const json& j, const std::string& src, bool* is_regex) {
  const json& p = j.contains("pattern") ? j["pattern"] : json();
  if (p.is_object() && p.contains("String") && p["String"].is_string()) {
    *is_regex = false;
    return p["String"].get<std::string>();
  }
  if (p.is_object() && p.contains("Regex") && p["Regex"].is_string()) {
    *is_regex = true;
    return p["Regex"].get<std::string>();
  }
  return make_error(src + ": normalizer Replace: expected a pattern {\"String\": ...} or {\"Regex\": ...}");
}

Status parse_step(const json& j, const std::string& src, int depth, std::vector<std::unique_ptr<Step>>* out) {
  if (!j.is_object()) return make_error(src + ": normalizer: expected an object, got " + std::string(j.type_name()));
  if (depth > 16) return make_error(src + ": normalizer: Sequences nested deeper than 16");
  const std::string type = j.value("type", "");
  auto step = std::make_unique<Step>();
  if (type == "Sequence") {
    const json& list = j.contains("normalizers") ? j["normalizers"] : json();
    if (!list.is_array()) return make_error(src + ": normalizer Sequence: expected an array \"normalizers\"");
    for (const json& s : list) QC_TRY(parse_step(s, src, depth + 1, out));
    return Status::success();
  }
  if (type == "NFC") {
    step->kind = Step::Kind::kNfc;
  } else if (type == "NFD") {
    step->kind = Step::Kind::kNfd;
  } else if (type == "NFKC") {
    step->kind = Step::Kind::kNfkc;
  } else if (type == "NFKD") {
    step->kind = Step::Kind::kNfkd;
  } else if (type == "Lowercase") {
    step->kind = Step::Kind::kLowercase;
  } else if (type == "Prepend") {
    if (!j.contains("prepend") || !j["prepend"].is_string())
      return make_error(src + ": normalizer Prepend: expected a string \"prepend\"");
    step->kind = Step::Kind::kPrepend;
    step->content = j["prepend"].get<std::string>();
  } else if (type == "Strip") {
    step->kind = Step::Kind::kStrip;
    step->left = j.value("strip_left", false);
    step->right = j.value("strip_right", false);
  } else if (type == "Replace") {
    bool regex = false;
    QC_ASSIGN(step->pattern, pattern_of(j, src, &regex));
    if (!j.contains("content") || !j["content"].is_string())
      return make_error(src + ": normalizer Replace: expected a string \"content\"");
    step->content = j["content"].get<std::string>();
    step->kind = regex ? Step::Kind::kReplaceRegex : Step::Kind::kReplaceString;
    if (regex) {
      int err = 0;
      PCRE2_SIZE offset = 0;
      pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(step->pattern.data()), step->pattern.size(),
                                       PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
      if (!code) {
        std::array<PCRE2_UCHAR, 256> buf{};
        pcre2_get_error_message(err, buf.data(), buf.size());
        return make_error(src + ": normalizer Replace: PCRE2 cannot compile \"" + step->pattern + "\" at offset " +
                          std::to_string(offset) + ": " + reinterpret_cast<const char*>(buf.data()));
      }
      step->regex = std::shared_ptr<pcre2_code>(code, pcre2_code_free);
    }
  } else {
    return make_error(src + ": normalizer \"" + type + "\" is not supported",
                      "supported: NFC, NFD, NFKC, NFKD, Lowercase, Replace, Prepend, Strip and Sequences of them");
  }
  out->push_back(std::move(step));
  return Status::success();
}

}  // namespace

Normalizer::Normalizer() = default;
Normalizer::~Normalizer() = default;
Normalizer::Normalizer(Normalizer&&) noexcept = default;
Normalizer& Normalizer::operator=(Normalizer&&) noexcept = default;

Result<Normalizer> Normalizer::from_json(std::string_view text, const std::string& source) {
  Normalizer n;
  if (text.empty() || text == "null") return n;
  QC_TRY(check_json_depth(text, source));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return make_error(source + ": normalizer: not valid JSON");
  if (j.is_null()) return n;
  QC_TRY(parse_step(j, source, 0, &n.steps_));
  n.json_ = j.dump();
  return n;
}

std::string Normalizer::apply(std::string_view text) const {
  std::string s(text);
  for (const auto& st : steps_) {
    switch (st->kind) {
      case Step::Kind::kNfc: s = unicode_form(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE); break;
      case Step::Kind::kNfd: s = unicode_form(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE); break;
      case Step::Kind::kNfkc: s = unicode_form(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT); break;
      case Step::Kind::kNfkd: s = unicode_form(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT); break;
      case Step::Kind::kLowercase: s = lowercase(s); break;
      case Step::Kind::kReplaceString: s = replace_string(s, st->pattern, st->content); break;
      case Step::Kind::kReplaceRegex: s = replace_regex(s, st->regex.get(), st->content); break;
      case Step::Kind::kPrepend:
        if (!s.empty()) s = st->content + s;  // Hugging Face prepends to non-empty text only
        break;
      case Step::Kind::kStrip: s = strip(s, st->left, st->right); break;
    }
  }
  return s;
}

std::string default_normalizer_json(std::string_view pre) {
  return pre == "qwen35" || pre == "qwen2" ? R"({"type":"NFC"})" : "";
}

}  // namespace qc
