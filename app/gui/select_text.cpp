#include "select_text.h"

namespace qc::gui {
namespace {

// Every line of `text` after the first starts with `prefix` (the first gets `first`).
std::string prefixed(std::string_view text, std::string_view first, std::string_view prefix) {
  std::string out(first);
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(prefix);
  }
  return out;
}

std::string spans_text(const std::vector<md::Span>& spans) {
  std::string out;
  for (const md::Span& s : spans) {
    const bool display = (s.style & md::kMathDisplay) != 0;
    if (display && !out.empty() && out.back() != '\n') out += '\n';
    out += s.text;
    if (display) out += '\n';
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string blocks_text(const std::vector<md::Block>& blocks, bool tight);

std::string block_text(const md::Block& b) {
  switch (b.kind) {
    case md::BlockKind::kParagraph:
    case md::BlockKind::kHeading:
      return spans_text(b.spans);
    case md::BlockKind::kCode:
    case md::BlockKind::kHtml: {
      std::string code = b.code;
      if (!code.empty() && code.back() == '\n') code.pop_back();
      return code;
    }
    case md::BlockKind::kList: {
      std::string out;
      int n = b.start;
      for (const md::Block& item : b.children) {
        std::string marker = item.task == 1   ? "☐ "
                             : item.task == 2 ? "☑ "
                             : b.ordered      ? std::to_string(n) + ". "
                                              : "• ";
        ++n;
        if (!out.empty()) out += '\n';
        out += prefixed(blocks_text(item.children, true), marker, std::string(b.ordered ? 3 : 2, ' '));
      }
      return out;
    }
    case md::BlockKind::kListItem:
      return blocks_text(b.children, true);
    case md::BlockKind::kQuote:
      return prefixed(blocks_text(b.children, false), "> ", "> ");
    case md::BlockKind::kRule:
      return "---";
    case md::BlockKind::kTable: {
      std::string out;
      for (const auto& row : b.rows) {
        if (!out.empty()) out += '\n';
        for (size_t c = 0; c < row.size(); ++c) {
          if (c > 0) out += " | ";
          out += spans_text(row[c]);
        }
      }
      return out;
    }
  }
  return {};
}

// Blocks joined by a blank line (by a line break in a tight list item).
std::string blocks_text(const std::vector<md::Block>& blocks, bool tight) {
  std::string out;
  for (const md::Block& b : blocks) {
    std::string t = block_text(b);
    if (t.empty()) continue;
    if (!out.empty()) out += tight ? "\n" : "\n\n";
    out += t;
  }
  return out;
}

}  // namespace

std::string message_plain_text(const md::Document& doc) {
  return blocks_text(doc.blocks, false);
}

std::string wrap_at_spaces(std::string_view text, float width,
                           const std::function<float(std::string_view)>& measure) {
  std::string out(text);
  const float space = measure(" ");
  float x = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      x = 0;
      ++i;
      continue;
    }
    if (text[i] == ' ') {
      x += space;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n') ++j;
    const float w = measure(text.substr(i, j - i));
    // The line holds something and this word would pass the edge: the space before it breaks the line
    // (the spaces before that one stay at the end of the line above, where they show nothing).
    if (x > 0 && x + w > width && i > 0 && text[i - 1] == ' ') {
      out[i - 1] = '\n';
      x = 0;
    }
    x += w;
    i = j;
  }
  return out;
}

}  // namespace qc::gui
