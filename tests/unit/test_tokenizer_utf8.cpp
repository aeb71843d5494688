// Byte-level mapping, the lossy UTF-8 rule and the streaming decoder.
#include <gtest/gtest.h>

#include <random>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

const std::string kFFFD = "\xEF\xBF\xBD";

TEST(TokenizerByteLevel, KnownCodes) {
  EXPECT_EQ(byte_level::byte_to_code(' '), 0x120u);   // "Ġ"
  EXPECT_EQ(byte_level::byte_to_code('\n'), 0x10Au);  // "Ċ"
  EXPECT_EQ(byte_level::byte_to_code(0), 0x100u);
  EXPECT_EQ(byte_level::byte_to_code('!'), static_cast<uint32_t>('!'));
  EXPECT_EQ(byte_level::byte_to_code(0xAD), 0x143u);  // the last shifted byte (soft hyphen)
  EXPECT_EQ(byte_level::byte_to_code(0xFF), 0xFFu);
  EXPECT_EQ(byte_level::encode(" hi\n"), "\xC4\xA0hi\xC4\x8A");  // "Ġhi" + "Ċ"
  EXPECT_EQ(byte_level::code_to_byte(0x20), -1);                 // space itself is not in the mapped alphabet
  EXPECT_EQ(byte_level::code_to_byte(0x144), -1);                // one past the shifted range
}

TEST(TokenizerByteLevel, EveryByteRoundTrips) {
  std::string all;
  for (int b = 0; b < 256; ++b) {
    const uint32_t code = byte_level::byte_to_code(static_cast<uint8_t>(b));
    EXPECT_EQ(byte_level::code_to_byte(code), b);
    all.push_back(static_cast<char>(b));
  }
  std::string back;
  ASSERT_TRUE(byte_level::decode(byte_level::encode(all), &back));
  EXPECT_EQ(back, all);
  // The mapping is a bijection onto 256 distinct code points.
  std::vector<uint32_t> codes;
  for (int b = 0; b < 256; ++b) codes.push_back(byte_level::byte_to_code(static_cast<uint8_t>(b)));
  std::sort(codes.begin(), codes.end());
  EXPECT_EQ(std::unique(codes.begin(), codes.end()), codes.end());
  EXPECT_FALSE(byte_level::decode("a b", &back));  // a plain space is not mapped text
}

TEST(TokenizerUtf8, LossyReplacesMaximalSubparts) {
  // Expected outputs are Python's bytes.decode("utf-8", "replace") on the same bytes.
  EXPECT_EQ(utf8_lossy("a\x80"
                       "b"),
            "a" + kFFFD + "b");
  EXPECT_EQ(utf8_lossy("\xF0\x9F\x98"), kFFFD);                  // truncated 4-byte: one
  EXPECT_EQ(utf8_lossy("\xE0\x80\x80"), kFFFD + kFFFD + kFFFD);  // overlong: one per byte
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), kFFFD + kFFFD + kFFFD);  // surrogate
  EXPECT_EQ(utf8_lossy("\xC0\xAF"), kFFFD + kFFFD);
  EXPECT_EQ(utf8_lossy("\xF4\x90\x80\x80"), kFFFD + kFFFD + kFFFD + kFFFD);  // above U+10FFFF
  EXPECT_EQ(utf8_lossy("\xE2\x82x"), kFFFD + "x");
  EXPECT_EQ(utf8_lossy("\xFF"), kFFFD);
  EXPECT_EQ(utf8_lossy("\xF0\x9F\x98\x80\xF0\x9F"), "\xF0\x9F\x98\x80" + kFFFD);
  const std::string valid = "h\xC3\xA9llo \xE4\xBD\xA0 \xF0\x9F\x98\x80";
  EXPECT_TRUE(utf8_valid(valid));
  EXPECT_EQ(utf8_lossy(valid), valid);
  EXPECT_FALSE(utf8_valid("\xC3"));
}

TEST(TokenizerUtf8, StreamHoldsPartialEmoji) {
  // U+1F600 split over three tokens: nothing comes out until the last byte arrives.
  Utf8Stream s;
  EXPECT_EQ(s.push("ok \xF0"), "ok ");
  EXPECT_EQ(s.push("\x9F\x98"), "");
  EXPECT_EQ(s.push("\x80!"), "\xF0\x9F\x98\x80!");
  EXPECT_EQ(s.flush(), "");
}

TEST(TokenizerUtf8, StreamReplacesInvalidAndFlushesPartial) {
  Utf8Stream s;
  EXPECT_EQ(s.push("a\x80"), "a" + kFFFD);
  EXPECT_EQ(s.push("\xE2\x82"), "");
  EXPECT_EQ(s.push("x"), kFFFD + "x");  // the 'x' breaks the sequence: one U+FFFD for E2 82
  EXPECT_EQ(s.push("\xF0\x9F"), "");
  EXPECT_EQ(s.flush(), kFFFD);
  EXPECT_EQ(s.flush(), "");
}

TEST(TokenizerUtf8, StreamEqualsLossyForAnySplit) {
  // Random byte strings cut at random points: the streamed output must equal utf8_lossy of the whole.
  std::mt19937 rng(1234);
  const std::string pool[] = {"a",    " ",    "\xC3\xA9", "\xE4\xBD\xA0", "\xF0\x9F\x98\x80",
                              "\x80", "\xFF", "\xE0",     "\xED\xA0",     "\xF4\x90",
                              "\xC2"};
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    const int parts = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < parts; ++i) text += pool[rng() % std::size(pool)];
    Utf8Stream s;
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t n = 1 + rng() % 3;
      out += s.push(std::string_view(text).substr(pos, n));
      pos += n;
    }
    out += s.flush();
    ASSERT_EQ(out, utf8_lossy(text)) << "trial " << trial;
    ASSERT_TRUE(utf8_valid(out));
  }
}

}  // namespace
}  // namespace qc
