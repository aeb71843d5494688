// Which weight storage types the CUDA backend reads. The check lives outside engine/cuda (compiled only
// where nvcc is found) so that builds without CUDA test it too; the backend calls it before it lays out
// or uploads anything.
#pragma once

#include "model/weights.h"
#include "qwenchat/result.h"

namespace qc {

// True for the matrix types the CUDA kernels read: F32, F16, BF16 and Q8_0 (the GEMV and embedding
// kernels have no Q4_0/Q5_0/K-quant variants yet).
bool cuda_reads_matrix_type(DType t);

// Every matrix of the model (embedding, lm_head, projections, the MTP block's) must be of a type
// cuda_reads_matrix_type accepts. Vectors (norms, conv taps, biases) are decoded to f32 on the host
// whatever their type, so any loadable type is fine there. The error names the first offending tensor:
// "tensor blk.0.ffn_up.weight has type Q4_K; the CUDA backend reads F32/F16/BF16/Q8_0 so far".
Status check_cuda_weight_types(const ModelWeights& w);

}  // namespace qc
