// Pre-token splits of both regexes on tricky strings. Expected splits were worked out by hand from the
// regex alternatives and agree with Python's `regex` module on the same patterns.
#include <gtest/gtest.h>

#include "tokenizer/pretokenizer.h"

namespace qc {
namespace {

using Split = std::vector<std::string>;

Split split(const PreTokenizer& p, std::string_view text) {
  std::vector<std::string_view> views;
  const Status st = p.split(text, &views);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().describe());
  return Split(views.begin(), views.end());
}

struct Case {
  std::string text;
  Split qwen35;
  Split qwen2;  // empty = same as qwen35
};

const Case kCases[] = {
    // Contractions in both cases (the (?i:...) group), attached to the previous word's split.
    {"I'm sure you'LL see it's HE'S",
     {"I", "'m", " sure", " you", "'LL", " see", " it", "'s", " HE", "'S"},
     {}},
    // Digits one per token; the space before a number stands alone.
    {"price: 12345 dollars", {"price", ":", " ", "1", "2", "3", "4", "5", " dollars"}, {}},
    // Decomposed accents (e + U+0301, a + U+0308): qwen35 keeps marks with letters, qwen2 cuts them off.
    {"cafe\xCC\x81 na\xCC\x88ive",
     {"cafe\xCC\x81", " na\xCC\x88ive"},
     {"cafe", "\xCC\x81", " na", "\xCC\x88ive"}},
    // Devanagari "kitaab": vowel signs are marks (Mc/Mn).
    {"\xE0\xA4\x95\xE0\xA4\xBF\xE0\xA4\xA4\xE0\xA4\xBE\xE0\xA4\xAC",
     {"\xE0\xA4\x95\xE0\xA4\xBF\xE0\xA4\xA4\xE0\xA4\xBE\xE0\xA4\xAC"},
     {"\xE0\xA4\x95", "\xE0\xA4\xBF\xE0\xA4\xA4", "\xE0\xA4\xBE\xE0\xA4\xAC"}},
    // CJK with full-width punctuation: the comma is a one-character prefix of the next letter run.
    {"\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xEF\xBC\x81",
     {"\xE4\xBD\xA0\xE5\xA5\xBD", "\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C", "\xEF\xBC\x81"},
     {}},
    // Emoji ZWJ sequence (man ZWJ woman ZWJ girl): symbols and the joiner form one run with its space.
    {"family: \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 ok",
     {"family", ":", " \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7", " ok"},
     {}},
    // Space and newline runs: \s+(?!\S) leaves the last space for the next word.
    {"a  b   \n\n  c\t\td  ", {"a", " ", " b", "   \n\n", " ", " c", "\t", "\td", "  "}, {}},
    {"line1\r\n\r\nline2\n", {"line", "1", "\r\n\r\n", "line", "2", "\n"}, {}},
    // Code.
    {"for (int i = 0; i < n; ++i) {\n    x += a[i];\n}",
     {"for", " (", "int", " i",   " =",  " ",  "0",   ";",  " i", " <",   " n", ";",
      " ++", "i",  ")",   " {\n", "   ", " x", " +=", " a", "[i", "];\n", "}"},
     {}},
    {"def f(x):\n\treturn x**2  # square",
     {"def", " f", "(x", "):\n", "\treturn", " x", "**", "2", " ", " #", " square"},
     {}},
    {"", {}, {}},
    {"   ", {"   "}, {}},
    // Non-ASCII letters and Greek.
    {"\xC3\x9Cn\xC3\xAF"
     "c\xC3\xB6"
     "d\xC3\xA9 \xCE\x91\xCE\x92\xCE\x93 \xCE\xB4",
     {"\xC3\x9Cn\xC3\xAF"
      "c\xC3\xB6"
      "d\xC3\xA9",
      " \xCE\x91\xCE\x92\xCE\x93", " \xCE\xB4"},
     {}},
    // U+FFFD (what invalid input becomes) is a symbol, not a letter.
    {"ab\xEF\xBF\xBD"
     "cd",
     {"ab",
      "\xEF\xBF\xBD"
      "cd"},
     {}},
};

TEST(TokenizerPreTokenizer, Qwen35Splits) {
  auto p = PreTokenizer::create("qwen35");
  ASSERT_TRUE(p.ok()) << p.error().describe();
  for (const Case& c : kCases) EXPECT_EQ(split(**p, c.text), c.qwen35) << "text: " << c.text;
}

TEST(TokenizerPreTokenizer, Qwen2Splits) {
  auto p = PreTokenizer::create("qwen2");
  ASSERT_TRUE(p.ok()) << p.error().describe();
  for (const Case& c : kCases) {
    EXPECT_EQ(split(**p, c.text), c.qwen2.empty() ? c.qwen35 : c.qwen2) << "text: " << c.text;
  }
}

TEST(TokenizerPreTokenizer, SplitsCoverTheInput) {
  // Long runs exercise the JIT-stack fallback; the pieces must concatenate back to the input.
  auto p = PreTokenizer::create("qwen35");
  ASSERT_TRUE(p.ok());
  const std::string text = std::string(100000, ' ') + "x" + std::string(50000, '\n') +
                           std::string(70000, 'a') + std::string(30000, '7');
  std::vector<std::string_view> views;
  ASSERT_TRUE((*p)->split(text, &views).ok());
  std::string joined;
  for (auto v : views) joined += v;
  EXPECT_EQ(joined, text);
  // 99999 spaces, " x", the newlines, the letters, then one token per digit.
  ASSERT_EQ(views.size(), 4u + 30000u);
  EXPECT_EQ(views[0].size(), 99999u);
  EXPECT_EQ(views[1], " x");
}

TEST(TokenizerPreTokenizer, UnknownNameIsAClearError) {
  auto p = PreTokenizer::create("llama3");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("\"llama3\""), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("qwen35, qwen2"), std::string::npos) << p.error().message;
}

TEST(TokenizerPreTokenizer, RegexLookup) {
  EXPECT_EQ(pretokenizer_for_regex(pretokenizer_regex("qwen2")), "qwen2");
  EXPECT_EQ(pretokenizer_for_regex(pretokenizer_regex("qwen35")), "qwen35");
  EXPECT_EQ(pretokenizer_for_regex("\\s+"), "");
}

}  // namespace
}  // namespace qc
