// The model description: every weight of a qwen35 model, named as the math in QWEN35.md names it.
// Shapes in comments are [rows][cols] = [out][in]; H = n_embd. The loader (model/loader.cpp) is the one
// place that knows GGUF tensor names; the forward code only sees these structs.
#pragma once

#include <optional>
#include <vector>

#include "model/tensor.h"

namespace qc {

struct AttentionWeights {
  TensorView wq;      // [n_head * head_dim * 2][H]: per head [query head_dim | gate head_dim]
  TensorView wk;      // [n_kv * head_dim][H]
  TensorView wv;      // [n_kv * head_dim][H]
  TensorView wo;      // [H][n_head * head_dim]
  TensorView q_norm;  // [head_dim], applied per query head before RoPE (includes the +1)
  TensorView k_norm;  // [head_dim]
};

struct DeltaNetWeights {
  TensorView wqkv;     // [2*Nk*Dk + Nv*Dv][H]: q (Nk heads) | k (Nk heads) | v (Nv heads)
  TensorView wgate;    // [Nv*Dv][H]: z, the output gate
  TensorView wbeta;    // [Nv][H]
  TensorView walpha;   // [Nv][H]
  TensorView conv1d;   // [qkv channels][conv_kernel]: depthwise causal conv taps, oldest first
  TensorView dt_bias;  // [Nv]
  TensorView a;        // [Nv]: -exp(A_log), so g = softplus(alpha + dt_bias) * a <= 0
  TensorView norm;     // [Dv]: gated output RMSNorm weight, shared by heads, NO +1 offset
  TensorView wout;     // [H][Nv*Dv]
};

struct FfnWeights {
  TensorView gate;  // [n_ff][H]
  TensorView up;    // [n_ff][H]
  TensorView down;  // [H][n_ff]
};

struct LayerWeights {
  bool recurrent = false;   // GDN (true) or full attention (false)
  TensorView attn_norm;     // [H] (includes the +1)
  TensorView post_norm;     // [H] post_attention_norm: the FFN's input norm
  AttentionWeights attn;    // when !recurrent
  DeltaNetWeights gdn;      // when recurrent
  FfnWeights ffn;
};

// Multi-token-prediction block (QWEN35.md section 6): one full-attention decoder layer fed by
// eh_proj(concat(rmsnorm(embed(t), enorm), rmsnorm(h, hnorm))).
struct MtpWeights {
  TensorView eh_proj;           // [H][2H]: input columns = [embedding half | hidden half]
  TensorView enorm;             // [H]
  TensorView hnorm;             // [H]
  TensorView shared_head_norm;  // [H], optional: output_norm is used when absent
  LayerWeights layer;           // attention layer with its own norms and FFN
};

struct ModelWeights {
  TensorView token_embd;   // [n_vocab][H]
  TensorView output_norm;  // [H]
  TensorView output;       // [n_vocab][H]; the same view as token_embd when tied
  bool tied_embeddings = false;
  std::vector<LayerWeights> layers;
  std::optional<MtpWeights> mtp;
};

}  // namespace qc
