#include "device_fill.h"

#include "bench/bench_util.cuh"

namespace qc::bench_app {

CeilingResult measure_ceilings(cudaStream_t s, int sm_count, int reps) {
  const qc::bench::Ceilings c = qc::bench::measure_ceilings(s, sm_count, reps);
  CeilingResult r;
  r.read_gbs = c.read_gbs;
  r.copy_gbs = c.copy_gbs;
  r.buffer_gib = c.buffer_gib;
  r.read_runs = c.read_runs;
  return r;
}

void fill_int8(int8_t* p, size_t n, uint64_t seed, cudaStream_t s) {
  qc::bench::fill_on(s, qc::bench::fill_int8, p, n, seed);
}
void fill_scales_f16(uint16_t* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s) {
  qc::bench::fill_on(s, qc::bench::fill_scales, p, n, seed, lo, hi);
}
void fill_block_scales_f16(uint8_t* base, size_t n_blocks, int block_bytes, int offset, uint64_t seed, float lo,
                           float hi, cudaStream_t s) {
  qc::bench::fill_on(s, qc::bench::fill_block_scales, base, n_blocks, block_bytes, offset, seed, lo, hi);
}
void fill_normal_f32(float* p, size_t n, uint64_t seed, float mean, float stddev, cudaStream_t s) {
  qc::bench::fill_on(s, qc::bench::fill_normal, p, n, seed, mean, stddev);
}
void fill_normal_f16(uint16_t* p, size_t n, uint64_t seed, float mean, float stddev, cudaStream_t s) {
  qc::bench::fill_on(s, qc::bench::fill_normal_f16, p, n, seed, mean, stddev);
}
void fill_uniform_f32(float* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s) {
  qc::bench::fill_on(s, qc::bench::fill_uniform, p, n, seed, lo, hi);
}

}  // namespace qc::bench_app
