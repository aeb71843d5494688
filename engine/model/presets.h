// Named model shapes: the real Qwen3.5-family sizes (from public configs, QWEN35.md section 1) and small
// ones for tests and the default asset. Used by qwenchat-mkmodel and the benchmark, never by the forward
// code (which reads everything from the file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qwenchat/result.h"

namespace qc {

struct ModelShape {
  std::string name;
  int n_embd = 0;
  int n_layer = 0;          // main layers
  int n_ff = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int rope_dims = 0;
  float rope_theta = 1e7f;
  int ssm_conv_kernel = 4;
  int ssm_n_k_heads = 0;
  int ssm_n_v_heads = 0;
  int ssm_head_k_dim = 0;
  int ssm_head_v_dim = 0;
  int full_attention_interval = 4;
  int n_vocab = 0;          // rows of the embedding table (the vocabulary is padded up to it)
  int n_mtp = 1;            // MTP layers
  bool tied_embeddings = false;
  int n_ctx_train = 262144;
  float rms_eps = 1e-6f;

  Status validate() const;
  // Parameters including the embedding table (and lm_head when untied) and the MTP block.
  uint64_t n_params() const;
};

// "tiny", "small", "0.8b", "2b", "4b", "9b", "27b". Error lists the known names.
Result<ModelShape> preset_shape(const std::string& name);
std::vector<std::string> preset_names();

}  // namespace qc
