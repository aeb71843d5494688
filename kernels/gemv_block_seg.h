// The segment engine of gemv_block (gemv_block_seg.cu), called by gemv_block() once it has checked the
// arguments: internal to the kernels library.
#pragma once

#include <cuda_runtime_api.h>

#include "gemv_block.h"
#include "status.h"

namespace qc::gpu::detail {

// `a`: validated by gemv_block(): type Q4_K or Q5_K, format kH or kHL, M in [1, 4]. Resolves its own
// warps_per_row (from N and K only: the bits never depend on M or rows_per_warp), rows_per_warp (0, 2 or 4)
// and pipeline (-1, 0 or 1), and refuses other values.
GpuStatus gemv_block_seg(const GemvBlockArgs& a, cudaStream_t stream);

// The warps per row the engine takes for an N x K matrix when warps_per_row is 0 (exposed for the tests,
// which sweep the explicit values around it).
int gemv_block_seg_auto_wpr(int n, int k, int sms);

}  // namespace qc::gpu::detail
