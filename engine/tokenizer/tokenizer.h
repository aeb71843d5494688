// Text <-> token ids. One interface for byte-level BPE (GGUF `gpt2` vocabularies, tokenizer.json) and
// SentencePiece (`llama` vocabularies, .model files).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qwenchat/result.h"

namespace qc {
namespace gguf { class File; }

// Ids the chat layer needs; -1 when the vocabulary has no such token.
struct SpecialTokens {
  int32_t bos = -1;
  int32_t eos = -1;           // <|endoftext|> or </s>
  int32_t im_start = -1;      // <|im_start|>
  int32_t im_end = -1;        // <|im_end|>
  int32_t think_begin = -1;   // <think>
  int32_t think_end = -1;     // </think>
  int32_t pad = -1;
  std::vector<int32_t> stop;  // generation stops on any of these (im_end, eos)
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // `parse_special`: special/added tokens written in the text ("<|im_start|>") become their ids. User
  // text is encoded with it off so a user cannot inject control tokens.
  virtual Result<std::vector<int32_t>> encode(std::string_view text, bool parse_special) const = 0;
  // The bytes of one token (after byte-level / SentencePiece decoding; may be a partial UTF-8 character).
  virtual std::string token_bytes(int32_t id) const = 0;
  virtual std::string decode(const std::vector<int32_t>& ids) const;
  virtual int n_vocab() const = 0;
  virtual const SpecialTokens& special() const = 0;
  virtual bool is_control(int32_t id) const = 0;  // special tokens shown only in debug views
  virtual std::string kind() const = 0;           // "bpe/qwen35", "sentencepiece"
};

// Picks the implementation from `tokenizer.ggml.model`.
Result<std::unique_ptr<Tokenizer>> load_tokenizer(const gguf::File& file);

// Streaming-safe decoding: feeds token bytes and returns only complete UTF-8 characters, holding a
// partial character until the token that completes it. Invalid sequences come out as U+FFFD.
class Utf8Stream {
 public:
  std::string push(std::string_view bytes);
  std::string flush();  // end of stream: pending partial bytes become U+FFFD
 private:
  std::string pending_;
};

}  // namespace qc
