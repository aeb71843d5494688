// Exact CPU dequantisation of llama.cpp's 4/5/6-bit block formats: Q4_0, Q5_0, Q4_K, Q5_K, Q6_K.
//
// Checked against ggml-org/llama.cpp: block layouts in ggml/src/ggml-common.h (commit aca2e6ce7909),
// dequantize_row_{q4_0,q5_0,q4_K,q5_K,q6_K} and get_scale_min_k4 in ggml/src/ggml-quants.c (commit
// 36491e4024b3). Every value is computed with the same float operations in the same order as that reference
// code, so the output is bit-identical to it (given no FMA contraction: this build uses none).
//
// Block layouts (all little-endian; "f16" is an IEEE half, converted exactly by f16_to_f32):
//   Q4_0 (32 values, 18 bytes): f16 d | qs[16].  x[j] = d * (nibble - 8); low nibbles of qs are values
//        0..15, high nibbles 16..31.
//   Q5_0 (32 values, 22 bytes): f16 d | qh[4] | qs[16].  As Q4_0 with a fifth bit: bit j of qh (read as a
//        little-endian uint32) is bit 4 of value j; x[j] = d * (q - 16).
//   Q4_K (256 values, 144 bytes): f16 d | f16 dmin | scales[12] | qs[128].  8 sub-blocks of 32, each with a
//        6-bit scale sc and 6-bit min m (packed in scales[], see get_scale_min_k4 in kquant.cpp);
//        x = (d*sc) * q - (dmin*m). qs holds 4 groups of 64 values in 32 bytes each: low nibbles are the
//        group's first 32 values (sub-block 2g), high nibbles the next 32 (sub-block 2g+1).
//   Q5_K (256 values, 176 bytes): f16 d | f16 dmin | scales[12] | qh[32] | qs[128].  As Q4_K, plus bit 4 of
//        value r of sub-block s in bit s of qh[r].
//   Q6_K (256 values, 210 bytes): ql[128] | qh[64] | int8 scales[16] | f16 d.  Two halves of 128 values;
//        in half h, for l < 32: value l takes ql[l] low nibble and qh[l] bits 0-1, value l+32 ql[l+32] low
//        and bits 2-3, value l+64 ql[l] high and bits 4-5, value l+96 ql[l+32] high and bits 6-7 (ql, qh
//        advance by 64, 32 per half). x[i] = (d * scales[i/16]) * (q - 32); the scales are signed.
#pragma once

#include <cstdint>

#include "gguf/types.h"
#include "qwenchat/result.h"

namespace qc {

// True for the five types dequantize_row decodes.
bool kquant_is_supported(gguf::TensorType type);

// Decodes `n` values of `type` from `src` (n / block_elems whole blocks, block_bytes each, as in
// gguf::type_block_size) into `dst`. Errors (nothing written): a type other than the five above, n < 0,
// or n not a multiple of the type's block size.
Status dequantize_row(gguf::TensorType type, const uint8_t* src, float* dst, int64_t n);

// The same decode without the checks, for the forward pass's inner loop (one call per block there, where
// building a Status per call would cost as much as the decode): `type` must satisfy kquant_is_supported and
// `n_blocks` whole blocks are read. Bit-identical to dequantize_row.
void dequantize_blocks(gguf::TensorType type, const uint8_t* src, float* dst, int64_t n_blocks);

}  // namespace qc
