// The counter-based uniform draw of the device sampler (sample.cu), host and device (its host tests
// reproduce the draws). The generator's sampler on the host draws with Philox-4x32-10 instead
// (engine/generate/sampler.h); the device sampler is not on the decode path (docs/CUDA_BACKEND.md).
//
//   z = seed + (counter + 1) * 0x9E3779B97F4A7C15            (mod 2^64)
//   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//   z =  z ^ (z >> 31)
//   u = (z >> 40) * 2^-24                                    (24 bits: exact in f32, u in [0, 1))
//
// That is output number `counter` (0-based) of Vigna's SplitMix64 generator seeded with `seed`, so any
// SplitMix64 implementation reproduces it (seed 0: first output 0xE220A8397B1DCDAF).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define QC_HOST_DEVICE __host__ __device__
#else
#define QC_HOST_DEVICE
#endif

namespace qc::gpu {

QC_HOST_DEVICE inline uint64_t splitmix64_at(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + (counter + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

QC_HOST_DEVICE inline float counter_uniform24(uint64_t seed, uint64_t counter) {
  return static_cast<float>(splitmix64_at(seed, counter) >> 40) * (1.0f / 16777216.0f);
}

}  // namespace qc::gpu
