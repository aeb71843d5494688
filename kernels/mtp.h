// MTP adapter input (QWEN35.md section 6): for each token row m,
//   out[m] = [ rmsnorm(e[m], enorm) | rmsnorm(h[m], hnorm) ]      (embedding half first, 2H wide)
// as f32 and/or quantised for the eh_proj GEMV (K = 2H). The quantisation blocks never straddle the halves
// (H is a multiple of 32), so each half is one norm_quant row.
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

struct MtpConcatArgs {
  const float* e = nullptr;  // [M][ld_e] embedding of the next token
  int ld_e = 0;
  const float* h = nullptr;  // [M][ld_h] main model's post-final-norm hidden state
  int ld_h = 0;
  const float* enorm = nullptr;  // [H]
  const float* hnorm = nullptr;  // [H]
  int n = 0;                     // H
  int m = 1;
  float eps = 1e-6f;
  float* out = nullptr;  // optional [M][ld_out], ld_out >= 2H
  int ld_out = 0;
  QActOut out_q{};  // optional quantised [M][2H]
  bool pdl = false;
};
GpuStatus mtp_concat(const MtpConcatArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
