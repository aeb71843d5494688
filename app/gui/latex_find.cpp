// Where math is in Markdown source (latex_text.h: find_math). Apart from the converter: a different
// concept (delimiters and Markdown's code and escapes, not LaTeX).
#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "latex_text.h"

namespace qc::gui::tex {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Finds where math is in Markdown source (see find_math).
class Finder {
 public:
  explicit Finder(std::string_view s) : s_(s), n_(s.size()) {
    // Every run of backticks, for matching inline code spans by length.
    for (size_t i = 0; i < n_;) {
      if (s_[i] != '`') {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < n_ && s_[j] == '`') ++j;
      runs_[j - i].first.push_back(i);
      i = j;
    }
  }

  std::vector<MathRegion> run() {
    size_t i = 0;
    bool line_start = true;
    while (i < n_) {
      const char c = s_[i];
      if (c == '\n') {
        line_start = true;
        ++i;
        continue;
      }
      if (line_start) {
        line_start = false;
        const size_t fence_end = fence(i);
        if (fence_end != 0) {
          i = fence_end;
          line_start = true;
          continue;
        }
      }
      if (c == '\\') {
        const char d = i + 1 < n_ ? s_[i + 1] : '\0';
        if (d == '(' || d == '[') {
          const std::string_view close = d == '(' ? "\\)" : "\\]";
          const size_t j = find_closer(i + 2, close, d == '(' ? 0 : 1);
          if (j != npos) {
            add(i, j + 2, i + 2, j, d == '[');
            i = j + 2;
            continue;
          }
        }
        i += (d != '\0' && d != '\n') ? 2 : 1;  // an escaped character (\$, \`, \\) is text
        continue;
      }
      if (c == '`') {
        i = code_span(i);
        continue;
      }
      if (c == '$') {
        i = dollar(i);
        continue;
      }
      if (c != ' ' && c != '\t') line_start = false;
      ++i;
    }
    return std::move(out_);
  }

 private:
  static constexpr size_t npos = std::string_view::npos;

  void add(size_t b, size_t e, size_t bb, size_t be, bool display) {
    out_.push_back({b, e, bb, be, display});
  }

  // The end of the paragraph holding i: the next blank line (a newline, blanks, a newline), or the end.
  size_t para_end(size_t i) {
    if (i < para_end_) return para_end_;
    size_t j = std::max(i, para_end_);
    while (j < n_) {
      if (s_[j] == '\n') {
        size_t k = j + 1;
        while (k < n_ && (s_[k] == ' ' || s_[k] == '\t' || s_[k] == '\r')) ++k;
        if (k >= n_ || s_[k] == '\n') break;
        j = k;
        continue;
      }
      ++j;
    }
    para_end_ = j;
    return j;
  }

  // The next `close` from `from` inside the paragraph, else npos. A failed search is remembered per kind
  // (0: \), 1: \], 2: $$): a later one from inside the same paragraph fails at once (linear time).
  size_t find_closer(size_t from, std::string_view close, int kind) {
    const size_t limit = para_end(from);
    if (failed_[kind] == limit && from <= limit) return npos;
    const size_t j = s_.substr(0, limit).find(close, from);
    if (j == npos) failed_[kind] = limit;
    return j;
  }

  // ``` or ~~~ (three or more, at most three spaces in) at a line start: the position after the closing
  // fence's line (or the end); 0 when there is no fence here.
  size_t fence(size_t i) const {
    size_t k = i;
    while (k < n_ && k - i < 3 && s_[k] == ' ') ++k;
    if (k >= n_ || (s_[k] != '`' && s_[k] != '~')) return 0;
    const char f = s_[k];
    size_t len = 0;
    while (k + len < n_ && s_[k + len] == f) ++len;
    if (len < 3) return 0;
    size_t line = s_.find('\n', k);
    while (line != npos) {
      size_t p = line + 1;
      size_t q = p;
      while (q < n_ && q - p < 3 && s_[q] == ' ') ++q;
      size_t run = 0;
      while (q + run < n_ && s_[q + run] == f) ++run;
      size_t after = q + run;
      while (after < n_ && (s_[after] == ' ' || s_[after] == '\t' || s_[after] == '\r')) ++after;
      if (run >= len && (after >= n_ || s_[after] == '\n')) return after;
      line = s_.find('\n', p);
    }
    return n_;
  }

  // A run of backticks: past the code span it opens (the next run of the same length in the paragraph),
  // else past the run itself.
  size_t code_span(size_t i) {
    size_t j = i;
    while (j < n_ && s_[j] == '`') ++j;
    auto& [positions, cursor] = runs_[j - i];
    while (cursor < positions.size() && positions[cursor] <= i) ++cursor;
    if (cursor < positions.size() && positions[cursor] < para_end(i)) {
      const size_t close = positions[cursor];
      return close + (j - i);
    }
    return j;
  }

  size_t dollar(size_t i) {
    if (i + 1 < n_ && s_[i + 1] == '$') {
      const size_t j = find_closer(i + 2, "$$", 2);
      if (j != npos && s_.substr(i + 2, j - i - 2).find_first_not_of(" \t\r\n") != npos) {
        add(i, j + 2, i + 2, j, true);
        return j + 2;
      }
      return i + 2;
    }
    // Inline: the next dollar closes or nothing does (then that dollar is the next candidate).
    if (i + 1 >= n_ || is_blank(s_[i + 1])) return i + 1;
    const size_t limit = para_end(i);
    size_t j = i + 1;
    while (j < limit && s_[j] != '$') j += (s_[j] == '\\' && j + 1 < limit) ? 2 : 1;
    if (j >= limit) return i + 1;
    const bool closes = !is_blank(s_[j - 1]) &&
                        !(j + 1 < n_ && std::isdigit(static_cast<unsigned char>(s_[j + 1]))) &&
                        !(j + 1 < n_ && s_[j + 1] == '$');
    if (!closes) return j;
    add(i, j + 1, i + 1, j, false);
    return j + 1;
  }

  std::string_view s_;
  size_t n_;
  size_t para_end_ = 0;
  size_t failed_[3] = {npos, npos, npos};
  std::unordered_map<size_t, std::pair<std::vector<size_t>, size_t>> runs_;
  std::vector<MathRegion> out_;
};

}  // namespace

std::vector<MathRegion> find_math(std::string_view markdown) {
  if (markdown.find("\xEE\x80\x80") != std::string_view::npos ||
      markdown.find("\xEE\x80\x81") != std::string_view::npos)
    return {};
  return Finder(markdown).run();
}

}  // namespace qc::gui::tex
