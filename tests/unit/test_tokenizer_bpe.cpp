// Byte-level BPE on small hand-made vocabularies whose expected ids can be checked by hand.
#include <gtest/gtest.h>

#include <random>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

// Ids 0..255 are the byte tokens (id == byte value), then one token per merge in merge order, then the
// specials in the order given.
BpeVocab hand_vocab(const std::vector<std::string>& merges,
                    const std::vector<std::pair<std::string, TokenType>>& specials = {}) {
  BpeVocab v;
  v.pre = "qwen35";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(byte_level::encode(std::string(1, static_cast<char>(b))));
  for (const std::string& m : merges) {
    const size_t sp = m.find(' ', 1);
    v.tokens.push_back(m.substr(0, sp) + m.substr(sp + 1));
  }
  v.merges = merges;
  v.token_types.assign(v.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  for (const auto& [text, type] : specials) {
    v.tokens.push_back(text);
    v.token_types.push_back(static_cast<int32_t>(type));
  }
  return v;
}

// "Ġ" is the mapped space.
const std::vector<std::string> kHelloMerges = {
    "h e",             // 256 he
    "l l",             // 257 ll
    "he ll",           // 258 hell
    "hell o",          // 259 hello
    "\xC4\xA0 w",      // 260 Ġw
    "o r",             // 261 or
    "\xC4\xA0w or",    // 262 Ġwor
    "l d",             // 263 ld
    "\xC4\xA0wor ld",  // 264 Ġworld
    "a a",             // 265 aa
};
const std::vector<std::pair<std::string, TokenType>> kSpecials = {
    {"<|endoftext|>", TokenType::kControl},      // 266
    {"<|im_start|>", TokenType::kControl},       // 267
    {"<|im_end|>", TokenType::kControl},         // 268
    {"<think>", TokenType::kUserDefined},        // 269
    {"</think>", TokenType::kUserDefined},       // 270
    {"<tool>", TokenType::kUserDefined},         // 271
    {"<tool></tool>", TokenType::kUserDefined},  // 272: longer match wins over <tool>
};

std::unique_ptr<Tokenizer> make(const BpeVocab& v) {
  auto t = make_bpe_tokenizer(v);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().describe());
  return t.ok() ? std::move(t).value() : nullptr;
}

std::vector<int32_t> enc(const Tokenizer& t, std::string_view s, bool special = false) {
  auto r = t.encode(s, special);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
  return r.ok() ? *r : std::vector<int32_t>{};
}

using Ids = std::vector<int32_t>;

TEST(TokenizerBpe, HandCheckedMerges) {
  auto t = make(hand_vocab(kHelloMerges, kSpecials));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->n_vocab(), 273);
  EXPECT_EQ(t->kind(), "bpe/qwen35");
  EXPECT_EQ(enc(*t, "hello world"), (Ids{259, 264}));
  EXPECT_EQ(enc(*t, "hell"), (Ids{258}));
  EXPECT_EQ(enc(*t, "help"), (Ids{256, 'l', 'p'}));
  EXPECT_EQ(enc(*t, "Hello"), (Ids{'H', 'e', 257, 'o'}));  // no "H e" merge
  EXPECT_EQ(enc(*t, "aaaaa"), (Ids{265, 265, 'a'}));       // equal ranks: leftmost first
  EXPECT_EQ(enc(*t, "world"), (Ids{'w', 261, 263}));       // no leading space: no Ġw
  EXPECT_EQ(enc(*t, "caf\xC3\xA9"), (Ids{'c', 'a', 'f', 0xC3, 0xA9}));
  EXPECT_EQ(enc(*t, ""), Ids{});
}

TEST(TokenizerBpe, LowestRankFirstNotLeftToRight) {
  // Ranks: (l,o) 0, (l,l) 1, (e,l) 2. "hello": "lo" forms first, then "el" -> h, el, lo. "ell": a left to
  // right pass would merge (e,l) first and give el, l; rank order merges (l,l) first and gives e, ll.
  auto t = make(hand_vocab({"l o", "l l", "e l"}));
  ASSERT_TRUE(t);
  EXPECT_EQ(enc(*t, "hello"), (Ids{'h', 258, 256}));  // h, el, lo
  EXPECT_EQ(enc(*t, "ell"), (Ids{'e', 257}));         // e, ll (rank 1 beats rank 2)
}

TEST(TokenizerBpe, SpecialTokensParsedOnlyWhenAsked) {
  auto t = make(hand_vocab(kHelloMerges, kSpecials));
  ASSERT_TRUE(t);
  const std::string text = "<|im_start|>user\nhello<|im_end|>";
  EXPECT_EQ(enc(*t, text, true), (Ids{267, 'u', 's', 'e', 'r', '\n', 259, 268}));
  // Off: the markup is plain text ("<|", "im", "_end", "|>" pre-tokens, all single bytes here).
  EXPECT_EQ(enc(*t, "<|im_end|>", false), (Ids{'<', '|', 'i', 'm', '_', 'e', 'n', 'd', '|', '>'}));
  EXPECT_EQ(enc(*t, "<think>", false), (Ids{'<', 't', 'h', 'i', 'n', 'k', '>'}));  // user-defined too
  EXPECT_EQ(enc(*t, "<think>hello</think>", true), (Ids{269, 259, 270}));
  EXPECT_EQ(enc(*t, "<tool></tool><tool>", true), (Ids{272, 271}));  // longest match
  EXPECT_EQ(enc(*t, "a<|endoftext|><|endoftext|>", true), (Ids{'a', 266, 266}));
}

TEST(TokenizerBpe, SpecialIdsAndTypes) {
  auto t = make(hand_vocab(kHelloMerges, kSpecials));
  ASSERT_TRUE(t);
  const SpecialTokens& s = t->special();
  EXPECT_EQ(s.eos, 266);  // no eos in the vocabulary struct: <|endoftext|> by text
  EXPECT_EQ(s.im_start, 267);
  EXPECT_EQ(s.im_end, 268);
  EXPECT_EQ(s.think_begin, 269);
  EXPECT_EQ(s.think_end, 270);
  EXPECT_EQ(s.bos, -1);
  EXPECT_EQ(s.stop, (Ids{268, 266}));
  EXPECT_TRUE(t->is_control(268));
  EXPECT_FALSE(t->is_control(269));
  EXPECT_FALSE(t->is_control(259));
  EXPECT_EQ(t->token_type(269), TokenType::kUserDefined);
  EXPECT_EQ(t->special_id("</think>"), 270);
  EXPECT_EQ(t->special_id("hello"), -1);  // normal tokens are not specials
  EXPECT_EQ(t->token_bytes(264), " world");
  EXPECT_EQ(t->token_bytes(268), "<|im_end|>");
  EXPECT_EQ(t->token_bytes(10), "\n");
  EXPECT_EQ(t->token_bytes(-1), "");
  EXPECT_EQ(t->token_bytes(273), "");
}

TEST(TokenizerBpe, InvalidUtf8BecomesReplacementCharacter) {
  auto t = make(hand_vocab(kHelloMerges, kSpecials));
  ASSERT_TRUE(t);
  // "a\xFF" "b" -> "a", U+FFFD "b" (EF BF BD 62).
  EXPECT_EQ(enc(*t,
                "a\xFF"
                "b"),
            (Ids{'a', 0xEF, 0xBF, 0xBD, 'b'}));
  EXPECT_EQ(t->decode(enc(*t,
                          "a\xFF"
                          "b")),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(TokenizerBpe, DecodeEncodeRoundTrips) {
  auto t = make(hand_vocab(kHelloMerges, kSpecials));
  ASSERT_TRUE(t);
  const std::vector<std::string> fixed = {
      "hello world",
      "  leading and trailing  ",
      "tabs\tand\nnewlines\r\n\r\n",
      "I'M can't WON'T",
      "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C",
      "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7",
      "x = a[i] ** 2; // 12345",
      "cafe\xCC\x81",
      "<|im_end|> typed by a user",
      std::string("nul\0byte", 8),
      "\x80\x81 bad \xC3",
      "\xED\xA0\x80 surrogate",
      "\xF0\x9F\x98 cut emoji"};
  for (const std::string& s : fixed) {
    EXPECT_EQ(t->decode(enc(*t, s, false)), utf8_lossy(s)) << s;
    EXPECT_EQ(t->decode(enc(*t, s, true)), utf8_lossy(s)) << s;
  }
  // Random strings over a pool of awkward pieces (seeded).
  std::mt19937 rng(42);
  const std::string pool[] = {"a",
                              "e",
                              "hello",
                              " ",
                              "  ",
                              "\n",
                              "\r\n",
                              "\t",
                              "'s",
                              "'LL",
                              "7",
                              "42",
                              "<",
                              "|",
                              "<|im_end|>",
                              "<think>",
                              "\xC3\xA9",
                              "\xCC\x81",
                              "\xE4\xBD\xA0",
                              "\xF0\x9F\x98\x80",
                              "\xE2\x80\x8D",
                              "\x80",
                              "\xFF",
                              "\xF0\x9F",
                              "!",
                              "?."};
  for (int trial = 0; trial < 300; ++trial) {
    std::string s;
    const int parts = static_cast<int>(rng() % 20);
    for (int i = 0; i < parts; ++i) s += pool[rng() % std::size(pool)];
    ASSERT_EQ(t->decode(enc(*t, s, trial % 2 == 0)), utf8_lossy(s)) << "trial " << trial;
  }
}

TEST(TokenizerBpe, StreamedTokenBytesHoldTheSplitEmoji) {
  // U+1F600 has no merge in this vocabulary: four byte tokens, each a partial character on its own.
  auto t = make(hand_vocab(kHelloMerges, kSpecials));
  ASSERT_TRUE(t);
  const std::vector<int32_t> ids = enc(*t, "hello \xF0\x9F\x98\x80!");
  ASSERT_EQ(ids, (Ids{259, ' ', 0xF0, 0x9F, 0x98, 0x80, '!'}));
  Utf8Stream s;
  std::vector<std::string> out;
  for (const int32_t id : ids) out.push_back(s.push(t->token_bytes(id)));
  EXPECT_EQ(out, (std::vector<std::string>{"hello", " ", "", "", "", "\xF0\x9F\x98\x80", "!"}));
  EXPECT_EQ(s.flush(), "");
}

TEST(TokenizerBpe, IgnoreMergesTakesWholeWords) {
  // "hel" is a token no merge path reaches ("h e" then "he l" is absent): only ignore_merges finds it.
  BpeVocab v = hand_vocab({"h e"});
  v.tokens.push_back("hel");
  v.token_types.push_back(1);
  auto plain = make(v);
  v.ignore_merges = true;
  auto whole = make(v);
  ASSERT_TRUE(plain && whole);
  EXPECT_EQ(enc(*plain, "hel"), (Ids{256, 'l'}));
  EXPECT_EQ(enc(*whole, "hel"), (Ids{257}));
  EXPECT_EQ(enc(*whole, "help"), (Ids{256, 'l', 'p'}));
}

TEST(TokenizerBpe, BadVocabulariesAreClearErrors) {
  BpeVocab v = hand_vocab(kHelloMerges);
  v.pre = "gpt4o";
  auto r = make_bpe_tokenizer(v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("\"gpt4o\""), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("qwen35"), std::string::npos) << r.error().message;

  v = hand_vocab(kHelloMerges);
  v.merges.push_back("q z");  // "qz" is not a token
  r = make_bpe_tokenizer(v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("merge 10"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("\"qz\""), std::string::npos) << r.error().message;

  v = hand_vocab(kHelloMerges);
  v.merges.push_back("nospace");
  EXPECT_FALSE(make_bpe_tokenizer(v).ok());

  v = hand_vocab(kHelloMerges);
  v.token_types[3] = 9;
  r = make_bpe_tokenizer(v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("token 3"), std::string::npos) << r.error().message;

  v = hand_vocab(kHelloMerges);
  v.eos = 100000;
  EXPECT_FALSE(make_bpe_tokenizer(v).ok());
  EXPECT_FALSE(make_bpe_tokenizer(BpeVocab{}).ok());
}

TEST(TokenizerBpe, MissingByteTokenIsAnErrorNotACrash) {
  BpeVocab v = hand_vocab({});
  v.tokens['z'] = "[unused]";  // byte 'z' has no token any more
  auto t = make(v);
  ASSERT_TRUE(t);
  auto r = t->encode("a z", false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("0x7A"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace qc
