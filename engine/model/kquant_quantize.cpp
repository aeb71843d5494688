#include "model/kquant_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "model/kquant.h"
#include "model/kquant_search.h"
#include "model/quant.h"

// Names and loop shapes follow ggml-quants.c (see the header) so the two can be read side by side; every
// int that meets a float in the reference is converted at the same place here (static_cast<float>).
namespace qc {
namespace {

constexpr int kQK = 256;                // values per K-quant super-block (ggml's QK_K)
constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below it a group counts as all zero

using kquant::kSearchLanes;
using kquant::nearest_int;
constexpr double kF16Max = 65504.0;  // largest finite f16

// ggml's `(int8_t)(v)` for Q4_0/Q5_0. Defined in C only when trunc(v) fits; otherwise (v = +-inf or NaN,
// reached only when 1/d overflowed) x86-64 converts through cvttss2si, giving 0x80000000, low byte 0.
int8_t to_int8_like_x86(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return 0;
  return static_cast<int8_t>(static_cast<int32_t>(v));  // modular in C++20, as x86's low byte
}

void store_f16(uint8_t* p, uint16_t h) {
  std::memcpy(p, &h, 2);
}

float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

bool f16_is_finite(uint16_t h) {
  return (h & 0x7c00u) != 0x7c00u;
}

// A block scale that does not fit f16: which field and the f32 value it would have held.
struct Overflow {
  const char* field = nullptr;  // nullptr: no overflow
  float value = 0.0f;
};

// Q4_0 (nbits 4) and Q5_0 (nbits 5): d = max / -2^(nbits-1), where max is the first value of largest
// magnitude (so that value encodes exactly as q = 0); q = trunc(x/d + offset + 0.5) capped at 2^nbits - 1.
// quantize_row_q4_0_ref / quantize_row_q5_0_ref.
Overflow quantize_block_q4_0_q5_0(const float* x, uint8_t* y, bool five) {
  const int qk = 32;
  float amax = 0.0f;  // absolute max
  float max = 0.0f;
  for (int j = 0; j < qk; j++) {
    const float v = x[j];
    if (amax < std::fabs(v)) {
      amax = std::fabs(v);
      max = v;
    }
  }
  const float d = max / static_cast<float>(five ? -16 : -8);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const uint16_t dh = f32_to_f16(d);
  if (!f16_is_finite(dh)) return {"d", d};
  store_f16(y, dh);
  const float offset = five ? 16.5f : 8.5f;
  const int top = five ? 31 : 15;
  uint8_t* qs = y + (five ? 6 : 2);
  uint32_t qh = 0;
  for (int j = 0; j < qk / 2; ++j) {
    const float x0 = x[0 + j] * id;
    const float x1 = x[qk / 2 + j] * id;
    const uint8_t xi0 = static_cast<uint8_t>(std::min(top, static_cast<int>(to_int8_like_x86(x0 + offset))));
    const uint8_t xi1 = static_cast<uint8_t>(std::min(top, static_cast<int>(to_int8_like_x86(x1 + offset))));
    if (!five) {
      qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
      continue;
    }
    qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
    // the fifth bit of value j goes to bit j of qh, of value j+16 to bit j+16
    qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
    qh |= ((xi1 & 0x10u) >> 4) << (j + qk / 2);
  }
  if (five) std::memcpy(y + 2, &qh, 4);  // little-endian host assumed, as in kquant.cpp
  return {};
}

// Q4_K (five false) and Q5_K: per 32-value sub-block a (scale, min) from make_qkx2_quants with weights
// av_x + |x| (av_x the sub-block's RMS), both quantised to 6 bits against the block's largest (d = max/63,
// dmin = max_min/63), then every value re-quantised against the stored, rounded scales.
// quantize_row_q4_K_ref / quantize_row_q5_K_ref.
Overflow quantize_block_q45_k(const float* x, uint8_t* y, bool five) {
  const int nmax = five ? 31 : 15;
  static_assert(kQK / 32 == kSearchLanes, "one search lane per sub-block");
  uint8_t L[kQK];
  // The 8 sub-blocks' values, weights and levels lane-minor (xt[l * 8 + j] is value l of sub-block j): the
  // search runs all sub-blocks at once, one per lane (kquant_search.h).
  float xt[kQK];
  float weights[kQK];
  uint8_t Lt[kQK];
  float mins[kQK / 32];
  float scales[kQK / 32];
  float max_scale = 0;  // as we are deducting the min, scales are always positive
  float max_min = 0;
  for (int j = 0; j < kQK / 32; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) {
      xt[l * kSearchLanes + j] = x[32 * j + l];
      weights[l * kSearchLanes + j] = av_x + std::fabs(x[32 * j + l]);
    }
  }
  if (five) {
    kquant::make_qkx2_quants_lanes(32, 31, xt, weights, Lt, scales, mins, -0.5f, 0.1f, 15);
  } else {
    kquant::make_qkx2_quants_lanes(32, 15, xt, weights, Lt, scales, mins, -1.f, 0.1f, 20);
  }
  for (int j = 0; j < kQK / 32; ++j) {
    for (int l = 0; l < 32; ++l) L[32 * j + l] = Lt[l * kSearchLanes + j];
    const float scale = scales[j];
    if (scale > max_scale) max_scale = scale;
    const float min = mins[j];
    if (min > max_min) max_min = min;
  }

  const uint16_t dh = f32_to_f16(max_scale / 63.f);
  const uint16_t dminh = f32_to_f16(max_min / 63.f);
  if (!f16_is_finite(dh)) return {"d", max_scale / 63.f};
  if (!f16_is_finite(dminh)) return {"dmin", max_min / 63.f};

  uint8_t* packed = y + 4;  // 12 bytes, layout as in get_scale_min_k4 (kquant.cpp)
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < kQK / 32; ++j) {
    uint8_t ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    uint8_t lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    ls = std::min<uint8_t>(63, ls);
    lm = std::min<uint8_t>(63, lm);
    if (j < 4) {
      packed[j] = ls;
      packed[j + 4] = lm;
    } else {
      packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] = static_cast<uint8_t>(packed[j - 4] | ((ls >> 4) << 6));
      packed[j - 0] = static_cast<uint8_t>(packed[j - 0] | ((lm >> 4) << 6));
    }
  }
  store_f16(y, dh);
  store_f16(y + 2, dminh);

  // Re-quantise against what the decoder will use. A sub-block whose rounded scale is 0 keeps the levels
  // make_qkx2_quants chose (they decode to -dmin*m whatever they are).
  for (int j = 0; j < kQK / 32; ++j) {
    uint8_t sc = 0, m = 0;
    if (j < 4) {
      sc = packed[j] & 63;
      m = packed[j + 4] & 63;
    } else {
      sc = static_cast<uint8_t>((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4));
      m = static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j - 0] >> 6) << 4));
    }
    const float d = load_f16(y) * static_cast<float>(sc);
    if (d == 0.0f) continue;
    const float dm = load_f16(y + 2) * static_cast<float>(m);
    for (int ii = 0; ii < 32; ++ii) {
      int l = nearest_int((x[32 * j + ii] + dm) / d);
      l = std::max(0, std::min(nmax, l));
      L[32 * j + ii] = static_cast<uint8_t>(l);
    }
  }

  if (!five) {
    uint8_t* q = y + 16;  // 4 groups of 32 bytes: sub-block 2g in the low nibbles, 2g+1 in the high
    for (int j = 0; j < kQK; j += 64) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
      q += 32;
    }
    return {};
  }
  uint8_t* qh = y + 16;  // bit s of qh[r]: bit 4 of value r of sub-block s
  uint8_t* ql = y + 48;
  std::memset(qh, 0, kQK / 8);
  uint8_t m1 = 1, m2 = 2;
  for (int n = 0; n < kQK; n += 64) {
    for (int j = 0; j < 32; ++j) {
      int l1 = L[n + j];
      if (l1 > 15) {
        l1 -= 16;
        qh[j] = static_cast<uint8_t>(qh[j] | m1);
      }
      int l2 = L[n + j + 32];
      if (l2 > 15) {
        l2 -= 16;
        qh[j] = static_cast<uint8_t>(qh[j] | m2);
      }
      ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
    }
    m1 = static_cast<uint8_t>(m1 << 2);
    m2 = static_cast<uint8_t>(m2 << 2);
    ql += 32;
  }
  return {};
}

// Q6_K: a signed scale per 16 values from make_qx_quants (levels -32..31), quantised to int8 against the
// one of largest magnitude (which maps to -128, d = its scale / -128), then every value re-quantised against
// the stored d * scale. quantize_row_q6_K_ref.
Overflow quantize_block_q6_k(const float* x, uint8_t* y) {
  int8_t L[kQK];
  float scales[kQK / 16];
  float max_scale = 0;
  float max_abs_scale = 0;
  // Sub-blocks 8h..8h+7 searched at once, one per lane, lane-minor as in quantize_block_q45_k.
  for (int h = 0; h < kQK / 16 / kSearchLanes; ++h) {
    float xt[16 * kSearchLanes];
    int8_t Lt[16 * kSearchLanes];
    for (int j = 0; j < kSearchLanes; ++j) {
      for (int l = 0; l < 16; ++l) xt[l * kSearchLanes + j] = x[16 * (h * kSearchLanes + j) + l];
    }
    kquant::make_qx_quants_lanes(16, 32, xt, Lt, scales + h * kSearchLanes);
    for (int j = 0; j < kSearchLanes; ++j) {
      for (int l = 0; l < 16; ++l) L[16 * (h * kSearchLanes + j) + l] = Lt[l * kSearchLanes + j];
    }
  }
  for (int ib = 0; ib < kQK / 16; ++ib) {
    const float scale = scales[ib];
    const float abs_scale = std::fabs(scale);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scale;
    }
  }
  if (max_abs_scale < kGroupMaxEps) {  // the whole block is (nearly) zero: all bytes 0, d = +0
    std::memset(y, 0, 210);
    return {};
  }
  const float iscale = -128.f / max_scale;
  const uint16_t dh = f32_to_f16(1.0f / iscale);
  if (!f16_is_finite(dh)) return {"d", 1.0f / iscale};
  store_f16(y + 208, dh);
  int8_t* sc = reinterpret_cast<int8_t*>(y + 192);
  for (int ib = 0; ib < kQK / 16; ++ib)
    sc[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));

  for (int j = 0; j < kQK / 16; ++j) {
    const float d = load_f16(y + 208) * static_cast<float>(sc[j]);
    if (d == 0.0f) continue;  // keeps make_qx_quants' levels, as ggml does
    for (int ii = 0; ii < 16; ++ii) {
      int l = nearest_int(x[16 * j + ii] / d);
      l = std::max(-32, std::min(31, l));
      L[16 * j + ii] = static_cast<int8_t>(l + 32);
    }
  }

  uint8_t* ql = y;
  uint8_t* qh = y + 128;
  for (int j = 0; j < kQK; j += 128) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t q1 = L[j + l + 0] & 0xF;
      const uint8_t q2 = L[j + l + 32] & 0xF;
      const uint8_t q3 = L[j + l + 64] & 0xF;
      const uint8_t q4 = L[j + l + 96] & 0xF;
      ql[l + 0] = static_cast<uint8_t>(q1 | (q3 << 4));
      ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
      qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                   ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
    }
    ql += 64;
    qh += 32;
  }
  return {};
}

// The largest magnitude a block of `type` can decode to (f16 scale 65504 at the largest level): Q4_0
// 8*65504, Q5_0 16*65504, Q4_K 63*15*65504 (d*sc*q; the min term, at most 63*65504, is smaller), Q5_K
// 63*31*65504, Q6_K 128*32*65504. Larger inputs are refused before anything is written: they could only be
// stored with an inf scale, and near 1e19 ggml's sums of squares overflow to NaN inside the search.
double largest_magnitude(gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kQ4_0:
      return 8 * kF16Max;
    case gguf::TensorType::kQ5_0:
      return 16 * kF16Max;
    case gguf::TensorType::kQ4_K:
      return 63 * 15 * kF16Max;
    case gguf::TensorType::kQ5_K:
      return 63 * 31 * kF16Max;
    default:
      return 128 * 32 * kF16Max;
  }
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

}  // namespace

Status quantize_row(gguf::TensorType type, const float* src, uint8_t* dst, int64_t n) {
  const uint32_t id = static_cast<uint32_t>(type);
  if (!kquant_is_supported(type)) {
    return make_error("quantize_row: expected Q4_0, Q5_0, Q4_K, Q5_K or Q6_K, got " + gguf::type_label(id));
  }
  const std::string name = gguf::type_label(id);
  uint64_t block_elems = 0, block_bytes = 0;
  if (!gguf::type_block_size(id, &block_elems, &block_bytes)) {
    return make_error("quantize_row: no block size for " + name);
  }
  if (n < 0 || static_cast<uint64_t>(n) % block_elems != 0) {
    return make_error("quantize_row: expected a count that is a non-negative multiple of the " + name +
                      " block size " + std::to_string(block_elems) + ", got " + std::to_string(n));
  }
  const double limit = largest_magnitude(type);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(src[i])) {
      return make_error("quantize_row " + name + ": value " + std::to_string(i) + " is " + num(src[i]) +
                        "; expected finite values");
    }
    if (std::fabs(static_cast<double>(src[i])) > limit) {
      return make_error("quantize_row " + name + ": value " + std::to_string(i) + " is " + num(src[i]) +
                            "; " + name + " holds magnitudes up to " + num(limit),
                        "keep this tensor in F32, F16 or BF16");
    }
  }
  const int64_t nb = n / static_cast<int64_t>(block_elems);
  for (int64_t b = 0; b < nb; ++b) {
    const float* x = src + b * static_cast<int64_t>(block_elems);
    uint8_t* y = dst + b * static_cast<int64_t>(block_bytes);
    Overflow o;
    switch (type) {
      case gguf::TensorType::kQ4_0:
        o = quantize_block_q4_0_q5_0(x, y, false);
        break;
      case gguf::TensorType::kQ5_0:
        o = quantize_block_q4_0_q5_0(x, y, true);
        break;
      case gguf::TensorType::kQ4_K:
        o = quantize_block_q45_k(x, y, false);
        break;
      case gguf::TensorType::kQ5_K:
        o = quantize_block_q45_k(x, y, true);
        break;
      default:
        o = quantize_block_q6_k(x, y);
        break;
    }
    if (o.field != nullptr) {
      const int64_t first = b * static_cast<int64_t>(block_elems);
      return make_error("quantize_row " + name + ": block " + std::to_string(b) + " (values " +
                            std::to_string(first) + ".." +
                            std::to_string(first + static_cast<int64_t>(block_elems) - 1) + ") needs scale " +
                            o.field + " = " + num(o.value) + ", beyond f16's largest " + num(kF16Max),
                        "keep this tensor in F32, F16 or BF16");
    }
  }
  return Status::success();
}

Status encode_values(DType t, const float* x, uint8_t* out, int64_t n) {
  if (const std::optional<gguf::TensorType> block = dtype_block_format(t))
    return quantize_row(*block, x, out, n);
  encode_row(t, x, out, n);
  return {};
}

}  // namespace qc
