// Q8_0 GEMM on int8 tensor cores: the prefill path's projection, y[m][n] = sum_k W[n][k] x[m][k]
// (+ residual[m][n]) for M = 1 .. 2048 token rows at once. It complements the decode GEMVs (gemv_q8.h,
// M <= 4), which are bound by the weight stream; from a few dozen rows on, the same weights feed M rows
// and the work becomes arithmetic.
//
// Layouts (layout.h): weights Q8_0 split (q int8 [N][row_stride], d f16 [N][K/32]); activations the
// quantised rows of norm_quant / swiglu (hi int8 [M][ld], lo int8 [M][ld] for format hl, scale f32
// [M][ld_scale]); y and residual f32 row-major.
//
// Numerics, the contract the tests check bit for bit against a CPU mirror. Per row m, column n:
//   acc = 0; for each 32-block b = 0, 1, .., K/32 - 1 in ascending order:
//     ih = sum_k hi[m][32b+k] q[n][32b+k]          (int32, exact)
//     il = sum_k lo[m][32b+k] q[n][32b+k]          (hl only)
//     v  = hl ? fmaf((float)il, kInv127, (float)ih) : (float)ih
//     acc = fmaf(v, scale[m][b] * f16(d[n][b]), acc)      (the product rounded to f32 first)
//   y[m][n] = residual ? residual[m][n] + acc : acc
// A row's bits depend on that row's data only -- not on M, on where the row sits in a tile, or on the tile
// shape the launcher picks -- so a prompt gives the same bits however it is chunked. Hence no split-K
// (partial sums over K slices change the fold order, and a split chosen by M would tie a row's bits to M)
// and no atomics. These are not the GEMVs' bits (gemv_q8_lane.cuh: each lane folds half-blocks, then the
// 32 lane sums are added in a butterfly): gemv_q8 and gemm_q8 give a row different bits.
//
// Why int8 mma with per-block scales: mma.m16n8k32.s8 covers exactly one Q8_0 block along K, so the int32
// dot products of one block come out of one instruction, exact, and the f32 scaling happens per block as
// the format defines it -- no dequantisation of weights to f16, and no loss from quantising the weights'
// block scales into a coarser scheme.
//
// Cost, per output element and per 32-block: 32 int8 MACs on the tensor cores (64 with hl), then on the
// f32 pipe 3 instructions (h: the int32 -> f32 conversion as one add, the scale product, the fma) or 5
// (hl): per m16n8k32 instruction (4096 MACs) a warp issues 12 f32 instructions (h), or 20 per pair of
// them (hl). Measured on an H200 (qwenchat-gemm-bench, M = 2048, 128x128 tiles): 215-225 TOPS for h,
// 143-149 for hl (2*M*N*K / t): hl takes ~1.5x the time of h. Where the time goes is not profiled yet.
// Bytes: the weights, N*K*34/32, come from HBM about once (the blocks that share a weight tile run
// together; L2 serves the rest); activations are re-read from L2 once per column tile (M*K bytes, 2*M*K
// for hl, per 64 or 128 columns); outputs M*N*4 (twice that with a residual).
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

inline constexpr int kGemmMaxRows = 2048;  // M: token rows of one gemm_q8 call

struct GemmQ8Args {
  Q8Weights w;         // N = w.rows outputs, K = w.cols inputs (multiple of 32)
  QActIn x;            // M rows; x.lo null = format h, else hl
  int m = 0;           // 1 .. kGemmMaxRows
  float* y = nullptr;  // [M][ld_y]: output columns 0..N-1 of each row
  int ld_y = 0;
  const float* residual = nullptr;  // optional [M][ld_residual]: y = residual + W x; may alias y (same ld)
  int ld_residual = 0;
  // Schedule (scheduling only: the bits never depend on it). 0 = the launcher's choice. Tiles (tile_m x
  // tile_n): 128x128, 64x128, 64x64; stages: 2 .. 4 pipeline stages of 128 K-bytes (fewer are used when
  // the device lacks the shared memory). For tests and benchmarks.
  int tile_m = 0;
  int tile_n = 0;
  int stages = 0;
  bool pdl = false;  // launch with the programmatic-serialization attribute (sm_90)
};

GpuStatus gemm_q8(const GemmQ8Args& a, cudaStream_t stream);

}  // namespace qc::gpu
