// SwiGLU of the FFN, h = silu(gate) * up, with the re-quantisation for the down projection fused in (used
// when gate and up come from separate GEMVs; gemv_q8_gateup() fuses all of it into the GEMV epilogue and
// produces the same bits).
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
  bool pdl = false;
};
GpuStatus swiglu(const SwigluArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
