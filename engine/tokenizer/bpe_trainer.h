// Byte-level BPE training for the vocabularies qwenchat-mkmodel generates (small test models), plus the
// built-in corpus it trains on by default and the GGUF metadata writer for the result.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qwenchat/result.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace gguf {
class Writer;
}

// <|endoftext|>, <|im_start|>, <|im_end|>, <think>, </think>: the ChatML specials, in this order.
std::vector<std::string> chatml_special_tokens();

struct BpeTrainOptions {
  int n_merges = 1000;         // upper bound: training stops earlier when no pair occurs min_pair_count times
  std::string pre = "qwen35";  // pre-tokenizer name (see pretokenizer.h)
  std::vector<std::string> special_tokens = chatml_special_tokens();  // appended as control tokens
  int min_pair_count = 2;  // a pair seen fewer times (weighted by word counts) is not merged
};

// Tokens: the 256 byte tokens in GPT-2 mapped form (id == byte value), then one token per merge in merge
// order (a merge whose result string already exists adds no token), then the special tokens (control
// type). eos and pad are <|endoftext|> when it is among the specials. Deterministic: the most frequent
// pair wins, ties go to the lexicographically smallest (left, right) pair of mapped strings.
// Special-token texts inside the corpus are cut out before counting.
Result<BpeVocab> train_bpe(std::string_view corpus, const BpeTrainOptions& options);

// A few KB of original English prose, arithmetic and code (bpe_corpus.cpp).
std::string_view builtin_training_corpus();

// Writes tokenizer.ggml.{model=gpt2, pre, tokens, merges, token_type, eos_token_id, padding_token_id,
// bos_token_id (when set), add_bos_token=false} and tokenizer.chat_template (when not empty;
// chatml_jinja_template() in chat_format.h is the one that matches our renderer).
void write_bpe_vocab_metadata(gguf::Writer& writer, const BpeVocab& vocab, std::string_view chat_template);

}  // namespace qc
