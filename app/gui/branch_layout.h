// Where each message of the current branch sits in the chat view, so that a frame finds the visible
// messages by binary search instead of walking all of them (frame time independent of the conversation's
// length, #13). Heights are what a message measured when it was last drawn, or an estimate for one never
// drawn; tops are their running sums, brought up to date lazily from the first height that changed (a
// streaming reply changes only the last one). Window-free: tested in tests/gui/test_gui_branch_layout.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace qc::gui {

class BranchLayout {
 public:
  // Whether the layout describes this branch (its shape fingerprint and length) at this width.
  bool matches(uint64_t key, float width, size_t n) const {
    return valid_ && key == key_ && width == width_ && n == heights_.size();
  }
  // Starts over: n messages, message i's height from height_of(i).
  void reset(uint64_t key, float width, size_t n, const std::function<float(size_t)>& height_of);
  size_t size() const { return heights_.size(); }
  float height(size_t i) const { return heights_[i]; }
  // A message measured at another height: the tops after it move.
  void set_height(size_t i, float h);
  // The top of message i (i == size(): the end of the last), from the first message's top.
  float top(size_t i);
  // The messages [first, last) that overlap [y0, y1) (tops from the first message's top).
  std::pair<size_t, size_t> range(float y0, float y1);

 private:
  void settle();  // tops_ valid up to the end

  bool valid_ = false;
  uint64_t key_ = 0;
  float width_ = 0;
  std::vector<float> heights_;
  std::vector<double> tops_;  // size n + 1; double: 50,000 sums of f32 heights stay exact to a pixel
  size_t dirty_from_ = 0;     // tops_[i] for i > dirty_from_ are stale
};

}  // namespace qc::gui
