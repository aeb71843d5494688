// Dark and light themes: ImGui's style plus the colours the app draws itself (code blocks, links,
// layer-type bars, the context meter).
#pragma once

#include <imgui.h>

namespace qc::gui {

struct Theme {
  bool dark = true;
  ImVec4 text_muted;
  ImVec4 error;
  ImVec4 warning;
  ImVec4 ok;
  ImVec4 link;
  ImVec4 code_bg;
  ImVec4 code_text;
  ImVec4 quote_bar;
  ImVec4 user_bg;       // user message background
  ImVec4 assistant_bg;  // assistant message background
  ImVec4 thinking_text;
  ImVec4 gdn;        // Gated DeltaNet layers in the norm chart
  ImVec4 attention;  // full-attention layers
};

// Applies the ImGui style (colours and sizes scaled by ui_scale) and returns the app's colours.
Theme apply_theme(bool dark, float ui_scale);

}  // namespace qc::gui

namespace qc::gui {

// Wrapped text in a colour (ImGui's TextColored does not wrap; panels are narrow).
void text_wrapped_colored(const ImVec4& color, const char* fmt, ...) IM_FMTARGS(2);

}  // namespace qc::gui
