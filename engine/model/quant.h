// Number formats the weights come in: F32, F16, BF16 and Q8_0 (blocks of 32 int8 with one f16 scale,
// 34 bytes, scale first), plus llama.cpp's Q4_0, Q5_0 (blocks of 32) and Q4_K, Q5_K, Q6_K (super-blocks
// of 256), which a K-quant file mixes per tensor (layouts in model/kquant.h). Conversions are exact where
// the format allows (f16/bf16 -> f32 always is, and so is every block format's decode) and
// round-to-nearest-even on the way in. The five llama.cpp formats are written by encode_values in
// model/kquant_quantize.h (ggml's reference quantisers, byte for byte; offline tooling, not linked into the
// app); which tensor gets which type in a K-quant file is model/quant_mix.h's business.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "gguf/types.h"
#include "qwenchat/result.h"

namespace qc {

enum class DType : uint8_t { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ5_0, kQ4_K, kQ5_K, kQ6_K };
inline constexpr int kDTypeCount = 9;
static_assert(static_cast<int>(DType::kQ6_K) + 1 == kDTypeCount, "kDTypeCount counts every DType");

inline constexpr int kQ8Block = 32;       // values per Q8_0 block
inline constexpr int kQ8BlockBytes = 34;  // f16 scale + 32 int8

const char* dtype_name(DType t);
// "q8_0", "f16", "bf16", "f32" (any case) -> the type; `what` names the setting in the error
// ("--outtype: expected q8_0, f16, bf16 or f32, got \"q4\""). The file-wide names the tools accept, K-quant
// mixes included, are model/quant_mix.h's quant_mix_from_name.
Result<DType> dtype_from_name(const std::string& name, const std::string& what);
// The GGUF tensor type of each DType, and back (nullopt: a GGUF type the engine does not compute with).
// Block sizes and bytes come from the GGUF type table (gguf::type_block_size), not a second copy.
gguf::TensorType dtype_gguf_type(DType t);
std::optional<DType> dtype_of_gguf_type(uint32_t type_id);
// Bytes of `n` values (n must be a multiple of dtype_block(t)).
uint64_t dtype_bytes(DType t, uint64_t n);
// Values per block: 1 for F32/F16/BF16, 32 for Q8_0/Q4_0/Q5_0, 256 for Q4_K/Q5_K/Q6_K. A row of a weight
// is always a whole number of blocks.
int64_t dtype_block(DType t);
// The ggml block format model/kquant.h decodes for Q4_0, Q5_0, Q4_K, Q5_K and Q6_K; nullopt for the others.
std::optional<gguf::TensorType> dtype_block_format(DType t);
// True for the types encode_row can write (F32, F16, BF16, Q8_0: those dtype_from_name accepts).
bool dtype_encodable(DType t);

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);  // round to nearest even, saturates to inf like IEEE
inline float bf16_to_f32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_bf16(float f);  // round to nearest even; NaN stays NaN

// Q8_0 as llama.cpp does it: d = max|x| / 127, q = round(x / d) (half away from zero), d stored as f16.
// Note the scale used for q is the f32 d, not the rounded f16 one (matches ggml's quantize_row_q8_0_ref).
void quantize_q8_0(const float* x, uint8_t* out, int64_t n);
void dequantize_q8_0(const uint8_t* in, float* out, int64_t n);

// Decode `n` values of type t starting at element 0 of `src` into f32 (n a multiple of dtype_block(t)).
void decode_row(DType t, const uint8_t* src, float* out, int64_t n);
// Encode f32 into type t, which must be dtype_encodable (these four cannot fail). Other types leave `out` as
// it is: they go through encode_values (model/kquant_quantize.h).
void encode_row(DType t, const float* x, uint8_t* out, int64_t n);

}  // namespace qc
