// Hidden-state probe: out[index] = ||x||_2 for one row, written into a device array (one slot per layer)
// so a whole token's probes are copied back with one asynchronous copy, never stalling the pipeline.
#pragma once

#include <cuda_runtime_api.h>

#include "status.h"

namespace qc::gpu {

struct ProbeArgs {
  const float* x = nullptr;  // [n]
  int n = 0;
  float* out = nullptr;  // device array
  int index = 0;         // slot (the layer)
  bool pdl = false;
};
GpuStatus probe_l2(const ProbeArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
