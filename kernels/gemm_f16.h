// The prefill projections on f16 tensor cores through cuBLASLt: y[m][n] = alpha * sum_k W[n][k] x[m][k]
// (+ residual[m][n]) for M = 1 .. 2048 token rows, with W a Q8_0 matrix dequantised to f16 per call or once
// at load (dequant_q8_f16; engine/cuda/prefill_weights.h) and x the f32 activations rounded to f16
// (rows_to_f16, or fused into the norm and SwiGLU kernels). The int8 path (gemm_q8.h) keeps
// the weights' and activations' blocks exact but folds every 32-block's scale on the f32 pipe, which
// holds it to ~220 TOPS on an H200; here the block scales are folded into the weights once per call, and
// the GEMM itself is NVIDIA's, at the f16 tensor-core rate (docs/PERFORMANCE.md, qwenchat-gemm-bench).
//
// Numerics. A weight q * d is exact in f32 (8 + 11 significant bits) and rounded once to f16: relative
// error <= 2^-11 (unit roundoff; f16 subnormals, |w| < 2^-14, lose relative precision, with absolute
// error <= 2^-25). An activation x * 2^-shift is rounded once to f16 (the same bound), saturating at
// +-65504 so that a finite input never becomes inf; `shift` (a power of two, exact) moves the f16 range
// over the values a site produces and alpha = 2^shift undoes it in the GEMM. Products and sums in f32
// (CUBLAS_COMPUTE_32F). The bound tests use: relative rms error per projection output
// sqrt(2/3) 2^-11 (two independent roundings, uniform) = 4.0e-4, against hl's 1.0e-4 and h's 0.0129.
//
// Bits. Each (shape, alignment) gets one cuBLASLt algorithm, chosen by the library's heuristic for
// `plan_rows` token rows, restricted to algorithms without split-K reduction, and then used for every M:
// a row's K-sum runs in the algorithm's fixed order whatever M is or where the row sits in a tile, so the
// bits of a row do not depend on the chunking of a prompt (tests/gpu/test_gemm_f16.cpp checks this on the
// device). They depend on the cuBLASLt version and the GPU, like any library GEMM.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

// out[m][k] = f16(x[m][k] * 2^-shift) for k < K, saturated to +-kF16Max (NaN stays NaN). K, ld_x and
// ld_out multiples of 8; x and out 16-byte aligned.
GpuStatus rows_to_f16(const float* x, int ld_x, int m, int k, int shift, uint16_t* out, int ld_out,
                      cudaStream_t stream);

// out[n - row0][k] = f16(d[n][k / 32] * q[n][k]) for the weight rows n in [row0, row0 + rows): a slice of
// a Q8_0 matrix as f16, K = w.cols. ld_out a multiple of 8, out 16-byte aligned.
GpuStatus dequant_q8_f16(const Q8Weights& w, int row0, int rows, uint16_t* out, int ld_out, cudaStream_t stream);

struct GemmF16Args {
  const uint16_t* w = nullptr;  // f16 [N][ld_w]
  int n = 0, k = 0, ld_w = 0;
  const uint16_t* x = nullptr;  // f16 [M][ld_x]
  int ld_x = 0;
  int m = 0;           // 1 .. the plan rows' limit (kGemmF16MaxRows)
  float alpha = 1.0f;  // y = alpha * W x (+ residual): 2^shift of rows_to_f16
  float* y = nullptr;  // f32 [M][ld_y]
  int ld_y = 0;
  const float* residual = nullptr;  // optional; may alias y (then ld_residual = ld_y)
  int ld_residual = 0;
};

inline constexpr int kGemmF16MaxRows = 2048;

// One cuBLASLt handle, its workspace and the algorithm of each shape seen so far. Not thread-safe: one
// per backend, used from the backend's stream.
class GemmF16 {
 public:
  // Null with the reason in *why when cuBLASLt cannot be loaded (cublaslt.h) or the handle fails.
  // plan_rows: the M the algorithms are chosen for (the prefill chunk size); workspace: device memory of
  // kWorkspaceBytes the caller owns (the backend carves it with its other buffers, so that the memory
  // estimate stays the allocation).
  static std::unique_ptr<GemmF16> create(int plan_rows, void* workspace, std::string* why);
  ~GemmF16();
  GemmF16(const GemmF16&) = delete;
  GemmF16& operator=(const GemmF16&) = delete;

  GpuStatus run(const GemmF16Args& a, cudaStream_t stream);
  // The algorithm chosen for a shape, for benchmarks and logs ("algo 23 tile 18 stages 9 ... (picked for
  // 1024 rows)"; tile and stages are cuBLASLt's enum values, cublasLtMatmulTile_t and ..._Stages_t).
  std::string describe(const GemmF16Args& a);
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

 private:
  struct Impl;
  explicit GemmF16(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace qc::gpu
