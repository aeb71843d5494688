// The read-only bandwidth ceiling of the device the backend runs on, measured once at load so the
// diagnostics can put the decode's effective GB/s next to what this card actually reads (not a datasheet
// figure). Method as the benchmarks' (kernels/bandwidth.h): the median of a few timed streams per block
// count, the best block count kept.
//
// What is read: the uploaded weights themselves when they are at least kMinCeilingBytes (the decode's own
// bytes, no extra memory: ~16 reads of 27 GB = ~0.1 s for the 27B model); otherwise a temporary buffer of
// up to 1 GiB (~10 ms), since a buffer that fits in the L2 cache (50 MiB on an H200) would measure the
// cache. When neither is possible (the card is full) the ceiling is reported as not measured (0).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "qwenchat/result.h"

namespace qc::cuda {

inline constexpr size_t kMinCeilingBytes = size_t{512} << 20;

struct ReadCeiling {
  double gbs = 0.0;       // 0: not measured
  size_t bytes = 0;       // bytes of one stream
  bool weights = false;   // read the weights (else a temporary buffer)
  int blocks_per_sm = 0;  // the block count that won
};

// `weights`/`weight_bytes`: the device weight block (read only). `reserve`: device bytes that must stay
// free when a temporary buffer is allocated.
Result<ReadCeiling> measure_read_ceiling(const void* weights, size_t weight_bytes, int sm_count, size_t reserve,
                                         cudaStream_t stream);

}  // namespace qc::cuda
