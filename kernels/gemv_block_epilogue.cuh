// The end of a block-quantised GEMV row group, shared by gemv_block's three engines (registers, stream,
// segments): each lane holds partial sums acc[r][m] for R rows and M token rows; the warp reduces them
// (warp_sum, one fixed butterfly), the row's warps are combined in ascending warp order through shared
// memory, and the row's first warp stores y (+ residual). One copy, so the engines cannot drift apart in
// the order that decides their bits.
#pragma once

#include "common.cuh"
#include "gemv_block.h"

namespace qc::gpu {

// Every lane ends with the warp's sum of each of its R x M partials.
template <int R, int M>
__device__ __forceinline__ void warp_sum_rows(float (&acc)[R][M]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < M; ++m) acc[r][m] = warp_sum(acc[r][m]);
}

// Lane 0 of warp `warp` leaves its sums in part[.][.][warp] for the row's first warp.
template <int R, int M, int W>
__device__ __forceinline__ void stash_part(float (&part)[R][M][W], int warp, int lane,
                                           const float (&acc)[R][M]) {
  if (lane != 0) return;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < M; ++m) part[r][m][warp] = acc[r][m];
}

// The row's first warp (`warp`) adds the partials of warps warp .. warp + wpr - 1 in ascending order (after
// a barrier the caller chose: the whole block or the row's named barrier).
template <int R, int M, int W>
__device__ __forceinline__ void combine_parts(const float (&part)[R][M][W], int warp, int wpr,
                                              float (&acc)[R][M]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < M; ++m) {
      float s = part[r][m][warp];
      for (int q = 1; q < wpr; ++q) s = __fadd_rn(s, part[r][m][warp + q]);
      acc[r][m] = s;
    }
}

// Lane m of the row's first warp stores token row m of rows row0 .. min(row0 + R, row_end) - 1, adding the
// residual after the dot product is complete (y may alias the residual: each value is read, then written,
// by one lane).
template <int R, int M>
__device__ __forceinline__ void store_rows(const GemvBlockArgs& a, const float (&acc)[R][M], int row0,
                                           int row_end, int lane) {
  if (lane >= M) return;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int row = row0 + r;
    if (row >= row_end) break;
#pragma unroll
    for (int m = 0; m < M; ++m)
      if (lane == m)
        a.y[m * a.ld_y + row] =
            a.residual ? __fadd_rn(acc[r][m], a.residual[m * a.ld_residual + row]) : acc[r][m];
  }
}

}  // namespace qc::gpu
