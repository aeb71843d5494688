#include "widgets.h"

#include <cstdarg>

namespace qc::gui {

void tooltip_v(const char* fmt, va_list args) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(tooltip_wrap_width());
  ImGui::TextV(fmt, args);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void tooltip(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  tooltip_v(fmt, args);
  va_end(args);
}

bool item_tooltip(const char* fmt, ...) {
  if (!ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) return false;
  va_list args;
  va_start(args, fmt);
  tooltip_v(fmt, args);
  va_end(args);
  return true;
}

void help_marker(const ImVec4& muted, const char* text) {
  ImGui::SameLine();
  ImGui::TextColored(muted, "(?)");
  item_tooltip("%s", text);
}

}  // namespace qc::gui
