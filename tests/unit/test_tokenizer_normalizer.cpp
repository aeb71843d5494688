// The normaliser (tokenizer/normalizer.h): each step on strings whose Hugging Face result is known (the
// agreement test, tests/agreement/hf_real_tokenizers.mjs, checks all of them against HF on ~4,700 strings
// with real merges); a tokenizer with NFC gives NFC and NFD spellings the same ids; the GGUF key round
// trip and the Qwen default for files that lack it; clear errors for steps we do not implement.
#include <gtest/gtest.h>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_gguf_builder.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

std::string apply(const std::string& spec, const std::string& text) {
  auto n = Normalizer::from_json(spec, "test");
  EXPECT_TRUE(n.ok()) << (n.ok() ? "" : n.error().describe());
  return n.ok() ? n->apply(text) : "";
}

TEST(Normalizer, UnicodeForms) {
  EXPECT_EQ(apply(R"({"type":"NFC"})", "e\u0301 A\u030a"), "\u00e9 \u00c5");
  EXPECT_EQ(apply(R"({"type":"NFD"})", "\u00e9"), "e\u0301");
  EXPECT_EQ(apply(R"({"type":"NFKC"})", "\ufb01 \u2163 \uff21"), "fi IV A");
  EXPECT_EQ(apply(R"({"type":"NFKD"})", "\u00c5"), "A\u030a");
  // Canonical reordering of combining marks (ccc 220 before 230).
  EXPECT_EQ(apply(R"({"type":"NFC"})", "a\u0301\u0316"), "\u00e1\u0316");
}

TEST(Normalizer, LowercaseIsRustsCharToLowercase) {
  EXPECT_EQ(apply(R"({"type":"Lowercase"})", "HeLLo \u00c5 \u01c5"), "hello \u00e5 \u01c6");
  EXPECT_EQ(apply(R"({"type":"Lowercase"})", "\u0130"), "i\u0307");        // the one multi-character case
  EXPECT_EQ(apply(R"({"type":"Lowercase"})", "\u03a3\u0391\u03a3"), "\u03c3\u03b1\u03c3");  // no final sigma per char
}

TEST(Normalizer, ReplacePrependStripAndSequences) {
  EXPECT_EQ(apply(R"({"type":"Replace","pattern":{"String":" "},"content":"\u2581"})", "a b  c"),
            "a\u2581b\u2581\u2581c");
  EXPECT_EQ(apply(R"({"type":"Replace","pattern":{"Regex":"\\d+"},"content":"#"})", "a12b3"), "a#b#");
  EXPECT_EQ(apply(R"({"type":"Prepend","prepend":"\u2581"})", "hi"), "\u2581hi");
  EXPECT_EQ(apply(R"({"type":"Prepend","prepend":"\u2581"})", ""), "");  // only non-empty text
  EXPECT_EQ(apply(R"({"type":"Strip","strip_left":true,"strip_right":true})", " \u3000 x y\u00a0\n"), "x y");
  EXPECT_EQ(apply(R"({"type":"Strip","strip_left":false,"strip_right":true})", "  x  "), "  x");
  EXPECT_EQ(apply(R"({"type":"Sequence","normalizers":[{"type":"NFKD"},{"type":"Lowercase"},
                    {"type":"Sequence","normalizers":[{"type":"NFC"}]}]})",
                  "\u212b\ufb01"),
            "\u00e5fi");
  EXPECT_EQ(apply("null", "A\u0301"), "A\u0301");
  EXPECT_EQ(apply("", "A\u0301"), "A\u0301");
}

TEST(Normalizer, UnknownStepsAreRefusedByName) {
  for (const char* spec : {R"({"type":"BertNormalizer"})", R"({"type":"Precompiled","precompiled_charsmap":""})",
                           R"({"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"StripAccents"}]})"}) {
    auto n = Normalizer::from_json(spec, "tok.json");
    ASSERT_FALSE(n.ok()) << spec;
    EXPECT_NE(n.error().message.find("tok.json"), std::string::npos);
    EXPECT_NE(n.error().message.find("not supported"), std::string::npos) << n.error().message;
  }
  EXPECT_FALSE(Normalizer::from_json(R"({"type":"Replace","pattern":{"Regex":"("},"content":""})", "t").ok());
  EXPECT_FALSE(Normalizer::from_json(R"({"type":"Replace","content":"x"})", "t").ok());
  EXPECT_FALSE(Normalizer::from_json("{not json", "t").ok());
}

BpeVocab trained() {
  BpeTrainOptions o;
  o.n_merges = 300;
  auto v = train_bpe(builtin_training_corpus(), o);
  EXPECT_TRUE(v.ok());
  return v.ok() ? *v : BpeVocab{};
}

TEST(Normalizer, TokenizerWithNfcGivesBothSpellingsTheSameIds) {
  BpeVocab v = trained();
  v.normalizer = R"({"type":"NFC"})";
  auto t = make_bpe_tokenizer(v);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  const std::string nfc = "caf\u00e9 \u00c5ngstr\u00f6m", nfd = "cafe\u0301 A\u030angstro\u0308m";
  EXPECT_EQ(*(*t)->encode(nfc, false), *(*t)->encode(nfd, false));
  // Special tokens are matched on the raw text and never normalised.
  const auto with_special = (*t)->encode("<|im_start|>e\u0301<|im_end|>", true);
  ASSERT_TRUE(with_special.ok());
  EXPECT_EQ(with_special->front(), (*t)->special_id("<|im_start|>"));
  EXPECT_EQ(with_special->back(), (*t)->special_id("<|im_end|>"));
  v.normalizer = R"({"type":"Nope"})";
  EXPECT_FALSE(make_bpe_tokenizer(v).ok());
}

TEST(Normalizer, GgufKeyRoundTripAndTheQwenDefault) {
  using gguf::testing::TempDir;
  const BpeVocab base = trained();
  ASSERT_EQ(base.pre, "qwen35");
  auto write_read = [](const TempDir& dir, const std::function<void(gguf::Writer&)>& fill) {
    gguf::Writer w;
    fill(w);
    const std::string path = dir.file("v.gguf");
    EXPECT_TRUE(w.write_all(path, {}).ok());
    auto f = gguf::File::open(path);
    EXPECT_TRUE(f.ok());
    auto v = bpe_vocab_from_gguf(**f);
    EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().describe());
    return v.ok() ? *v : BpeVocab{};
  };
  TempDir d1, d2, d3;
  BpeVocab v = base;
  v.normalizer = R"({"type":"NFKC"})";
  EXPECT_EQ(write_read(d1, [&](gguf::Writer& w) { write_bpe_vocab_metadata(w, v, {}); }).normalizer, v.normalizer);
  // Written without a normaliser: recorded as "null", read back as none (not the Qwen default).
  EXPECT_EQ(write_read(d2, [&](gguf::Writer& w) { write_bpe_vocab_metadata(w, base, {}); }).normalizer, "null");
  // A file without the key (llama.cpp's converter writes none): NFC for the Qwen pre-tokenizers.
  const BpeVocab def = write_read(d3, [&](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", gguf::Value::of_string("gpt2"));
    w.set("tokenizer.ggml.pre", gguf::Value::of_string("qwen2"));
    w.set("tokenizer.ggml.tokens", gguf::Value::strings(base.tokens));
    w.set("tokenizer.ggml.merges", gguf::Value::strings(base.merges));
  });
  EXPECT_EQ(def.normalizer, R"({"type":"NFC"})");
  EXPECT_EQ(default_normalizer_json("llama-bpe"), "");
}

}  // namespace
}  // namespace qc
