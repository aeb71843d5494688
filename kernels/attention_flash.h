// The prompt path's attention core (attention.h attention_prefill calls it after the prep kernel): causal
// softmax(q k^T / sqrt(head_dim)) v over positions 0 .. each row's own, on f16 tensor cores
// (mma.sync m16n8k16, f32 accumulation), flash-attention style: a block takes 64 query rows of one head
// and walks the KV cache in tiles of 64 positions with an online softmax, so a key is read once per
// 64 rows instead of once per row (the decode kernels' cost, which grows with rows x positions).
//
// Numerics: the rotated queries (f32 in q_scratch) are rounded to f16 once (relative 2^-11; the keys and
// values are f16 in the cache already); scores and the softmax are f32; the probabilities are rounded to
// f16 for the P.V product (relative 2^-11 per weight, the row sum l stays f32). tests/gpu/test_attention.cpp
// derives its tolerance from these two roundings.
//
// Determinism and reuse: a row's tiles are the positions' own 64-aligned tiles, visited in ascending order,
// and everything per row (mask, max, sum, rescale) depends on the row's position and data only; a tile
// beyond a row's position is an exact no-op (rescale by expf(0) = 1, probabilities 0, values of
// positions past the chunk zero-filled). So a row's bits do not depend on which rows share its block:
// a prompt gives the same bits in one call, in chunks, or continued from a kept state, and with either
// block height (flash_rows).
#pragma once

#include <cuda_runtime_api.h>

#include "attention.h"

namespace qc::gpu {

// Query rows per block when AttentionArgs::flash_rows is 0. 64 (two blocks per SM) measured faster than 128
// (one block per SM, half the K/V traffic): attention of a 2048-token prompt of the 27B 11.1 against 12.4 ms
// (H100, 2026-12-06; docs/PERFORMANCE.md "2026-12-06 (fourth session)").
inline constexpr int kFlashRowsDefault = 64;

// Inputs as attention.h AttentionArgs after attn_prep: q_scratch holds the rotated queries
// [M][n_head][head_dim] f32, the cache holds positions 0 .. *d_pos + M - 1. Writes a.out (f32) and/or
// a.out16 (rows_to_f16's rounding of the same values) gated by sigmoid(gate). Arguments are checked by the caller (attention_prefill).
GpuStatus attention_flash_rows(const AttentionArgs& a, cudaStream_t stream);

}  // namespace qc::gpu
