// Quantisation to llama.cpp's 4/5/6-bit block formats: Q4_0, Q5_0, Q4_K, Q5_K, Q6_K (the inverse of
// dequantize_row in model/kquant.h, which lists the block layouts).
//
// Followed operation for operation: ggml-org/llama.cpp ggml/src/ggml-quants.c at commit 36491e4024b3,
// functions quantize_row_q4_0_ref, quantize_row_q5_0_ref, quantize_row_q4_K_ref, quantize_row_q5_K_ref,
// quantize_row_q6_K_ref and their helpers nearest_int, make_qx_quants (rmse_type 1, qw NULL: weights x*x)
// and make_qkx2_quants (weights av_x + |x|, use_mad false), get_scale_min_k4's packing. These _ref
// functions are what llama.cpp's quantize_q4_0 / quantize_q4_K / quantize_q5_K / quantize_q6_K call when no
// importance matrix is given (quant_weights == NULL); the imatrix path (quantize_row_*_impl with
// make_qkx3_quants / make_qp_quants) is not implemented. Block structs: ggml/src/ggml-common.h.
//
// Every float operation is the reference's, in its order, in float (FLT_EVAL_METHOD 0 on x86-64 SSE), with
// no FMA contraction (this build compiles ISO C++, where GCC does not contract, for baseline x86-64, which
// has no FMA). The bytes equal those of ggml's C compiled the same way: checked block by block on 465k
// blocks against the reference functions copied into a scratch file (gcc 12 -std=gnu11 -O2
// -DNDEBUG -ffp-contract=off), and pinned by hashes in tests/unit/test_kquant_quantize.cpp. The same C
// compiled with -march=native -ffp-contract=fast (GNU C's default contraction, FMA available) writes
// different K-quant bytes in 3-6% of blocks (measured: Q4_K 6.2%, Q5_K 4.4%, Q6_K 3.3%; Q4_0/Q5_0 agreed on
// every block), so byte equality with a given llama-quantize binary depends on how its ggml was built.
//
// Departures, all where ggml would write a block that decodes to inf/NaN or relies on undefined behaviour:
//   - A non-finite input (NaN, +-inf) is refused with its index; nothing is written.
//   - An input beyond the largest magnitude the type can decode to (an f16 scale of 65504 at the largest
//     level: Q4_0 524032, Q5_0 1048064, Q4_K 61901280, Q5_K 127929312, Q6_K 268304384) is refused with its
//     index; nothing is written. Beyond it ggml stores an inf scale (or, at the very edge, clips).
//   - A block whose f16 scale (d, or dmin for Q4_K/Q5_K) would still round to inf is refused naming the
//     block; blocks before it have been written, so callers discard dst on any error. Within the limit above
//     this happens only to K-quants: a sub-block mixing large positive and negative values (the min term
//     reaches only -63 * dmin), or a value near the limit that the search fits with fewer than nmax levels.
//   - Q4_0/Q5_0 convert (x*id + 8.5f) to int8 with a C cast, undefined when id = 1/d overflowed to inf (all
//     |x| < ~2e-38, d then rounds to f16 zero anyway): here such a value converts as x86-64's cvttss2si
//     does (to 0x80000000, whose low byte is 0), which is what ggml compiled for x86-64 writes.
#pragma once

#include <cstdint>

#include "gguf/types.h"
#include "model/quant.h"
#include "qwenchat/result.h"

namespace qc {

// Encodes `n` floats from `src` as `type` into `dst` (n / block_elems whole blocks of block_bytes each, as
// in gguf::type_block_size). Errors: a type other than the five above, n < 0 or not a multiple of the
// type's block size, a non-finite or too large value (nothing written), a block scale beyond f16 (see
// above).
Status quantize_row(gguf::TensorType type, const float* src, uint8_t* dst, int64_t n);

// Encode f32 into any DType: encode_row (model/quant.h) for F32, F16, BF16 and Q8_0, quantize_row for Q4_0,
// Q5_0, Q4_K, Q5_K and Q6_K, whose errors it passes on (n not whole blocks, a non-finite value or one too
// large for the format; `out` is then to be discarded). Here, not in model/quant.h, because it is what the
// writers (convert, mkmodel) call: the runtime library, which reads these formats, links no quantiser.
Status encode_values(DType t, const float* x, uint8_t* out, int64_t n);

}  // namespace qc
