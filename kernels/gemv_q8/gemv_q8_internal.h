// Launchers of the Q8_0 GEMV family, one per kernel file, called only by the dispatch in gemv_q8.cpp
// (arguments already validated there).
#pragma once

#include "gemv_q8.h"

namespace qc::gpu::detail {

// gemv_q8_rows.cu: one warp per row (or two), 1/2/4 segments in flight, optional split over K.
GpuStatus launch_gemv_rows(const GemvQ8Args& a, const RowsShape& shape, cudaStream_t stream);

// gemv_q8_tile.cu: the tile variants' entry (resolves the tuning, then runs engine 1 itself or hands the job
// to engine 2 or 3) and engine 1, the first tile design.
GpuStatus launch_gemv_tile(const GemvQ8Args& a, bool hl, const TileTuning& t, cudaStream_t stream);
GpuStatus launch_gemv_gateup(const GemvQ8GateUpArgs& a, const TileTuning& t, cudaStream_t stream);

// One tile-variant GEMV (or the fused gate+up: mats == 2, matrix 0 = gate, 1 = up) as engines 2 and 3 see it.
struct GemvJob {
  const int8_t* wq[2] = {nullptr, nullptr};
  const uint16_t* wd[2] = {nullptr, nullptr};
  int mats = 1;
  int n = 0, k = 0, w_stride = 0;
  QActIn x{};
  bool hl = true;
  int m = 1;
  float* y = nullptr;  // mats 1: the output; mats 2: silu(g)*u as f32 (may be null)
  int ld_y = 0;
  const float* res = nullptr;
  int ld_res = 0;
  QActOut out_q{};  // mats 2: quantised silu(g)*u (hi null: none; then N need not be a multiple of 32)
  bool pdl = false;
};

// gemv_q8_stream.cu: engine 2 (bulk copies into shared-memory stages, producer/consumer warps; sm_90).
GpuStatus launch_gemv_stream(const GemvJob& j, const TileTuning& t, int sms, cudaStream_t stream);
// gemv_q8_ring.cu: engine 3 (a register ring of segments continuously in flight per warp).
GpuStatus launch_gemv_ring(const GemvJob& j, const TileTuning& t, int sms, cudaStream_t stream);

// gemv_q8_mma.cu: int8 tensor cores, 16 rows x 8 token columns per instruction, K in 8 slices.
GpuStatus launch_gemv_mma(const GemvQ8Args& a, bool hl, cudaStream_t stream);
// gemv_q8_mma_staged.cu: the same contract fed from per-warp cp.async stages (tile.engine 2).
GpuStatus launch_gemv_mma_staged(const GemvQ8Args& a, bool hl, cudaStream_t stream);

// gemv_q8_deq.cu: f32 activations.
GpuStatus launch_gemv_deq(const GemvQ8Args& a, cudaStream_t stream);

}  // namespace qc::gpu::detail
