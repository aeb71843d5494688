#include "model/quant.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "model/kquant.h"

namespace qc {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kQ8_0:
      return "Q8_0";
    case DType::kQ4_0:
      return "Q4_0";
    case DType::kQ5_0:
      return "Q5_0";
    case DType::kQ4_K:
      return "Q4_K";
    case DType::kQ5_K:
      return "Q5_K";
    case DType::kQ6_K:
      return "Q6_K";
  }
  return "?";
}

Result<DType> dtype_from_name(const std::string& name, const std::string& what) {
  for (const DType t : {DType::kQ8_0, DType::kF16, DType::kBF16, DType::kF32}) {
    const std::string canonical = dtype_name(t);
    if (name.size() == canonical.size() &&
        std::equal(name.begin(), name.end(), canonical.begin(),
                   [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; })) {
      return t;
    }
  }
  return make_error(what + ": expected q8_0, f16, bf16 or f32, got \"" + name + "\"");
}

gguf::TensorType dtype_gguf_type(DType t) {
  switch (t) {
    case DType::kF32:
      return gguf::TensorType::kF32;
    case DType::kF16:
      return gguf::TensorType::kF16;
    case DType::kBF16:
      return gguf::TensorType::kBF16;
    case DType::kQ8_0:
      return gguf::TensorType::kQ8_0;
    case DType::kQ4_0:
      return gguf::TensorType::kQ4_0;
    case DType::kQ5_0:
      return gguf::TensorType::kQ5_0;
    case DType::kQ4_K:
      return gguf::TensorType::kQ4_K;
    case DType::kQ5_K:
      return gguf::TensorType::kQ5_K;
    case DType::kQ6_K:
      return gguf::TensorType::kQ6_K;
  }
  return gguf::TensorType::kF32;
}

std::optional<DType> dtype_of_gguf_type(uint32_t type_id) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto t = static_cast<DType>(i);
    if (static_cast<uint32_t>(dtype_gguf_type(t)) == type_id) return t;
  }
  return std::nullopt;
}

namespace {
// The block geometry of the GGUF table (gguf/types.cpp), the one home of those numbers.
void geometry(DType t, uint64_t* elems, uint64_t* bytes) {
  *elems = 1;
  *bytes = 4;
  gguf::type_block_size(static_cast<uint32_t>(dtype_gguf_type(t)), elems, bytes);
}
}  // namespace

uint64_t dtype_bytes(DType t, uint64_t n) {
  uint64_t elems = 1, bytes = 4;
  geometry(t, &elems, &bytes);
  return n / elems * bytes;
}

int64_t dtype_block(DType t) {
  uint64_t elems = 1, bytes = 4;
  geometry(t, &elems, &bytes);
  return static_cast<int64_t>(elems);
}

bool dtype_encodable(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kQ8_0;
}

std::optional<gguf::TensorType> dtype_block_format(DType t) {
  switch (t) {
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return dtype_gguf_type(t);
    default:
      return std::nullopt;
  }
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal f16 (2^-14): subnormal or zero
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25 rounds to 0
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 + (127-exp) - 1 ... aligns to the 2^-24 grid
    const uint32_t q = mant >> (shift + 0);
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    uint32_t r = q;
    if (rem > half || (rem == half && (q & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  // normal: rebias exponent, round mantissa from 23 to 10 bits, nearest even
  uint32_t r = abs - 0x38000000u;  // exponent bias 127 -> 15
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // may carry into the exponent: still correct
  return static_cast<uint16_t>(sign | r);
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

void quantize_q8_0(const float* x, uint8_t* out, int64_t n) {
  for (int64_t b = 0; b < n / kQ8Block; ++b) {
    const float* xb = x + b * kQ8Block;
    uint8_t* ob = out + b * kQ8BlockBytes;
    float amax = 0.0f;
    for (int i = 0; i < kQ8Block; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t dh = f32_to_f16(d);
    std::memcpy(ob, &dh, 2);
    for (int i = 0; i < kQ8Block; ++i) {
      const float v = std::round(xb[i] * id);  // round half away from zero, like ggml's roundf
      ob[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(v));
    }
  }
}

void dequantize_q8_0(const uint8_t* in, float* out, int64_t n) {
  for (int64_t b = 0; b < n / kQ8Block; ++b) {
    const uint8_t* ib = in + b * kQ8BlockBytes;
    uint16_t dh;
    std::memcpy(&dh, ib, 2);
    const float d = f16_to_f32(dh);
    for (int i = 0; i < kQ8Block; ++i)
      out[b * kQ8Block + i] = d * static_cast<float>(static_cast<int8_t>(ib[2 + i]));
  }
}

void decode_row(DType t, const uint8_t* src, float* out, int64_t n) {
  switch (t) {
    case DType::kF32:
      std::memcpy(out, src, static_cast<size_t>(n) * 4);
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = f16_to_f32(h);
      }
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = bf16_to_f32(h);
      }
      return;
    case DType::kQ8_0:
      dequantize_q8_0(src, out, n);
      return;
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      dequantize_blocks(*dtype_block_format(t), src, out, n / dtype_block(t));
      return;
  }
}

void encode_row(DType t, const float* x, uint8_t* out, int64_t n) {
  switch (t) {
    case DType::kF32:
      std::memcpy(out, x, static_cast<size_t>(n) * 4);
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_f16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_bf16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::kQ8_0:
      quantize_q8_0(x, out, n);
      return;
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return;  // read-only formats (see dtype_encodable)
  }
}

}  // namespace qc
