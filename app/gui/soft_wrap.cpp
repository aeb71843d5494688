// soft_wrap.h: the draft behind the message box's wrapped copy.
#include "soft_wrap.h"

#include <algorithm>

#include "select_text.h"

namespace qc::gui {

std::string typed_after_edit(std::string_view typed_before, std::string_view shown_before,
                             std::string_view shown_after) {
  if (typed_before.size() != shown_before.size()) return std::string(shown_after);  // not in step: take the box
  const size_t nb = shown_before.size(), na = shown_after.size();
  size_t p = 0;
  while (p < nb && p < na && shown_before[p] == shown_after[p]) ++p;
  size_t s = 0;
  while (s < nb - p && s < na - p && shown_before[nb - 1 - s] == shown_after[na - 1 - s]) ++s;
  std::string out;
  out.reserve(na);
  out.append(typed_before.substr(0, p));
  out.append(shown_after.substr(p, na - p - s));
  out.append(typed_before.substr(nb - s));
  return out;
}

void SoftWrap::set_typed(std::string typed, float width, const Measure& measure) {
  typed_ = std::move(typed);
  width_ = width;
  shown_ = wrap_at_spaces(typed_, width_, measure);
}

const std::string& SoftWrap::edited(std::string_view shown_after, float width, const Measure& measure) {
  typed_ = typed_after_edit(typed_, shown_, shown_after);
  width_ = width;
  shown_ = wrap_at_spaces(typed_, width_, measure);
  return shown_;
}

bool SoftWrap::rewrap(float width, const Measure& measure) {
  if (width == width_) return false;
  width_ = width;
  std::string again = wrap_at_spaces(typed_, width_, measure);
  const bool changed = again != shown_;
  shown_ = std::move(again);
  return changed;
}

}  // namespace qc::gui
