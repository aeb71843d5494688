// The BPE trainer: a hand-worked tiny corpus, determinism, and the trained vocabulary in the tokenizer.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "tokenizer/bpe_trainer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

using Ids = std::vector<int32_t>;

BpeVocab train(std::string_view corpus, const BpeTrainOptions& o) {
  auto r = train_bpe(corpus, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
  return r.ok() ? *r : BpeVocab{};
}

TEST(TokenizerTrainer, HandWorkedCorpus) {
  // Pre-tokens "aaab", " aab", " ab" (mapped "Ġaab", "Ġab"). Pair counts: (a,a) 3, (a,b) 3, (Ġ,a) 2.
  // 1. (a,a) and (a,b) tie at 3; "a a" < "a b" -> merge "a a" (words: aa a b | Ġ aa b | Ġ a b).
  // 2. (a,b) 2 -> "a b" (words: aa ab | Ġ aa b | Ġ ab); every pair left occurs once.
  // 3. with min_pair_count 1: (aa,ab), (aa,b), (Ġ,aa), (Ġ,ab) tie at 1; "aa" < "Ġ" (0x61 < 0xC4) and
  //    "ab" < "b" -> "aa ab".
  BpeTrainOptions o;
  o.n_merges = 3;
  BpeVocab v = train("aaab aab ab", o);
  EXPECT_EQ(v.merges, (std::vector<std::string>{"a a", "a b"}));  // min_pair_count 2 stops after two
  o.min_pair_count = 1;
  v = train("aaab aab ab", o);
  ASSERT_EQ(v.merges, (std::vector<std::string>{"a a", "a b", "aa ab"}));
  ASSERT_EQ(v.tokens.size(), 256u + 3u + 5u);
  EXPECT_EQ(v.tokens[32], "\xC4\xA0");  // byte tokens first, in mapped form
  EXPECT_EQ(v.tokens[256], "aa");
  EXPECT_EQ(v.tokens[257], "ab");
  EXPECT_EQ(v.tokens[258], "aaab");
  EXPECT_EQ(std::vector<std::string>(v.tokens.begin() + 259, v.tokens.end()), chatml_special_tokens());
  EXPECT_EQ(v.token_types[258], static_cast<int32_t>(TokenType::kNormal));
  EXPECT_EQ(v.token_types[259], static_cast<int32_t>(TokenType::kControl));
  EXPECT_EQ(v.eos, 259);
  EXPECT_EQ(v.pad, 259);
  EXPECT_EQ(v.pre, "qwen35");

  auto t = make_bpe_tokenizer(v);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(*(*t)->encode("aaab aab ab", false), (Ids{258, ' ', 256, 'b', ' ', 257}));
  EXPECT_EQ((*t)->special().im_end, 261);
  EXPECT_EQ((*t)->special().stop, (Ids{261, 259}));
}

TEST(TokenizerTrainer, Deterministic) {
  BpeTrainOptions o;
  o.n_merges = 400;
  const BpeVocab a = train(builtin_training_corpus(), o);
  const BpeVocab b = train(builtin_training_corpus(), o);
  EXPECT_EQ(a.merges.size(), 400u);  // the built-in corpus has enough repeated pairs
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.merges, b.merges);
  EXPECT_EQ(a.token_types, b.token_types);
  // The most frequent pair of English prose with GPT-2 spaces: "Ġ t" (" the", " to", " that" ...), or
  // at least a pair starting with the mapped space or "e"; checked loosely so wording edits of the corpus
  // do not break it, but a broken counter (say, merging the rarest pair) does.
  ASSERT_FALSE(a.merges.empty());
  EXPECT_TRUE(a.merges[0].rfind("\xC4\xA0 ", 0) == 0 || a.merges[0].rfind("e ", 0) == 0) << a.merges[0];
}

TEST(TokenizerTrainer, TrainedVocabularyRoundTripsAndCompresses) {
  BpeTrainOptions o;
  o.n_merges = 600;
  const BpeVocab v = train(builtin_training_corpus(), o);
  auto t = make_bpe_tokenizer(v);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  const std::string_view corpus = builtin_training_corpus();
  auto ids = (*t)->encode(corpus, false);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ((*t)->decode(*ids), corpus);
  // 600 merges over a ~4.5 KB corpus: well under one token per two bytes (measured: see the message).
  EXPECT_LT(ids->size() * 2, corpus.size()) << ids->size() << " tokens for " << corpus.size() << " bytes";
  // A string the corpus never saw still round-trips through byte tokens.
  const std::string other = "Zebra \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80 <|im_end|>";
  EXPECT_EQ((*t)->decode(*(*t)->encode(other, false)), other);
  EXPECT_EQ((*t)->decode(*(*t)->encode(other, true)), other);
}

// The obvious quadratic trainer: recount every pair after every merge. The incremental trainer must
// produce the same merges.
std::vector<std::string> naive_merges(std::string_view corpus, int n_merges, int min_count) {
  auto pre = PreTokenizer::create("qwen35");
  std::vector<std::string_view> views;
  EXPECT_TRUE((*pre)->split(corpus, &views).ok());
  std::map<std::string, int64_t> counts;
  for (auto w : views) ++counts[std::string(w)];
  std::vector<std::pair<std::vector<std::string>, int64_t>> words;
  for (const auto& [w, c] : counts) {
    std::vector<std::string> syms;
    for (const char ch : w) syms.push_back(byte_level::encode(std::string(1, ch)));
    words.emplace_back(syms, c);
  }
  std::vector<std::string> merges;
  while (static_cast<int>(merges.size()) < n_merges) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;  // ordered: ties go to the smallest
    for (const auto& [syms, c] : words) {
      for (size_t i = 0; i + 1 < syms.size(); ++i) pairs[{syms[i], syms[i + 1]}] += c;
    }
    const std::pair<std::string, std::string>* best = nullptr;
    int64_t best_count = 0;
    for (const auto& [p, c] : pairs) {
      if (c > best_count) best = &p, best_count = c;
    }
    if (!best || best_count < min_count) break;
    const auto [l, r] = *best;
    merges.push_back(l + " " + r);
    for (auto& [syms, c] : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < syms.size(); ++i) {
        if (i + 1 < syms.size() && syms[i] == l && syms[i + 1] == r) {
          out.push_back(l + r);
          ++i;
        } else {
          out.push_back(syms[i]);
        }
      }
      syms = out;
    }
  }
  return merges;
}

TEST(TokenizerTrainer, MatchesNaiveRecountTrainer) {
  BpeTrainOptions o;
  o.n_merges = 300;
  o.special_tokens = {};
  EXPECT_EQ(train(builtin_training_corpus(), o).merges, naive_merges(builtin_training_corpus(), 300, 2));
  // Random corpora over a tiny alphabet: many ties and overlapping pairs ("aaa"), min count 1.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::string corpus;
    for (int i = 0; i < 300; ++i) corpus.push_back("aab b\n"[rng() % 6]);
    o.n_merges = 60;
    o.min_pair_count = 1;
    ASSERT_EQ(train(corpus, o).merges, naive_merges(corpus, 60, 1)) << "trial " << trial;
  }
}

TEST(TokenizerTrainer, SpecialTextIsCutFromTheCorpus) {
  BpeTrainOptions o;
  o.min_pair_count = 1;
  const BpeVocab v = train("x<|im_end|>x<|im_end|><think></think>", o);
  EXPECT_TRUE(v.merges.empty());  // only the single-byte words "x" remain
}

TEST(TokenizerTrainer, BadOptionsAreClearErrors) {
  BpeTrainOptions o;
  o.pre = "bert";
  auto r = train_bpe("abc", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("\"bert\""), std::string::npos) << r.error().message;
  o = {};
  o.n_merges = -1;
  EXPECT_FALSE(train_bpe("abc", o).ok());
  o = {};
  o.special_tokens = {"<a>", "<a>"};
  EXPECT_FALSE(train_bpe("abc", o).ok());
  o = {};
  o.min_pair_count = 0;
  EXPECT_FALSE(train_bpe("abc", o).ok());
}

}  // namespace
}  // namespace qc
