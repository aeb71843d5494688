// SentencePiece pieces holding a NUL byte: libsentencepiece's trie takes C strings and throws on a piece
// that starts with NUL (an uncaught Darts exception ended the process: found by spm_model_fuzz). Such
// models are refused with a clear error, from a .model file and from a vocabulary alike.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "temp_dir.h"
#include "tokenizer/spm_proto.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

SpmVocab vocab_with(std::string piece, bool unigram) {
  SpmVocab v;
  v.unigram = unigram;
  v.pieces = {"<unk>", "<s>", "</s>", "a", "b", std::move(piece)};
  v.scores = {0, 0, 0, -1, -2, -3};
  v.types = {2, 3, 3, 1, 1, 1};
  v.bos = 1;
  v.eos = 2;
  return v;
}

std::string write_file(const test::TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("nul.model");
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(TokenizerSpmNul, PieceWithNulIsRefused) {
  for (const bool unigram : {false, true}) {
    for (const std::string& piece : {std::string("\0ab", 3), std::string("a\0b", 3)}) {
      SCOPED_TRACE(std::to_string(unigram) + " piece size " + std::to_string(piece.size()));
      const auto t = make_spm_tokenizer(vocab_with(piece, unigram));
      ASSERT_FALSE(t.ok());
      EXPECT_NE(t.error().message.find("piece 5 contains a NUL byte"), std::string::npos)
          << t.error().message;

      test::TempDir dir;
      const std::string path = write_file(dir, build_spm_model_proto(vocab_with(piece, unigram)));
      const auto f = load_sentencepiece_model(path);
      ASSERT_FALSE(f.ok());
      EXPECT_EQ(f.error().message.rfind(path + ": piece 5 contains a NUL byte", 0), 0u) << f.error().message;
    }
  }
}

TEST(TokenizerSpmNul, FuzzerInputIsAnErrorNotACrash) {
  // spm_model_fuzz's crash input: pieces "<unk>", "<s>" and "\0></" (unigram by the proto default).
  const unsigned char bytes[] = {0x0a, 0x0e, 0x0a, 0x05, 0x3c, 0x75, 0x6e, 0x6b, 0x3e, 0x15, 0x00, 0x00,
                                 0x00, 0x00, 0x18, 0x02, 0x0a, 0x0c, 0x0a, 0x03, 0x3c, 0x73, 0x3e, 0x15,
                                 0x00, 0x00, 0x00, 0x00, 0x18, 0x03, 0x0a, 0x0d, 0x0a, 0x04, 0x00, 0x3e,
                                 0x3c, 0x2f, 0x15, 0x73, 0x00, 0x00, 0x00, 0x38, 0x06, 0x65, 0x65, 0x65,
                                 0x65, 0x65, 0x65, 0x00, 0x00, 0x38, 0x38, 0x98, 0x22, 0x38, 0x38, 0x38};
  test::TempDir dir;
  const std::string path = write_file(dir, std::string(reinterpret_cast<const char*>(bytes), sizeof bytes));
  const auto t = load_sentencepiece_model(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("NUL byte"), std::string::npos) << t.error().message;
}

TEST(TokenizerSpmNul, NulInTextStillEncodes) {
  // Only pieces are refused: text with a NUL byte encodes (byte fallback) and decodes back.
  SpmVocab v = vocab_with("ab", false);
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    v.pieces.push_back(hex);
    v.scores.push_back(0);
    v.types.push_back(6);
  }
  v.add_space_prefix = false;
  v.remove_extra_whitespaces = false;
  const auto t = make_spm_tokenizer(v);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const std::string text("a\0b", 3);
  const auto ids = (*t)->encode(text, false);
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_EQ((*t)->decode(*ids), text);
}

}  // namespace
}  // namespace qc
