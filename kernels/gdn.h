// Gated DeltaNet decode step for M <= 4 tokens, processed in order (QWEN35.md section 3):
//   u = silu(causal conv(x)) over the q|k|v channels; q, k L2-normalised per head (x / sqrt(sum x^2 + eps)),
//   q *= 1/sqrt(head_k_dim); beta = sigmoid(b); g = softplus(a + dt_bias) * ssm_a; per value head j with
//   key head j % n_k_heads (the GGUF's tiled order) and f32 state S [dk][dv]:
//     S = S * exp(g);  mem = S^T k;  delta = beta * (v - mem);  S = S + k delta^T;  o = S^T q
//   y_j = rmsnorm(o_j, norm_w) * silu(z_j)   (norm weight shared by the heads, no +1)
// written as f32 and/or quantised for ssm_out.
//
// Conv state as a ring: the conv input of position t lives in slot t % kConvRing of conv_ring, so a step
// reads the slots of the previous (conv_kernel - 1) positions and writes the slots of its own M positions;
// with M + conv_kernel - 1 <= kConvRing these never collide, so blocks need no ordering among themselves,
// and rolling back rejected MTP tokens needs no conv snapshot at all: decoding simply continues from the
// accepted position. The ring must be zeroed when a sequence starts.
// The recurrent state is updated in place; state_per_token (optional) receives the state after each of
// the first n_state_per_token tokens, which is what MTP verification needs to keep a partially accepted
// draft without recomputation: the CUDA backend passes its history slots (stride ld_state_per_token = all
// GDN layers' states, so that one copy of a slot restores every layer) and n = M - 1 (the state after
// the last token is `state` itself). The values written are the registers the next token continues
// from, so a slot holds the bits an (mt+1)-token call would leave in `state`.
//
// Cost: the state (64 KiB per value head, 3 MiB per 27B layer) is read and written once per step, for
// all M tokens; one block per value head keeps its head's state in registers (one column per thread).
// Each per-token state adds one more state write: 3 MiB per 27B layer and token, 144 MiB (151 MB) per
// token over the 48 GDN layers -- for a 4-token verification pass 3 x 151 MB = 453 MB of writes, ~0.1 ms
// at the H200's ~4.5 TB/s, against ~6 ms for the pass's 27.2 GB of weights.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

inline constexpr int kConvRing = 8;

// gdn_prefill's form of the delta rule over a prompt chunk (gdn_prefill.h says what each costs).
enum class GdnScan : uint8_t {
  kToken,    // position by position (gdn_prefill.cu)
  kGroup,    // groups of 4 positions on the absolute grid, f32 on CUDA cores (gdn_group.h)
  kChunked,  // chunks of 64 positions on the absolute grid, TF32 tensor cores (gdn_chunk.h)
  kScaled,   // position by position, the decay as one scale per head and 16-position segment (gdn_scaled.h)
};

struct GdnArgs {
  int m = 1;
  int n_k_heads = 0;           // key heads (ssm.group_count)
  int n_v_heads = 0;           // value heads (ssm.time_step_rank), a multiple of n_k_heads
  int head_k_dim = 0;          // 64 or 128 (ssm.state_size)
  int head_v_dim = 0;          // multiple of 32, <= 256
  int conv_kernel = 4;         // M + conv_kernel - 1 <= kConvRing
  const float* qkv = nullptr;  // [M][ld_qkv] conv inputs: q (Nk*dk) | k (Nk*dk) | v (Nv*dv)
  int ld_qkv = 0;
  const float* z = nullptr;  // [M][ld_z] output gate, Nv*dv
  int ld_z = 0;
  const float* beta = nullptr;  // [M][ld_beta] ssm_beta projection, before the sigmoid
  int ld_beta = 0;
  const float* alpha = nullptr;  // [M][ld_alpha] ssm_alpha projection, before softplus
  int ld_alpha = 0;
  const float* conv_w = nullptr;     // [conv_dim][conv_kernel] (GGUF ssm_conv1d {conv_kernel, conv_dim})
  const float* dt_bias = nullptr;    // [Nv]
  const float* ssm_a = nullptr;      // [Nv] = -exp(A_log)
  const float* norm_w = nullptr;     // [dv]
  float* conv_ring = nullptr;        // [kConvRing][conv_dim]
  float* state = nullptr;            // [Nv][dk][dv]
  // Optional: the state after token mt (mt < min(M, n_state_per_token)) at state_per_token +
  // mt * ld_state_per_token, laid out like `state` ([Nv][dk][dv]).
  float* state_per_token = nullptr;
  size_t ld_state_per_token = 0;       // floats from one token's state to the next; 0 = Nv*dk*dv (dense)
  int n_state_per_token = kMaxTokens;  // how many leading tokens' states are written
  const int* d_pos = nullptr;        // device: position of token row 0
  float* out = nullptr;              // optional [M][ld_out], Nv*dv
  int ld_out = 0;
  QActOut out_q{};  // optional quantised y
  float l2_eps = 1e-6f;
  float norm_eps = 1e-6f;
  bool pdl = false;
  // gdn_prefill only: the form of the scan.
  GdnScan scan = GdnScan::kToken;
  // gdn_prefill only, optional: [M][ld_out16] f16(y * 2^-shift16) saturated, gemm_f16.h rows_to_f16's bits
  // for y: the f16 prompt path's out-projection input, without writing and re-reading f32 rows.
  uint16_t* out16 = nullptr;
  int ld_out16 = 0;
  int shift16 = 0;

  int conv_dim() const { return 2 * n_k_heads * head_k_dim + n_v_heads * head_v_dim; }
};
GpuStatus gdn_step(const GdnArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
