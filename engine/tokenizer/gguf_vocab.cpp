// Tokenizer <- GGUF metadata (tokenizer.ggml.*): the vocabularies and load_tokenizer. The writers are
// gguf_vocab_write.cpp (offline tooling); the key strings are gguf_vocab_keys.h.
#include "gguf/reader.h"
#include "tokenizer/gguf_vocab_keys.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace qc {

using namespace vocab_keys;

namespace {

// An optional token id key: -1 when absent.
Result<int32_t> optional_id(const gguf::File& f, const std::string& key) {
  if (!f.find(key)) return -1;
  QC_ASSIGN(const uint32_t v, f.get_u32(key));
  if (v > static_cast<uint32_t>(INT32_MAX)) {
    return make_error(f.path() + ": " + key + ": token id " + std::to_string(v) + " is too large");
  }
  return static_cast<int32_t>(v);
}

// tokenizer.ggml.token_type as int32s (empty when absent), one per token.
Result<std::vector<int32_t>> token_types(const gguf::File& f, size_t n_tokens) {
  const std::string key = kTokenType;
  if (!f.find(key)) return std::vector<int32_t>{};
  QC_ASSIGN(const std::vector<int64_t> raw, f.get_ints(key));
  if (raw.size() != n_tokens) {
    return make_error(f.path() + ": " + key + ": expected " + std::to_string(n_tokens) +
                      " entries (one per token), got " + std::to_string(raw.size()));
  }
  std::vector<int32_t> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] < 1 || raw[i] > 6) {
      return make_error(f.path() + ": " + key + "[" + std::to_string(i) +
                        "]: expected a token type 1..6, got " + std::to_string(raw[i]));
    }
    out[i] = static_cast<int32_t>(raw[i]);
  }
  return out;
}

Status expect_model(const gguf::File& f, const std::string& want) {
  QC_ASSIGN(const std::string model, f.get_string(kModel));
  if (model != want) {
    return make_error(f.path() + ": " + kModel + ": expected \"" + want + "\", got \"" + model + "\"");
  }
  return Status::success();
}

}  // namespace

Result<BpeVocab> bpe_vocab_from_gguf(const gguf::File& f) {
  QC_TRY(expect_model(f, "gpt2"));
  BpeVocab v;
  QC_ASSIGN(v.tokens, f.get_strings(kTokens));
  QC_ASSIGN(v.merges, f.get_strings(kMerges));
  QC_ASSIGN(v.token_types, token_types(f, v.tokens.size()));
  if (!f.find(kPre)) {
    return make_error(f.path() + ": " + kPre + " is missing (supported pre-tokenizers: " +
                      supported_pretokenizers() + ")");
  }
  QC_ASSIGN(v.pre, f.get_string(kPre));
  // The normaliser recorded at conversion ("null" = none); a file without the key (llama.cpp's converter
  // writes none) gets its pre-tokenizer family's (default_normalizer_json: NFC for Qwen).
  if (f.find(kNormalizer)) {
    QC_ASSIGN(v.normalizer, f.get_string(kNormalizer));
  } else {
    v.normalizer = default_normalizer_json(v.pre);
  }
  QC_ASSIGN(v.bos, optional_id(f, kBosId));
  QC_ASSIGN(v.eos, optional_id(f, kEosId));
  QC_ASSIGN(v.pad, optional_id(f, kPadId));
  QC_ASSIGN(v.eot, optional_id(f, kEotId));
  return v;
}

Result<SpmVocab> spm_vocab_from_gguf(const gguf::File& f) {
  QC_TRY(expect_model(f, "llama"));
  SpmVocab v;
  QC_ASSIGN(v.pieces, f.get_strings(kTokens));
  if (f.find(kScores)) {
    QC_ASSIGN(v.scores, f.get_floats(kScores));
    if (v.scores.size() != v.pieces.size()) {
      return make_error(f.path() + ": " + kScores + ": expected " + std::to_string(v.pieces.size()) +
                        " entries (one per token), got " + std::to_string(v.scores.size()));
    }
  }
  QC_ASSIGN(v.types, token_types(f, v.pieces.size()));
  QC_ASSIGN(v.bos, optional_id(f, kBosId));
  QC_ASSIGN(v.eos, optional_id(f, kEosId));
  QC_ASSIGN(v.pad, optional_id(f, kPadId));
  if (f.find(kAddSpacePrefix)) {
    QC_ASSIGN(v.add_space_prefix, f.get_bool(kAddSpacePrefix));
  }
  // llama.cpp never removes whitespace for `llama` vocabularies, whatever remove_extra_whitespaces says.
  v.remove_extra_whitespaces = false;
  return v;
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer(const gguf::File& f) {
  if (!f.find(kModel)) {
    return make_error(f.path() + ": " + kModel + " is missing", "the file carries no tokenizer");
  }
  QC_ASSIGN(const std::string model, f.get_string(kModel));
  Result<std::unique_ptr<Tokenizer>> t = make_error("");
  if (model == "gpt2") {
    QC_ASSIGN(const BpeVocab v, bpe_vocab_from_gguf(f));
    t = make_bpe_tokenizer(v);
  } else if (model == "llama") {
    QC_ASSIGN(const SpmVocab v, spm_vocab_from_gguf(f));
    t = make_spm_tokenizer(v);
  } else {
    return make_error(f.path() + ": " + kModel + " = \"" + model +
                      "\" is not supported (supported: \"gpt2\" byte-level BPE, \"llama\" SentencePiece)");
  }
  if (!t.ok()) return make_error(f.path() + ": " + t.error().message, t.error().hint);
  return t;
}

}  // namespace qc
