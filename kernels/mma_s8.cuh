// Int8 tensor-core products of one Q8_0 block: mma.sync m16n8k32 (sm_80+) with s8 operands and s32
// accumulation, 16 x 8 exact dot products of 32 int8 pairs each. Shared by the prompt path's GEMM
// (gemm_q8.cu) and the decode GEMV on tensor cores (gemv_q8/gemv_q8_mma.cu).
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k32", .s8; g = lane / 4, t = lane % 4):
//   A 16x32 (row): a0 (row g, k 4t..4t+3), a1 (row g+8, k 4t..), a2 (row g, k 16+4t..), a3 (g+8, 16+4t..)
//   B 32x8 (col):  b0 (k 4t.., col g), b1 (k 16+4t.., col g)
//   C 16x8 s32:    d0, d1 (row g, cols 2t, 2t+1), d2, d3 (row g+8, cols 2t, 2t+1)
//
// int32 -> f32 without a conversion instruction: the mma accumulates onto the bit pattern of 1.5 * 2^23,
// so the int32 result read as f32 is 1.5 * 2^23 + dot exactly (|dot| <= 32 * 127 * 127 < 2^22 keeps the
// sum inside the binade where f32 steps are 1); subtracting 1.5 * 2^23 is exact too. One FADD instead of
// an I2F, which runs on the much narrower conversion pipe.
#pragma once

#include <cstdint>

namespace qc::gpu {

inline constexpr int kDotBiasBits = 0x4B400000;  // 1.5 * 2^23 as f32
inline constexpr float kDotBias = 12582912.0f;

// d = a * b + 1.5 * 2^23 (as int32 bits): 16 x 8 outputs of one 32-deep block.
__device__ __forceinline__ void mma_biased(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %10, %10, %10};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(kDotBiasBits));
}
// d = a * b + c: a second 32-deep product added onto a first one's biased sums (two half-blocks of one
// Q8_0 block, each taken by a different pair of lanes). The sum stays exact while |total dot| < 2^22.
__device__ __forceinline__ void mma_biased_add(int (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float unbias(int d) {
  return __fsub_rn(__int_as_float(d), kDotBias);  // exact: the dot product as f32
}

}  // namespace qc::gpu
