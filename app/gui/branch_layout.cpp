#include "branch_layout.h"

#include <algorithm>

namespace qc::gui {

void BranchLayout::reset(uint64_t key, float width, size_t n, const std::function<float(size_t)>& height_of) {
  valid_ = true;
  key_ = key;
  width_ = width;
  heights_.resize(n);
  for (size_t i = 0; i < n; ++i) heights_[i] = height_of(i);
  tops_.assign(n + 1, 0.0);
  dirty_from_ = 0;
}

void BranchLayout::set_height(size_t i, float h) {
  if (i >= heights_.size() || heights_[i] == h) return;
  heights_[i] = h;
  dirty_from_ = std::min(dirty_from_, i);
}

void BranchLayout::settle() {
  for (size_t i = dirty_from_; i < heights_.size(); ++i) tops_[i + 1] = tops_[i] + heights_[i];
  dirty_from_ = heights_.size();
}

float BranchLayout::top(size_t i) {
  settle();
  return static_cast<float>(tops_[std::min(i, heights_.size())]);
}

std::pair<size_t, size_t> BranchLayout::range(float y0, float y1) {
  settle();
  const size_t n = heights_.size();
  if (n == 0 || y1 <= y0) return {0, 0};
  // first: the last message whose top is <= y0 (it may reach into the range); last: the first whose top
  // is >= y1.
  auto it0 = std::upper_bound(tops_.begin(), tops_.begin() + static_cast<std::ptrdiff_t>(n), static_cast<double>(y0));
  const size_t first = it0 == tops_.begin() ? 0 : static_cast<size_t>(it0 - tops_.begin()) - 1;
  auto it1 = std::lower_bound(tops_.begin(), tops_.begin() + static_cast<std::ptrdiff_t>(n), static_cast<double>(y1));
  const size_t last = std::max(first, static_cast<size_t>(it1 - tops_.begin()));
  return {first, std::min(last, n)};
}

}  // namespace qc::gui
