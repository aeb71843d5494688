// The delta rule of gdn_prefill (gdn_prefill.h) over chunks of kGdnChunk positions on TF32 tensor cores:
// the WY / UT-transform form of flash-linear-attention's chunk_gated_delta_rule, internal to gdn_prefill.
//
// Per chunk of L = 64 positions of one value head, with G_t the chunk's cumulative log decay (inclusive),
// gamma_t = exp(G_t), beta, normalised k, q (scaled) and v from gdn_prefill's conv kernel, S the state
// [dk][dv] entering the chunk (QWEN35.md section 3, the token recurrence S_t = decay_t S_{t-1},
// delta_t = beta_t (v_t - S_t^T k_t), S_t += k_t delta_t^T, o_t = S_t^T q_t, unrolled over the chunk):
//   A[t][s] = beta_t exp(G_t - G_s) k_t.k_s (s < t),  T = (I + A)^-1 (unit lower triangular)
//   P[t][s] = exp(G_t - G_s) q_t.k_s (s <= t)
//   W = T diag(beta gamma) K,  U = T diag(beta) V,  Qw = diag(gamma) Q - P W,  Ou = P U
//   delta = U - W S,  O = Qw S + Ou,  S <- gamma_L S + (diag(exp(G_L - G)) K)^T delta
// Two kernels: prep, one block per (chunk, value head), everything up to W, U, Qw, Ou (independent of S:
// all chunks in parallel); scan, one block per (32 value columns, value head), the last three lines
// through the chunks in order, the state tile held in the MMA accumulators.
//
// The chunks lie on the absolute position grid (multiples of kGdnChunk), so a position's bits depend on
// its chunk's inputs and the state entering the chunk, not on where a call starts -- provided calls start
// on the grid. A call starting inside a chunk processes that chunk's first part alone (the earlier
// positions as identity rows: k = v = beta = log decay = 0), which is exact in real arithmetic but rounds
// differently from the whole chunk. Products in 3xTF32 (mma_tf32.cuh), T by 16x16 diagonal blocks and
// block substitution in f32.
//
// Opt-in (GdnArgs::scan = GdnScan::kChunked) because it is slower than the token scan today: one 1024-row call of a 27B
// layer on an H100 takes prep 378 us + scan 304 us against ~360 us for the token scan. Both are bound by
// the instructions around the products (3xTF32 splits at every use, scalar fragment loads), not by
// latency: 8 warps per block instead of 4 measured no faster (docs/PERFORMANCE.md, 2026-12-06 third
// session, says what the next attempt needs).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gdn.h"
#include "gdn_prefill.h"
#include "status.h"

namespace qc::gpu {

inline constexpr int kGdnChunk = kGdnChunkPositions;
// G in two floats, hi + lo (a double-precision prefix sum split). The form above takes exp(G_t - G_s) for
// positions of one chunk; with G in one f32 that difference carries G's rounding, ~|G| 2^-24 absolute, and
// exp of it the same relative error: with a decay of e^-30 .. e^-1200 every fifth position
// (tests/gpu/test_gdn_prefill.cpp, StrongDecaysMatchCpuDouble) G reached thousands and the outputs 1.6e-3
// of their rms from the exact recurrence, the state 1.2e-3 with a floor of -20 on each log decay (H100,
// 2026-12-06). With hi + lo the difference (hi_t - hi_s) + (lo_t - lo_s) is exact in its first part
// whenever the two are within a factor 2 (Sterbenz), so its error is ~|G_t - G_s| 2^-24, not |G| 2^-24:
// where exp(G_t - G_s) is not negligible (|G_t - G_s| < ~20) below 1.2e-6 relative. Costs one more float
// a position in the scratch. tests/unit/test_gdn_chunk_math.cpp mirrors it.
//
// The lowest log decay a position keeps. A decay below e^-200 is 0 in f32 wherever it enters (exp of
// anything below -104 underflows), so the floor changes no result the f32 token scan could tell apart; it
// keeps G finite (a log decay of -inf would make hi_t - hi_s NaN).
inline constexpr float kGdnChunkMinLogDecay = -200.0f;

// Chunk slots a call of m rows needs whatever its start: the first chunk may begin up to 63 rows early.
inline int gdn_chunk_slots(int m) {
  return (m + 2 * kGdnChunk - 2) / kGdnChunk;
}

// Device buffers of one call (gdn_prefill's scratch). R = gdn_chunk_slots(m) * kGdnChunk rows per head;
// chunk c's row l is row c * kGdnChunk + l of a head's [R] range.
struct GdnChunkBufs {
  const float* qk = nullptr;    // [M][Nk][2][dk] normalised q (scaled) | normalised k
  float* vo = nullptr;          // [M][Nv*dv] v in; U after prep; raw o after scan
  const float* gate = nullptr;  // [Nv][mp][2] beta, log decay
  int mp = 0;
  float* w = nullptr;   // [Nv][R][dk]
  float* qw = nullptr;  // [Nv][R][dk]
  float* ou = nullptr;  // [Nv][R][dv]
  float* g = nullptr;   // [Nv][R] cumulative log decay within the chunk: hi part (G above)
  float* g_lo = nullptr;  // [Nv][R] its lo part
  int rows = 0;         // R
};

// Floats of w, qw, ou, g and g_lo for these arguments.
size_t gdn_chunk_floats(const GdnArgs& a);

// Runs prep and scan: reads qk, vo (v), gate and a.state; leaves the raw o in vo and the final state in
// a.state. Arguments were checked by gdn_prefill.
GpuStatus gdn_chunk_scan(const GdnArgs& a, const GdnChunkBufs& b, cudaStream_t stream);

}  // namespace qc::gpu
