// What the mma GEMV's two schedules share (the contract in gemv_q8_mma.cu's header): the register schedule
// (gemv_q8_mma.cu) and the shared-memory schedule (gemv_q8_mma_staged.cu) take the same parameters, fold a
// block the same way, combine a tile's slices the same way and size the same persistent grid. One place, so
// the two cannot drift apart in a bit.
#pragma once

#include "../common.cuh"
#include "../mma_s8.cuh"
#include "../q8_io.h"
#include "gemv_q8_internal.h"
#include "persistent_launch.cuh"

namespace qc::gpu::detail {

inline constexpr int kMmaThreads = 256;
inline constexpr int kMmaSlices = kMmaThreads / 32;  // one K slice per warp: the contract's 8
inline constexpr int kMmaTileRows = 16;              // weight rows per block: the mma's M

struct MmaParams {
  const int8_t* wq;
  const uint16_t* wd;
  int n, k, w_stride;
  const int8_t* xh;
  const int8_t* xl;  // null for format h
  const float* xs;
  int ld_x, ld_s;
  int m;
  float* y;
  int ld_y;
  const float* res;  // may alias y
  int ld_res;
  int per;          // blocks per slice: ceil(nb / 8)
  int tiles;        // 16-row tiles: ceil(N / 16)
  int stage_bytes;  // the shared-memory schedule: one stage of one warp (0 for the register schedule)
};

inline MmaParams mma_params(const GemvQ8Args& a, int stage_bytes) {
  const int nb = a.w.cols / kQBlock;
  MmaParams p{};  // (device code is C++17: no designated initialisers in .cu files)
  fill_q8_io(a, p);
  p.per = (nb + kMmaSlices - 1) / kMmaSlices;
  p.tiles = (p.n + kMmaTileRows - 1) / kMmaTileRows;
  p.stage_bytes = stage_bytes;
  return p;
}

// The persistent grid (persistent_launch.cuh) over 16-row tiles: every block resident
// (TileTuning::grid_per_sm 0; the occupancy calculator caps it) or grid_per_sm blocks an SM, the count
// balanced so that the busiest block walks as few tiles as the full grid would give it; TileTuning::grid
// (tests) that many blocks exactly, so that small matrices walk several tiles a block. A block's tiles are
// mma_tile_range()'s.
inline PersistentGrid mma_grid(const MmaParams& p, const TileTuning& t) {
  constexpr int kAllResident = 64;  // more blocks an SM than any kernel can keep: the occupancy limit decides
  PersistentGrid g;
  g.units = p.tiles;
  g.unit_rows = kMmaTileRows;
  g.n = p.n;
  g.warps = 1;  // a tile is one unit of work for the whole block
  g.rows_per_warp = kMmaTileRows;
  g.grid = t.grid;
  g.grid_per_sm = t.grid_per_sm > 0 ? t.grid_per_sm : kAllResident;
  return g;
}

// This block's tiles [*tile0, *tile1): a contiguous run of the grid's balanced split (the same number +- 1).
__device__ __forceinline__ void mma_tile_range(const MmaParams& p, int* tile0, int* tile1) {
  *tile0 = static_cast<int>(static_cast<long long>(blockIdx.x) * p.tiles / gridDim.x);
  *tile1 = static_cast<int>(static_cast<long long>(blockIdx.x + 1) * p.tiles / gridDim.x);
}

// acc (row g, c0), (row g, c1), (row g+8, c0), (row g+8, c1) += v * (xs * f16 scale), one block's biased
// sums dh (dl: hl's second word) of rows g, g + 8 against tokens c0 = 2t, c1 = 2t + 1; wsa, wsb the rows'
// weight scales, s0, s1 the tokens' activation scales. kPair: M >= 2 (at M = 1 only column c0 = 0 holds a
// token, and the odd elements are skipped: the same instructions per element, the same bits).
template <bool kHL, bool kPair>
__device__ __forceinline__ void mma_fold(float (&acc)[4], const int (&dh)[4], const int (&dl)[4], float wsa,
                                         float wsb, float s0, float s1) {
  const float scale[4] = {__fmul_rn(s0, wsa), __fmul_rn(s1, wsa), __fmul_rn(s0, wsb), __fmul_rn(s1, wsb)};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (!kPair && (e & 1)) continue;
    float v = unbias(dh[e]);
    if constexpr (kHL) v = __fmaf_rn(unbias(dl[e]), kInv127, v);
    acc[e] = __fmaf_rn(v, scale[e], acc[e]);
  }
}

// Per-block slice partials of one tile; two of them, used in turn by consecutive tiles (below).
using MmaPartials = float[kMmaSlices][kMaxTokens][kMmaTileRows];

// The end of tile `tile`: every warp's slice partials (acc of lane (g, t) as in mma_fold) into `part`, then
// per output the fixed-order combine over the non-empty slices, the residual added last, and the store.
// `part` alternates between two buffers on consecutive tiles, so one barrier a tile suffices: a warp writing
// tile j + 2's partials into tile j's buffer has passed tile j + 1's barrier, which every thread reaches
// only after reading tile j's. Every thread of the block calls it.
__device__ __forceinline__ void mma_tile_combine(const MmaParams& p, MmaPartials& part, int tile,
                                                 const float (&acc)[4]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, c0 = 2 * (lane & 3), c1 = c0 + 1;
  if (c0 < p.m) {
    part[warp][c0][g] = acc[0];
    part[warp][c0][g + 8] = acc[2];
  }
  if (c1 < p.m) {
    part[warp][c1][g] = acc[1];
    part[warp][c1][g + 8] = acc[3];
  }
  __syncthreads();
  const int used = min(kMmaSlices, (p.k / kQBlock + p.per - 1) / p.per);  // non-empty slices: a K property
  const int r = threadIdx.x % kMmaTileRows, m = threadIdx.x / kMmaTileRows;
  const int row = tile * kMmaTileRows + r;
  if (m < p.m && row < p.n) {
    float s = part[0][m][r];
    for (int w = 1; w < used; ++w) s = __fadd_rn(s, part[w][m][r]);
    if (p.res) s = __fadd_rn(p.res[static_cast<size_t>(m) * p.ld_res + row], s);
    p.y[static_cast<size_t>(m) * p.ld_y + row] = s;
  }
}

}  // namespace qc::gpu::detail
