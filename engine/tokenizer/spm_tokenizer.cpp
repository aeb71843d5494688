// SentencePiece through libsentencepiece. The library does the segmentation (BPE by piece score, or
// unigram) and its normalizer; we add the special-token split, the lossy UTF-8 rule and token bytes.
#include <sentencepiece_processor.h>

#include <exception>
#include <fstream>
#include <sstream>

#include "tokenizer/special_tokens.h"
#include "tokenizer/spm_proto.h"
#include "tokenizer/tokenizer.h"
#include "util/read_file.h"

namespace qc {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581 "▁", SentencePiece's space

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

class SpmTokenizer final : public Tokenizer {
 public:
  // `proto` is loaded into the library; `info` (parsed from the same bytes or the source of them) gives
  // the types and special ids.
  static Result<std::unique_ptr<Tokenizer>> create(const std::string& proto, const SpmVocab& info,
                                                   const std::string& source);

  Result<std::vector<int32_t>> encode(std::string_view text, bool parse_special) const override;
  std::string token_bytes(int32_t id) const override {
    return in_range(id) ? bytes_[static_cast<size_t>(id)] : std::string();
  }
  std::string decode(const std::vector<int32_t>& ids) const override;
  int n_vocab() const override { return static_cast<int>(bytes_.size()); }
  const SpecialTokens& special() const override { return special_; }
  bool is_control(int32_t id) const override { return token_type(id) == TokenType::kControl; }
  TokenType token_type(int32_t id) const override {
    return in_range(id) ? types_[static_cast<size_t>(id)] : TokenType::kUnused;
  }
  int32_t special_id(std::string_view text) const override { return specials_.find(text); }
  std::string kind() const override { return "sentencepiece"; }

 private:
  bool in_range(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < bytes_.size(); }

  sentencepiece::SentencePieceProcessor sp_;
  std::vector<std::string> bytes_;
  std::vector<TokenType> types_;
  SpecialMatcher specials_;
  SpecialTokens special_;
  bool add_space_prefix_ = true;
};

Result<std::unique_ptr<Tokenizer>> SpmTokenizer::create(const std::string& proto, const SpmVocab& info,
                                                        const std::string& source) {
  // libsentencepiece keeps pieces in a trie of C strings: a NUL byte cuts the key, and a piece starting
  // with one makes the trie builder throw (Darts "zero-length key", found by spm_model_fuzz), which
  // would end the program. Such pieces cannot be matched anyway, so the model is refused.
  for (size_t i = 0; i < info.pieces.size(); ++i) {
    if (info.pieces[i].find('\0') != std::string::npos) {
      return make_error(source + ": piece " + std::to_string(i) +
                        " contains a NUL byte, which SentencePiece cannot store");
    }
  }
  auto t = std::make_unique<SpmTokenizer>();
  // The library reports errors as statuses but its bundled containers throw; nothing may escape.
  sentencepiece::util::Status st;
  try {
    st = t->sp_.LoadFromSerializedProto(proto);
  } catch (const std::exception& e) {
    return make_error(source + ": libsentencepiece failed on the model: " + e.what());
  }
  if (!st.ok()) return make_error(source + ": libsentencepiece refused the model: " + st.ToString());
  const int n = t->sp_.GetPieceSize();
  if (n != static_cast<int>(info.pieces.size())) {
    return make_error(source + ": libsentencepiece loaded " + std::to_string(n) + " pieces, expected " +
                      std::to_string(info.pieces.size()));
  }
  t->add_space_prefix_ = info.add_space_prefix;
  t->bytes_.resize(static_cast<size_t>(n));
  t->types_.resize(static_cast<size_t>(n));
  for (int id = 0; id < n; ++id) {
    const auto i = static_cast<size_t>(id);
    const std::string& piece = info.pieces[i];
    const auto type = static_cast<TokenType>(info.types.empty() ? 1 : info.types[i]);
    t->types_[i] = type;
    if (type == TokenType::kControl || type == TokenType::kUserDefined) t->specials_.add(piece, id);
    if (type == TokenType::kByte && piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>' &&
        hex_digit(piece[3]) >= 0 && hex_digit(piece[4]) >= 0) {
      t->bytes_[i] = std::string(1, static_cast<char>(hex_digit(piece[3]) * 16 + hex_digit(piece[4])));
      continue;
    }
    std::string text;
    for (size_t k = 0; k < piece.size();) {  // "▁" -> " "
      if (piece.compare(k, kSpace.size(), kSpace) == 0) {
        text.push_back(' ');
        k += kSpace.size();
      } else {
        text.push_back(piece[k++]);
      }
    }
    t->bytes_[i] = std::move(text);
  }
  t->specials_.finish();
  t->special_ = resolve_special_tokens(t->specials_, info.bos, info.eos, info.pad, -1);
  return std::unique_ptr<Tokenizer>(std::move(t));
}

Result<std::vector<int32_t>> SpmTokenizer::encode(std::string_view input, bool parse_special) const {
  std::string lossy;
  std::vector<SpecialMatcher::Piece> pieces;
  specials_.split_for_encode(input, parse_special, &lossy, &pieces);
  std::vector<int32_t> out;
  std::vector<int> ids;
  for (const SpecialMatcher::Piece& p : pieces) {
    if (p.id >= 0) {
      out.push_back(p.id);
      continue;
    }
    // Each text piece is encoded on its own and so gets the dummy prefix, as llama.cpp does for the
    // text after a special token.
    ids.clear();
    sentencepiece::util::Status st;
    try {
      st = sp_.Encode(p.text, &ids);
    } catch (const std::exception& e) {
      return make_error(std::string("sentencepiece encode failed: ") + e.what());
    }
    if (!st.ok()) return make_error("sentencepiece encode failed: " + st.ToString());
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

std::string SpmTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  bool first_text = true;
  for (const int32_t id : ids) {
    std::string b = token_bytes(id);
    // The dummy prefix: the first text token loses its leading space (what the library's decoder does).
    if (first_text && !is_control(id) && !b.empty()) {
      if (add_space_prefix_ && b[0] == ' ') b.erase(0, 1);
      first_text = false;
    }
    out += b;
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> make_spm_tokenizer(const SpmVocab& v) {
  const size_t n = v.pieces.size();
  if (n == 0 || n > static_cast<size_t>(INT32_MAX)) {
    return make_error("SentencePiece vocabulary: expected 1 to 2^31-1 pieces, got " + std::to_string(n));
  }
  if ((!v.scores.empty() && v.scores.size() != n) || (!v.types.empty() && v.types.size() != n)) {
    return make_error("SentencePiece vocabulary: " + std::to_string(n) + " pieces but " +
                      std::to_string(v.scores.size()) + " scores and " + std::to_string(v.types.size()) +
                      " types");
  }
  for (size_t i = 0; i < v.types.size(); ++i) {
    if (v.types[i] < 1 || v.types[i] > 6) {
      return make_error("SentencePiece vocabulary: piece " + std::to_string(i) + " (\"" + v.pieces[i] +
                        "\"): expected a token type 1..6, got " + std::to_string(v.types[i]));
    }
  }
  for (const int32_t id : {v.bos, v.eos, v.pad}) {
    if (id < -1 || id >= static_cast<int64_t>(n)) {
      return make_error("SentencePiece vocabulary: special id " + std::to_string(id) + " is outside the " +
                        std::to_string(n) + " pieces");
    }
  }
  return SpmTokenizer::create(build_spm_model_proto(v), v, "SentencePiece vocabulary");
}

Result<std::unique_ptr<Tokenizer>> load_sentencepiece_model(const std::string& path) {
  QC_ASSIGN(const std::string bytes, read_whole_file(path));
  QC_ASSIGN(const SpmVocab info, parse_spm_model_proto(bytes, path));
  return SpmTokenizer::create(bytes, info, path);
}

}  // namespace qc
