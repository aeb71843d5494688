// Q8_0 GEMV family: y[m][n] = sum_k W[n][k] * a[m][k] (+ residual[m][n]) for M <= 4 token rows, weights
// in the split layout (layout.h), read once for all M tokens. The variants (qwenchat_kernels/gemv_variant.h)
// differ in schedule and activation format; which kernel and which schedule runs each is one table
// (variants.h / variants.cpp, with TileTuning). gemv_q8_lane.cuh holds the accumulation-order contract that
// makes the classes {h, hu, h2, tile_h} and {hl, hlu, hlu4, hl2, tile} bit-identical.
//
// Files of the family (this folder): gemv_q8.cpp the entry points (argument checks, the dispatch over the
// table); gemv_q8_rows.cu the warp-per-row kernels; gemv_q8_deq.cu f32 activations; gemv_q8_tile.cu the tile
// entry and engine 1; gemv_q8_stream.cu (+ ../bulk_copy.cuh) engine 2; gemv_q8_ring.cu engine 3;
// persistent_launch.cuh the persistent-grid launch engines 2 and 3 share; gemv_q8_stage.cuh what the tile
// engines share on the device.
//
// Cost: a GEMV streams N*K*34/32 weight bytes once; activations (M*K bytes, or 2x for hl) and outputs are
// <1% of that. The kernels are bandwidth-bound, and what decides their speed is how many weight bytes are
// in flight per SM and how fast a launch ramps up and drains (docs/KERNELS.md, PERFORMANCE.md).
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "qwenchat_kernels/gemv_variant.h"
#include "status.h"
#include "variants.h"

namespace qc::gpu {

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
