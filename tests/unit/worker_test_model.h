// Test helper for the worker tests: writes the tiny preset as a real GGUF with a trained BPE vocabulary
// and the ChatML specials, exactly as qwenchat-mkmodel does, so the worker loads it through the same
// path the app uses.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "gguf/writer.h"
#include "model/synthetic.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace qc::test {

// Any shape: the vocabulary is trained up to shape.n_vocab rows (the rest are unused padding tokens).
inline Status write_chat_model(const std::string& path, ModelShape shape, uint64_t seed) {
  BpeTrainOptions train;
  train.n_merges = shape.n_vocab - 256 - static_cast<int>(train.special_tokens.size());
  QC_ASSIGN(BpeVocab vocab, train_bpe(builtin_training_corpus(), train));
  if (vocab.token_types.empty())
    vocab.token_types.assign(vocab.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  for (int i = static_cast<int>(vocab.tokens.size()); i < shape.n_vocab; ++i) {
    vocab.tokens.push_back("<|pad_" + std::to_string(i) + "|>");
    vocab.token_types.push_back(static_cast<int32_t>(TokenType::kUnused));
  }
  SyntheticModelOptions o;
  o.shape = shape;
  o.seed = seed;
  o.mix = QuantMix::kQ8_0;
  o.out_path = path;
  o.extra_metadata = [&](gguf::Writer& w) { write_bpe_vocab_metadata(w, vocab, chatml_jinja_template()); };
  return write_synthetic_model(o);
}

// Shapes the CUDA kernels take (head_dim 128, GDN heads of 64; the GPU tests' backend shape), K dims
// that are not multiples of 512.
inline ModelShape cuda_test_shape() {
  ModelShape s;
  s.name = "worker-cuda-test";
  s.n_embd = 256;
  s.n_layer = 8;
  s.n_ff = 704;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 128;
  s.rope_dims = 32;
  s.ssm_n_k_heads = 2;
  s.ssm_n_v_heads = 4;
  s.ssm_head_k_dim = 64;
  s.ssm_head_v_dim = 64;
  s.n_vocab = 2000;
  s.n_mtp = 1;
  s.n_ctx_train = 4096;
  return s;
}

inline Status write_tiny_chat_model(const std::string& path, uint64_t seed = 7) {
  QC_ASSIGN(ModelShape shape, preset_shape("tiny"));
  return write_chat_model(path, shape, seed);
}

}  // namespace qc::test
