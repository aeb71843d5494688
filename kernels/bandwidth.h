// The read-only stream that defines "the ceiling" (PERFORMANCE.md "Method"): every byte of a buffer read
// once with 16-byte non-allocating loads, four in flight per thread, a grid-stride loop. Decode is a
// stream of weight reads, so this is the rate a perfect decode would reach. Used by the benchmarks and,
// at load, by the CUDA backend so the diagnostics can show the decode's share of the measured ceiling.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "status.h"

namespace qc::gpu {

inline constexpr int kReadStreamThreads = 512;

struct ReadStreamArgs {
  const void* data = nullptr;  // 16-byte aligned
  size_t bytes = 0;            // a multiple of 16 (the tail beyond is not read)
  int grid = 0;                // blocks of kReadStreamThreads threads
  int* sink = nullptr;         // one device int: written only for an impossible XOR, keeps the loads alive
};
GpuStatus read_stream(const ReadStreamArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
