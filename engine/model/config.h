// Model hyper-parameters, read once from a GGUF's `qwen35.*` metadata (QWEN35.md section 5). Nothing in
// the engine hard-codes a size: every loop bound comes from here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qwenchat/result.h"

namespace qc {
namespace gguf { class File; }

// The most layers (block_count, MTP layers included) a file may declare. Published models have under 200;
// the bound exists because per-layer tables are sized from the count before the tensors can disprove it,
// so a corrupt count near 2^30 would otherwise ask for gigabytes.
inline constexpr int kMaxBlockCount = 4096;

struct ModelConfig {
  std::string architecture;      // "qwen35"
  std::string name;              // general.name, may be empty
  int n_vocab = 0;               // rows of token_embd
  int n_embd = 0;                // hidden size H
  int n_layer = 0;               // main decoder layers (block_count minus MTP layers)
  int n_ff = 0;                  // SwiGLU inner size
  int n_ctx_train = 0;           // context_length (0 when absent)
  float rms_eps = 1e-6f;

  // Full attention.
  int n_head = 0;                // query heads
  std::vector<int> n_head_kv;    // per main layer (+ MTP layers at the end); 0 on recurrent layers
  int head_dim = 0;              // key_length (== value_length)
  float rope_theta = 1e7f;
  int rope_dims = 0;             // rotated dims per head (64 of 256), NeoX half-split pairs
  std::vector<int> rope_sections;  // rope.dimension_sections (M-RoPE; text collapses it), may be empty

  // Gated DeltaNet.
  int ssm_conv_kernel = 0;       // 4
  int ssm_n_k_heads = 0;         // ssm.group_count (16)
  int ssm_n_v_heads = 0;         // ssm.time_step_rank (48)
  int ssm_head_k_dim = 0;        // ssm.state_size (128)
  int ssm_head_v_dim = 0;        // ssm.inner_size / time_step_rank (128)
  int ssm_d_inner() const { return ssm_n_v_heads * ssm_head_v_dim; }
  int ssm_qkv_dim() const { return 2 * ssm_n_k_heads * ssm_head_k_dim + ssm_d_inner(); }

  std::vector<bool> is_recurrent;  // per main layer: true = GDN, false = full attention
  int full_attention_interval = 0;
  int n_mtp = 0;                   // nextn_predict_layers (0 = no MTP block)

  int n_kv_heads(int layer) const { return n_head_kv[static_cast<size_t>(layer)]; }
  int n_attention_layers() const;
  int n_recurrent_layers() const;
  // One-line summary for logs and `info`.
  std::string summary() const;
};

// Reads and checks the config. Errors name the key and the expected value.
Result<ModelConfig> read_config(const gguf::File& file);

}  // namespace qc
