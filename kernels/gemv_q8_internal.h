// Launchers of the Q8_0 GEMV family, one per kernel file, called only by the dispatch in gemv_q8.cpp
// (arguments already validated there).
#pragma once

#include "gemv_q8.h"

namespace qc::gpu::detail {

// gemv_q8_rows.cu: one warp per row (or two), 1/2/4 segments in flight, optional split over K.
struct RowsShape {
  bool hl = false;
  int rows_per_warp = 1;  // 1 or 2
  int unroll = 1;         // 1, 2 or 4 (4 only with hl, rows_per_warp 1)
  int split_k = 1;        // > 1: partial sums to args.split_scratch, then the fixed-order combine
};
GpuStatus launch_gemv_rows(const GemvQ8Args& a, const RowsShape& shape, cudaStream_t stream);

// gemv_q8_tile.cu: the streaming tile schedule.
GpuStatus launch_gemv_tile(const GemvQ8Args& a, bool hl, const TileTuning& t, cudaStream_t stream);
GpuStatus launch_gemv_gateup(const GemvQ8GateUpArgs& a, const TileTuning& t, cudaStream_t stream);

// gemv_q8_deq.cu: f32 activations.
GpuStatus launch_gemv_deq(const GemvQ8Args& a, cudaStream_t stream);

}  // namespace qc::gpu::detail
