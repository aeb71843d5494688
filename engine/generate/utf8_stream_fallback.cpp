// TEMPORARY, for the `samp` branch only: Utf8Stream (declared in tokenizer/tokenizer.h) is implemented by
// the tokenizer branch in tokenizer/utf8.cpp. Until that branch is merged, this file provides the same
// rule so the generator links and its streaming test runs. Once tokenizer/utf8.h exists the whole file
// compiles to nothing; delete it after the merge.
#if !__has_include("tokenizer/utf8.h")

#include <cstdint>

#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

enum class Scan { kValid, kInvalid, kTruncated };

// Length of the character at s[i] per Unicode table 3-7 (well-formed sequences), or the length of the
// maximal ill-formed subpart, or of a well-formed prefix cut by the end of the input.
Scan scan(std::string_view s, size_t i, size_t* length) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  *length = 1;
  if (b0 < 0x80) return Scan::kValid;
  size_t len = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return Scan::kInvalid;
  }
  for (size_t k = 1; k < len; ++k) {
    *length = k;
    if (i + k >= s.size()) return Scan::kTruncated;
    const auto b = static_cast<uint8_t>(s[i + k]);
    if (b < lo || b > hi) return Scan::kInvalid;
    lo = 0x80, hi = 0xBF;
  }
  *length = len;
  return Scan::kValid;
}

}  // namespace

std::string Utf8Stream::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    size_t len = 0;
    const Scan sc = scan(pending_, i, &len);
    if (sc == Scan::kTruncated) break;
    if (sc == Scan::kValid) {
      out.append(pending_, i, len);
    } else {
      out.append(kReplacement);
    }
    i += len;
  }
  pending_.erase(0, i);
  return out;
}

std::string Utf8Stream::flush() {
  std::string out = pending_.empty() ? std::string() : std::string(kReplacement);
  pending_.clear();
  return out;
}

}  // namespace qc

#endif  // !__has_include("tokenizer/utf8.h")
