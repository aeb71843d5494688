// Device decode of llama.cpp's block formats (block_quant.h), 32 consecutive values of a row at a time: a
// "piece". A Q4_0 / Q5_0 block is one piece; a K-quant super-block of 256 values is eight, and piece s of
// a Q4_K / Q5_K block is exactly its sub-block s (one 6-bit scale and min), so a piece needs one scale.
//
// Exactness: every value is computed with the float operations of engine/model/kquant.cpp in the same
// order, with explicit round-to-nearest intrinsics so nvcc cannot contract d1 * q - m1 into an FMA (which
// would round once instead of twice): the GPU's dequantised weights are the CPU reference's bit for bit
// (tests/gpu/test_block_quant.cpp checks every type against qc::dequantize_row). The cost is one extra
// instruction per weight for the K types; the GEMV is bound by memory well before that matters.
//
// Loads: the widest the format's alignment allows, always through the read-only path (weights are written
// once at load). Q4_K (144 bytes) and Q5_K (176) blocks are 16-byte multiples, so their pieces load as
// 16-byte vectors when the matrix starts 16-byte aligned (callers guarantee it: the Carver aligns to 256);
// Q6_K (210), Q4_0 (18) and Q5_0 (22) blocks are only 2-byte aligned and load as 16-bit words.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "block_quant.h"

namespace qc::gpu {
namespace bq {

__device__ __forceinline__ float f16_bits(uint32_t bits16) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits16 & 0xffffu)));
}
__device__ __forceinline__ uint32_t ld_u16(const uint8_t* p) {
  return __ldg(reinterpret_cast<const unsigned short*>(p));
}
__device__ __forceinline__ uint4 ld_u128(const uint8_t* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}
// Byte i (0..15) of a 16-byte vector.
__device__ __forceinline__ uint32_t byte_of(const uint4& v, int i) {
  const uint32_t w = i < 4 ? v.x : i < 8 ? v.y : i < 12 ? v.z : v.w;
  return (w >> (8 * (i & 3))) & 0xffu;
}
// Byte i of 16-bit words.
__device__ __forceinline__ uint32_t byte_of(const uint32_t* w16, int i) {
  return (w16[i >> 1] >> (8 * (i & 1))) & 0xffu;
}

// Sub-block j's 6-bit scale and min from the 12 packed bytes (bytes 4..15 of the block header `h`):
// ggml-quants.c get_scale_min_k4.
__device__ __forceinline__ void scale_min_k4(const uint4& h, int j, uint32_t* sc, uint32_t* m) {
  auto q = [&](int i) { return byte_of(h, 4 + i); };
  if (j < 4) {
    *sc = q(j) & 63u;
    *m = q(j + 4) & 63u;
  } else {
    *sc = (q(j + 4) & 0xFu) | ((q(j - 4) >> 6) << 4);
    *m = (q(j + 4) >> 4) | ((q(j) >> 6) << 4);
  }
}

// Sub-block s's scale d1 = d * sc and offset m1 = dmin * m of a Q4_K / Q5_K block whose 16-byte header
// (d, dmin, the 12 packed scale bytes) is `h`: ggml's d1/m1, each rounded once.
__device__ __forceinline__ void k4_sub_block(const uint4& h, int s, float* d1, float* m1) {
  uint32_t sc, m;
  scale_min_k4(h, s, &sc, &m);
  *d1 = __fmul_rn(f16_bits(h.x), static_cast<float>(sc));
  *m1 = __fmul_rn(f16_bits(h.x >> 16), static_cast<float>(m));
}

}  // namespace bq

// Pieces per block.
__host__ __device__ constexpr int block_pieces(BlockType t) {
  return t == BlockType::kQ4_0 || t == BlockType::kQ5_0 ? 1 : 8;
}

// Values 32*s .. 32*s+31 of the block at `b` into v.
template <BlockType T>
__device__ __forceinline__ void decode_piece(const uint8_t* b, int s, float* v);

template <>
__device__ __forceinline__ void decode_piece<BlockType::kQ4_0>(const uint8_t* b, int, float* v) {
  uint32_t w[9];
#pragma unroll
  for (int i = 0; i < 9; ++i) w[i] = bq::ld_u16(b + 2 * i);
  const float d = bq::f16_bits(w[0]);
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const uint32_t q = bq::byte_of(w + 1, j);
    v[j] = __fmul_rn(static_cast<float>(static_cast<int>(q & 0xFu) - 8), d);
    v[j + 16] = __fmul_rn(static_cast<float>(static_cast<int>(q >> 4) - 8), d);
  }
}

template <>
__device__ __forceinline__ void decode_piece<BlockType::kQ5_0>(const uint8_t* b, int, float* v) {
  uint32_t w[11];
#pragma unroll
  for (int i = 0; i < 11; ++i) w[i] = bq::ld_u16(b + 2 * i);
  const float d = bq::f16_bits(w[0]);
  const uint32_t qh = w[1] | (w[2] << 16);
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const uint32_t q = bq::byte_of(w + 3, j);
    const uint32_t h0 = ((qh >> j) << 4) & 0x10u, h1 = (qh >> (j + 12)) & 0x10u;
    v[j] = __fmul_rn(static_cast<float>(static_cast<int>((q & 0xFu) | h0) - 16), d);
    v[j + 16] = __fmul_rn(static_cast<float>(static_cast<int>((q >> 4) | h1) - 16), d);
  }
}

template <>
__device__ __forceinline__ void decode_piece<BlockType::kQ4_K>(const uint8_t* b, int s, float* v) {
  const uint4 h = bq::ld_u128(b);
  const uint8_t* qs = b + 16 + (s >> 1) * 32;
  const uint4 q0 = bq::ld_u128(qs), q1 = bq::ld_u128(qs + 16);
  float d1, m1;
  bq::k4_sub_block(h, s, &d1, &m1);
  const int shift = (s & 1) * 4;
#pragma unroll
  for (int l = 0; l < 32; ++l) {
    const uint32_t q = (bq::byte_of(l < 16 ? q0 : q1, l & 15) >> shift) & 0xFu;
    v[l] = __fsub_rn(__fmul_rn(d1, static_cast<float>(q)), m1);
  }
}

template <>
__device__ __forceinline__ void decode_piece<BlockType::kQ5_K>(const uint8_t* b, int s, float* v) {
  const uint4 h = bq::ld_u128(b);
  const uint4 qh0 = bq::ld_u128(b + 16), qh1 = bq::ld_u128(b + 32);
  const uint8_t* qs = b + 48 + (s >> 1) * 32;
  const uint4 q0 = bq::ld_u128(qs), q1 = bq::ld_u128(qs + 16);
  float d1, m1;
  bq::k4_sub_block(h, s, &d1, &m1);
  const int shift = (s & 1) * 4;
#pragma unroll
  for (int l = 0; l < 32; ++l) {
    const uint32_t lo = (bq::byte_of(l < 16 ? q0 : q1, l & 15) >> shift) & 0xFu;
    const uint32_t hi = (bq::byte_of(l < 16 ? qh0 : qh1, l & 15) >> s) & 1u;
    v[l] = __fsub_rn(__fmul_rn(d1, static_cast<float>(lo + 16u * hi)), m1);
  }
}

template <>
__device__ __forceinline__ void decode_piece<BlockType::kQ6_K>(const uint8_t* b, int s, float* v) {
  const int half = s >> 2, p = s & 3;
  const uint8_t* ql = b + half * 64 + (p & 1) * 32;
  const uint8_t* qh = b + 128 + half * 32;
  uint32_t wl[16], wh[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    wl[i] = bq::ld_u16(ql + 2 * i);
    wh[i] = bq::ld_u16(qh + 2 * i);
  }
  // Scales: values l < 16 of this piece take scales[half*8 + 2p], the rest the next one (signed bytes).
  const uint32_t sc2 = bq::ld_u16(b + 192 + half * 8 + 2 * p);
  const float d = bq::f16_bits(bq::ld_u16(b + 208));
  const float ds0 = __fmul_rn(d, static_cast<float>(static_cast<int8_t>(sc2 & 0xffu)));
  const float ds1 = __fmul_rn(d, static_cast<float>(static_cast<int8_t>(sc2 >> 8)));
  const int nib = (p >> 1) * 4, hs = 2 * p;
#pragma unroll
  for (int l = 0; l < 32; ++l) {
    const uint32_t q = ((bq::byte_of(wl, l) >> nib) & 0xFu) | (((bq::byte_of(wh, l) >> hs) & 3u) << 4);
    v[l] = __fmul_rn(l < 16 ? ds0 : ds1, static_cast<float>(static_cast<int>(q) - 32));
  }
}

// A piece as integers for the dp4a GEMV: word i holds values 4i..4i+3 as signed bytes (low byte first,
// the order of the quantised activations' words), and value l = (l < 16 ? a0 : a1) * q_l - mn with the
// reference's factors rounded as it rounds them (a0 == a1 except for Q6_K's two sub-scales; mn = 0 except
// for Q4_K / Q5_K). So sum_l w_l x_l = a0 * dot(q[0..3], x) + a1 * dot(q[4..7], x) - mn * sum(x), with the
// dot products exact in integers.
struct IntPiece {
  int q[8];
  float a0, a1, mn;
};

namespace bq {
// Bits 0..3 of x to bit 4 of bytes 0..3 (Q5_0's fifth bit).
__device__ __forceinline__ uint32_t spread4_to_bit4(uint32_t x) {
  return ((x & 1u) << 4) | ((x & 2u) << 11) | ((x & 4u) << 18) | ((x & 8u) << 25);
}
__device__ __forceinline__ uint32_t word_u16(const uint32_t* w16, int i) { return w16[2 * i] | (w16[2 * i + 1] << 16); }
__device__ __forceinline__ uint32_t word_of(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
}  // namespace bq

// A piece's bytes as loaded (RawPiece<T>, from load_piece) and as integers (int_piece). The split lets a
// GEMV issue the next piece's loads before it decodes the current one: a raw piece is what a lane holds
// in flight (Q4_K 12 registers, Q5_K 20, Q6_K 20, Q4_0 9, Q5_0 11).
template <BlockType T>
struct RawPiece;

namespace bq {
// Where a GEMV reads a block's bytes from: global memory through the read-only path (weights are written
// once at load), or shared memory (a block the bulk copy engine staged there: gemv_block_stream.cu).
struct GlobalSrc {
  static __device__ __forceinline__ uint4 u128(const uint8_t* p) { return ld_u128(p); }
  static __device__ __forceinline__ uint32_t u32(const uint32_t* p) { return __ldg(p); }
  static __device__ __forceinline__ uint32_t u16(const uint8_t* p) { return ld_u16(p); }
};
struct SharedSrc {
  static __device__ __forceinline__ uint4 u128(const uint8_t* p) { return *reinterpret_cast<const uint4*>(p); }
  static __device__ __forceinline__ uint32_t u32(const uint32_t* p) { return *p; }
  static __device__ __forceinline__ uint32_t u16(const uint8_t* p) {
    return *reinterpret_cast<const unsigned short*>(p);
  }
};
// 32 bytes at a 2-byte aligned p as 9 aligned 4-byte words from p rounded down to 4 (realigned by
// words_from_9): reads up to 4 bytes past p + 32 and 2 before p; callers keep both inside the block (or the
// matrix, which starts 4-byte aligned).
// Src: where the bytes are (GlobalSrc, SharedSrc).
// The rounded-down pointer keeps p's provenance for shared memory (so nvcc emits shared, not generic, loads).
template <class Src>
__device__ __forceinline__ void ld_9_words(const uint8_t* p, uint32_t (&w)[9]) {
  const uint32_t* base =
      std::is_same_v<Src, GlobalSrc>
          ? reinterpret_cast<const uint32_t*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{3})
          : reinterpret_cast<const uint32_t*>(p - (reinterpret_cast<uintptr_t>(p) & 3u));
#pragma unroll
  for (int i = 0; i < 9; ++i) w[i] = Src::u32(base + i);
}
// The 8 words of the 32 bytes at p from the 9 ld_9_words loaded: a funnel shift by p's offset in its word.
__device__ __forceinline__ void words_from_9(const uint32_t (&w)[9], uint32_t shift_bits, uint32_t (&out)[8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i] = __funnelshift_r(w[i], w[i + 1], shift_bits);
}
}  // namespace bq

template <>
struct RawPiece<BlockType::kQ4_0> {
  uint32_t w[9];  // 16-bit words: d, 16 bytes of quants
};
template <>
struct RawPiece<BlockType::kQ5_0> {
  uint32_t w[11];  // 16-bit words: d, qh (2 words), 16 bytes of quants
};
template <>
struct RawPiece<BlockType::kQ4_K> {
  uint4 h, q0, q1;  // header (d, dmin, scales), the 32 quant bytes whose low or high nibbles are the piece
};
template <>
struct RawPiece<BlockType::kQ5_K> {
  uint4 h, qh0, qh1, q0, q1;  // header, the 32 high-bit bytes, the 32 low-nibble bytes
};
template <>
struct RawPiece<BlockType::kQ6_K> {
  uint32_t wl[9], wh[9];  // ql and qh's 32 bytes as 9 aligned words each (bq::ld_9_words)
  uint32_t sc2, d;        // the two signed sub-scales, d's f16 bits
  uint32_t shift;         // funnel shift realigning both (ql and qh sit at even multiples of 32 from the block)
};

// The raw bytes of piece s of the block at b, read from `Src` (bq::GlobalSrc: the weights in global memory).
// Q6_K: ql (32 bytes at offset 0..96 of the block) and qh (at 128..160) as realigned 4-byte words: the
// block is 2-byte aligned and the reads stay inside [block - 2, block + 196], inside the matrix for every
// block but the first, which is 4-byte aligned (no bytes before it are read).
template <BlockType T, class Src = bq::GlobalSrc>
__device__ __forceinline__ RawPiece<T> load_piece(const uint8_t* b, int s) {
  RawPiece<T> r;
  if constexpr (T == BlockType::kQ4_0) {
#pragma unroll
    for (int i = 0; i < 9; ++i) r.w[i] = Src::u16(b + 2 * i);
  } else if constexpr (T == BlockType::kQ5_0) {
#pragma unroll
    for (int i = 0; i < 11; ++i) r.w[i] = Src::u16(b + 2 * i);
  } else if constexpr (T == BlockType::kQ4_K) {
    const uint8_t* qs = b + 16 + (s >> 1) * 32;
    r = {Src::u128(b), Src::u128(qs), Src::u128(qs + 16)};
  } else if constexpr (T == BlockType::kQ5_K) {
    const uint8_t* qs = b + 48 + (s >> 1) * 32;
    r = {Src::u128(b), Src::u128(b + 16), Src::u128(b + 32), Src::u128(qs), Src::u128(qs + 16)};
  } else {
    const int half = s >> 2, sub = s & 3;
    const uint8_t* ql = b + half * 64 + (sub & 1) * 32;
    const uint8_t* qh = b + 128 + half * 32;
    bq::ld_9_words<Src>(ql, r.wl);
    bq::ld_9_words<Src>(qh, r.wh);
    r.sc2 = Src::u16(b + 192 + half * 8 + 2 * sub);
    r.d = Src::u16(b + 208);
    r.shift = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(b) & 2u) * 8u;
  }
  return r;
}

template <BlockType T>
__device__ __forceinline__ void int_piece(const RawPiece<T>& r, int s, IntPiece& p);

template <>
__device__ __forceinline__ void int_piece<BlockType::kQ4_0>(const RawPiece<BlockType::kQ4_0>& r, int, IntPiece& p) {
  p.a0 = p.a1 = bq::f16_bits(r.w[0]);
  p.mn = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t qs = bq::word_u16(r.w + 1, i);
    p.q[i] = static_cast<int>(__vsub4(qs & 0x0F0F0F0Fu, 0x08080808u));
    p.q[i + 4] = static_cast<int>(__vsub4((qs >> 4) & 0x0F0F0F0Fu, 0x08080808u));
  }
}

template <>
__device__ __forceinline__ void int_piece<BlockType::kQ5_0>(const RawPiece<BlockType::kQ5_0>& r, int, IntPiece& p) {
  p.a0 = p.a1 = bq::f16_bits(r.w[0]);
  p.mn = 0.0f;
  const uint32_t qh = r.w[1] | (r.w[2] << 16);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t qs = bq::word_u16(r.w + 3, i);
    p.q[i] = static_cast<int>(__vsub4((qs & 0x0F0F0F0Fu) | bq::spread4_to_bit4(qh >> (4 * i)), 0x10101010u));
    p.q[i + 4] =
        static_cast<int>(__vsub4(((qs >> 4) & 0x0F0F0F0Fu) | bq::spread4_to_bit4(qh >> (16 + 4 * i)), 0x10101010u));
  }
}

template <>
__device__ __forceinline__ void int_piece<BlockType::kQ4_K>(const RawPiece<BlockType::kQ4_K>& r, int s, IntPiece& p) {
  bq::k4_sub_block(r.h, s, &p.a0, &p.mn);
  p.a1 = p.a0;
  const int shift = (s & 1) * 4;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    p.q[i] = static_cast<int>((bq::word_of(i < 4 ? r.q0 : r.q1, i & 3) >> shift) & 0x0F0F0F0Fu);
}

template <>
__device__ __forceinline__ void int_piece<BlockType::kQ5_K>(const RawPiece<BlockType::kQ5_K>& r, int s, IntPiece& p) {
  bq::k4_sub_block(r.h, s, &p.a0, &p.mn);
  p.a1 = p.a0;
  const int shift = (s & 1) * 4;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint32_t lo = (bq::word_of(i < 4 ? r.q0 : r.q1, i & 3) >> shift) & 0x0F0F0F0Fu;
    const uint32_t hi = ((bq::word_of(i < 4 ? r.qh0 : r.qh1, i & 3) >> s) & 0x01010101u) << 4;
    p.q[i] = static_cast<int>(lo | hi);
  }
}

template <>
__device__ __forceinline__ void int_piece<BlockType::kQ6_K>(const RawPiece<BlockType::kQ6_K>& r, int s, IntPiece& p) {
  const int sub = s & 3;
  uint32_t wl[8], wh[8];
  bq::words_from_9(r.wl, r.shift, wl);
  bq::words_from_9(r.wh, r.shift, wh);
  const float d = bq::f16_bits(r.d);
  p.a0 = __fmul_rn(d, static_cast<float>(static_cast<int8_t>(r.sc2 & 0xffu)));
  p.a1 = __fmul_rn(d, static_cast<float>(static_cast<int8_t>(r.sc2 >> 8)));
  p.mn = 0.0f;
  const int nib = (sub >> 1) * 4, hs = 2 * sub;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint32_t lo = (wl[i] >> nib) & 0x0F0F0F0Fu;
    const uint32_t hi = ((wh[i] >> hs) & 0x03030303u) << 4;
    p.q[i] = static_cast<int>(__vsub4(lo | hi, 0x20202020u));
  }
}

// Load and decode in one step.
template <BlockType T>
__device__ __forceinline__ void int_piece(const uint8_t* b, int s, IntPiece& p) {
  int_piece<T>(load_piece<T>(b, s), s, p);
}

// The one map from a runtime BlockType to the templates: f(std::integral_constant<BlockType, T>{}) for
// T = t. Host code picks a kernel instantiation with it, device code a decode_piece (the type as an
// argument: dequantisation, embedding). Every instantiation of f must return the same type.
#pragma nv_exec_check_disable
template <class F>
__host__ __device__ __forceinline__ decltype(auto) with_block_type(BlockType t, F&& f) {
  using BT = BlockType;
  switch (t) {
    case BT::kQ4_0:
      return f(std::integral_constant<BT, BT::kQ4_0>{});
    case BT::kQ5_0:
      return f(std::integral_constant<BT, BT::kQ5_0>{});
    case BT::kQ4_K:
      return f(std::integral_constant<BT, BT::kQ4_K>{});
    case BT::kQ5_K:
      return f(std::integral_constant<BT, BT::kQ5_K>{});
    case BT::kQ6_K:
    default:
      return f(std::integral_constant<BT, BT::kQ6_K>{});
  }
}

__device__ __forceinline__ void decode_piece_any(BlockType t, const uint8_t* b, int s, float* v) {
  with_block_type(t, [&](auto type) { decode_piece<decltype(type)::value>(b, s, v); });
}

// Piece `piece` of row `row` (pieces counted along the row).
__device__ __forceinline__ const uint8_t* piece_block(const BlockWeights& w, int row, int piece) {
  const int per = block_pieces(w.type);
  return w.data + static_cast<size_t>(row) * w.row_bytes() + static_cast<size_t>(piece / per) * block_bytes(w.type);
}

}  // namespace qc::gpu
