// The delta rule of gdn_prefill (gdn_prefill.h) over groups of kGdnGroup positions, f32 on CUDA cores:
// the token scan's thread layout with the recurrence unrolled over a group; internal to gdn_prefill.
//
// The token recurrence (QWEN35.md section 3): S_t = decay_t S_{t-1}, delta_t = beta_t (v_t - S_t^T k_t),
// S_t += k_t delta_t^T, o_t = S_t^T q_t. Over a group of L <= kGdnGroup consecutive positions t_0 .. t_{L-1}
// of one value head, with S the state entering the group and, per position t,
//   R_d(t) = decay_t decay_{t-1} ... decay_{t-d+1}   (R_0 = 1; products taken in that order)
// it unrolls, per state column (v, delta, o scalars), to
//   a_u = S^T k_u,  b_u = S^T q_u                                     (2L dot products, one pass over S)
//   delta_u = beta_u (v_u - R_{u+1}(t_u) a_u - sum_{u' < u} R_{u-u'}(t_u) (k_u'.k_u) delta_u')
//   o_u = R_{u+1}(t_u) b_u + sum_{u' <= u} R_{u-u'}(t_u) (k_u'.q_u) delta_u'
//   S <- R_L(t_{L-1}) S + sum_u R_{L-1-u}(t_{L-1}) delta_u k_u
// exactly (in real arithmetic) what L token steps compute. Per element of the state and position that is
// 2 + (L + 1) / L flops instead of the token scan's 4 (decay, mem, update and o each touched S), and the 2L
// dot products of a group are reduced across a column's lanes together, so a group costs one shuffle chain
// where the token scan had one per position. The scalars (beta, R_d and the Gram entries k.k, k.q times
// R_d) do not depend on S: a coefficient kernel computes them for every position, all positions in
// parallel, before the scan.
//
// The groups lie on the absolute position grid (multiples of kGdnGroup), and every value a group uses is a
// function of its own positions' inputs and the state entering it, so a prompt keeps its bits across calls
// that start on the grid (Backend::prefill_grid). A call starting inside a group, or a tile of the scan
// ending inside one (only in such a call), splits the group: the same values within the rounding.
//
// Rounding: the same dk-long dot products as the token scan (a_u, b_u are S^T k, S^T q with S one group
// older), plus per group at most 2 L scalar terms of size |k.k| <= 1, |k.q| <= 1/sqrt(dk) times products of
// decays < 1: the token scan's error analysis and bound apply (tests/gpu/test_gdn_prefill.cpp).
// Cost, measured on an H100 (27B layer, M = 2048, ncu, 2026-12-06): scan 1122 us (385 M warp instructions,
// issue active 42.5%) + coefficients 20 us, against the token scan's 828 us (427 M, 63%). So opt-in
// (GdnScan::kGroup): a tenth fewer instructions, but each position costs a warp 16 shared-memory loads of
// 16 bytes (k for the products, k again for the update, q, three coefficient rows, v) against the token
// scan's 10, and the load unit, not the flops, bounds it. Variants that keep k in registers and give each
// thread two columns (a k or q value then serves twice the flops) are on branch gdn-group-nc2, not yet run
// on a device (docs/PERFORMANCE.md, 2026-12-06 fifth session).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gdn.h"
#include "gdn_prefill.h"
#include "status.h"

namespace qc::gpu {

inline constexpr int kGdnGroup = kGdnGroupPositions;
// Floats of one (value head, position) coefficient row: beta, R_1..R_4, R_d k_{t-d}.k_t (d = 1..3),
// k_t.q_t, R_d k_{t-d}.q_t (d = 1..3).
inline constexpr int kGdnGroupCoef = 12;

// Device buffers of one call (gdn_prefill's scratch).
struct GdnGroupBufs {
  const float* qk = nullptr;    // [M][Nk][2][dk] normalised q (scaled) | normalised k
  float* vo = nullptr;          // [M][Nv*dv] v in; raw o after the scan
  const float* gate = nullptr;  // [Nv][mp][2] beta, decay
  int mp = 0;                   // M rounded up to gdn_prefill's tile (16)
  float* coef = nullptr;        // [Nv][mp][kGdnGroupCoef]
};

// Floats of coef for these arguments, mp rows per value head (gdn_prefill's M rounded up to its tile).
size_t gdn_group_floats(const GdnArgs& a, int mp);

// Runs the coefficient kernel and the scan: reads qk, vo (v), gate and a.state; leaves the raw o in vo and
// the final state in a.state. Arguments were checked by gdn_prefill.
GpuStatus gdn_group_scan(const GdnArgs& a, const GdnGroupBufs& b, cudaStream_t stream);

}  // namespace qc::gpu
