// Q8_0 GEMV family: y[m][n] = sum_k W[n][k] * a[m][k] (+ residual[m][n]) for M <= 4 token rows, weights
// in the split layout (layout.h), read once for all M tokens. The variants (qwenchat_kernels/gemv_variant.h) differ in
// schedule and activation format; see kernels/gemv_q8_lane.cuh for the accumulation-order contract that
// makes the classes {h, hu, h2, tile_h} and {hl, hlu, hlu4, hl2, tile} bit-identical.
//
// Cost: a GEMV streams N*K*34/32 weight bytes once; activations (M*K bytes, or 2x for hl) and outputs are
// <1% of that. The kernels are bandwidth-bound, and what decides their speed is how many weight bytes are
// in flight per SM and how fast a launch ramps up and drains (docs/KERNELS.md, PERFORMANCE.md).
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "qwenchat_kernels/gemv_variant.h"
#include "status.h"

namespace qc::gpu {

// Schedule of the tile variants. 0 / -1 = chosen per shape by the launcher (tile_tuning_for()). Every engine
// and every setting below keeps the lane contract of gemv_q8_lane.cuh: "tile" == "hl" and "tile_h" == "h" bit
// for bit, and a token's result never depends on the other M-1 rows.
struct TileTuning {
  int rows_per_warp = 0;   // rows of W per warp (the activation word is read once for all of them): engine 1:
                           // 1 or 2; engine 2: 1, 2 or 4 (gate+up 1 or 2); engine 3: 1 or 2
  int unroll = 0;          // engine 1: 4 or 8 segments (512 weights each) issued per row before the first is
                           // used; engine 3: the register ring's length (4 or 8 segments in flight per row)
  int blocks_per_sm = -1;  // engine 1: 0 = one row tile per block, k > 0 = persistent grid of k blocks per SM
  // Engines (added after the first H200 measurements; docs/KERNELS.md "GEMV engines"). An explicit `unroll`
  // or `blocks_per_sm >= 0` with engine 0 selects engine 1 (what those two fields always meant).
  int engine = 0;  // 0 auto; 1 "batch": each warp issues U segments, then consumes them (the first tile
                   // design); 2 "stream": a producer warp streams row chunks into a ring of shared-memory
                   // stages with bulk copies (sm_90; engine 3 elsewhere); 3 "ring": each warp keeps a
                   // register ring of U segments continuously in flight
  int warps = 0;   // engines 2, 3: warps per block doing dot products (engine 2: consumers, + 1 producer)
  int chunk = 0;   // engine 2: segments per row per stage; >= the row's segments (64 always is): whole
                   // rows, one bulk copy per matrix per stage (the faster form)
  int stages = 0;  // engine 2: stages in the ring
  int grid_per_sm = 0;  // engines 2, 3: blocks per SM of the persistent grid (the exact count is chosen so
                        // that every block gets the same number of rows)
  int grid = 0;         // engines 2, 3: exact number of blocks (overrides grid_per_sm; tests, sweeps)
  int trigger = 0;  // engines 2, 3, PDL launches: 1 = let the next kernel launch right after the dependency
                    // wait; 2 = only once this block has issued its last weight load
};
// The launcher's choice for a shape (M tokens, K inputs, N outputs) on `sm_count` multiprocessors: the
// measured winners per shape class (docs/KERNELS.md), every field filled in.
TileTuning tile_tuning_for(int m, int k, int n, int sm_count);
// The fused gate+up's choice (two matrices per row; a quantised output needs whole 32-row tiles per block).
TileTuning gateup_tuning_for(int m, int k, int n, int sm_count);

struct GemvQ8Args {
  Q8Weights w;                   // N x K
  QActIn x;                      // quantised activations (h: x.lo may be null; hl: both words)
  const float* x_f32 = nullptr;  // f32 activations [M][ld_x_f32] for the deq variant
  int ld_x_f32 = 0;
  float* y = nullptr;  // [M][ld_y]
  int ld_y = 0;
  const float* residual = nullptr;  // optional: y = W a + residual (may alias y: in-place h += W a)
  int ld_residual = 0;
  int m = 1;  // token rows, 1..4
  GemvVariant variant = GemvVariant::kTile;
  int split_k = 4;                 // chunks for kSplitK
  float* split_scratch = nullptr;  // kSplitK: split_k * M * N floats (gemv_q8_split_scratch_floats)
  TileTuning tile{};               // kTile / kTileH
  bool pdl = false;                // launch with the programmatic-serialization attribute (sm_90)
};

size_t gemv_q8_split_scratch_floats(int split_k, int m, int n);

// One entry point for every variant (a switch over args.variant, in gemv_q8.cpp).
GpuStatus gemv_q8(const GemvQ8Args& args, cudaStream_t stream);

// Fused FFN entry: g = W_gate a, u = W_up a, h = silu(g) * u, written as f32 (out_f32, optional) and/or
// quantised for the down projection (out_q, optional; N must then be a multiple of 32). Tile schedule,
// so its g and u are bit-identical to gemv_q8 with kTile/kTileH and its h to swiglu() on those outputs.
struct GemvQ8GateUpArgs {
  Q8Weights gate;  // N x K
  Q8Weights up;    // N x K
  QActIn x;
  ActFormat format = ActFormat::kHL;  // kH or kHL: which words of x to read
  float* out_f32 = nullptr;           // [M][ld_out] or null
  int ld_out = 0;
  QActOut out_q{};  // quantised h (out_q.lo null -> format h) or hi null for none
  int m = 1;
  TileTuning tile{};
  bool pdl = false;
};
GpuStatus gemv_q8_gateup(const GemvQ8GateUpArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
