#include "tokenizer/utf8.h"

#include "tokenizer/tokenizer.h"

namespace qc {
namespace utf8 {

Char next(std::string_view s, size_t i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) return {Scan::kValid, 1, b0};
  // Length and the allowed range of the second byte per lead byte (table 3-7); later bytes are 80..BF.
  size_t len = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  uint32_t code = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, code = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, code = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, code = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;  // no overlongs
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {Scan::kInvalid, 1, 0};  // 80..C1, F5..FF never start a character
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) return {Scan::kTruncated, k, 0};
    const auto b = static_cast<uint8_t>(s[i + k]);
    if (b < lo || b > hi) return {Scan::kInvalid, k, 0};
    code = (code << 6) | (b & 0x3Fu);
    lo = 0x80, hi = 0xBF;
  }
  return {Scan::kValid, len, code};
}

void append(std::string* out, uint32_t c) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace utf8

bool utf8_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const utf8::Char c = utf8::next(s, i);
    if (c.scan != utf8::Scan::kValid) return false;
    i += c.length;
  }
  return true;
}

std::string utf8_lossy(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const utf8::Char c = utf8::next(s, i);
    if (c.scan == utf8::Scan::kValid) {
      out.append(s.substr(i, c.length));
    } else {
      out.append(utf8::kReplacement);  // a truncated tail is one maximal subpart too
    }
    i += c.length;
  }
  return out;
}

std::string Utf8Stream::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const utf8::Char c = utf8::next(pending_, i);
    if (c.scan == utf8::Scan::kTruncated) break;  // wait for the token that completes it
    if (c.scan == utf8::Scan::kValid) {
      out.append(pending_, i, c.length);
    } else {
      out.append(utf8::kReplacement);
    }
    i += c.length;
  }
  pending_.erase(0, i);
  return out;
}

std::string Utf8Stream::flush() {
  // Only a truncated well-formed prefix can be pending: one maximal subpart, one U+FFFD.
  std::string out = pending_.empty() ? std::string() : std::string(utf8::kReplacement);
  pending_.clear();
  return out;
}

}  // namespace qc
