// What the token scan (gdn_prefill.cu) and the grouped scan (gdn_group.cu) share: their tiling and launch
// grid, one column of a value head's state held by a thread (rows 4 (g P + pp) + i, g < G, i < 4: P lanes a
// column), the staging of a tile's q|k rows and v columns into shared memory with cp.async (one thread's
// share, no commit), and the copy of the tile's raw o back over v in scratch.
#pragma once

#include <cstddef>

#include "common.cuh"
#include "cp_async.cuh"
#include "gdn.h"

namespace qc::gpu {

// Tiling, measured on an H200 for the token scan (27B layer, M = 2048, whole call; the scan is ~75% of it):
// 16 rows a thread in 128-thread blocks (384 blocks, ~12 warps an SM) 890 us; 8 rows 1080 us, 32 rows
// 977 us; 2 or 4 columns a thread in 64-thread blocks 938 / 965 us. The scan is issue-bound (ncu): ~145
// warp instructions per warp and token, 64 of them the state's FMAs, 0.66 issued per cycle per scheduler.
inline constexpr int kScanThreads = 128;  // scan block
inline constexpr int kScanRows = 16;      // state rows of one column per thread: P = dk / 16 lanes a column
inline constexpr int kScanTile = 16;      // positions staged per shared-memory tile

// Columns of a head one scan block owns (CW): 16 for dk 128, 32 for dk 64; divides every dv (multiple of 32).
__host__ __device__ constexpr int scan_cols(int dk) {
  return kScanThreads / (dk / kScanRows);
}
static_assert(32 % scan_cols(128) == 0 && 32 % scan_cols(64) == 0, "CW must divide every dv");

// A column scan's launch: block (x, j) owns columns [x * CW, +CW) of value head j; k128 / k64 by head_k_dim.
template <class Bufs>
cudaError_t launch_column_scan(void (*k128)(GdnArgs, Bufs), void (*k64)(GdnArgs, Bufs), const GdnArgs& a,
                               const Bufs& b, cudaStream_t stream) {
  const int dk = a.head_k_dim;
  return launch_kernel(dk == 128 ? k128 : k64, dim3(a.head_v_dim / scan_cols(dk), a.n_v_heads),
                       dim3(kScanThreads), 0, stream, a.pdl, a, b);
}

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
