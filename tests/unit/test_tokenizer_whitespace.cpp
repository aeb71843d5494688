// \s in the pre-tokenizer regexes means Unicode White_Space, as in Hugging Face tokenizers (Oniguruma),
// not PCRE2's own \s, which also holds U+180E MONGOLIAN VOWEL SEPARATOR. Expected splits are Hugging Face
// tokenizers 0.22's (the Rust library through tools/npm's @anush008/tokenizers 0.6.0, Split + ByteLevel
// as in tests/agreement); the code point sweep there found U+180E to be the only assigned character
// where the engines differed.
#include <gtest/gtest.h>

#include "tokenizer/pretokenizer.h"

namespace qc {
namespace {

using Split = std::vector<std::string>;

Split split(std::string_view name, std::string_view text) {
  auto p = PreTokenizer::create(name);
  EXPECT_TRUE(p.ok());
  if (!p.ok()) return {};
  std::vector<std::string_view> views;
  const Status st = (*p)->split(text, &views);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().describe());
  return Split(views.begin(), views.end());
}

constexpr const char* kMvs = "\xE1\xA0\x8E";  // U+180E, format character (Cf) since Unicode 6.3
constexpr const char* kNel = "\xC2\x85";      // U+0085 NEXT LINE, White_Space

std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (const std::string_view p : parts) s += p;
  return s;
}

TEST(TokenizerWhitespace, MongolianVowelSeparatorIsNotWhitespace) {
  for (const char* name : {"qwen35", "qwen2"}) {
    SCOPED_TRACE(name);
    // Punctuation-like: it joins the "!" run instead of standing alone.
    EXPECT_EQ(split(name, cat({"!", kMvs, "!"})), Split({cat({"!", kMvs, "!"})}));
    EXPECT_EQ(split(name, cat({"a ", kMvs, " b"})), Split({"a", cat({" ", kMvs}), " b"}));
    EXPECT_EQ(split(name, cat({"x", kMvs, kMvs, "  y"})), Split({"x", cat({kMvs, kMvs}), " ", " y"}));
    // Not part of a whitespace run, so "  " before it splits as before any non-space.
    EXPECT_EQ(split(name, cat({"x  ", kMvs})), Split({"x", " ", cat({" ", kMvs})}));
  }
  // The sweep's case: tab, U+180E, U+0365 (a combining mark), then letters. qwen35 lets marks into the
  // letter run; qwen2 leaves the mark with the punctuation-like U+180E.
  const std::string text = cat({"\t", kMvs, "\xCD\xA5\xE6\xB2\xB5n"});
  EXPECT_EQ(split("qwen35", text), Split({"\t", cat({kMvs, "\xCD\xA5\xE6\xB2\xB5n"})}));
  EXPECT_EQ(split("qwen2", text), Split({"\t", cat({kMvs, "\xCD\xA5"}), "\xE6\xB2\xB5n"}));
}

TEST(TokenizerWhitespace, NextLineIsWhitespace) {
  for (const char* name : {"qwen35", "qwen2"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(split(name, cat({"!", kNel, "!"})), Split({"!", kNel, "!"}));
    EXPECT_EQ(split(name, cat({"a", kNel, kNel, "b"})), Split({"a", kNel, cat({kNel, "b"})}));
  }
}

TEST(TokenizerWhitespace, ZeroWidthCharactersAreNotWhitespace) {
  for (const char* name : {"qwen35", "qwen2"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(split(name, "!\xE2\x80\x8B!"), Split({"!\xE2\x80\x8B!"}));  // U+200B ZERO WIDTH SPACE
    EXPECT_EQ(split(name, "!\xEF\xBB\xBF!"), Split({"!\xEF\xBB\xBF!"}));  // U+FEFF BOM
  }
}

}  // namespace
}  // namespace qc
