// Greedy pick: out[m] = index of the largest value of row m, ties to the lowest index, NaN ignored (a row
// with no comparable value gives 0). Two stages -- per-chunk candidates, then one block per row over the
// candidates -- so a 248k vocabulary is read by ~120 blocks, not one. The (value, index) order is total,
// so the result does not depend on the reduction order at all.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "status.h"

namespace qc::gpu {

struct ArgmaxArgs {
  const float* x = nullptr;  // [M][ld_x]
  int ld_x = 0;
  int n = 0;
  int m = 1;
  int* out = nullptr;       // [M] device
  void* scratch = nullptr;  // argmax_scratch_bytes(n, m)
  bool pdl = false;
};
size_t argmax_scratch_bytes(int n, int m);
GpuStatus argmax(const ArgmaxArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
