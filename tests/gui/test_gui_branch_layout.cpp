// BranchLayout (app/gui/branch_layout.h): running tops, lazy updates after a height changes, and the
// visible range found by binary search, at the edges too.
#include <gtest/gtest.h>

#include "branch_layout.h"

namespace qc::gui {
namespace {

TEST(GuiBranchLayout, TopsAreRunningSumsAndFollowAChangedHeight) {
  BranchLayout l;
  EXPECT_FALSE(l.matches(1, 100.0f, 4));
  l.reset(1, 100.0f, 4, [](size_t i) { return 10.0f * static_cast<float>(i + 1); });  // 10 20 30 40
  EXPECT_TRUE(l.matches(1, 100.0f, 4));
  EXPECT_FALSE(l.matches(2, 100.0f, 4));
  EXPECT_FALSE(l.matches(1, 120.0f, 4));
  EXPECT_FALSE(l.matches(1, 100.0f, 5));
  EXPECT_FLOAT_EQ(l.top(0), 0.0f);
  EXPECT_FLOAT_EQ(l.top(2), 30.0f);
  EXPECT_FLOAT_EQ(l.top(4), 100.0f);
  EXPECT_FLOAT_EQ(l.top(9), 100.0f);  // past the end: the end
  l.set_height(1, 5.0f);             // 10 5 30 40
  EXPECT_FLOAT_EQ(l.top(2), 15.0f);
  EXPECT_FLOAT_EQ(l.top(4), 85.0f);
  l.set_height(3, 0.0f);
  EXPECT_FLOAT_EQ(l.top(4), 45.0f);
  l.set_height(7, 1.0f);  // out of range: ignored
  EXPECT_FLOAT_EQ(l.top(4), 45.0f);
}

TEST(GuiBranchLayout, RangeHoldsEveryMessageThatOverlapsTheWindow) {
  BranchLayout l;
  l.reset(1, 100.0f, 5, [](size_t) { return 10.0f; });  // tops 0 10 20 30 40, end 50
  EXPECT_EQ(l.range(0.0f, 50.0f), (std::pair<size_t, size_t>{0, 5}));
  EXPECT_EQ(l.range(15.0f, 25.0f), (std::pair<size_t, size_t>{1, 3}));  // 1 (10..20) and 2 (20..30)
  EXPECT_EQ(l.range(10.0f, 20.0f), (std::pair<size_t, size_t>{1, 2}));
  EXPECT_EQ(l.range(-100.0f, 5.0f), (std::pair<size_t, size_t>{0, 1}));
  EXPECT_EQ(l.range(45.0f, 1000.0f), (std::pair<size_t, size_t>{4, 5}));
  EXPECT_EQ(l.range(60.0f, 70.0f).second - l.range(60.0f, 70.0f).first, 1u);  // below the end: the last
  EXPECT_EQ(l.range(30.0f, 30.0f), (std::pair<size_t, size_t>{0, 0}));       // empty window
  BranchLayout empty;
  empty.reset(1, 1.0f, 0, [](size_t) { return 1.0f; });
  EXPECT_EQ(empty.range(0.0f, 10.0f), (std::pair<size_t, size_t>{0, 0}));
}

TEST(GuiBranchLayout, FiftyThousandMessagesStayExact) {
  BranchLayout l;
  l.reset(7, 100.0f, 50000, [](size_t i) { return i % 2 ? 61.5f : 118.25f; });
  EXPECT_FLOAT_EQ(l.top(50000), 25000.0f * (61.5f + 118.25f));
  const auto r = l.range(l.top(31234) + 1.0f, l.top(31234) + 2.0f);
  EXPECT_EQ(r.first, 31234u);
  EXPECT_EQ(r.second, 31235u);
}

}  // namespace
}  // namespace qc::gui
