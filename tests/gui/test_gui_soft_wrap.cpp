// The message box's soft wrap (app/gui/soft_wrap.h): edits of the wrapped copy mapped back to the draft.
// Widths count bytes (an additive measure, as ImGui's text widths are).
#include <gtest/gtest.h>

#include <random>

#include "soft_wrap.h"

namespace qc::gui {
namespace {

const SoftWrap::Measure kBytes = [](std::string_view s) { return static_cast<float>(s.size()); };

// The copy differs from the draft only where the draft has a space and the copy a line break.
void expect_copy_of(const std::string& shown, const std::string& typed) {
  ASSERT_EQ(shown.size(), typed.size());
  for (size_t i = 0; i < shown.size(); ++i) {
    if (shown[i] != typed[i]) {
      ASSERT_TRUE(typed[i] == ' ' && shown[i] == '\n') << i;
    }
  }
}

TEST(GuiSoftWrap, EditsOfTheCopyReachTheDraft) {
  SoftWrap w;
  w.set_typed("hello world again", 11.0f, kBytes);
  EXPECT_EQ(w.shown(), "hello world\nagain");
  // Typing at the end, before the soft break, and a real line break.
  EXPECT_EQ(w.edited("hello world\nagain!", 11.0f, kBytes), "hello world\nagain!");
  EXPECT_EQ(w.typed(), "hello world again!");
  w.edited("hello, world\nagain!", 11.0f, kBytes);  // the line grew past the width: wrapped again
  EXPECT_EQ(w.typed(), "hello, world again!");
  EXPECT_EQ(w.shown(), "hello,\nworld\nagain!");
  // Shift+Enter after "world" (next to its soft break): a real break, the soft one stays a space.
  w.edited("hello,\nworld\n\nagain!", 11.0f, kBytes);
  EXPECT_EQ(w.typed(), "hello, world \nagain!");
  // Deleting the soft break (Backspace at the start of a wrapped line) deletes the space it stands for.
  w.set_typed("aaaa bbbb", 5.0f, kBytes);
  EXPECT_EQ(w.shown(), "aaaa\nbbbb");
  w.edited("aaaabbbb", 5.0f, kBytes);
  EXPECT_EQ(w.typed(), "aaaabbbb");
  // A wider window: the same draft, fewer breaks.
  w.set_typed("one two three four", 8.0f, kBytes);
  EXPECT_EQ(w.shown(), "one two\nthree\nfour");
  EXPECT_TRUE(w.rewrap(20.0f, kBytes));
  EXPECT_EQ(w.shown(), "one two three four");
  EXPECT_FALSE(w.rewrap(20.0f, kBytes));
  EXPECT_EQ(w.typed(), "one two three four");
}

TEST(GuiSoftWrap, OutOfStepInputsTakeTheBox) {
  EXPECT_EQ(typed_after_edit("abc", "ab", "xyz"), "xyz");
  EXPECT_EQ(typed_after_edit("", "", "new"), "new");
  EXPECT_EQ(typed_after_edit("a b", "a\nb", ""), "");
}

// Seeded random drafts and edits (insertions, deletions, replacements anywhere, soft breaks included):
// the draft keeps every byte outside the edit, takes the edit's bytes, and the copy stays a copy of it.
TEST(GuiSoftWrap, RandomEditsKeepTheDraftAndTheCopyInStep) {
  std::mt19937 rng(20261204);
  const std::string alphabet = "ab  \ncd\xc3\xa9 ";
  auto random_text = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  for (int iter = 0; iter < 3000; ++iter) {
    SoftWrap w;
    const float width = static_cast<float>(1 + rng() % 12);
    w.set_typed(random_text(static_cast<int>(rng() % 60)), width, kBytes);
    expect_copy_of(w.shown(), w.typed());
    const std::string typed = w.typed(), shown = w.shown();
    const size_t at = shown.empty() ? 0 : rng() % (shown.size() + 1);
    const size_t del = std::min<size_t>(rng() % 4, shown.size() - at);
    const std::string ins = random_text(static_cast<int>(rng() % 4));
    std::string after = shown;
    after.replace(at, del, ins);
    w.edited(after, width, kBytes);
    expect_copy_of(w.shown(), w.typed());
    // The draft is the edited copy with some of the copy's soft breaks turned back into spaces, never more
    // of them than the copy had.
    const std::string& r = w.typed();
    ASSERT_EQ(r.size(), after.size());
    size_t soft = 0, restored = 0;
    for (size_t i = 0; i < shown.size(); ++i) soft += shown[i] == '\n' && typed[i] == ' ';
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i] == after[i]) continue;
      ASSERT_TRUE(after[i] == '\n' && r[i] == ' ') << "iteration " << iter << " byte " << i;
      ++restored;
    }
    ASSERT_LE(restored, soft) << "iteration " << iter;
    // No edit, no change.
    SoftWrap same;
    same.set_typed(typed, width, kBytes);
    same.edited(shown, width, kBytes);
    ASSERT_EQ(same.typed(), typed) << "iteration " << iter;
  }
}

}  // namespace
}  // namespace qc::gui
