// Text normalisation before pre-tokenisation, as Hugging Face tokenizers' `normalizer` defines it
// (tokenizers/src/normalizers): the steps real tokenizer.json files use -- NFC, NFD, NFKC, NFKD, Lowercase,
// Replace (a string or a regex), Prepend, Strip -- and Sequences of them, applied to the text between
// special tokens, whose own text is never normalised.
//
// The description is the tokenizer.json `normalizer` object itself (JSON text): a vocabulary converted to
// GGUF carries it in tokenizer.huggingface.normalizer, so a GGUF tokenises like its tokenizer.json. The
// Unicode forms come from utf8proc (Unicode 15 in Debian 12's 2.8; Hugging Face's unicode-normalization
// crate follows current Unicode: strings of characters assigned after utf8proc's version may differ).
// Lowercase follows Rust's str::to_lowercase: utf8proc's simple mapping plus the two context/length
// cases Rust adds (U+0130 -> "i\u0307", and capital sigma -> final sigma at the end of a word).
// Invalid UTF-8 (which Hugging Face cannot receive at all) passes through unchanged.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qwenchat/result.h"

namespace qc {

class Normalizer {
 public:
  // From the JSON text of a tokenizer.json `normalizer` ("" or "null": none). `source` names the input in
  // errors, which say which step type or field was not understood.
  static Result<Normalizer> from_json(std::string_view json_text, const std::string& source);

  bool empty() const { return steps_.empty(); }
  std::string apply(std::string_view text) const;
  const std::string& json() const { return json_; }  // what from_json read ("" = none)

  struct Step;  // normalizer.cpp
  Normalizer();
  ~Normalizer();
  Normalizer(Normalizer&&) noexcept;
  Normalizer& operator=(Normalizer&&) noexcept;
  Normalizer(const Normalizer&) = delete;
  Normalizer& operator=(const Normalizer&) = delete;

 private:
  std::vector<std::unique_ptr<Step>> steps_;
  std::string json_;
};

// The normaliser a GGUF vocabulary without tokenizer.huggingface.normalizer gets for its pre-tokenizer:
// NFC for the Qwen family (their tokenizer.json files all normalise to NFC; llama.cpp skips it, which is
// a llama.cpp defect), none otherwise.
std::string default_normalizer_json(std::string_view pre_tokenizer);

}  // namespace qc
