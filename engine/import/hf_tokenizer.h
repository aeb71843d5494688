// The tokenizer files of a Hugging Face checkpoint folder -> what the GGUF stores: tokenizer.model
// (SentencePiece, written as a `llama` vocabulary) or tokenizer.json (byte-level BPE, read by
// bpe_vocab_from_tokenizer_json, written as `gpt2`), the special ids and the chat template from
// tokenizer_config.json / chat_template.jinja. Also the reverse (BpeVocab -> tokenizer.json text), which
// tests and tools use to make small checkpoints.
#pragma once

#include <string>

#include "qwenchat/result.h"
#include "tokenizer/tokenizer.h"

namespace qc {

struct HfTokenizer {
  bool sentencepiece = false;  // true: `spm` holds the vocabulary; false: `vocab` does
  BpeVocab vocab;              // padded to the embedding rows with [PAD<id>] unused tokens, as llama.cpp does
  SpmVocab spm;                // padded likewise; scores 0, type unused
  std::vector<std::string> notices;  // decisions worth a line of output (normalizer not applied, ...)
  std::string chat_template;  // may be empty
  std::string template_source;  // "chat_template.jinja", "tokenizer_config.json" or "" (none)
};

struct HfTokenizerOptions {
  int n_rows = 0;       // embedding rows (config vocab_size); the vocabulary may not exceed it
  int config_eos = -1;  // config.json eos_token_id: used when tokenizer_config.json names none
  int config_bos = -1;
};

// Reads `dir`/tokenizer.model when present (SentencePiece: the original of a SentencePiece tokenizer, so
// it wins over a tokenizer.json beside it, as in llama.cpp's converter), else `dir`/tokenizer.json
// (required then); tokenizer_config.json and chat_template.jinja are optional (the .jinja file wins, as
// in transformers 5). eos/bos/pad come from tokenizer_config.json's eos_token, bos_token, pad_token (a
// string or {"content": ...}) when they name tokens of the vocabulary, else from the SentencePiece model's
// own ids, else from config.json. The vocabulary is checked by building the tokenizer once.
// SentencePiece: the engine rebuilds the model with an identity normalizer and BPE segmentation by piece
// score (what a GGUF `llama` vocabulary means); another normalizer or a unigram model is accepted with a
// notice, since tokenization may then differ from the library's on the original file.
Result<HfTokenizer> read_hf_tokenizer(const std::string& dir, const HfTokenizerOptions& options);

// tokenizer.json text for a byte-level BPE vocabulary: model BPE with vocab and merges, the Split regex of
// vocab.pre followed by ByteLevel, NFC normalizer, control / user-defined tokens as added_tokens (special
// true / false). bpe_vocab_from_tokenizer_json() reads it back to the same vocabulary.
Result<std::string> bpe_vocab_to_tokenizer_json(const BpeVocab& vocab);

}  // namespace qc
