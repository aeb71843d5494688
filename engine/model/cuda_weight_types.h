// Which weight storage types the CUDA backend runs: every type the loader accepts has a kernel (F32/F16/BF16
// gemv_dense, Q8_0 the GEMV family, Q4_0/Q5_0/Q4_K/Q5_K/Q6_K gemv_block and dequant_block_f16;
// kernels/block_quant.h). The block formats were written without a GPU (2026-12-04) and released to users
// once tests/gpu/test_backend_kquant.cpp passed on an H200 (2026-12-05, issue #16). The check lives outside
// engine/cuda (compiled only where nvcc is found) so that builds without CUDA test it too, and it stays the
// place where a type added to the loader must be decided before the CUDA backend takes it.
#pragma once

#include "model/weights.h"
#include "qwenchat/result.h"

namespace qc {

// True for the matrix types the CUDA kernels read (today every DType).
bool cuda_reads_matrix_type(DType t);

// Every matrix of the model (embedding, lm_head, projections, the MTP block's) must be of a type the
// kernels read. Vectors (norms, conv taps, biases) are decoded to f32 on the host whatever their type, so
// any loadable type is fine there. The error names the first offending tensor: "tensor
// blk.0.ffn_up.weight has type X; the CUDA kernels read F32/F16/BF16/Q8_0/Q4_0/Q5_0/Q4_K/Q5_K/Q6_K".
Status check_cuda_weight_types(const ModelWeights& w);

}  // namespace qc
