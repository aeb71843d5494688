// What the token scan (gdn_prefill.cu) and the grouped scan (gdn_group.cu) share: one column of a value
// head's state held by a thread (rows 4 (g P + pp) + i, g < G, i < 4: P lanes a column), the staging of a
// tile's q|k rows and v columns into shared memory with cp.async (one thread's share, no commit), and the
// copy of the tile's raw o back over v in scratch.
#pragma once

#include <cstddef>

#include "cp_async.cuh"

namespace qc::gpu {

template <int G, int P>
__device__ __forceinline__ void load_state_column(float (&S)[G][4], const float* col, int dv, int pp) {
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int i = 0; i < 4; ++i) S[g][i] = col[static_cast<size_t>(4 * (g * P + pp) + i) * dv];
}

template <int G, int P>
__device__ __forceinline__ void store_state_column(const float (&S)[G][4], float* col, int dv, int pp) {
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int i = 0; i < 4; ++i) col[static_cast<size_t>(4 * (g * P + pp) + i) * dv] = S[g][i];
}

// Positions [t0, t0 + nt): q|k of key head kh (qk [M][Nk][2][DK]) into s_qk, and CW columns of v starting at
// column vcol of the rows of vo (stride ldv) into s_v, by T threads.
template <int DK, int CW, int T>
__device__ __forceinline__ void stage_qk_v(float (*s_qk)[2 * DK], float (*s_v)[CW], const float* qk,
                                           const float* vo, int nk, int kh, int ldv, int vcol, int t0, int nt,
                                           int tid) {
  constexpr int kQkChunks = 2 * DK / 4;
  for (int c = tid; c < nt * kQkChunks; c += T) {
    const int tt = c / kQkChunks, w = c % kQkChunks;
    cp_async16(&s_qk[tt][4 * w], qk + (static_cast<size_t>(t0 + tt) * nk + kh) * 2 * DK + 4 * w);
  }
  constexpr int kVChunks = CW / 4;
  for (int c = tid; c < nt * kVChunks; c += T) {
    const int tt = c / kVChunks, w = c % kVChunks;
    cp_async16(&s_v[tt][4 * w], vo + static_cast<size_t>(t0 + tt) * ldv + vcol + 4 * w);
  }
}

// The tile's raw o (s_o [nt][CW]) over v's columns vcol .. vcol + CW - 1 of rows t0 .. t0 + nt - 1: rows of
// tiles already staged only, this block's columns only (no other block reads them).
template <int CW, int T>
__device__ __forceinline__ void copy_out(const float (*s_o)[CW], float* vo, int ldv, int vcol, int t0, int nt,
                                         int tid) {
  for (int e = tid; e < nt * CW; e += T) {
    const int tt = e / CW, c = e % CW;
    vo[static_cast<size_t>(t0 + tt) * ldv + vcol + c] = s_o[tt][c];
  }
}

}  // namespace qc::gpu
