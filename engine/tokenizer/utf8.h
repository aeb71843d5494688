// UTF-8 scanning shared by the tokenizers and the streaming decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace qc::utf8 {

enum class Scan { kValid, kInvalid, kTruncated };

struct Char {
  Scan scan = Scan::kValid;
  size_t length = 0;  // kValid: the character; kInvalid: the maximal ill-formed subpart (>= 1);
                      // kTruncated: a well-formed prefix that the end of the input cut short
  uint32_t code = 0;  // the code point (kValid only)
};

// Reads the character starting at s[i] (i < s.size()), following Unicode table 3-7 of well-formed
// byte sequences (no overlongs, no surrogates, nothing above U+10FFFF).
Char next(std::string_view s, size_t i);

void append(std::string* out, uint32_t code);  // encodes one code point (caller passes a valid one)

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace qc::utf8
