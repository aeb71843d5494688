// The message box's soft wrap. ImGui 1.86 cannot wrap a multiline text box (a long line scrolled sideways),
// so the box edits a shown copy of the draft in which some spaces are line breaks (select_text.h
// wrap_at_spaces: one byte for one, so cursor and selection positions mean the same in both), and every
// edit of the shown copy is mapped back to the draft: the edited range as typed (a typed line break is a
// real one), the rest from the draft (the shown copy's soft breaks turn back into spaces). The draft is what
// gets sent and kept. No ImGui here: tested without a window.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace qc::gui {

// The draft after an edit that turned `shown_before` (the wrapped copy of `typed_before`, same size) into
// `shown_after`: the range that differs (the longest common prefix and then suffix left out) comes from
// `shown_after`, everything else from `typed_before`.
std::string typed_after_edit(std::string_view typed_before, std::string_view shown_before,
                             std::string_view shown_after);

// The draft and its wrapped copy, kept in step.
class SoftWrap {
 public:
  using Measure = std::function<float(std::string_view)>;
  // Sets the draft (text put in from outside: a returned draft, an example prompt, a cleared box).
  void set_typed(std::string typed, float width, const Measure& measure);
  // The box's buffer after an edit: the draft follows, and the copy is wrapped again. Returns the new copy
  // (same size as `shown_after`).
  const std::string& edited(std::string_view shown_after, float width, const Measure& measure);
  // Wraps again for another width (the window was resized); returns true when the copy changed.
  bool rewrap(float width, const Measure& measure);
  const std::string& typed() const { return typed_; }
  const std::string& shown() const { return shown_; }
  float width() const { return width_; }

 private:
  std::string typed_, shown_;
  float width_ = -1.0f;
};

}  // namespace qc::gui
