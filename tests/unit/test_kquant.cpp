// Q4_0, Q5_0, Q4_K, Q5_K, Q6_K dequantisation (model/kquant.h).
//
// Expectations never call the code under test: hand-built blocks are checked against values written out
// from the format description (ggml-common.h block structs), and random blocks against a second, naive
// decoder below that reads every field bit by bit, value by value. Both use the same float operations in
// the same order as ggml's dequantize_row_* ((d*sc)*q - dmin*m; (d*sc)*q), so every comparison is exact:
// the tolerance is zero.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gguf/types.h"
#include "model/kquant.h"

namespace qc {
namespace {

using gguf::TensorType;
using Bytes = std::vector<uint8_t>;

// ---- helpers written from the format description ----

// IEEE half -> float by the textbook formula (not quant.h's bit manipulation).
float half(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  EXPECT_NE(exp, 31) << "test blocks use finite scales only";
  const double mag = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return static_cast<float>(sign ? -mag : mag);
}

void put_u16(Bytes& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v & 0xff);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}

uint16_t get_u16(const Bytes& b, size_t at) {
  return static_cast<uint16_t>(b[at] | (b[at + 1] << 8));
}

// `count` bits of `b` starting at bit `first` of byte `byte` (bit 0 = least significant).
int bits(const Bytes& b, size_t byte, int first, int count) {
  int v = 0;
  for (int k = 0; k < count; ++k) v |= ((b[byte] >> (first + k)) & 1) << k;
  return v;
}

std::vector<float> decode(TensorType t, const Bytes& src, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), std::nanf(""));
  const Status s = dequantize_row(t, src.data(), out.data(), n);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
  return out;
}

constexpr uint16_t kOne = 0x3c00;        // 1.0
constexpr uint16_t kHalf = 0x3800;       // 0.5
constexpr uint16_t kMinusHalf = 0xb800;  // -0.5

// ---- (a) hand-built blocks ----

TEST(KQuant, Q4_0LowNibblesFirstThenHighMinus8) {
  // Q4_0: f16 d, then 16 bytes; value j (< 16) is the low nibble of byte j, value 16+j its high nibble.
  for (const uint16_t d : {kOne, kMinusHalf}) {
    Bytes b(18);
    put_u16(b, 0, d);
    for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    const std::vector<float> y = decode(TensorType::kQ4_0, b, 32);
    const float df = d == kOne ? 1.0f : -0.5f;
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(y[j], df * static_cast<float>(j - 8)) << j;
      EXPECT_EQ(y[16 + j], df * static_cast<float>(7 - j)) << 16 + j;
    }
  }
  Bytes b(18);
  put_u16(b, 0, kOne);
  b[2] = 0xf0;  // value 0 = 0 - 8, value 16 = 15 - 8
  const std::vector<float> y = decode(TensorType::kQ4_0, b, 32);
  EXPECT_EQ(y[0], -8.0f);
  EXPECT_EQ(y[16], 7.0f);
  EXPECT_EQ(y[1], -8.0f);
}

TEST(KQuant, Q5_0FifthBitIsBitJOfQh) {
  // Q5_0: f16 d, qh (4 bytes, little-endian: bit j = bit 4 of value j), 16 nibble bytes as in Q4_0.
  const uint32_t qh = 0xa5c3f00fu;
  Bytes b(22);
  put_u16(b, 0, kOne);
  for (int k = 0; k < 4; ++k) b[2 + k] = static_cast<uint8_t>(qh >> (8 * k));
  for (int j = 0; j < 16; ++j) b[6 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const std::vector<float> y = decode(TensorType::kQ5_0, b, 32);
  for (int e = 0; e < 32; ++e) {
    const int low = e < 16 ? e : 15 - (e - 16);
    const int high = (qh >> e) & 1;
    EXPECT_EQ(y[e], static_cast<float>(low + 16 * high - 16)) << e;
  }
  // Spot values (qh bytes 0x0f, 0xf0, 0xc3, 0xa5): bit 0 set, nibble 0 -> 16 - 16 = 0; bit 4 clear, nibble 4
  // -> 4 - 16 = -12; bit 16 set, nibble 15 -> 31 - 16 = 15; bit 18 clear, nibble 13 -> -3; bit 31 set,
  // nibble 0 -> 0.
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[4], -12.0f);
  EXPECT_EQ(y[16], 15.0f);
  EXPECT_EQ(y[18], -3.0f);
  EXPECT_EQ(y[31], 0.0f);
}

// The 8 (scale, min) pairs below, packed by hand into the 12 scale bytes of Q4_K/Q5_K:
//   sub-blocks 0-3: byte j = scale (low 6 bits), byte j+4 = min (low 6 bits);
//   sub-blocks 4-7: byte j+4 = scale low nibble | min low nibble << 4, scale bits 4-5 in bits 6-7 of byte
//   j-4, min bits 4-5 in bits 6-7 of byte j.
// (the top bits of each scale and its min differ, so swapping the two sources is caught)
// scale 17 = 0b01'0001, min 50 = 0b11'0010 (j=4): byte 8 = 0x21, byte 0 |= 0x40, byte 4 |= 0xc0
// scale 33 = 0b10'0001, min  2 = 0b00'0010 (j=5): byte 9 = 0x21, byte 1 |= 0x80, byte 5 |= 0x00
// scale 49 = 0b11'0001, min 18 = 0b01'0010 (j=6): byte 10 = 0x21, byte 2 |= 0xc0, byte 6 |= 0x40
// scale 63 = 0b11'1111, min 46 = 0b10'1110 (j=7): byte 11 = 0xef, byte 3 |= 0xc0, byte 7 |= 0x80
constexpr int kScale[8] = {1, 2, 3, 4, 17, 33, 49, 63};
constexpr int kMin[8] = {5, 6, 7, 8, 50, 2, 18, 46};
constexpr uint8_t kPackedScales[12] = {0x41, 0x82, 0xc3, 0xc4, 0xc5, 0x06,
                                       0x47, 0x88, 0x21, 0x21, 0x21, 0xef};

// The same packing as a loop (used for the other scale sets below), checked against the hand-packed bytes.
void pack_scales(const int* sc, const int* m, uint8_t* out) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] = static_cast<uint8_t>(out[j] | sc[j]);
      out[j + 4] = static_cast<uint8_t>(out[j + 4] | m[j]);
    } else {
      out[j + 4] = static_cast<uint8_t>((sc[j] & 0xf) | ((m[j] & 0xf) << 4));
      out[j - 4] = static_cast<uint8_t>(out[j - 4] | ((sc[j] >> 4) << 6));
      out[j] = static_cast<uint8_t>(out[j] | ((m[j] >> 4) << 6));
    }
  }
}

TEST(KQuant, ScalePackingByHandMatchesLoop) {
  uint8_t packed[12];
  pack_scales(kScale, kMin, packed);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(packed[i], kPackedScales[i]) << i;
}

// Q4_K block: d, dmin, 12 scale bytes, then 4 groups of 32 bytes; in group g, byte l's low nibble is value
// l of sub-block 2g, its high nibble value l of sub-block 2g+1. Nibble pattern: value r of an even
// sub-block is r % 16, of an odd sub-block 15 - r % 16.
int q4k_nibble(int s, int r) {
  return s % 2 == 0 ? r % 16 : 15 - r % 16;
}

Bytes q4k_block(uint16_t d, uint16_t dmin, const uint8_t* scales) {
  Bytes b(144);
  put_u16(b, 0, d);
  put_u16(b, 2, dmin);
  std::memcpy(&b[4], scales, 12);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l)
      b[16 + 32 * g + l] = static_cast<uint8_t>(q4k_nibble(2 * g, l) | (q4k_nibble(2 * g + 1, l) << 4));
  }
  return b;
}

TEST(KQuant, Q4_KAllEightSubBlockScalesAndMins) {
  // d = 1, dmin = 0.5: x = scale * q - 0.5 * min, all exact in float.
  const std::vector<float> y = decode(TensorType::kQ4_K, q4k_block(kOne, kHalf, kPackedScales), 256);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32, r = e % 32;
    EXPECT_EQ(y[e], static_cast<float>(kScale[s] * q4k_nibble(s, r)) - 0.5f * static_cast<float>(kMin[s]))
        << "value " << e << " sub-block " << s;
  }
  // Spot values: sub-block 7 (scale 63, min 46), value 0 has nibble 15: 63*15 - 23 = 922.
  EXPECT_EQ(y[224], 922.0f);
  // Sub-block 4 (scale 17, min 50), value 1 has nibble 1: 17 - 25 = -8.
  EXPECT_EQ(y[129], -8.0f);
}

TEST(KQuant, Q4_KZeroDminAndFullRangeScales) {
  // dmin = 0 (mins ignored), scales at the 6-bit extremes in both halves of the packing.
  const int sc[8] = {63, 0, 32, 31, 63, 0, 32, 31};
  const int m[8] = {63, 63, 63, 63, 63, 63, 63, 63};
  uint8_t packed[12];
  pack_scales(sc, m, packed);
  const std::vector<float> y = decode(TensorType::kQ4_K, q4k_block(kOne, 0x0000, packed), 256);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32;
    EXPECT_EQ(y[e], static_cast<float>(sc[s] * q4k_nibble(s, e % 32))) << e;
  }
}

TEST(KQuant, Q5_KHighBitOfSubBlockSIsBitSOfQh) {
  // Q5_K: as Q4_K with qh[32] between the scales and the nibbles: bit s of qh[r] is bit 4 of value r of
  // sub-block s.
  Bytes b(176);
  put_u16(b, 0, kOne);
  put_u16(b, 2, kHalf);
  std::memcpy(&b[4], kPackedScales, 12);
  for (int r = 0; r < 32; ++r) b[16 + r] = static_cast<uint8_t>(r * 37 + 11);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l)
      b[48 + 32 * g + l] = static_cast<uint8_t>(q4k_nibble(2 * g, l) | (q4k_nibble(2 * g + 1, l) << 4));
  }
  const std::vector<float> y = decode(TensorType::kQ5_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32, r = e % 32;
    const int high = (((r * 37 + 11) & 0xff) >> s) & 1;
    const int q = q4k_nibble(s, r) + 16 * high;
    EXPECT_EQ(y[e], static_cast<float>(kScale[s] * q) - 0.5f * static_cast<float>(kMin[s])) << e;
  }
  // Spot value: qh[0] = 11 = 0b1011: sub-blocks 0, 1, 3 get bit 4. Value 96 (sub-block 3, r = 0):
  // nibble 15 + 16 = 31, scale 4, min 8: 124 - 4 = 120.
  EXPECT_EQ(y[96], 120.0f);
}

// Q6_K packing written from the description: two halves of 128 values; in half h, position p, quarter
// k = p / 32, l = p % 32: the low 4 bits go to ql[64h + l + 32 (k odd)] (low nibble for k < 2, high for
// k >= 2), the top 2 bits to bits 2k..2k+1 of qh[32h + l]. Then the int8 scales[16] and f16 d.
Bytes q6k_block(const int* v6, const int8_t* scales, uint16_t d) {
  Bytes b(210, 0);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, p = e % 128, k = p / 32, l = p % 32;
    const size_t qli = static_cast<size_t>(64 * h + l + (k % 2) * 32);
    b[qli] = static_cast<uint8_t>(b[qli] | ((v6[e] & 0xf) << (k >= 2 ? 4 : 0)));
    const size_t qhi = static_cast<size_t>(128 + 32 * h + l);
    b[qhi] = static_cast<uint8_t>(b[qhi] | ((v6[e] >> 4) << (2 * k)));
  }
  for (int i = 0; i < 16; ++i) b[192 + i] = static_cast<uint8_t>(scales[i]);
  put_u16(b, 208, d);
  return b;
}

TEST(KQuant, Q6_KLayoutOffsetAndSignedScales) {
  const int8_t scales[16] = {1, -1, 2, -3, 5, -8, 13, -21, 34, -55, 89, 127, -128, 0, 7, -7};
  int v6[256];
  for (int e = 0; e < 256; ++e) v6[e] = (e * 7 + 3) % 64;
  const std::vector<float> y = decode(TensorType::kQ6_K, q6k_block(v6, scales, kOne), 256);
  for (int e = 0; e < 256; ++e) {
    EXPECT_EQ(y[e], static_cast<float>(scales[e / 16] * (v6[e] - 32))) << e;
  }
  // All-zero quants decode to -32 * scale (the offset), 32 to 0, 63 to 31 * scale.
  int zeros[256] = {};
  int mid[256], top[256];
  for (int e = 0; e < 256; ++e) mid[e] = 32, top[e] = 63;
  const std::vector<float> yz = decode(TensorType::kQ6_K, q6k_block(zeros, scales, kHalf), 256);
  const std::vector<float> ym = decode(TensorType::kQ6_K, q6k_block(mid, scales, kHalf), 256);
  const std::vector<float> yt = decode(TensorType::kQ6_K, q6k_block(top, scales, kHalf), 256);
  for (int e = 0; e < 256; ++e) {
    EXPECT_EQ(yz[e], -16.0f * scales[e / 16]) << e;
    EXPECT_EQ(ym[e], 0.0f) << e;
    EXPECT_EQ(yt[e], 15.5f * scales[e / 16]) << e;
  }
  EXPECT_EQ(yz[12 * 16], 2048.0f);  // scale -128: 0.5 * -128 * -32
  // A literal block: only ql[0] = 0x21 and qh[0] = 0b11'10'01'00 set, d = 1, scales all 1. Half 0, l = 0:
  // value 0 = 1 | 0 << 4 = 1, value 32 = ql[32] low (0) | 1 << 4 = 16, value 64 = 2 | 2 << 4 = 34,
  // value 96 = 0 | 3 << 4 = 48; minus 32 each.
  Bytes lit(210, 0);
  lit[0] = 0x21;
  lit[128] = 0xe4;
  for (int i = 0; i < 16; ++i) lit[192 + i] = 1;
  put_u16(lit, 208, kOne);
  const std::vector<float> yl = decode(TensorType::kQ6_K, lit, 256);
  EXPECT_EQ(yl[0], -31.0f);
  EXPECT_EQ(yl[32], -16.0f);
  EXPECT_EQ(yl[64], 2.0f);
  EXPECT_EQ(yl[96], 16.0f);
  EXPECT_EQ(yl[1], -32.0f);
  EXPECT_EQ(yl[128], -32.0f);
}

// ---- (b) random blocks against a naive decoder ----

// Naive decoders: one value at a time, every field located from the struct description.
float naive_q4_0(const Bytes& b, size_t base, int e) {
  const float d = half(get_u16(b, base));
  const int q = bits(b, base + 2 + static_cast<size_t>(e % 16), e < 16 ? 0 : 4, 4);
  return static_cast<float>(q - 8) * d;
}

float naive_q5_0(const Bytes& b, size_t base, int e) {
  const float d = half(get_u16(b, base));
  const int high = bits(b, base + 2 + static_cast<size_t>(e / 8), e % 8, 1);
  const int low = bits(b, base + 6 + static_cast<size_t>(e % 16), e < 16 ? 0 : 4, 4);
  return static_cast<float>(low + 16 * high - 16) * d;
}

// 6-bit scale (want_min false) or min of sub-block s from the 12 bytes at `at`.
int naive_scale6(const Bytes& b, size_t at, int s, bool want_min) {
  const size_t off = want_min ? 4 : 0;
  if (s < 4) return bits(b, at + static_cast<size_t>(s) + off, 0, 6);
  const int low4 = bits(b, at + static_cast<size_t>(s) + 4, want_min ? 4 : 0, 4);
  const int high2 = bits(b, at + static_cast<size_t>(s) - 4 + off, 6, 2);
  return low4 + 16 * high2;
}

float naive_q45_k(const Bytes& b, size_t base, int e, bool five) {
  const float d = half(get_u16(b, base));
  const float dmin = half(get_u16(b, base + 2));
  const int s = e / 32, r = e % 32;
  const size_t qs = base + (five ? 48 : 16);
  int q = bits(b, qs + static_cast<size_t>(32 * (s / 2) + r), s % 2 == 0 ? 0 : 4, 4);
  if (five) q += 16 * bits(b, base + 16 + static_cast<size_t>(r), s, 1);
  const float dl = d * static_cast<float>(naive_scale6(b, base + 4, s, false));
  const float ml = dmin * static_cast<float>(naive_scale6(b, base + 4, s, true));
  return dl * static_cast<float>(q) - ml;
}

float naive_q6_k(const Bytes& b, size_t base, int e) {
  const float d = half(get_u16(b, base + 208));
  const int h = e / 128, p = e % 128, k = p / 32, l = p % 32;
  const int low = bits(b, base + static_cast<size_t>(64 * h + l + (k % 2) * 32), k >= 2 ? 4 : 0, 4);
  const int high = bits(b, base + 128 + static_cast<size_t>(32 * h + l), 2 * k, 2);
  const int8_t sc = static_cast<int8_t>(b[base + 192 + static_cast<size_t>(e / 16)]);
  return d * static_cast<float>(sc) * static_cast<float>(low + 16 * high - 32);
}

// A random finite f16: exponent field 0..30 (subnormals included, no inf/NaN), random sign and mantissa.
uint16_t random_half(std::mt19937& rng) {
  const uint32_t exp = rng() % 31, mant = rng() & 0x3ff, sign = rng() & 1;
  return static_cast<uint16_t>((sign << 15) | (exp << 10) | mant);
}

struct RandomCase {
  TensorType type;
  int block_elems;
  size_t block_bytes;
  std::vector<size_t> f16_offsets;  // the block's f16 fields, kept finite
};

TEST(KQuant, RandomBlocksMatchNaiveDecoderExactly) {
  const std::vector<RandomCase> cases = {
      {TensorType::kQ4_0, 32, 18, {0}},      {TensorType::kQ5_0, 32, 22, {0}},
      {TensorType::kQ4_K, 256, 144, {0, 2}}, {TensorType::kQ5_K, 256, 176, {0, 2}},
      {TensorType::kQ6_K, 256, 210, {208}},
  };
  std::mt19937 rng(20261204);
  for (const RandomCase& c : cases) {
    SCOPED_TRACE(gguf::type_label(static_cast<uint32_t>(c.type)));
    for (int trial = 0; trial < 20; ++trial) {
      const int n_blocks = 1 + trial % 4;
      Bytes b(c.block_bytes * static_cast<size_t>(n_blocks));
      for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
      for (int i = 0; i < n_blocks; ++i) {
        for (size_t off : c.f16_offsets)
          put_u16(b, c.block_bytes * static_cast<size_t>(i) + off, random_half(rng));
      }
      const int64_t n = static_cast<int64_t>(c.block_elems) * n_blocks;
      const std::vector<float> y = decode(c.type, b, n);
      int mismatches = 0;
      for (int64_t v = 0; v < n; ++v) {
        const size_t base = c.block_bytes * static_cast<size_t>(v / c.block_elems);
        const int e = static_cast<int>(v % c.block_elems);
        float want = 0.0f;
        switch (c.type) {
          case TensorType::kQ4_0:
            want = naive_q4_0(b, base, e);
            break;
          case TensorType::kQ5_0:
            want = naive_q5_0(b, base, e);
            break;
          case TensorType::kQ4_K:
            want = naive_q45_k(b, base, e, false);
            break;
          case TensorType::kQ5_K:
            want = naive_q45_k(b, base, e, true);
            break;
          default:
            want = naive_q6_k(b, base, e);
            break;
        }
        ASSERT_FALSE(std::isnan(want));
        if (y[static_cast<size_t>(v)] != want && ++mismatches <= 5) {
          ADD_FAILURE() << "trial " << trial << " value " << v << ": got " << y[static_cast<size_t>(v)]
                        << ", want " << want;
        }
      }
      EXPECT_EQ(mismatches, 0) << "trial " << trial;
    }
  }
}

// ---- (c) errors and the type table ----

TEST(KQuant, RefusesOtherTypesAndPartialBlocks) {
  const Bytes src(210 * 2, 0x55);
  std::vector<float> dst(512, 42.0f);
  struct Bad {
    TensorType type;
    int64_t n;
    std::string expect;
  };
  const std::vector<Bad> cases = {
      {TensorType::kQ8_0, 32, "got Q8_0"},
      {TensorType::kQ4_1, 32, "got Q4_1"},
      {TensorType::kQ2_K, 256, "got Q2_K"},
      {TensorType::kF32, 1, "got F32"},
      {static_cast<TensorType>(99), 32, "got type#99"},
      {TensorType::kQ4_0, 31, "Q4_0 block size 32, got 31"},
      {TensorType::kQ5_0, 48, "Q5_0 block size 32, got 48"},
      {TensorType::kQ4_K, 128, "Q4_K block size 256, got 128"},
      {TensorType::kQ5_K, 300, "Q5_K block size 256, got 300"},
      {TensorType::kQ6_K, -256, "Q6_K block size 256, got -256"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.expect);
    const Status s = dequantize_row(c.type, src.data(), dst.data(), c.n);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find(c.expect), std::string::npos) << s.error().message;
  }
  for (float v : dst) ASSERT_EQ(v, 42.0f) << "an error must write nothing";
  // Zero values is a valid empty row.
  EXPECT_TRUE(dequantize_row(TensorType::kQ6_K, src.data(), dst.data(), 0).ok());
  EXPECT_EQ(dst[0], 42.0f);
  EXPECT_FALSE(kquant_is_supported(TensorType::kQ8_0));
  EXPECT_TRUE(kquant_is_supported(TensorType::kQ5_K));
}

TEST(KQuant, GgufTypeTableSizes) {
  // ggml ids, names and geometry (ggml-common.h static_asserts: 2+16, 2+4+16, 4+12+128, 4+12+128+32,
  // 128+64+16+2 bytes).
  struct Row {
    uint32_t id;
    const char* name;
    uint64_t elems, bytes;
  };
  for (const Row& r : {Row{2, "Q4_0", 32, 18}, Row{6, "Q5_0", 32, 22}, Row{12, "Q4_K", 256, 144},
                       Row{13, "Q5_K", 256, 176}, Row{14, "Q6_K", 256, 210}}) {
    SCOPED_TRACE(r.name);
    uint64_t elems = 0, bytes = 0;
    ASSERT_TRUE(gguf::type_block_size(r.id, &elems, &bytes));
    EXPECT_EQ(elems, r.elems);
    EXPECT_EQ(bytes, r.bytes);
    EXPECT_EQ(gguf::type_name(r.id), r.name);
    const uint64_t ne[2] = {r.elems * 3, 5};
    uint64_t nbytes = 0;
    EXPECT_EQ(gguf::check_tensor_shape(r.id, ne, 2, &nbytes), "");
    EXPECT_EQ(nbytes, 3 * r.bytes * 5);
    const uint64_t bad[1] = {r.elems + 16};
    EXPECT_NE(gguf::check_tensor_shape(r.id, bad, 1, &nbytes).find(std::string(r.name) + " block size"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace qc
