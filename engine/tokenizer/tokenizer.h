// Text <-> token ids. One interface for byte-level BPE (GGUF `gpt2` vocabularies, tokenizer.json) and
// SentencePiece (`llama` vocabularies, .model files).
//
// Rules every implementation follows:
// - Invalid UTF-8 in the input is replaced before anything else runs: each maximal subpart of an
//   ill-formed sequence becomes one U+FFFD (Unicode 15 section 3.9 "best practice", the rule of Rust's
//   String::from_utf8_lossy, which Hugging Face tokenizers use, and of Python's errors="replace"). So
//   decode(encode(s)) == utf8_lossy(s), and == s for valid UTF-8 (for SentencePiece only when the
//   normalizer is the identity, whitespace is kept and byte fallback covers every character).
// - With `parse_special` on, the text of every control and user-defined token ("<|im_start|>",
//   "<think>") is matched whole, longest first, left to right, before the pre-tokenizer runs; with it off
//   no special token can come out of text (SentencePiece's own user-defined symbols excepted: the library
//   always matches those). Note Hugging Face and llama.cpp match user-defined (non-special added) tokens
//   even with special parsing off; we do not, so a user typing "<think>" gets plain text tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qwenchat/result.h"

namespace qc {
namespace gguf {
class File;
}

// Ids the chat layer needs; -1 when the vocabulary has no such token.
struct SpecialTokens {
  int32_t bos = -1;
  int32_t eos = -1;          // <|endoftext|> or </s>
  int32_t im_start = -1;     // <|im_start|>
  int32_t im_end = -1;       // <|im_end|>
  int32_t think_begin = -1;  // <think>
  int32_t think_end = -1;    // </think>
  int32_t pad = -1;
  std::vector<int32_t> stop;  // generation stops on any of these (im_end, eos, <|endoftext|>, eot)
};

// GGUF `tokenizer.ggml.token_type` values (the same numbers as SentencePiece's piece types).
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // special tokens: <|im_start|>, <|endoftext|>, </s>
  kUserDefined = 4,  // added tokens that are not "special" in Hugging Face terms: <think>
  kUnused = 5,
  kByte = 6,  // SentencePiece byte-fallback pieces <0xNN>
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // `parse_special`: special/added tokens written in the text ("<|im_start|>") become their ids. User
  // text is encoded with it off so a user cannot inject control tokens.
  virtual Result<std::vector<int32_t>> encode(std::string_view text, bool parse_special) const = 0;
  // The bytes of one token (after byte-level / SentencePiece decoding; may be a partial UTF-8 character).
  // Control and user-defined tokens give their text ("<|im_end|>"); callers hide them with is_control().
  // An id outside [0, n_vocab) gives "".
  virtual std::string token_bytes(int32_t id) const = 0;
  // Concatenated token_bytes. Not necessarily valid UTF-8 (ids may cut a character); pass the result
  // through utf8_lossy() or feed token_bytes to a Utf8Stream for display.
  virtual std::string decode(const std::vector<int32_t>& ids) const;
  virtual int n_vocab() const = 0;
  virtual const SpecialTokens& special() const = 0;
  virtual bool is_control(int32_t id) const = 0;       // special tokens shown only in debug views
  virtual TokenType token_type(int32_t id) const = 0;  // kUnused for an id out of range
  // Id of the control or user-defined token whose text is exactly `text`, -1 if none. The chat layer
  // uses it to place template markup tokens without parsing specials in user content.
  virtual int32_t special_id(std::string_view text) const = 0;
  virtual std::string kind() const = 0;  // "bpe/qwen35", "sentencepiece"
};

// ---- Byte-level BPE ----

// A byte-level BPE vocabulary as GGUF stores it. Normal tokens are written in the GPT-2 byte->unicode
// mapped form ("Ġhello" for " hello"); control and user-defined tokens as their plain text.
struct BpeVocab {
  std::vector<std::string> tokens;                 // id -> text
  std::vector<std::string> merges;                 // "left right", rank = index (lower merges first)
  std::vector<int32_t> token_types;                // TokenType per token; empty = all normal
  std::string pre;                                 // pre-tokenizer name: "qwen35", "qwen2", "llama-bpe"
  // The normaliser as tokenizer.json's `normalizer` JSON ("" = none; tokenizer/normalizer.h).
  std::string normalizer;
  int32_t bos = -1, eos = -1, pad = -1, eot = -1;  // from the file; eos -1 = look up <|endoftext|>
  // tokenizer.json `ignore_merges`: a pre-token that is itself a token is not split (Llama-3 style).
  bool ignore_merges = false;
};

// Validates the vocabulary (sizes, token types, special ids in range, merges whose parts or result are
// not tokens, the pre-tokenizer name) and compiles the pre-tokenizer regex once. A text that appears
// twice keeps its first id. Encoding a byte that has no token is an error at encode time (never a
// crash); vocabularies with all 256 byte tokens, as GPT-2 / Qwen have, never hit it.
Result<std::unique_ptr<Tokenizer>> make_bpe_tokenizer(const BpeVocab& vocab);

// ---- SentencePiece ----

struct SpmVocab {
  std::vector<std::string> pieces;  // "▁hello", "<0x0A>", "<s>"
  std::vector<float> scores;        // empty = all 0
  std::vector<int32_t> types;       // TokenType per piece; empty = all normal
  bool unigram = false;             // model type: false = BPE (GGUF `llama`), true = unigram
  int32_t bos = -1, eos = -1, pad = -1;
  bool add_space_prefix = true;  // tokenizer.ggml.add_space_prefix (normalizer add_dummy_prefix)
  bool remove_extra_whitespaces = false;
};

// Builds the ModelProto bytes from the vocabulary (identity normalizer, byte fallback on when the
// vocabulary has byte pieces) and loads them into libsentencepiece.
Result<std::unique_ptr<Tokenizer>> make_spm_tokenizer(const SpmVocab& vocab);
// Loads a SentencePiece `.model` file as it is (its own normalizer included).
Result<std::unique_ptr<Tokenizer>> load_sentencepiece_model(const std::string& path);

// ---- Loaders ----

// From GGUF metadata (tokenizer.ggml.*). Errors name the file and the key.
Result<BpeVocab> bpe_vocab_from_gguf(const gguf::File& file);
Result<SpmVocab> spm_vocab_from_gguf(const gguf::File& file);
// Picks the implementation from `tokenizer.ggml.model` ("gpt2" or "llama").
Result<std::unique_ptr<Tokenizer>> load_tokenizer(const gguf::File& file);

// From a Hugging Face tokenizer.json (model.type BPE with a byte-level pre-tokenizer whose Split regex
// is one of ours). `source` names the input in messages. The normalizer is kept and applied
// (tokenizer/normalizer.h); one with a step we do not implement is refused.
Result<BpeVocab> bpe_vocab_from_tokenizer_json(std::string_view json_text, const std::string& source);
Result<std::unique_ptr<Tokenizer>> load_tokenizer_json(const std::string& path);

// ---- UTF-8 ----

// Replaces each maximal ill-formed subpart with U+FFFD (see the top of this file).
std::string utf8_lossy(std::string_view bytes);
bool utf8_valid(std::string_view bytes);

// Streaming-safe decoding: feeds token bytes and returns only complete UTF-8 characters, holding a
// partial character until the token that completes it. Invalid sequences come out as U+FFFD (the same
// rule as utf8_lossy, so concatenated output == utf8_lossy(concatenated input)).
class Utf8Stream {
 public:
  std::string push(std::string_view bytes);
  std::string flush();  // end of stream: pending partial bytes become U+FFFD
 private:
  std::string pending_;
};

}  // namespace qc
