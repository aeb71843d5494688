#include "code_view.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstring>

namespace qc::gui {

// Dark: after Atom's One Dark, on code_bg (0.06, 0.07, 0.08). Light: after GitHub's, on code_bg (0.93,
// 0.93, 0.95); every colour there is dark enough for small mono text.
ImVec4 syntax_color(hl::Kind kind, const Theme& theme) {
  const bool d = theme.dark;
  switch (kind) {
    case hl::Kind::kKeyword:
      return d ? ImVec4(0.78f, 0.47f, 0.87f, 1.0f) : ImVec4(0.60f, 0.13f, 0.66f, 1.0f);
    case hl::Kind::kType:
      return d ? ImVec4(0.90f, 0.75f, 0.45f, 1.0f) : ImVec4(0.55f, 0.33f, 0.00f, 1.0f);
    case hl::Kind::kString:
      return d ? ImVec4(0.60f, 0.80f, 0.47f, 1.0f) : ImVec4(0.05f, 0.45f, 0.12f, 1.0f);
    case hl::Kind::kNumber:
      return d ? ImVec4(0.85f, 0.60f, 0.40f, 1.0f) : ImVec4(0.78f, 0.33f, 0.00f, 1.0f);
    case hl::Kind::kComment:
      return d ? ImVec4(0.50f, 0.55f, 0.60f, 1.0f) : ImVec4(0.42f, 0.45f, 0.50f, 1.0f);
    case hl::Kind::kPreproc:
      return d ? ImVec4(0.90f, 0.45f, 0.47f, 1.0f) : ImVec4(0.72f, 0.10f, 0.16f, 1.0f);
    case hl::Kind::kFunction:
      return d ? ImVec4(0.38f, 0.69f, 0.94f, 1.0f) : ImVec4(0.10f, 0.35f, 0.75f, 1.0f);
    case hl::Kind::kPunct:
      return d ? ImVec4(0.68f, 0.72f, 0.78f, 1.0f) : ImVec4(0.30f, 0.30f, 0.36f, 1.0f);
  }
  return theme.code_text;
}

ImVec4 math_color(const Theme& theme) {
  return theme.dark ? ImVec4(0.50f, 0.84f, 0.80f, 1.0f) : ImVec4(0.00f, 0.42f, 0.45f, 1.0f);
}

void draw_code_text(ImFont* mono, std::string_view code, const std::vector<hl::Span>& spans,
                    const Theme& theme, const ImVec2& size) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float lh = mono->FontSize;  // TextUnformatted's line step, so the box keeps its height
  const float top = dl->GetClipRectMin().y - lh;
  const float bottom = dl->GetClipRectMax().y;
  ImU32 colors[8];
  for (int k = 0; k < 8; ++k) colors[k] = ImGui::GetColorU32(syntax_color(static_cast<hl::Kind>(k), theme));
  const ImU32 plain = ImGui::GetColorU32(theme.code_text);
  const char* base = code.data();
  size_t begin = 0;
  float y = origin.y;
  while (begin <= code.size() && y < bottom) {
    const void* nl = std::memchr(base + begin, '\n', code.size() - begin);
    const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - base) : code.size();
    if (y >= top) {
      // The first span that ends after the line's start, then segment by segment along the line.
      auto it = std::upper_bound(spans.begin(), spans.end(), static_cast<uint32_t>(begin),
                                 [](uint32_t pos, const hl::Span& s) { return pos < s.end; });
      float x = origin.x;
      size_t p = begin;
      while (p < end) {
        size_t q;
        ImU32 c;
        if (it != spans.end() && it->begin <= p) {
          q = std::min<size_t>(it->end, end);
          c = colors[static_cast<int>(it->kind)];
        } else {
          q = it != spans.end() ? std::min<size_t>(it->begin, end) : end;
          c = plain;
        }
        dl->AddText(mono, mono->FontSize, ImVec2(x, y), c, base + p, base + q);
        x += mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0.0f, base + p, base + q).x;
        p = q;
        if (it != spans.end() && p >= it->end) ++it;
      }
    }
    y += lh;
    if (!nl) break;
    begin = end + 1;
  }
  ImGui::Dummy(size);
}

}  // namespace qc::gui
