// Tokenizers from GGUF metadata: a trained vocabulary written with write_bpe_vocab_metadata, read back
// through qc::gguf::File and load_tokenizer; bad metadata gives errors naming the key and the value.
#include <gtest/gtest.h>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_gguf_builder.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

using gguf::Value;
using gguf::testing::TempDir;

BpeVocab trained() {
  BpeTrainOptions o;
  o.n_merges = 300;
  auto v = train_bpe(builtin_training_corpus(), o);
  EXPECT_TRUE(v.ok());
  return *v;
}

// Writes a metadata-only GGUF: `fill` sets the keys.
std::unique_ptr<gguf::File> write_and_open(const TempDir& dir,
                                           const std::function<void(gguf::Writer&)>& fill) {
  gguf::Writer w;
  fill(w);
  const std::string path = dir.file("vocab.gguf");
  const Status st = w.write_all(path, {});
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().describe());
  auto f = gguf::File::open(path);
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().describe());
  return f.ok() ? std::move(f).value() : nullptr;
}

TEST(TokenizerGguf, TrainedVocabularyRoundTrip) {
  TempDir dir;
  const BpeVocab v = trained();
  auto f =
      write_and_open(dir, [&](gguf::Writer& w) { write_bpe_vocab_metadata(w, v, chatml_jinja_template()); });
  ASSERT_TRUE(f);
  EXPECT_EQ(*f->get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*f->get_string("tokenizer.ggml.pre"), "qwen35");
  EXPECT_EQ(*f->get_string("tokenizer.chat_template"), std::string(chatml_jinja_template()));
  EXPECT_EQ(*f->get_u32("tokenizer.ggml.eos_token_id"), static_cast<uint32_t>(v.eos));

  auto back = bpe_vocab_from_gguf(*f);
  ASSERT_TRUE(back.ok()) << back.error().describe();
  EXPECT_EQ(back->tokens, v.tokens);
  EXPECT_EQ(back->merges, v.merges);
  EXPECT_EQ(back->token_types, v.token_types);
  EXPECT_EQ(back->eos, v.eos);
  EXPECT_EQ(back->pad, v.pad);
  EXPECT_EQ(back->bos, -1);

  auto from_file = load_tokenizer(*f);
  auto from_struct = make_bpe_tokenizer(v);
  ASSERT_TRUE(from_file.ok()) << from_file.error().describe();
  ASSERT_TRUE(from_struct.ok());
  EXPECT_EQ((*from_file)->kind(), "bpe/qwen35");
  const std::string text = "<|im_start|>user\nWhat is 12 * 12?<|im_end|>\n<|im_start|>assistant\n<think>\n";
  EXPECT_EQ(*(*from_file)->encode(text, true), *(*from_struct)->encode(text, true));
  const SpecialTokens& s = (*from_file)->special();
  EXPECT_EQ(s.eos, (*from_file)->special_id("<|endoftext|>"));
  EXPECT_EQ(s.im_end, (*from_file)->special_id("<|im_end|>"));
  EXPECT_EQ(s.stop, (std::vector<int32_t>{s.im_end, s.eos}));
  EXPECT_GE(s.think_begin, 0);
  EXPECT_GE(s.think_end, 0);
}

TEST(TokenizerGguf, UnknownModelIsAClearError) {
  TempDir dir;
  auto f = write_and_open(dir, [](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", Value::of_string("bert"));
    w.set("tokenizer.ggml.tokens", Value::strings({"a"}));
  });
  ASSERT_TRUE(f);
  auto t = load_tokenizer(*f);
  ASSERT_FALSE(t.ok());
  const std::string& m = t.error().message;
  EXPECT_NE(m.find("vocab.gguf"), std::string::npos) << m;
  EXPECT_NE(m.find("tokenizer.ggml.model = \"bert\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"gpt2\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"llama\""), std::string::npos) << m;
}

TEST(TokenizerGguf, UnknownPreTokenizerIsAClearError) {
  TempDir dir;
  BpeVocab v = trained();
  v.pre = "deepseek-llm";
  auto f = write_and_open(dir, [&](gguf::Writer& w) { write_bpe_vocab_metadata(w, v, {}); });
  ASSERT_TRUE(f);
  auto t = load_tokenizer(*f);
  ASSERT_FALSE(t.ok());
  const std::string& m = t.error().message;
  EXPECT_NE(m.find("vocab.gguf"), std::string::npos) << m;
  EXPECT_NE(m.find("\"deepseek-llm\""), std::string::npos) << m;
  EXPECT_NE(m.find("qwen35, qwen2"), std::string::npos) << m;
}

TEST(TokenizerGguf, MissingOrMismatchedKeys) {
  TempDir dir;
  const BpeVocab v = trained();
  auto no_pre = write_and_open(dir, [&](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", Value::of_string("gpt2"));
    w.set("tokenizer.ggml.tokens", Value::strings(v.tokens));
    w.set("tokenizer.ggml.merges", Value::strings(v.merges));
  });
  ASSERT_TRUE(no_pre);
  auto t = load_tokenizer(*no_pre);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("tokenizer.ggml.pre is missing"), std::string::npos) << t.error().message;

  TempDir dir2;
  auto short_types = write_and_open(dir2, [&](gguf::Writer& w) {
    write_bpe_vocab_metadata(w, v, {});
    w.set("tokenizer.ggml.token_type", Value::i32s({1, 1, 1}));
  });
  ASSERT_TRUE(short_types);
  t = load_tokenizer(*short_types);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("tokenizer.ggml.token_type: expected " + std::to_string(v.tokens.size())),
            std::string::npos)
      << t.error().message;

  TempDir dir3;
  auto no_model = write_and_open(dir3, [](gguf::Writer& w) { w.set("general.name", Value::of_string("x")); });
  ASSERT_TRUE(no_model);
  t = load_tokenizer(*no_model);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("tokenizer.ggml.model is missing"), std::string::npos)
      << t.error().message;
}

}  // namespace
}  // namespace qc
