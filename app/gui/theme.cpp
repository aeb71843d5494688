#include "theme.h"

#include <cstdarg>

namespace qc::gui {

Theme apply_theme(bool dark, float ui_scale) {
  ImGuiStyle style;
  if (dark) {
    ImGui::StyleColorsDark(&style);
  } else {
    ImGui::StyleColorsLight(&style);
  }
  style.WindowRounding = 0.0f;
  style.FrameRounding = 4.0f;
  style.GrabRounding = 4.0f;
  style.ChildRounding = 4.0f;
  style.PopupRounding = 4.0f;
  style.TabRounding = 4.0f;
  style.WindowBorderSize = 1.0f;
  style.FramePadding = ImVec2(6, 4);
  style.ItemSpacing = ImVec2(8, 6);
  style.WindowPadding = ImVec2(10, 10);
  style.ScrollbarSize = 14.0f;
  if (dark) {
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.12f, 0.14f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0.0f, 0.0f, 0.0f, 0.0f);
    style.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
  }
  style.ScaleAllSizes(ui_scale);
  ImGui::GetStyle() = style;

  Theme t;
  t.dark = dark;
  if (dark) {
    t.text_muted = ImVec4(0.60f, 0.62f, 0.66f, 1.0f);
    t.error = ImVec4(1.00f, 0.45f, 0.42f, 1.0f);
    t.warning = ImVec4(0.98f, 0.78f, 0.30f, 1.0f);
    t.ok = ImVec4(0.45f, 0.85f, 0.50f, 1.0f);
    t.link = ImVec4(0.45f, 0.70f, 1.00f, 1.0f);
    t.code_bg = ImVec4(0.06f, 0.07f, 0.08f, 1.0f);
    t.code_text = ImVec4(0.85f, 0.88f, 0.80f, 1.0f);
    t.quote_bar = ImVec4(0.40f, 0.45f, 0.55f, 1.0f);
    t.user_bg = ImVec4(0.17f, 0.22f, 0.30f, 1.0f);
    t.assistant_bg = ImVec4(0.14f, 0.15f, 0.17f, 1.0f);
    t.thinking_text = ImVec4(0.68f, 0.68f, 0.74f, 1.0f);
    t.gdn = ImVec4(0.35f, 0.65f, 0.95f, 1.0f);
    t.attention = ImVec4(0.95f, 0.60f, 0.25f, 1.0f);
  } else {
    t.text_muted = ImVec4(0.40f, 0.42f, 0.46f, 1.0f);
    t.error = ImVec4(0.80f, 0.10f, 0.10f, 1.0f);
    t.warning = ImVec4(0.70f, 0.50f, 0.00f, 1.0f);
    t.ok = ImVec4(0.10f, 0.55f, 0.20f, 1.0f);
    t.link = ImVec4(0.10f, 0.35f, 0.80f, 1.0f);
    t.code_bg = ImVec4(0.93f, 0.93f, 0.95f, 1.0f);
    t.code_text = ImVec4(0.15f, 0.15f, 0.20f, 1.0f);
    t.quote_bar = ImVec4(0.65f, 0.68f, 0.75f, 1.0f);
    t.user_bg = ImVec4(0.86f, 0.91f, 0.98f, 1.0f);
    t.assistant_bg = ImVec4(0.97f, 0.97f, 0.98f, 1.0f);
    t.thinking_text = ImVec4(0.35f, 0.35f, 0.42f, 1.0f);
    t.gdn = ImVec4(0.15f, 0.45f, 0.85f, 1.0f);
    t.attention = ImVec4(0.90f, 0.45f, 0.05f, 1.0f);
  }
  return t;
}

}  // namespace qc::gui

namespace qc::gui {

void text_wrapped_colored(const ImVec4& color, const char* fmt, ...) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  va_list args;
  va_start(args, fmt);
  ImGui::TextWrappedV(fmt, args);
  va_end(args);
  ImGui::PopStyleColor();
}

}  // namespace qc::gui
