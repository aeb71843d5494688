// SentencePiece: a model trained by libsentencepiece's trainer (the code behind spm_train) on a generated
// text; our tokenizer, built from the .model file and from the vocabulary rebuilt into a hand-written
// ModelProto, must give the ids of the library's own encode of the .model file.
#include <gtest/gtest.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_gguf_builder.h"
#include "tokenizer/spm_proto.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

namespace fs = std::filesystem;

// Trains a small BPE model with byte fallback, identity normalization and whitespace kept, plus one
// user-defined and one control symbol. The files live in a per-process folder removed at the end.
struct TrainedModel {
  fs::path dir;
  std::string path;  // the .model file
  ~TrainedModel() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::unique_ptr<TrainedModel> train_model() {
  const fs::path dir = fs::path(QWENCHAT_BINARY_DIR) / "test_tmp" / ("spm_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path text = dir / "corpus.txt";
  {
    std::ofstream out(text);
    std::mt19937 rng(99);
    const char* words[] = {"the",  "model",  "reads",       "tokens",
                           "and",  "writes", "a",           "reply",
                           "chat", "window", "caf\xC3\xA9", "na\xC3\xAFve",
                           "1",    "42",     "x",           "+",
                           "=",    "(",      ")",           "\xE4\xBD\xA0\xE5\xA5\xBD"};
    for (int line = 0; line < 400; ++line) {
      for (int w = 0; w < 12; ++w) out << (w ? " " : "") << words[rng() % std::size(words)];
      out << "\n";
    }
  }
  const std::string prefix = (dir / "m").string();
  const auto st = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + text.string() + " --model_prefix=" + prefix +
      " --vocab_size=400 --model_type=bpe --byte_fallback=true --character_coverage=1.0"
      " --normalization_rule_name=identity --remove_extra_whitespaces=false"
      " --user_defined_symbols=<think> --control_symbols=<|im_end|> --num_threads=1 --minloglevel=1");
  EXPECT_TRUE(st.ok()) << st.ToString();
  auto m = std::make_unique<TrainedModel>();
  m->dir = dir;
  m->path = prefix + ".model";
  return m;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::vector<std::string> kTexts = {
    "the model reads tokens",
    "  two leading spaces and  double  inside ",
    "caf\xC3\xA9 na\xC3\xAFve \xE4\xBD\xA0\xE5\xA5\xBD",
    "unseen letters: Zq\xC3\xB1 and an emoji \xF0\x9F\x98\x80 (byte fallback)",
    "1 + 42 = 43\nnew line\ttab",
    "<think>user-defined</think> and <|im_end|> as text",
    "",
};

std::vector<int32_t> library_ids(const sentencepiece::SentencePieceProcessor& sp, const std::string& s) {
  std::vector<int> ids;
  EXPECT_TRUE(sp.Encode(s, &ids).ok());
  return {ids.begin(), ids.end()};
}

TEST(TokenizerSpm, ModelFileMatchesLibrary) {
  const auto model = train_model();
  const std::string& path = model->path;
  sentencepiece::SentencePieceProcessor sp;
  ASSERT_TRUE(sp.Load(path).ok());
  auto t = load_sentencepiece_model(path);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ((*t)->kind(), "sentencepiece");
  EXPECT_EQ((*t)->n_vocab(), sp.GetPieceSize());
  for (const std::string& s : kTexts) EXPECT_EQ(*(*t)->encode(s, false), library_ids(sp, s)) << s;
}

TEST(TokenizerSpm, RebuiltProtoMatchesLibrary) {
  const auto model = train_model();
  const std::string& path = model->path;
  sentencepiece::SentencePieceProcessor sp;
  ASSERT_TRUE(sp.Load(path).ok());
  std::string normalizer;
  auto v = parse_spm_model_proto(read_file(path), path, &normalizer);
  ASSERT_TRUE(v.ok()) << v.error().describe();
  EXPECT_EQ(normalizer, "identity");
  EXPECT_FALSE(v->unigram);
  EXPECT_TRUE(v->add_space_prefix);
  EXPECT_FALSE(v->remove_extra_whitespaces);
  // What a GGUF `llama` vocabulary carries: pieces, scores, types. Rebuild the proto by hand from them.
  auto t = make_spm_tokenizer(*v);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  bool saw_byte = false;
  for (const std::string& s : kTexts) {
    const std::vector<int32_t> ids = *(*t)->encode(s, false);
    EXPECT_EQ(ids, library_ids(sp, s)) << s;
    for (const int32_t id : ids) saw_byte = saw_byte || (*t)->token_type(id) == TokenType::kByte;
    EXPECT_EQ((*t)->decode(ids), s) << "identity normalizer, whitespace kept: exact round trip";
  }
  EXPECT_TRUE(saw_byte) << "the emoji and the unseen letters must take byte-fallback pieces";
  // Types and specials survive the rebuild.
  const int32_t im_end = (*t)->special_id("<|im_end|>");
  ASSERT_GE(im_end, 0);
  EXPECT_EQ(im_end, sp.PieceToId("<|im_end|>"));
  EXPECT_TRUE((*t)->is_control(im_end));
  EXPECT_EQ((*t)->token_type(sp.PieceToId("<think>")), TokenType::kUserDefined);
  EXPECT_EQ((*t)->special().eos, sp.eos_id());
  EXPECT_EQ((*t)->special().bos, sp.bos_id());
  EXPECT_EQ((*t)->token_bytes(sp.PieceToId("<0x0A>")), "\n");
}

TEST(TokenizerSpm, GgufLlamaVocabularyMatchesLibrary) {
  // The same vocabulary stored as GGUF `llama` metadata (tokens, scores, token_type, special ids).
  const auto model = train_model();
  sentencepiece::SentencePieceProcessor sp;
  ASSERT_TRUE(sp.Load(model->path).ok());
  auto v = parse_spm_model_proto(read_file(model->path), model->path);
  ASSERT_TRUE(v.ok()) << v.error().describe();
  gguf::testing::TempDir dir;
  gguf::Writer w;
  w.set("tokenizer.ggml.model", gguf::Value::of_string("llama"));
  w.set("tokenizer.ggml.tokens", gguf::Value::strings(v->pieces));
  w.set("tokenizer.ggml.scores", gguf::Value::f32s(v->scores));
  w.set("tokenizer.ggml.token_type", gguf::Value::i32s(v->types));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::of_u32(static_cast<uint32_t>(sp.bos_id())));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::of_u32(static_cast<uint32_t>(sp.eos_id())));
  w.set("tokenizer.ggml.add_space_prefix", gguf::Value::of_bool(true));
  ASSERT_TRUE(w.write_all(dir.file("spm.gguf"), {}).ok());
  auto f = gguf::File::open(dir.file("spm.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().describe();
  auto t = load_tokenizer(**f);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ((*t)->kind(), "sentencepiece");
  for (const std::string& s : kTexts) EXPECT_EQ(*(*t)->encode(s, false), library_ids(sp, s)) << s;
  EXPECT_EQ((*t)->special().bos, sp.bos_id());
  EXPECT_EQ((*t)->special().eos, sp.eos_id());
}

TEST(TokenizerSpm, SpecialTokensOnlyWhenAsked) {
  const auto model = train_model();
  const std::string& path = model->path;
  auto t = load_sentencepiece_model(path);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  const int32_t im_end = (*t)->special_id("<|im_end|>");
  const std::vector<int32_t> on = *(*t)->encode("the<|im_end|>reply", true);
  const std::vector<int32_t> off = *(*t)->encode("the<|im_end|>reply", false);
  EXPECT_EQ(std::count(on.begin(), on.end(), im_end), 1);
  EXPECT_EQ(std::count(off.begin(), off.end(), im_end), 0);
  EXPECT_EQ((*t)->decode(off), "the<|im_end|>reply");
  // Invalid UTF-8 is replaced first, as for BPE.
  EXPECT_EQ((*t)->decode(*(*t)->encode("a\xFF"
                                       "b",
                                       false)),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(TokenizerSpm, MutatedModelFilesFailCleanly) {
  // Seeded byte flips and truncations of a real .model: every outcome is an error or a working
  // tokenizer, never a crash (run under ASan in the sanitizer build).
  const auto model = train_model();
  const std::string good = read_file(model->path);
  std::mt19937 rng(5);
  int loaded = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::string bytes = good;
    if (trial % 3 == 0) {
      bytes.resize(rng() % bytes.size());
    } else {
      for (int k = 0; k < 1 + trial % 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    const std::string path = (model->dir / "mutated.model").string();
    std::ofstream(path, std::ios::binary) << bytes;
    auto t = load_sentencepiece_model(path);
    if (!t.ok()) continue;
    ++loaded;
    auto ids = (*t)->encode("the model \xF0\x9F\x98\x80", true);
    if (ids.ok()) (void)(*t)->decode(*ids);
  }
  EXPECT_GT(loaded, 0) << "some single-byte flips (inside a score, say) must still load";
}

TEST(TokenizerSpm, BadInputsAreClearErrors) {
  auto missing = load_sentencepiece_model("/nonexistent/x.model");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/x.model"), std::string::npos);
  EXPECT_FALSE(parse_spm_model_proto("\xFF\xFF\xFF", "junk").ok());
  SpmVocab v;
  v.pieces = {"<unk>", "a"};
  v.types = {2, 9};
  EXPECT_FALSE(make_spm_tokenizer(v).ok());
  v.types = {1, 1};  // no unknown piece: the library refuses, and we pass its reason on
  auto r = make_spm_tokenizer(v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("libsentencepiece"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace qc
