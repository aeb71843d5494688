// "Select text" on a message (message_view.cpp): the message is shown as its plain text in a read-only
// ImGui::InputTextMultiline, where the mouse selects and Ctrl+C copies. ImGui 1.86 cannot wrap a multiline
// text box, so the text is wrapped here, by turning spaces into line breaks: one byte for one, so a
// selection in the shown text is the same byte range of the original, which is what gets copied. No ImGui
// here (the width of a piece of text comes from a callback), so it is tested without a window.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "markdown.h"

namespace qc::gui {

// The text of a parsed message as the chat view shows it: paragraphs and blocks separated by a blank
// line, list items with their marker ("• ", "3. ", "☐ ", "☑ "), quotes with "> ", table cells joined by
// " | ", code blocks as written, math as its Unicode rendering (display math on its own line).
std::string message_plain_text(const md::Document& doc);

// `text` with spaces replaced by '\n' so that no line is wider than `width` (as measured by `measure`,
// which must add up: width(ab) = width(a) + width(b), as ImGui's text widths do). Same size as `text`,
// every other byte unchanged. A word wider than the line stays whole.
std::string wrap_at_spaces(std::string_view text, float width,
                           const std::function<float(std::string_view)>& measure);

}  // namespace qc::gui
