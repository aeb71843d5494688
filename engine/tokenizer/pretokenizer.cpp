#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include <array>

#include "tokenizer/utf8.h"

namespace qc {
namespace {

struct Named {
  std::string_view name;
  std::string_view regex;
};

// qwen35: QWEN35.md section 7 (combining marks \p{M} join letters). qwen2: Qwen2/Qwen3's tokenizer.json.
// Both split digits one per token. llama-bpe (llama.cpp's name): Llama 3's tokenizer.json, qwen2's pattern
// with digits in runs of up to three; here so that the tokenizer agreement runs on a second published
// family (tests/agreement), not because the app loads Llama models.
constexpr std::array<Named, 3> kPreTokenizers = {{
    {"qwen35",
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
    {"qwen2",
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
    {"llama-bpe",
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
}};

pcre2_code* as_code(void* p) {
  return static_cast<pcre2_code*>(p);
}

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buf{};
  pcre2_get_error_message(code, buf.data(), buf.size());
  return std::string(reinterpret_cast<const char*>(buf.data()));
}

// The pattern PCRE2 compiles: the regex with \s and \S spelled \p{White_Space} and \P{White_Space}.
// Hugging Face runs these regexes on Oniguruma, whose Unicode \s is the White_Space property; PCRE2's
// UCP \s is its \h and \v lists plus \p{Z}, and \h still holds U+180E MONGOLIAN VOWEL SEPARATOR
// (whitespace until Unicode 6.3). The code point sweep in tests/agreement found that one character to
// split differently ("\t\u180e\u0365x"); with the property both engines agree on every code point
// PCRE2's tables assign.
std::string pcre2_pattern(std::string_view regex) {
  std::string out;
  out.reserve(regex.size() + 64);
  for (size_t i = 0; i < regex.size(); ++i) {
    if (regex[i] == '\\' && i + 1 < regex.size()) {
      const char next = regex[++i];
      if (next == 's') {
        out += R"(\p{White_Space})";
      } else if (next == 'S') {
        out += R"(\P{White_Space})";
      } else {
        out += '\\';
        out += next;
      }
      continue;
    }
    out += regex[i];
  }
  return out;
}

}  // namespace

std::string_view pretokenizer_regex(std::string_view name) {
  for (const Named& p : kPreTokenizers) {
    if (p.name == name) return p.regex;
  }
  return {};
}

std::string_view pretokenizer_for_regex(std::string_view regex) {
  for (const Named& p : kPreTokenizers) {
    if (p.regex == regex) return p.name;
  }
  return {};
}

std::string supported_pretokenizers() {
  std::string s;
  for (const Named& p : kPreTokenizers) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

Result<std::unique_ptr<PreTokenizer>> PreTokenizer::create(std::string_view name) {
  const std::string_view regex = pretokenizer_regex(name);
  if (regex.empty()) {
    return make_error("unknown pre-tokenizer \"" + std::string(name) +
                      "\" (supported: " + supported_pretokenizers() + ")");
  }
  int err = 0;
  PCRE2_SIZE offset = 0;
  const std::string pattern = pcre2_pattern(regex);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
  if (!code) {
    return make_error("pre-tokenizer \"" + std::string(name) +
                      "\": PCRE2 cannot compile its regex at offset " + std::to_string(offset) + ": " +
                      pcre2_message(err));
  }
  // JIT is 3-10x faster on these patterns; without JIT support pcre2_match interprets.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  std::unique_ptr<PreTokenizer> p(new PreTokenizer());
  p->name_ = std::string(name);
  p->code_ = code;
  return p;
}

PreTokenizer::~PreTokenizer() {
  pcre2_code_free(as_code(code_));
}

Status PreTokenizer::split(std::string_view text, std::vector<std::string_view>* out) const {
  pcre2_code* code = as_code(code_);
  // Match data per call keeps the object usable from several threads (compiled code is read-only).
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(
      pcre2_match_data_create_from_pattern(code, nullptr), pcre2_match_data_free);
  if (!md) return make_error("pre-tokenizer " + name_ + ": out of memory for PCRE2 match data");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;      // start of the next search
  size_t emitted = 0;  // end of the last pre-token
  while (pos < text.size()) {
    int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md.get(), nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // The JIT's 32 KiB default stack ran out (very long runs); the interpreter uses the heap.
      rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md.get(), nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      return make_error("pre-tokenizer " + name_ + ": PCRE2 match failed at byte " + std::to_string(pos) +
                        " of " + std::to_string(text.size()) + ": " + pcre2_message(rc));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    const size_t start = ov[0], end = ov[1];
    if (start > emitted) out->push_back(text.substr(emitted, start - emitted));  // unmatched gap
    if (end > start) {
      out->push_back(text.substr(start, end - start));
      emitted = end;
      pos = end;
    } else {
      // An empty match (none of our patterns can produce one): step over one character.
      pos = start + utf8::next(text, start).length;
    }
  }
  if (emitted < text.size()) out->push_back(text.substr(emitted));
  return Status::success();
}

}  // namespace qc
