// GEMV for block-quantised weights (block_quant.h: Q4_0, Q5_0, Q4_K, Q5_K, Q6_K as the file stores them):
// y[m][n] = sum_k W[n][k] * x[m][k] (+ residual), M <= 4, W read once for all M. Two activation forms:
// - kF32 (x): the weights dequantised in registers exactly as the CPU reference does (block_quant.cuh), an
//   f32 FMA chain per weight; the result differs from the reference's by the f32 summation order only.
// - kH / kHL (xq, the quantised words the Q8_0 GEMVs read, layout.h): per 32-weight piece the integer dot
//   products of the weights' quants with the activation words (dp4a), scaled by the piece's factors
//   (block_quant.cuh IntPiece): ~1.5 instructions per weight instead of ~7, as llama.cpp's MMVQ does. The
//   weights are still exactly the reference's; the activations carry the format's error (kHL: <= s/254).
// The quantised forms run on one of two engines that fold every sum in the same order (same bits for the
// same warps_per_row): registers (gemv_block.cu: a lane loads its pieces itself; the default) or stream
// (sm_90, opt-in, gemv_block_stream.cu: the bulk copy engine stages whole rows or row chunks in a
// shared-memory ring, so the bytes in flight cost no registers; measured 2026-12-06 on an H100 slower than
// the register engine on every 27B decode shape but the lm_head: docs/PERFORMANCE.md). A third engine,
// segments (gemv_block_seg.cu, Q4_K / Q5_K), loads every weight byte once per warp instead of twice per
// lane pair and shares the activation loads between rows; it sums in its own order (its own bits).
#pragma once

#include <cuda_runtime_api.h>

#include "block_quant.h"
#include "layout.h"
#include "qwenchat_kernels/gemv_variant.h"
#include "status.h"

namespace qc::gpu {

// The engines (kAuto: block_engine_for's choice per matrix; segments takes Q4_K / Q5_K and runs the rest on
// registers): plain C++ vocabulary for the settings, in qwenchat_kernels/gemv_variant.h.
using qc::BlockEngine;

struct GemvBlockArgs {
  BlockWeights w{};
  ActFormat format = ActFormat::kF32;
  const float* x = nullptr;  // kF32: [M][ld_x], 16-byte aligned rows
  int ld_x = 0;              // multiple of 4, >= K
  QActIn xq{};               // kH (hi, scale) / kHL (hi, lo, scale): ld >= K, 16-byte aligned rows
  float* y = nullptr;        // [M][ld_y]
  int ld_y = 0;
  const float* residual = nullptr;  // optional, may alias y
  int ld_residual = 0;
  int m = 1;
  int warps_per_row = 0;  // 1, 2, 4 or 8; 0 = auto: 8 (one block per row) for small N, 2 for long rows with
                          // few warps (kH / kHL), else 1
  int rows_per_warp = 0;  // kH / kHL: rows per warp sharing the activation loads, 1 or 2 (stream: 1, 2 or 4);
                          // 0 = auto (registers: 1 at M = 1, else 2). Same bits.
  int pipeline = -1;      // kH / kHL: 1 = a lane issues its next piece's loads before decoding the current one
                          // (two in flight), 0 = one; -1 = auto. Same bits.
  int act_sums = -1;      // kH / kHL, Q4_K / Q5_K: 1 = the activation sums of their min term formed once per block
                          // in shared memory, 0 = per piece and row; -1 = auto (other types: 0). Same bits.
  // kAuto: block_engine_for()'s pick for this matrix and format. The schedule fields above are read by the
  // engine that runs, so explicit values must suit it (the segment engine takes rows_per_warp 0, 2 or 4 and
  // refuses 1); callers that tune one engine name it.
  BlockEngine engine = BlockEngine::kAuto;
  // Stream engine only (0 = auto; none changes a bit):
  int stream_warps = 0;   // consumer warps, a multiple of warps_per_row, <= 15 (+1 warp issues the copies)
  int stream_chunk = 0;   // pieces of a row per stage: a multiple of 32 x warps_per_row; 0 = whole rows where
                          // three stages of them fit, else chunks of about a quarter of the ring
  int stream_stages = 0;  // ring stages, 2..16; 0 = as many as fit stream_smem
  int stream_smem = 0;    // shared memory a block may take, bytes (half an SM's lets a block of the next
                          // kernel fit beside it and start its copies while this one drains); 0 = all a
                          // block may opt in to (measured faster: the ring is deeper)
  int stream_acts = -1;   // 1 = the activation words staged in shared memory once per block, 0 = read from
                          // global memory (L1); -1 = staged where they take at most half of stream_smem
  bool pdl = false;
};
GpuStatus gemv_block(const GemvBlockArgs& args, cudaStream_t stream);

// The engine matrix w read in form f runs on when `preferred` is asked for (KernelConfig's block_engine,
// for a file that mixes types): `preferred` where it takes them (stream: h / hl; segments: Q4_K / Q5_K in
// h / hl), else the registers; gemv_block() itself refuses an engine that does not take them. kAuto
// (gemv_block() resolves it the same way) is segments for Q4_K / Q5_K in hl with N >= 2K, else registers:
// from the sweep of 2026-12-07 (H100, docs/PERFORMANCE.md), where on the 27B's wide shapes (gate/up, GDN
// qkv+z, attention q+gate, an lm_head) the segment engine in hl moved 5-19% more bytes than the registers at
// M = 1 and -2..+22% at M = 2 (MTP's default verification), and lost on the narrow ones (ffn down, out)
// at M = 1 and in h everywhere. At M = 3, 4 it loses 12-20% on the wide shapes; the choice does not look at
// M, since a token's bits must not depend on how many tokens share the pass.
BlockEngine block_engine_for(BlockEngine preferred, const BlockWeights& w, ActFormat f);

}  // namespace qc::gpu
