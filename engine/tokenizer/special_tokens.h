// Pieces shared by both tokenizers: matching special-token text inside a string, and finding the ids the
// chat layer needs.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace qc {

// Finds control / user-defined token texts in a string: at each position the longest token text that
// starts there wins; scanning goes left to right. Tokens are bucketed by first byte, so the cost is one
// table probe per byte plus a comparison per candidate sharing that first byte (vocabularies have a few
// hundred specials, nearly all starting with '<').
class SpecialMatcher {
 public:
  struct Piece {
    std::string_view text;  // the plain text (id == -1) or the matched token text
    int32_t id = -1;
  };

  void add(std::string_view text, int32_t id);  // the first id added for a text wins; empty text ignored
  void finish();                                // sorts the buckets; call once after the last add()
  int32_t find(std::string_view text) const;    // exact text -> id, -1 when none
  void split(std::string_view text, std::vector<Piece>* out) const;
  // What both tokenizers' encode() starts with: invalid UTF-8 replaced by U+FFFD (into *lossy, which the
  // pieces then point into), then split on special tokens when parse_special, else one plain piece.
  void split_for_encode(std::string_view input, bool parse_special, std::string* lossy,
                        std::vector<Piece>* out) const;
  bool empty() const { return exact_.empty(); }

 private:
  std::unordered_map<std::string, int32_t> exact_;
  std::array<std::vector<std::pair<std::string, int32_t>>, 256> by_first_byte_;
};

// Looks up <|im_start|>, <|im_end|>, <think>, </think> and <|endoftext|> by text; `eos` falls back to
// <|endoftext|> when the file names none. stop = {im_end, eos, <|endoftext|>, eot} without -1s or
// repeats.
SpecialTokens resolve_special_tokens(const SpecialMatcher& specials, int32_t bos, int32_t eos, int32_t pad,
                                     int32_t eot);

}  // namespace qc
