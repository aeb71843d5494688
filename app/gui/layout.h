// Where the columns go, as plain arithmetic (tested without a window): the conversations sidebar, the
// chat, the inspector, the splitters between them, the chat's capped reading column, and a row's
// right-aligned buttons that never run into the text on their left.
#pragma once

#include <cstdint>
#include <vector>

#include "app_config.h"

namespace qc::gui {

struct ColumnLayout {
  float gap = 0;  // width of each splitter, between two columns
  float sidebar_w = 0;
  float chat_x = 0, chat_w = 0;
  float inspector_x = 0, inspector_w = 0;  // 0 wide when hidden
};

// Columns of a window `width` pixels wide with font size `em`: the configured widths (em), hidden panels
// taking no room, the side panels giving way so the chat keeps at least kMinChatEm.
inline constexpr float kMinChatEm = 22.0f;
ColumnLayout column_layout(float width, float em, const AppConfig& config);

// The chat's reading column: at most kReadingWidthPx x ui_scale wide, centred in `avail` pixels.
inline constexpr float kReadingWidthPx = 768.0f;
struct ReadingColumn {
  float offset = 0, width = 0;
};
ReadingColumn reading_column(float avail, float ui_scale);

// X of a row of right-aligned buttons `buttons_w` wide ending at `right`, after text ending at
// `text_end`: the right-aligned place, or text_end + spacing when that is further right; -1 when even
// that does not fit before `right` (the buttons then go on a line of their own).
float buttons_x(float text_end, float right, float buttons_w, float spacing);

// The sidebar's order while the pointer is over it: the rows `fresh` (a newly sorted list, as ids) shown
// in the order of `shown` (what is on screen now), rows that are new at the end, rows that are gone left
// out. Returns indices into `fresh`. The list re-sorts when the pointer leaves, never under it.
std::vector<size_t> frozen_order(const std::vector<int64_t>& shown, const std::vector<int64_t>& fresh);

}  // namespace qc::gui
