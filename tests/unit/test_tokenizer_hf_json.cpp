// tokenizer.json (Hugging Face) -> BpeVocab: a Qwen2-shaped file built from a trained vocabulary gives the
// same ids as the vocabulary itself; unsupported shapes are refused by name.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "tokenizer/bpe_trainer.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

using nlohmann::json;

// The layout of Qwen2/Qwen3's tokenizer.json: vocab without the added tokens, which follow with
// special flags; merges as "a b" strings or as [a, b] pairs (newer files).
json qwen_like(const BpeVocab& v, bool pair_merges) {
  json vocab = json::object();
  json added = json::array();
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    if (v.token_types[id] == static_cast<int32_t>(TokenType::kNormal)) {
      vocab[v.tokens[id]] = id;
    } else {
      added.push_back({{"id", id},
                       {"content", v.tokens[id]},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", v.tokens[id][0] == '<' && v.tokens[id][1] == '|'}});
    }
  }
  json merges = json::array();
  for (const std::string& m : v.merges) {
    const size_t sp = m.find(' ', 1);
    if (pair_merges) {
      merges.push_back(json::array({m.substr(0, sp), m.substr(sp + 1)}));
    } else {
      merges.push_back(m);
    }
  }
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers", json::array({{{"type", "Split"},
                                            {"pattern", {{"Regex", std::string(pretokenizer_regex(v.pre))}}},
                                            {"behavior", "Isolated"},
                                            {"invert", false}},
                                           {{"type", "ByteLevel"},
                                            {"add_prefix_space", false},
                                            {"trim_offsets", false},
                                            {"use_regex", false}}})}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"byte_fallback", false},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", merges}}}};
}

BpeVocab trained(const std::string& pre) {
  BpeTrainOptions o;
  o.n_merges = 200;
  o.pre = pre;
  auto v = train_bpe(builtin_training_corpus(), o);
  EXPECT_TRUE(v.ok());
  return *v;
}

TEST(TokenizerHfJson, QwenShapedFileGivesTheSameIds) {
  for (const std::string pre : {"qwen2", "qwen35"}) {
    for (const bool pairs : {false, true}) {
      const BpeVocab v = trained(pre);
      auto back = bpe_vocab_from_tokenizer_json(qwen_like(v, pairs).dump(), "tokenizer.json");
      ASSERT_TRUE(back.ok()) << back.error().describe();
      EXPECT_EQ(back->pre, pre);
      EXPECT_EQ(back->tokens, v.tokens);
      EXPECT_EQ(back->merges, v.merges);
      // <|...|> were flagged special (control), <think> and </think> not (user-defined).
      const auto think = std::find(v.tokens.begin(), v.tokens.end(), "<think>") - v.tokens.begin();
      EXPECT_EQ(back->token_types[static_cast<size_t>(think)], static_cast<int32_t>(TokenType::kUserDefined));
      auto a = make_bpe_tokenizer(v);
      auto b = make_bpe_tokenizer(*back);
      ASSERT_TRUE(a.ok() && b.ok());
      const std::string text = "<|im_start|>user\nI'd like 3 apples, please.<|im_end|>\n<think>\n";
      EXPECT_EQ(*(*a)->encode(text, true), *(*b)->encode(text, true));
      EXPECT_EQ((*b)->special().eos, (*b)->special_id("<|endoftext|>"));
    }
  }
}

TEST(TokenizerHfJson, IdGapsBecomeUnusedTokens) {
  BpeVocab v = trained("qwen35");
  json j = qwen_like(v, false);
  j["added_tokens"].push_back({{"id", v.tokens.size() + 3}, {"content", "<|extra|>"}, {"special", true}});
  auto back = bpe_vocab_from_tokenizer_json(j.dump(), "t.json");
  ASSERT_TRUE(back.ok()) << back.error().describe();
  ASSERT_EQ(back->tokens.size(), v.tokens.size() + 4);
  EXPECT_EQ(back->tokens[v.tokens.size()], "[PAD" + std::to_string(v.tokens.size()) + "]");
  EXPECT_EQ(back->token_types[v.tokens.size()], static_cast<int32_t>(TokenType::kUnused));
  EXPECT_EQ(back->tokens.back(), "<|extra|>");
  EXPECT_TRUE(make_bpe_tokenizer(*back).ok());
}

// The error for `j` must mention every string in `needles`.
void expect_refused(const json& j, const std::vector<std::string>& needles) {
  auto r = bpe_vocab_from_tokenizer_json(j.dump(), "tok.json");
  ASSERT_FALSE(r.ok()) << j.dump().substr(0, 200);
  for (const std::string& n : needles) {
    EXPECT_NE(r.error().message.find(n), std::string::npos)
        << "missing \"" << n << "\" in: " << r.error().message;
  }
}

TEST(TokenizerHfJson, UnsupportedShapesAreRefusedByName) {
  const json good = qwen_like(trained("qwen35"), false);
  json j = good;
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+|\\w+";
  expect_refused(j, {"tok.json", "\\s+|\\w+", "qwen35, qwen2"});
  j = good;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  expect_refused(j, {"pre_tokenizer", "ByteLevel", "qwen35, qwen2"});
  j = good;
  j["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = true;
  expect_refused(j, {"use_regex"});
  j = good;
  j["model"]["type"] = "WordPiece";
  expect_refused(j, {"model.type", "\"WordPiece\""});
  j = good;
  j["normalizer"] = {{"type", "BertNormalizer"}};
  expect_refused(j, {"normalizer", "BertNormalizer"});
  j = good;
  j["model"]["byte_fallback"] = true;
  expect_refused(j, {"byte_fallback"});
  j = good;
  j["added_tokens"][0]["lstrip"] = true;
  expect_refused(j, {"lstrip"});
  j = good;
  j["model"]["merges"][0] = 7;
  expect_refused(j, {"model.merges[0]"});
  j = good;
  j["model"]["vocab"]["zzz"] = 0;  // id 0 already belongs to another token
  expect_refused(j, {"id 0"});
  j = good;
  // Found by tokenizer_json_fuzz: one stray huge id made the loader allocate a padding token per gap.
  j["added_tokens"].push_back({{"id", 2000000000}, {"content", "<|far|>"}});
  expect_refused(j, {"tok.json", "highest id 2000000000", "gaps"});
  j = good;
  j["added_tokens"][0]["special"] = "yes";  // wrong type deep inside: caught, not thrown
  expect_refused(j, {"tok.json"});
  expect_refused(json::array(), {"tok.json"});
  auto r = bpe_vocab_from_tokenizer_json("{not json", "tok.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos);
  auto missing = load_tokenizer_json("/nonexistent/tokenizer.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/tokenizer.json"), std::string::npos);
}

TEST(TokenizerHfJson, MutatedFilesFailCleanly) {
  // Seeded byte flips and truncations: an error or a usable vocabulary, never a crash or an exception.
  const std::string good = qwen_like(trained("qwen35"), true).dump();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text = good;
    if (trial % 4 == 0) {
      text.resize(rng() % text.size());
    } else {
      for (int k = 0; k < 1 + trial % 3; ++k) text[rng() % text.size()] = "{}[]\",:0a\\ "[rng() % 11];
    }
    auto v = bpe_vocab_from_tokenizer_json(text, "m.json");
    if (v.ok()) (void)make_bpe_tokenizer(*v);
  }
}

TEST(TokenizerHfJson, LoadsFromAFile) {
  const std::string path =
      std::string(QWENCHAT_BINARY_DIR) + "/test_tokenizer_hf_json." + std::to_string(getpid());
  const BpeVocab v = trained("qwen2");
  std::ofstream(path) << qwen_like(v, false).dump();
  auto t = load_tokenizer_json(path);
  std::remove(path.c_str());
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ((*t)->kind(), "bpe/qwen2");
  EXPECT_EQ((*t)->n_vocab(), static_cast<int>(v.tokens.size()));
}

}  // namespace
}  // namespace qc
