// Draws a code block's text in the mono face with its syntax highlight (highlight.h), in colours chosen
// for the theme (readable on the dark and on the light code background). Only the lines inside the
// window's clip rectangle are drawn, so a megabyte block costs a scan for line ends per frame.
#pragma once

#include <string_view>
#include <vector>

#include "highlight.h"
#include "theme.h"

struct ImFont;
struct ImVec2;

namespace qc::gui {

ImVec4 syntax_color(hl::Kind kind, const Theme& theme);

// Math converted to text (latex_text.h) in the text: a teal apart from text, links and code.
ImVec4 math_color(const Theme& theme);

// Draws `code` at the cursor (plain bytes in theme.code_text) and reserves `size` (the text's size in
// `mono`, as CalcTextSizeA measures it) with one Dummy item.
void draw_code_text(ImFont* mono, std::string_view code, const std::vector<hl::Span>& spans,
                    const Theme& theme, const ImVec2& size);

}  // namespace qc::gui
