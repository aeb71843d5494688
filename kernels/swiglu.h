// SwiGLU of the FFN, h = silu(gate) * up, with the re-quantisation for the down projection fused in (used
// when gate and up come from separate GEMVs; gemv_q8_gateup() fuses all of it into the GEMV epilogue and
// produces the same bits), or the f16 prompt path's rounding (out16: rows_to_f16's bits, without writing
// and re-reading h in f32: 4 of the 10 bytes per element at 2048 rows).
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

struct SwigluArgs {
  const float* gate = nullptr;  // [M][ld_gate]
  int ld_gate = 0;
  const float* up = nullptr;  // [M][ld_up]
  int ld_up = 0;
  int n = 0;  // multiple of 32 when out_q is requested
  int m = 1;
  float* out = nullptr;  // optional [M][ld_out] f32
  int ld_out = 0;
  QActOut out_q{};  // optional quantised h (lo null: format h)
  uint16_t* out16 = nullptr;  // optional [M][ld_out16] f16(h * 2^-shift16) saturated, as gemm_f16.h rows_to_f16
  int ld_out16 = 0;
  int shift16 = 0;
  bool pdl = false;
};
GpuStatus swiglu(const SwigluArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
