#include "layout.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace qc::gui {

ColumnLayout column_layout(float width, float em, const AppConfig& config) {
  ColumnLayout l;
  l.gap = std::max(4.0f, std::round(em * 0.35f));
  float side = config.show_sidebar ? config.sidebar_em * em : 0.0f;
  float insp = config.show_inspector ? config.inspector_em * em : 0.0f;
  const float gaps = (config.show_sidebar ? l.gap : 0.0f) + (config.show_inspector ? l.gap : 0.0f);
  // The side panels give way, in proportion to their widths, so the chat keeps its minimum.
  const float room = std::max(0.0f, width - gaps - kMinChatEm * em);
  if (side + insp > room && side + insp > 0) {
    const float k = room / (side + insp);
    side = std::floor(side * k);
    insp = std::floor(insp * k);
  }
  l.sidebar_w = side;
  l.chat_x = config.show_sidebar ? side + l.gap : 0.0f;
  l.inspector_w = insp;
  l.inspector_x = config.show_inspector ? width - insp : width;
  l.chat_w = std::max(0.0f, l.inspector_x - (config.show_inspector ? l.gap : 0.0f) - l.chat_x);
  return l;
}

ReadingColumn reading_column(float avail, float ui_scale) {
  const float cap = std::round(kReadingWidthPx * ui_scale);
  ReadingColumn r;
  r.width = std::min(avail, cap);
  r.offset = std::floor((avail - r.width) * 0.5f);
  return r;
}

float buttons_x(float text_end, float right, float buttons_w, float spacing) {
  const float x = std::max(right - buttons_w, text_end + spacing);
  return x + buttons_w > right + 0.5f ? -1.0f : x;
}

std::vector<size_t> frozen_order(const std::vector<int64_t>& shown, const std::vector<int64_t>& fresh) {
  std::vector<size_t> out;
  out.reserve(fresh.size());
  std::vector<bool> used(fresh.size(), false);
  std::unordered_map<int64_t, size_t> index;  // a long list: no quadratic search
  for (size_t i = 0; i < fresh.size(); ++i) index.emplace(fresh[i], i);
  for (int64_t id : shown) {
    const auto it = index.find(id);
    if (it == index.end()) continue;
    const size_t i = it->second;
    if (used[i]) continue;
    used[i] = true;
    out.push_back(i);
  }
  for (size_t i = 0; i < fresh.size(); ++i)
    if (!used[i]) out.push_back(i);
  return out;
}

}  // namespace qc::gui
