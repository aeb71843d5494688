// Gated DeltaNet over a prompt chunk of M = 1 .. kGdnPrefillMaxRows token rows: the same layer, the same
// arguments (GdnArgs) and the same math as gdn_step (gdn.h, QWEN35.md section 3), in four launches.
//
//   1. conv   one warp per (key head, 4 tokens): silu(causal conv) of the head's q and k channels and their
//             L2 norms (q also times 1/sqrt(dk)); one warp per (value head, 4 tokens): the v channels and
//             the gates beta = sigmoid(b), decay = exp(softplus(a + dt_bias) * ssm_a). A channel's inputs
//             and weights are loaded once per warp. Earlier positions come from the conv ring (read only),
//             this chunk's from a.qkv. All into `scratch`.
//   2. ring   grid (conv_dim / 256, min(M, kConvRing)): the raw conv inputs (a.qkv rows) of the chunk's last
//             min(M, kConvRing) positions into their slots p % kConvRing. After 1 in stream order, so 1
//             read the slots of the positions before the chunk before they are overwritten.
//   3. scan   (GdnScan::kToken) grid (dv / CW, Nv), 128 threads: the delta rule token by token. Columns of a
//             head's state are independent given k, q, beta and decay, so a block owns CW columns of one head
//             (16 for dk 128, 32 for dk 64); each column is held in registers by P = dk / 16 lanes of one
//             warp (16 rows each; the partial dot products are combined with warp shuffles, no block barrier
//             per token). Tiles of 16 tokens' q, k, v, beta, decay are staged in shared memory with
//             cp.async, double buffered. The raw o overwrites v in scratch (each block reads and writes
//             only its own columns, and only rows of tiles it has already loaded).
//   4. norm   one warp per (token, value head): y = rmsnorm(o_head) * norm_w * silu(z) -> any of a.out,
//             a.out_q (format h or hl, like gdn_step) and a.out16 (the f16 prompt path's GEMM input).
//
// Chunk invariance: every per-token value is a function of that token's inputs, the conv inputs of the
// previous conv_kernel - 1 positions (bit copies, wherever they come from) and the carried state only, with
// reduction orders fixed by the thread layout (which depends on dk and dv only, never on M or the position).
// So with the token scan a prompt gives the same bits however it is split into calls.
//
// With GdnScan::kGroup the scan is gdn_group.h's: the token scan's layout with the recurrence unrolled over
// groups of 4 positions on the absolute grid (2 + 5/4 flops per state element and position instead of 4,
// and one shuffle chain per group instead of one per position), after a coefficient kernel (one warp per
// key head and 4 positions: the group's Gram entries and decay products). A prompt keeps its bits across
// calls that start on the grid of 4 (Backend::prefill_grid); elsewhere the values agree within the rounding.
//
// With GdnScan::kScaled the scan is gdn_scaled.h's: the token scan's layout with the decay kept as one scale
// per value head and segment of at most 16 positions (3 touches of each state element a position instead of
// 4) and o reduced across a column's lanes once per tile. Segments end with the tiles, so a prompt keeps its
// bits across calls that start on the grid of 16 (Backend::prefill_grid); elsewhere the values agree within
// the rounding.
//
// With GdnScan::kChunked the scan is gdn_chunk.h's (opt-in, slower: docs/PERFORMANCE.md 2026-12-06
// third session): the delta rule over chunks of kGdnChunkPositions on TF32 tensor cores, a prep
// kernel per (chunk, value head) and a scan per (32 value columns, value head). Its chunks lie on absolute
// positions, so a prompt keeps its bits only across calls that start on that grid (Backend::prefill_grid);
// elsewhere the values agree within the rounding. The gate row then holds the log decay. The bits differ from
// gdn_step's (other reduction trees for the L2 norms, the dot products and the output norm); the conv values
// are the same.
//
// After the call `state` and the ring are what a following gdn_step / gdn_prefill at position pos0 + M
// continues from: the ring slot p % kConvRing holds the conv input of position p for the last
// min(M, kConvRing) positions of the chunk (older slots are left as they were).
//
// Scratch (device memory, 16-byte aligned, not preserved between calls), in floats, Mp = M rounded up to 16:
//   qk   [M][Nk][2][dk]   normalised q (scaled), normalised k
//   v/o  [M][Nv*dv]       silu(conv v); overwritten in place by the raw o of the scan
//   gate [Nv][Mp][2]      beta, decay (head-major so that a tile of tokens is one contiguous range)
// = M * (2*Nk*dk + Nv*dv) + 2 * Nv * Mp floats; 27B (16/48 heads, 128/128): 10240 * M + 96 * Mp, about
// 81 MiB at M = 2048. With kGroup also gdn_group.h's coefficient rows [Nv][Mp][12] (4.5 MiB at M = 2048 for
// the 27B); with kChunked gdn_chunk.h's w, qw [Nv][R][dk], ou [Nv][R][dv]
// and g [Nv][R], R = gdn_chunk_slots(M) * 64: 155 MiB more at M = 2048.
//
// Cost, measured on an H200 (27B layer, M = 2048, ncu, 2026-12-04): conv 146 us (a warp per token then; the
// tiled conv took the GDN phase of a 2048-token prompt from 48.9 to 46.0 ms on an H100), ring 3 us, scan
// 666 us, norm 77 us; whole call 0.89 ms (0.44 us per token and layer; 0.51 at M = 128). The scan is a
// sequential recurrence over the tokens, issue-bound on the state's 4 flops per element and token plus its
// reductions; the grouped form (kGroup) cuts the flops and the shuffle chains per position (measured:
// docs/PERFORMANCE.md).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gdn.h"
#include "status.h"

namespace qc::gpu {

inline constexpr int kGdnPrefillMaxRows = 2048;
// The chunk of the chunked scan (GdnScan::kChunked) and the group of the grouped one (kGroup), in positions.
inline constexpr int kGdnChunkPositions = 64;
inline constexpr int kGdnGroupPositions = 4;
// The segment of the scaled scan (kScaled): its tile, in positions.
inline constexpr int kGdnScaledPositions = 16;
// The grid (absolute positions) a scan's bits hold across calls on (Backend::prefill_grid); 1 = any.
constexpr int gdn_prefill_grid(GdnScan scan) {
  switch (scan) {
    case GdnScan::kChunked:
      return kGdnChunkPositions;
    case GdnScan::kGroup:
      return kGdnGroupPositions;
    case GdnScan::kScaled:
      return kGdnScaledPositions;
    case GdnScan::kToken:
      break;
  }
  return 1;
}

// Floats of scratch gdn_prefill needs for these arguments (a function of m and the shape only).
size_t gdn_prefill_scratch_floats(const GdnArgs& a);

// Same arguments and meaning as gdn_step for 1 <= a.m <= kGdnPrefillMaxRows; a.state_per_token must be
// null; a.conv_kernel <= kConvRing. `scratch`: gdn_prefill_scratch_floats(a) floats of device memory,
// 16-byte aligned. a.d_pos is read on the device only.
GpuStatus gdn_prefill(const GdnArgs& a, float* scratch, cudaStream_t stream);

}  // namespace qc::gpu
