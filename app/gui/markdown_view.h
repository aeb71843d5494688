// Draws a parsed Markdown document (markdown.h) with ImGui: wrapped inline text in regular/bold/italic/
// mono faces, headings, lists (nested, ordered, tasks), block quotes, rules, tables, and fenced code
// blocks in a mono child region with a Copy button. Inline text is laid out word by word on the window's
// draw list (ImGui has no rich-text widget), then one Dummy item reserves the space it took.
#pragma once

#include <string>
#include <unordered_map>

#include "fonts.h"
#include "markdown.h"
#include "theme.h"

namespace qc::gui {

struct MarkdownStyle {
  const Fonts* fonts = nullptr;
  const Theme* theme = nullptr;
  ImVec4 text_color;  // the colour of plain text (the thinking section draws muted)
};

// Draws at the cursor using the available width.
void draw_markdown(const md::Document& doc, const MarkdownStyle& style);

// Parsed documents keyed by an id (the message), re-parsed only when the text changes.
class MarkdownCache {
 public:
  const md::Document& get(int64_t key, const std::string& text);
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    std::string text;
    md::Document doc;
  };
  std::unordered_map<int64_t, Entry> entries_;
};

}  // namespace qc::gui
