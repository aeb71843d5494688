// Small widgets every panel uses: the one tooltip (wrapped at a readable width), a "(?)" help marker,
// and a splitter handle. Drawing only; no state.
#pragma once

#include <imgui.h>

#include <cstdarg>

namespace qc::gui {

// The width tooltips wrap at: about 35 characters of the current font (a readable line, whatever the
// UI scale).
inline float tooltip_wrap_width() { return ImGui::GetFontSize() * 35.0f; }

// A tooltip for the last item when it is hovered (also while disabled). Every tooltip of the app goes
// through tooltip()/tooltip_v() so all of them wrap the same way.
void tooltip(const char* fmt, ...) IM_FMTARGS(1);
void tooltip_v(const char* fmt, va_list args) IM_FMTLIST(1);
bool item_tooltip(const char* fmt, ...) IM_FMTARGS(1);  // returns whether it showed

// A muted "(?)" on the same line with `text` as its tooltip.
void help_marker(const ImVec4& muted, const char* text);

}  // namespace qc::gui
