// LaTeX math in chat text, shown readably without a TeX engine: common LaTeX becomes Unicode text (Greek
// letters, operators and relations, super/subscripts where Unicode has the characters, \frac as a/b,
// \sqrt as √, \mathbb{R} as ℝ, ...); a command it does not know stays as its source (\foo{x}). And where
// the math is in Markdown: $...$ and \(...\) inline, $$...$$ and \[...\] display, with the usual rules
// that keep prices ("$5 and $10") text. No ImGui here; linear time, any bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace qc::gui::tex {

// The Unicode rendering of a LaTeX math body (the text between the delimiters). Invalid UTF-8 is copied
// as it is; groups nested deeper than 32 are copied as source.
std::string to_unicode(std::string_view latex);

struct MathRegion {
  size_t begin = 0;  // the opening delimiter in the Markdown source
  size_t end = 0;    // one past the closing delimiter
  size_t body_begin = 0;
  size_t body_end = 0;
  bool display = false;  // $$...$$ or \[...\]
  bool operator==(const MathRegion&) const = default;
};

// Math regions of a Markdown text, in order, never overlapping. Skipped: fenced code blocks and inline
// code spans, backslash-escaped dollars (\$). Inline $...$: the opening $ not followed by a blank, the
// closing $ (the next $ after it) not preceded by a blank and not followed by a digit, on one
// paragraph. \(...\), \[...\] and $$...$$ close at their next closer within the paragraph (no blank
// line between). A text holding U+E000 or U+E001 (the placeholders markdown.cpp uses) has none.
std::vector<MathRegion> find_math(std::string_view markdown);

}  // namespace qc::gui::tex
