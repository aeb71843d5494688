// The stream engine of gemv_block (gemv_block_stream.cu), called by gemv_block() once it has checked the
// arguments and resolved warps_per_row and rows_per_warp: internal to the kernels library.
#pragma once

#include <cuda_runtime_api.h>

#include "gemv_block.h"
#include "status.h"

namespace qc::gpu::detail {

// `a`: validated by gemv_block(): format kH or kHL, warps_per_row 1, 2, 4 or 8, rows_per_warp 1, 2 or 4.
GpuStatus gemv_block_stream(const GemvBlockArgs& a, cudaStream_t stream);

}  // namespace qc::gpu::detail
