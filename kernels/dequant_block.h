// A slice of a block-quantised matrix (block_quant.h) as f16, for the prompt path's tensor-core GEMM
// (gemm_f16.h), the counterpart of dequant_q8_f16: each value is the CPU reference's dequantised f32
// (block_quant.cuh, bit for bit) rounded to nearest f16, saturated to +-kF16Max.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "block_quant.h"
#include "status.h"

namespace qc::gpu {

// out[n - row0][k] for the weight rows n in [row0, row0 + rows), K = w.cols. ld_out a multiple of 8, out
// 16-byte aligned.
GpuStatus dequant_block_f16(const BlockWeights& w, int row0, int rows, uint16_t* out, int ld_out,
                            cudaStream_t stream);

}  // namespace qc::gpu
