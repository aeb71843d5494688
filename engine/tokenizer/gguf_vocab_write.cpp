// Tokenizer -> GGUF metadata: the vocabulary writers the converter, mkmodel and the tests use (offline
// tooling, engine/CMakeLists.txt). The readers are gguf_vocab.cpp; the key strings gguf_vocab_keys.h.
#include "gguf/writer.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/gguf_vocab_keys.h"
#include "tokenizer/tokenizer.h"

namespace qc {

using namespace vocab_keys;

namespace {

// A special token's id, written only when the vocabulary has one (-1: none), as optional_id reads it.
void set_optional_id(gguf::Writer& w, const char* key, int32_t id) {
  if (id >= 0) w.set(key, gguf::Value::of_u32(static_cast<uint32_t>(id)));
}

}  // namespace

void write_bpe_vocab_metadata(gguf::Writer& w, const BpeVocab& v, std::string_view chat_template) {
  w.set(kModel, gguf::Value::of_string("gpt2"));
  w.set(kPre, gguf::Value::of_string(v.pre));
  w.set(kNormalizer, gguf::Value::of_string(v.normalizer.empty() ? "null" : v.normalizer));
  w.set(kTokens, gguf::Value::strings(v.tokens));
  w.set(kMerges, gguf::Value::strings(v.merges));
  std::vector<int32_t> types = v.token_types;
  if (types.empty()) types.assign(v.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  w.set(kTokenType, gguf::Value::i32s(types));
  set_optional_id(w, kBosId, v.bos);
  set_optional_id(w, kEosId, v.eos);
  set_optional_id(w, kPadId, v.pad);
  set_optional_id(w, kEotId, v.eot);
  w.set(kAddBos, gguf::Value::of_bool(false));
  if (!chat_template.empty())
    w.set(kChatTemplate, gguf::Value::of_string(std::string(chat_template)));
}

void write_spm_vocab_metadata(gguf::Writer& w, const SpmVocab& v, std::string_view chat_template) {
  w.set(kModel, gguf::Value::of_string("llama"));
  w.set(kTokens, gguf::Value::strings(v.pieces));
  std::vector<float> scores = v.scores;
  if (scores.empty()) scores.assign(v.pieces.size(), 0.0f);
  w.set(kScores, gguf::Value::f32s(scores));
  std::vector<int32_t> types = v.types;
  if (types.empty()) types.assign(v.pieces.size(), static_cast<int32_t>(TokenType::kNormal));
  w.set(kTokenType, gguf::Value::i32s(types));
  set_optional_id(w, kBosId, v.bos);
  set_optional_id(w, kEosId, v.eos);
  set_optional_id(w, kPadId, v.pad);
  w.set(kAddSpacePrefix, gguf::Value::of_bool(v.add_space_prefix));
  w.set(kAddBos, gguf::Value::of_bool(false));
  w.set(kAddEos, gguf::Value::of_bool(false));
  if (!chat_template.empty())
    w.set(kChatTemplate, gguf::Value::of_string(std::string(chat_template)));
}

}  // namespace qc
