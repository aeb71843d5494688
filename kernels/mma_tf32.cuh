// TF32 tensor-core products for f32 data: mma.sync m16n8k8 (sm_80+) with f32 accumulation, each operand
// split into a TF32 high part and a TF32 remainder ("3xTF32": hi*hi + hi*lo + lo*hi, lo*lo dropped). The
// split keeps ~21 of f32's 24 significand bits per product (the dropped lo*lo term is < 2^-22 of it), so
// a product is f32-accurate up to the accumulation order, at 3 instructions instead of 1.
//
// Fragments (PTX ISA, "Matrix fragments for mma.m16n8k8", .tf32), g = lane / 4, t = lane % 4:
//   A 16x8 (row):  a0 (g, t)  a1 (g+8, t)  a2 (g, t+4)  a3 (g+8, t+4)
//   B 8x8 (col):   b0 (t, g)  b1 (t+4, g)
//   C 16x8 f32:    c0 (g, 2t) c1 (g, 2t+1) c2 (g+8, 2t) c3 (g+8, 2t+1)
// mma.sync is deterministic: the same fragments give the same bits.
#pragma once

#include <cstdint>

namespace qc::gpu {

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // Not volatile: a pure function of its operands, free to be scheduled like any arithmetic (ptxas
  // reorders the SASS either way: the chunked GDN measured the same with volatile, PERFORMANCE.md).
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// d += a * b in 3xTF32 (the small terms first, so they are not absorbed by a large partial sum).
__device__ __forceinline__ void mma_f32x3(float (&d)[4], const float (&a)[4], const float (&b)[2]) {
  uint32_t ah[4], al[4], bh[2], bl[2];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    ah[i] = to_tf32(a[i]);
    al[i] = to_tf32(a[i] - __uint_as_float(ah[i]));
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    bh[i] = to_tf32(b[i]);
    bl[i] = to_tf32(b[i] - __uint_as_float(bh[i]));
  }
  mma_tf32(d, al, bh);
  mma_tf32(d, ah, bl);
  mma_tf32(d, ah, bh);
}

}  // namespace qc::gpu
