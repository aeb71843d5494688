// Search snippets: the text around the first case-insensitive match of a query, for the Ctrl+K list.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qc::store {

struct Snippet {
  std::string text;         // whitespace runs folded to one space; "…" where the text was cut
  size_t match_begin = 0;   // byte offset of the match in text
  size_t match_length = 0;  // bytes; 0 when the query was not found (then text is the start of haystack)
};

// Byte offset of the first match of needle in haystack, ASCII letters compared case-insensitively and
// every other byte exactly (the same rule as SQLite's LIKE); npos when absent or needle is empty.
size_t find_ascii_nocase(std::string_view haystack, std::string_view needle);

// Up to context_chars code points of context (half before the match, half after), never splitting a
// UTF-8 sequence.
Snippet make_snippet(std::string_view haystack, std::string_view query, int context_chars);

}  // namespace qc::store
