// The delta rule of gdn_prefill (gdn_prefill.h) with the decay kept as one scale per head instead of applied
// to every state element; internal to gdn_prefill (GdnScan::kScaled).
//
// The token recurrence (QWEN35.md section 3): S_t = d_t S_{t-1}, delta_t = beta_t (v_t - S_t^T k_t),
// S_t += k_t delta_t^T, o_t = S_t^T q_t. The token scan (gdn_prefill.cu) touches every element of S four
// times a position: the decay, the k dot product, the update and the q dot product. Here the state of a
// segment of positions is held as S = D S~ with one scalar D per value head (the same for every column, so
// every thread of a block carries it in a register):
//   D <- D d_t;  mem = D (S~^T k_t);  S~ += k_t (beta_t (v_t - mem) / D);  o_t = D (S~^T q_t)
// exactly (in real arithmetic) the token steps, with three touches of each element a position instead of
// four: the decay became a scalar product. At the end of a segment the scale is folded back in (S~ *= D,
// one multiply per element) and the next segment starts with D = 1.
//
// Segments: the scan's 16-position tiles (counted from the call's first row), and earlier wherever the next
// D would fall below kGdnScaledFoldBelow (then that position's decay is folded into S~ before its update,
// D restarts at 1: so 1/D <= 2^64 and |S~| <= 2^64 |S|, within the f32 range while |S| < 2^64; a decay
// of exactly 0 clears the state as the token step does). A call starting on the grid of 16 absolute
// positions (Backend::prefill_grid) therefore cuts the same segments as an uninterrupted run: the same bits.
// A call starting elsewhere cuts other segments: the same values within the rounding.
//
// Rounding: the same dk-long f32 dot products as the token scan, on S~ = S / D (floating point is
// scale-invariant, so S~'s relative rounding is S's); per position two scalar roundings more (D d_t and
// 1/D, the latter by the hardware reciprocal, within 1 ulp), and one per element at a fold. The token
// scan's error analysis and its bound apply (tests/gpu/test_gdn_prefill.cpp); tests/unit/
// test_gdn_scaled_math.cpp checks the algebra on the CPU in double and in float.
//
// The o of a position is reduced across a column's lanes once per tile (each lane writes its share, times
// D, to shared memory; after the tile, two threads per column sum them in a fixed order) instead of by a
// shuffle chain per position.
#pragma once

#include <cuda_runtime_api.h>

#include "gdn.h"
#include "gdn_prefill.h"
#include "status.h"

namespace qc::gpu {

// The grid of positions a segment never crosses (the scan's tile); gdn_prefill_grid(kScaled).
inline constexpr int kGdnScaledTile = kGdnScaledPositions;
// The smallest scale a segment carries (2^-64): below it the decay is folded into the state.
inline constexpr float kGdnScaledFoldBelow = 0x1p-64f;

// Device buffers of one call (gdn_prefill's scratch; the token scan's, nothing more).
struct GdnScaledBufs {
  const float* qk = nullptr;    // [M][Nk][2][dk] normalised q (scaled) | normalised k
  float* vo = nullptr;          // [M][Nv*dv] v in; raw o after the scan
  const float* gate = nullptr;  // [Nv][mp][2] beta, decay
  int mp = 0;                   // M rounded up to the tile (16)
};

// Reads qk, vo (v), gate and a.state; leaves the raw o in vo and the final state in a.state. Arguments
// were checked by gdn_prefill.
GpuStatus gdn_scaled_scan(const GdnArgs& a, const GdnScaledBufs& b, cudaStream_t stream);

}  // namespace qc::gpu
