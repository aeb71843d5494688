// "Select text" (app/gui/select_text.h): the plain text a message shows, and the wrapping that keeps
// every byte in place so a selection maps back to the original text.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "select_text.h"

namespace qc::gui {
namespace {

// One unit per byte: widths add up, as ImGui's do.
float bytes(std::string_view s) {
  return static_cast<float>(s.size());
}

TEST(GuiSelectText, PlainTextOfAMessage) {
  const md::Document d = md::parse(
      "# Title\n\nSome *soft* `code` and $x^2$.\n\n1. one\n2. two\n   - [x] done\n\n> quoted\n> more\n\n"
      "| a | b |\n|---|---|\n| 1 | 2 |\n\n```py\nprint(1)\n```\n\n$$\\alpha$$\n");
  EXPECT_EQ(
      message_plain_text(d),
      "Title\n\nSome soft code and x².\n\n1. one\n2. two\n   ☑ done\n\n> quoted more\n\na | b\n1 | 2\n\n"
      "print(1)\n\nα");
}

TEST(GuiSelectText, WrapsAtSpacesKeepingEveryByte) {
  EXPECT_EQ(wrap_at_spaces("aaa bbb ccc", 7, bytes), "aaa bbb\nccc");
  EXPECT_EQ(wrap_at_spaces("aaa bbb ccc", 6, bytes), "aaa\nbbb\nccc");
  EXPECT_EQ(wrap_at_spaces("a  verylongword b", 4, bytes), "a \nverylongword\nb");  // too long: whole
  EXPECT_EQ(wrap_at_spaces("ab\ncd ef", 4, bytes), "ab\ncd\nef");
  EXPECT_EQ(wrap_at_spaces("", 4, bytes), "");
  EXPECT_EQ(wrap_at_spaces("x", 0, bytes), "x");
}

// Seeded random texts: the wrapped text has the same bytes except spaces turned into line breaks, and
// no line is wider than the width unless it is a single word.
TEST(GuiSelectText, RandomWrapsMapBackByteForByte) {
  std::mt19937 rng(20261204);
  for (int round = 0; round < 500; ++round) {
    std::string s;
    const int len = static_cast<int>(rng() % 300);
    for (int i = 0; i < len; ++i) s += "ab \n\xCE\xB1"[rng() % 6];
    const float width = static_cast<float>(1 + rng() % 30);
    const std::string w = wrap_at_spaces(s, width, bytes);
    ASSERT_EQ(w.size(), s.size());
    for (size_t i = 0; i < s.size(); ++i) ASSERT_TRUE(w[i] == s[i] || (s[i] == ' ' && w[i] == '\n')) << i;
    size_t start = 0;
    while (start <= w.size()) {
      size_t end = w.find('\n', start);
      if (end == std::string::npos) end = w.size();
      const std::string_view line = std::string_view(w).substr(start, end - start);
      const size_t last = line.find_last_not_of(' ');
      const std::string_view shown = last == std::string_view::npos ? "" : line.substr(0, last + 1);
      if (shown.find(' ') != std::string_view::npos) {
        EXPECT_LE(bytes(shown), width) << line;
      }
      start = end + 1;
    }
  }
}

}  // namespace
}  // namespace qc::gui
