// qwenchat-convert's SentencePiece path: a checkpoint folder with a tokenizer.model becomes a GGUF `llama`
// vocabulary (tokens, scores, token types, special ids, add_space_prefix, chat template) that the engine's
// SentencePiece tokenizer serves with the same ids as libsentencepiece on the original file; ChatML specials
// stored as user-defined pieces encode whole and stop generation. The shipped tokenizer
// (assets/recipe/tokenizer.model, trained by spm_train) goes through the same path.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf/reader.h"
#include "import/convert.h"
#include "temp_dir.h"
#include "test_import_checkpoint.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/spm_proto.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

namespace fs = std::filesystem;
using test::TinyHfSpec;

const std::vector<std::string> kChatml = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"};

// A SentencePiece BPE vocabulary laid out as spm_train writes one with --byte_fallback and ChatML
// user-defined symbols: <unk>, the specials, 256 byte pieces, then merged pieces with falling scores.
SpmVocab small_spm_vocab() {
  SpmVocab v;
  v.unigram = false;
  v.add_space_prefix = false;
  v.remove_extra_whitespaces = false;
  v.pieces.push_back("<unk>");
  v.types.push_back(static_cast<int32_t>(TokenType::kUnknown));
  for (const std::string& s : kChatml) {
    v.pieces.push_back(s);
    v.types.push_back(static_cast<int32_t>(TokenType::kUserDefined));
  }
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    v.pieces.push_back(buf);
    v.types.push_back(static_cast<int32_t>(TokenType::kByte));
  }
  const std::string sp = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  const std::vector<std::string> merged = {sp + "t", "he", sp + "the", sp + "a", "in",
                                           "er", "an", sp + "w", "or", sp + "word"};
  for (const std::string& p : merged) {
    v.pieces.push_back(p);
    v.types.push_back(static_cast<int32_t>(TokenType::kNormal));
  }
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  for (size_t i = 0; i < 26; ++i) {
    v.pieces.push_back(std::string(1, letters[i]));
    v.types.push_back(static_cast<int32_t>(TokenType::kNormal));
  }
  v.pieces.push_back(sp);
  v.types.push_back(static_cast<int32_t>(TokenType::kNormal));
  v.scores.assign(v.pieces.size(), 0.0f);
  for (size_t i = 262; i < v.pieces.size(); ++i) v.scores[i] = -static_cast<float>(i - 262);
  return v;
}

std::string write_spm_checkpoint(const test::TempDir& dir, const TinyHfSpec& s, const std::string& model_bytes) {
  const std::string ck = dir.file("ckpt");
  test::write_hf_checkpoint(ck, s, test::make_hf_weights(s));
  fs::remove(ck + "/tokenizer.json");  // the tokenizer.model alone
  std::ofstream(ck + "/tokenizer.model", std::ios::binary) << model_bytes;
  return ck;
}

Result<ConvertSummary> convert(const std::string& in, const std::string& out,
                               std::vector<std::string>* notices = nullptr) {
  ConvertOptions o;
  o.input_dir = in;
  o.out_path = out;
  o.import.mix = QuantMix::kF32;
  o.notice = [notices](const std::string& s) {
    if (notices) notices->push_back(s);
  };
  return convert_hf_checkpoint(o);
}

TEST(ImportSentencePiece, ModelFileBecomesALlamaVocabulary) {
  test::TempDir dir;
  TinyHfSpec s;
  const SpmVocab v = small_spm_vocab();
  ASSERT_LT(v.pieces.size(), static_cast<size_t>(s.vocab_size));
  const std::string ck = write_spm_checkpoint(dir, s, build_spm_model_proto(v));
  auto summary = convert(ck, dir.file("out.gguf"));
  ASSERT_TRUE(summary.ok()) << summary.error().describe();
  EXPECT_EQ(summary->n_tokens, static_cast<size_t>(s.vocab_size));

  auto f = gguf::File::open(dir.file("out.gguf"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*(*f)->get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ((*f)->find("tokenizer.ggml.merges"), nullptr);
  auto tokens = (*f)->get_strings("tokenizer.ggml.tokens");
  auto scores = (*f)->get_floats("tokenizer.ggml.scores");
  auto types = (*f)->get_ints("tokenizer.ggml.token_type");
  ASSERT_TRUE(tokens.ok() && scores.ok() && types.ok());
  ASSERT_EQ(tokens->size(), static_cast<size_t>(s.vocab_size));  // padded to the embedding rows
  ASSERT_EQ(scores->size(), tokens->size());
  ASSERT_EQ(types->size(), tokens->size());
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    EXPECT_EQ((*tokens)[i], v.pieces[i]) << i;
    EXPECT_EQ((*scores)[i], v.scores[i]) << i;
    EXPECT_EQ((*types)[i], v.types[i]) << i;
  }
  EXPECT_EQ(tokens->back(), "[PAD" + std::to_string(s.vocab_size - 1) + "]");
  EXPECT_EQ(types->back(), static_cast<int64_t>(TokenType::kUnused));
  // tokenizer_config.json names eos <|im_end|> (id 3) and pad <|endoftext|> (id 1).
  EXPECT_EQ(*(*f)->get_u32("tokenizer.ggml.eos_token_id"), 3u);
  EXPECT_EQ(*(*f)->get_u32("tokenizer.ggml.padding_token_id"), 1u);
  EXPECT_EQ((*f)->find("tokenizer.ggml.bos_token_id"), nullptr);
  EXPECT_FALSE(*(*f)->get_bool("tokenizer.ggml.add_space_prefix"));
  EXPECT_EQ(*(*f)->get_string("tokenizer.chat_template"), test::kTinyChatTemplate);

  // The engine's tokenizer from the GGUF: the same ids as the library on the original model, specials
  // whole, ChatML stop tokens found by text.
  auto tok = load_tokenizer(**f);
  ASSERT_TRUE(tok.ok()) << tok.error().describe();
  EXPECT_EQ((*tok)->kind(), "sentencepiece");
  auto direct = make_spm_tokenizer(v);
  ASSERT_TRUE(direct.ok());
  for (const std::string text : {"the word", "a tiny winter", "the\nweather 42 \xC3\xA9t\xC3\xA9", "  two  spaces"}) {
    auto a = (*tok)->encode(text, false);
    auto b = (*direct)->encode(text, false);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b) << text;
    EXPECT_EQ((*tok)->decode(*a), text) << "byte fallback covers everything, no dummy prefix";
  }
  auto chat = (*tok)->encode("<|im_start|>user\nthe word<|im_end|>", true);
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(chat->front(), 2);
  EXPECT_EQ(chat->back(), 3);
  const SpecialTokens& sp = (*tok)->special();
  EXPECT_EQ(sp.im_start, 2);
  EXPECT_EQ(sp.im_end, 3);
  EXPECT_EQ(sp.think_begin, 4);
  EXPECT_EQ(sp.think_end, 5);
  EXPECT_NE(std::find(sp.stop.begin(), sp.stop.end(), 3), sp.stop.end());
  EXPECT_NE(std::find(sp.stop.begin(), sp.stop.end(), 1), sp.stop.end());
  // encode_chat places the markup specials as single ids.
  auto ids = encode_chat(**tok, {{"user", "the word", ""}}, ChatRenderOptions{.thinking = false});
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(std::count(ids->begin(), ids->end(), 2), 2);  // user turn + generation prompt
  EXPECT_EQ(std::count(ids->begin(), ids->end(), 3), 1);
  EXPECT_EQ(std::count(ids->begin(), ids->end(), 5), 1);
}

TEST(ImportSentencePiece, TokenizerModelWinsOverTokenizerJson) {
  test::TempDir dir;
  TinyHfSpec s;
  const std::string ck = dir.file("ckpt");
  test::write_hf_checkpoint(ck, s, test::make_hf_weights(s));  // has a tokenizer.json
  std::ofstream(ck + "/tokenizer.model", std::ios::binary) << build_spm_model_proto(small_spm_vocab());
  ASSERT_TRUE(convert(ck, dir.file("out.gguf")).ok());
  auto f = gguf::File::open(dir.file("out.gguf"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*(*f)->get_string("tokenizer.ggml.model"), "llama");
}

TEST(ImportSentencePiece, TooManyPiecesBadBytesAndUnigramAreReported) {
  test::TempDir dir;
  TinyHfSpec s;
  SpmVocab big = small_spm_vocab();
  while (big.pieces.size() <= static_cast<size_t>(s.vocab_size)) {
    big.pieces.push_back("x" + std::to_string(big.pieces.size()));
    big.scores.push_back(-1000.0f);
    big.types.push_back(static_cast<int32_t>(TokenType::kNormal));
  }
  const std::string ck = write_spm_checkpoint(dir, s, build_spm_model_proto(big));
  auto r = convert(ck, dir.file("big.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("embedding rows"), std::string::npos) << r.error().message;
  EXPECT_FALSE(fs::exists(dir.file("big.gguf")));

  std::ofstream(ck + "/tokenizer.model", std::ios::binary) << "not a protobuf \xff\xff\xff";
  r = convert(ck, dir.file("bad.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("tokenizer.model"), std::string::npos) << r.error().message;

  SpmVocab uni = small_spm_vocab();
  uni.unigram = true;
  std::ofstream(ck + "/tokenizer.model", std::ios::binary) << build_spm_model_proto(uni);
  std::vector<std::string> notices;
  ASSERT_TRUE(convert(ck, dir.file("uni.gguf"), &notices).ok());
  const bool said = std::any_of(notices.begin(), notices.end(),
                                [](const std::string& n) { return n.find("unigram") != std::string::npos; });
  EXPECT_TRUE(said);

  fs::remove(ck + "/tokenizer.model");
  r = convert(ck, dir.file("none.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().hint.find("tokenizer.model"), std::string::npos) << r.error().hint;
}

// The tokenizer the default model was trained with: converted, it must give the library's ids on the
// original file for every case, and ChatML specials must be single user-defined pieces.
TEST(ImportSentencePiece, ShippedTokenizerRoundTripsThroughTheConverter) {
  const std::string model = std::string(QWENCHAT_SOURCE_DIR) + "/assets/recipe/tokenizer.model";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is absent";
  auto original = load_sentencepiece_model(model);
  ASSERT_TRUE(original.ok()) << original.error().describe();
  test::TempDir dir;
  TinyHfSpec s;
  s.vocab_size = (*original)->n_vocab();
  std::ifstream in(model, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string ck = write_spm_checkpoint(dir, s, bytes);
  auto summary = convert(ck, dir.file("out.gguf"));
  ASSERT_TRUE(summary.ok()) << summary.error().describe();
  auto f = gguf::File::open(dir.file("out.gguf"));
  ASSERT_TRUE(f.ok());
  auto tok = load_tokenizer(**f);
  ASSERT_TRUE(tok.ok()) << tok.error().describe();
  ASSERT_EQ((*tok)->n_vocab(), (*original)->n_vocab());
  for (const std::string text :
       {"What is 17 + 25?", "Define: lantern", "Lantern (noun): light in a transparent protective case.",
        "user\nHello", "\n\n", "  indented\ttext", "na\xC3\xAFve caf\xC3\xA9 \xE2\x82\xAC 5", "In the beginning God"}) {
    auto a = (*tok)->encode(text, false);
    auto b = (*original)->encode(text, false);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b) << text;
    EXPECT_EQ((*tok)->decode(*a), text);
  }
  for (const std::string& sp : kChatml) {
    auto ids = (*tok)->encode(sp, true);
    ASSERT_TRUE(ids.ok());
    ASSERT_EQ(ids->size(), 1u) << sp;
    EXPECT_EQ((*tok)->token_type((*ids)[0]), TokenType::kUserDefined) << sp;
  }
  EXPECT_EQ((*tok)->special().im_end, (*tok)->special_id("<|im_end|>"));
  EXPECT_EQ((*tok)->special().eos, (*tok)->special_id("<|im_end|>"));
}

}  // namespace
}  // namespace qc
