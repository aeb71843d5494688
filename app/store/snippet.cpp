#include "store/snippet.h"

#include <algorithm>

namespace qc::store {
namespace {

char fold(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}
bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

// Moves back over up to n code points from pos (pos is on a code-point boundary).
size_t back_chars(std::string_view s, size_t pos, int n) {
  while (n-- > 0 && pos > 0) {
    --pos;
    while (pos > 0 && is_continuation(static_cast<unsigned char>(s[pos]))) --pos;
  }
  return pos;
}

size_t forward_chars(std::string_view s, size_t pos, int n) {
  while (n-- > 0 && pos < s.size()) {
    ++pos;
    while (pos < s.size() && is_continuation(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  return pos;
}

// Appends s folding whitespace runs into one space (a run continuing from `out`'s end is merged).
void append_folded(std::string& out, std::string_view s) {
  for (char c : s) {
    if (is_space(c)) {
      if (out.empty() || out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
}

}  // namespace

size_t find_ascii_nocase(std::string_view haystack, std::string_view needle) {
  if (needle.empty() || needle.size() > haystack.size()) return std::string_view::npos;
  const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                              [](char a, char b) { return fold(a) == fold(b); });
  return it == haystack.end() ? std::string_view::npos : static_cast<size_t>(it - haystack.begin());
}

Snippet make_snippet(std::string_view haystack, std::string_view query, int context_chars) {
  const int before = std::max(0, context_chars / 2);
  const int after = std::max(0, context_chars - before);
  Snippet out;
  size_t at = find_ascii_nocase(haystack, query);
  size_t len = query.size();
  if (at == std::string_view::npos) {  // not found: the start of the text
    at = 0;
    len = 0;
  }
  const size_t begin = len == 0 ? 0 : back_chars(haystack, at, before);
  const size_t end = forward_chars(haystack, at + len, len == 0 ? context_chars : after);
  if (begin > 0) out.text = "…";
  append_folded(out.text, haystack.substr(begin, at - begin));
  out.match_begin = out.text.size();
  append_folded(out.text, haystack.substr(at, len));
  out.match_length = out.text.size() - out.match_begin;
  append_folded(out.text, haystack.substr(at + len, end - at - len));
  if (end < haystack.size()) out.text += "…";
  return out;
}

}  // namespace qc::store
