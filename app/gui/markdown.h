// Markdown (CommonMark + GitHub tables, strikethrough, task lists, autolinks) parsed by md4c into a small
// block tree the chat view draws with ImGui widgets (markdown_view.h). No ImGui here, so the parse is
// tested without a window. HTML blocks and inline HTML are shown as their source text (never rendered);
// images as their alt text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "highlight.h"

namespace qc::gui::md {

enum SpanStyle : uint8_t {
  kPlain = 0,
  kEmphasis = 1 << 0,  // *a*
  kStrong = 1 << 1,    // **a**
  kCode = 1 << 2,      // `a`
  kStrike = 1 << 3,    // ~~a~~
  kLink = 1 << 4,      // [a](url), <url>, bare www./http links
  // $a$ \(a\): text is the Unicode rendering (latex_text.h), url the LaTeX source.
  kMath = 1 << 5,
  // With kMath: $$a$$ \[a\], drawn centred on a line of its own.
  kMathDisplay = 1 << 6,
};

// A run of inline text with one style. A hard line break is a span with text "\n".
struct Span {
  std::string text;
  uint8_t style = kPlain;
  std::string url;  // kLink: the address; kMath: the source with its delimiters
  bool operator==(const Span&) const = default;
};

enum class Align : uint8_t { kDefault, kLeft, kCenter, kRight };

enum class BlockKind : uint8_t {
  kParagraph,  // spans
  kHeading,    // spans, level 1..6
  kCode,       // code (every line, '\n'-terminated as written), lang
  kList,       // children = items (kListItem); ordered, start
  kListItem,   // children = blocks; task: 0 none, 1 open [ ], 2 done [x]
  kQuote,      // children = blocks
  kRule,       // ---
  kTable,      // rows of cells (each cell = spans); header_rows; align per column
  kHtml,       // code = the raw HTML text
};

struct Block {
  BlockKind kind = BlockKind::kParagraph;
  std::vector<Span> spans;
  int level = 0;
  bool ordered = false;
  int start = 1;
  int task = 0;
  std::string lang;
  std::string code;
  std::vector<hl::Span> code_spans;  // kCode: the syntax highlight of `code` (highlight.h), from `lang`
  std::vector<Block> children;
  std::vector<std::vector<std::vector<Span>>> rows;  // [row][column] -> spans
  int header_rows = 0;
  std::vector<Align> align;  // per column
};

struct Document {
  std::vector<Block> blocks;
};

// Never fails: text md4c cannot make sense of stays text. Math ($...$, \(...\), $$...$$, \[...\]) is
// found before md4c sees the text (tex::find_math: Markdown escapes would eat its backslashes) and
// stands in it as a placeholder (U+E000, index, U+E001); afterwards each placeholder becomes a kMath span,
// or its source again where it landed in code or HTML.
Document parse(std::string_view markdown);

// The plain text of spans (for copy buttons and tests).
std::string plain_text(const std::vector<Span>& spans);

}  // namespace qc::gui::md
