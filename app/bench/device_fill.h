// Device-side helpers of qwenchat-bench, behind a plain C++17 interface (the .cu file is compiled as
// C++17 and includes no engine header): the bandwidth ceilings (kernels/bench/bench_util.cuh, shared with
// qwenchat-gemv-bench) and random fills from a hash of (seed, index), enqueued on a stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace qc::bench_app {

struct CeilingResult {
  double read_gbs = 0.0, copy_gbs = 0.0, buffer_gib = 0.0;
  std::vector<std::pair<int, double>> read_runs;  // blocks per SM, GB/s
};
CeilingResult measure_ceilings(cudaStream_t s, int sm_count, int reps);

// int8 uniform in [-127, 127].
void fill_int8(int8_t* p, size_t n, uint64_t seed, cudaStream_t s);
// f16 with magnitude uniform in [lo, hi], random sign.
void fill_scales_f16(uint16_t* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s);
// Positive f16 magnitudes uniform in [lo, hi] at byte `offset` of each of n_blocks blocks of block_bytes.
void fill_block_scales_f16(uint8_t* base, size_t n_blocks, int block_bytes, int offset, uint64_t seed, float lo,
                           float hi, cudaStream_t s);
void fill_normal_f32(float* p, size_t n, uint64_t seed, float mean, float stddev, cudaStream_t s);
void fill_normal_f16(uint16_t* p, size_t n, uint64_t seed, float mean, float stddev, cudaStream_t s);
void fill_uniform_f32(float* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s);

}  // namespace qc::bench_app
