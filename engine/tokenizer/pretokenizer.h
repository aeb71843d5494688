// Pre-tokenizers: the regex that cuts text into words before byte-level BPE runs, selected by the name
// GGUF stores in `tokenizer.ggml.pre`. Backed by PCRE2 (UTF + UCP so \p{L}, \s and friends are Unicode
// aware; \s is compiled as \p{White_Space}, Hugging Face's meaning); the pattern is compiled (and
// JIT-compiled when the library supports it) once per object.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qwenchat/result.h"

namespace qc {

// The regex text of a named pre-tokenizer, "" for an unknown name.
std::string_view pretokenizer_regex(std::string_view name);
// The name whose regex is exactly `regex` (tokenizer.json Split patterns), "" for none.
std::string_view pretokenizer_for_regex(std::string_view regex);
// "qwen35, qwen2": for error messages.
std::string supported_pretokenizers();

class PreTokenizer {
 public:
  // Error naming `name` and the supported names when it is unknown.
  static Result<std::unique_ptr<PreTokenizer>> create(std::string_view name);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the pre-tokens of `text` (valid UTF-8) as views into it. The regex matches become
  // pre-tokens and so would any text between matches (Hugging Face's "Isolated" split; our patterns
  // leave none). Errors only when PCRE2 itself fails (resource limits).
  Status split(std::string_view text, std::vector<std::string_view>* out) const;

  const std::string& name() const { return name_; }

 private:
  PreTokenizer() = default;
  std::string name_;
  void* code_ = nullptr;  // pcre2_code_8*, kept opaque so this header does not pull in pcre2.h
};

}  // namespace qc
