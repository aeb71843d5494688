// Gated full attention for M <= 4 decode tokens at positions pos .. pos+M-1, pos = *d_pos (device memory,
// so the step can be captured in a CUDA graph) -- QWEN35.md section 4:
//   1. per query head: RMSNorm(q_head, q_norm), partial NeoX RoPE; per KV head: RMSNorm(k, k_norm), RoPE;
//      k and v stored as f16 at their positions (token m at pos + m);
//   2. softmax(q . k / sqrt(head_dim)) over positions 0 .. pos+m (query head h reads KV head h / (H/Hkv)),
//      split over the sequence (flash-decoding): each split writes a partial (max, sum, unnormalised o) and
//      a merge combines the splits in ascending order -- deterministic;
//   3. out = o * sigmoid(gate), as f32 and/or quantised for attn_output.
// RoPE: pairs (i, i + rope_dims/2) for i < rope_dims/2, angle = position * theta^(-2i/rope_dims), computed
// in double and rounded to f32 once (exact to f32 even at position 262143, where an f32 product of
// position and frequency would be off by up to 0.016 rad).
//
// Cost: the KV cache is read once per KV head and token row (the GQA group's query heads share the load):
// 4 KiB per position per layer for the 27B, the decode term that grows with context.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

struct AttentionArgs {
  const float* q_gate = nullptr;  // [M][ld_q]: per query head [query head_dim | gate head_dim]
  int ld_q = 0;
  const float* k = nullptr;  // [M][ld_k]: n_kv heads of head_dim
  int ld_k = 0;
  const float* v = nullptr;  // [M][ld_v]
  int ld_v = 0;
  const float* q_norm = nullptr;  // [head_dim]
  const float* k_norm = nullptr;  // [head_dim]
  float eps = 1e-6f;
  float rope_theta = 1e7f;
  int rope_dims = 64;  // even, <= head_dim
  int n_head = 0;      // query heads; a multiple of n_kv with group size 1, 2, 3, 4, 6 or 8
  int n_kv = 0;
  int head_dim = 0;             // 128 or 256
  uint16_t* k_cache = nullptr;  // [n_kv][max_ctx][head_dim] f16 bits
  uint16_t* v_cache = nullptr;
  int max_ctx = 0;
  const int* d_pos = nullptr;  // device: position of token row 0
  int m = 1;
  int ctx_hint = 0;            // host: >= pos + M on every replay; sizes the split grid (split_len > 0)
  // Positions per split for every row; 0 = per row, attention_row_split_len(row's position): then a
  // row's bits depend on its position alone, not on M or ctx_hint, so a prompt gives the same bits in
  // one call, in chunks or token by token (what conversation state reuse needs to be exact).
  int split_len = 0;
  float* q_scratch = nullptr;  // attention_q_scratch_floats()
  float* partials = nullptr;   // attention_partial_floats()
  float* out = nullptr;        // optional [M][ld_out], n_head * head_dim wide
  int ld_out = 0;
  QActOut out_q{};  // optional quantised out
  // attention_prefill only, optional: [M][ld_out16] f16(out * 2^-shift16) saturated, gemm_f16.h
  // rows_to_f16's bits: the f16 prompt path's out-projection input, without f32 rows.
  uint16_t* out16 = nullptr;
  int ld_out16 = 0;
  int shift16 = 0;
  // attention_prefill: query rows per block of the flash kernel, 64 or 128; 0 = kFlashRowsDefault
  // (attention_flash.h). Either gives the same bits.
  int flash_rows = 0;
  // attention_decode: K / V positions a warp of the split kernel loads a batch, the next batch in flight
  // while one is computed: 1 (one loaded, then computed: the first form) or 4; 0 = 1 until 4 is timed.
  // Either gives the same bits (attention.cu, kKvAhead).
  int kv_ahead = 0;
  bool pdl = false;
};

// Per-row split mode: every row may use up to attention_row_splits() splits (about two blocks per SM
// for one row: a decode step fills the card; extra rows add blocks), each row_split_len positions long
// (a multiple of 64, at least 64), so ceil((last + 1) / len) <= n_splits always holds.
int attention_row_splits(int n_kv, int sm_count);
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int attention_row_split_len(int last, int n_splits) {
  const int len = (last + 1 + n_splits - 1) / n_splits;
  return len <= 64 ? 64 : (len + 63) / 64 * 64;
}
// Splits of the grid (the partials' stride): ceil(ctx_hint / split_len) for a fixed split length,
// attention_row_splits() for per-row lengths (split_len 0).
int attention_grid_splits(int ctx_hint, int split_len, int n_kv, int sm_count);
size_t attention_q_scratch_floats(int n_head, int head_dim, int m);
size_t attention_partial_floats(int n_head, int head_dim, int m, int n_splits);
GpuStatus attention_decode(const AttentionArgs& args, cudaStream_t stream);

// The prompt path's attention: M = 1 .. kMaxRows rows at positions *d_pos + m against positions 0 .. the
// row's own: the prep kernel above, then attention_flash.h (f16 tensor cores, 64 rows per block over
// 64-position tiles: every key is read once per 64 rows, not once per row), then the optional quantised
// output (quantize_act). split_len, ctx_hint and partials are not used; `out` (f32) or `out16` is required
// (out_q needs out). A row's bits depend on its position only, so a prompt gives the same bits in any
// chunking; they are not attention_decode's (which keeps q and the probabilities in f32). Scratch:
// q_scratch attention_q_scratch_floats(n_head, head_dim, M).
GpuStatus attention_prefill(const AttentionArgs& args, cudaStream_t stream);

// Store M rows of k and v (already normalised and rotated) at positions *d_pos + m. Used where k/v come
// from elsewhere (the MTP block's cache fill); attention_decode stores its own.
struct KvStoreArgs {
  const float* k = nullptr;  // [M][ld_k]
  int ld_k = 0;
  const float* v = nullptr;  // [M][ld_v]
  int ld_v = 0;
  int n_kv = 0;
  int head_dim = 0;
  uint16_t* k_cache = nullptr;  // [n_kv][max_ctx][head_dim]
  uint16_t* v_cache = nullptr;
  int max_ctx = 0;
  const int* d_pos = nullptr;
  int m = 1;
  bool pdl = false;
};
GpuStatus kv_store(const KvStoreArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
