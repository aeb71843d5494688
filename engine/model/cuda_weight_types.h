// Which weight storage types the CUDA backend runs, in two steps:
// - the kernels: every type the loader accepts has one (F32/F16/BF16 gemv_dense, Q8_0 the GEMV family,
//   Q4_0/Q5_0/Q4_K/Q5_K/Q6_K gemv_block and dequant_block_f16; kernels/block_quant.h);
// - released to users: only the types whose kernels have passed the GPU tests on a device. The
//   block-quantised kernels were written in a session without a GPU (2026-12-04) and are not yet
//   released: the engine's entry (make_cuda_backend) refuses such files with a pointer to the CPU backend,
//   while CudaBackend::create (the GPU tests, qwenchat-bench) runs them. Releasing them is one line here,
//   once tests/gpu/test_backend_kquant.cpp has passed on a GPU (issue #16).
// The check lives outside engine/cuda (compiled only where nvcc is found) so that builds without CUDA test
// it too.
#pragma once

#include "model/weights.h"
#include "qwenchat/result.h"

namespace qc {

// True for the matrix types the CUDA kernels read (today every DType).
bool cuda_reads_matrix_type(DType t);
// True for the matrix types released to users: F32, F16, BF16, Q8_0.
bool cuda_released_matrix_type(DType t);

// Every matrix of the model (embedding, lm_head, projections, the MTP block's) must be of a released type
// (`released_only`) or of one the kernels read. Vectors (norms, conv taps, biases) are decoded to f32 on
// the host whatever their type, so any loadable type is fine there. The error names the first offending
// tensor: "tensor blk.0.ffn_up.weight has type Q4_K; the CUDA backend runs F32/F16/BF16/Q8_0 so far (its
// Q4_0/Q5_0/Q4_K/Q5_K/Q6_K kernels await verification on a GPU)".
Status check_cuda_weight_types(const ModelWeights& w, bool released_only);

}  // namespace qc
