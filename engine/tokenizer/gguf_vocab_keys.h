// The GGUF keys of a tokenizer (tokenizer.ggml.* as llama.cpp writes them, plus ours), one home for the
// strings: gguf_vocab.cpp reads them (runtime), gguf_vocab_write.cpp writes them (offline tooling).
#pragma once

namespace qc::vocab_keys {

// "gpt2" (byte-level BPE) or "llama" (SentencePiece)
inline constexpr const char* kModel = "tokenizer.ggml.model";
// the pre-tokenizer's name
inline constexpr const char* kPre = "tokenizer.ggml.pre";
// the Hugging Face normalizer as JSON (tokenizer/normalizer.h); not a llama.cpp key
inline constexpr const char* kNormalizer = "tokenizer.huggingface.normalizer";
inline constexpr const char* kTokens = "tokenizer.ggml.tokens";
inline constexpr const char* kMerges = "tokenizer.ggml.merges";
inline constexpr const char* kScores = "tokenizer.ggml.scores";
inline constexpr const char* kTokenType = "tokenizer.ggml.token_type";
inline constexpr const char* kBosId = "tokenizer.ggml.bos_token_id";
inline constexpr const char* kEosId = "tokenizer.ggml.eos_token_id";
inline constexpr const char* kPadId = "tokenizer.ggml.padding_token_id";
inline constexpr const char* kEotId = "tokenizer.ggml.eot_token_id";
inline constexpr const char* kAddSpacePrefix = "tokenizer.ggml.add_space_prefix";
inline constexpr const char* kAddBos = "tokenizer.ggml.add_bos_token";
inline constexpr const char* kAddEos = "tokenizer.ggml.add_eos_token";
inline constexpr const char* kChatTemplate = "tokenizer.chat_template";

}  // namespace qc::vocab_keys
