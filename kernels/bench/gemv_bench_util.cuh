// Helpers of qwenchat-gemv-bench: error checks, random fills (never zeros), the read-only stream that
// measures the ceiling, event timing, and the schedule labels of the sweep.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bandwidth.h"
#include "gemv_q8.h"

namespace qc::bench {

#define BENCH_CHECK(stmt)                                                                              \
  do {                                                                                                 \
    const cudaError_t e_ = (stmt);                                                                     \
    if (e_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "FATAL: %s failed: %s at %s:%d\n", #stmt, cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                                                          \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

__device__ __forceinline__ uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
__global__ void fill_bytes(uint32_t* p, size_t n_words, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n_words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<uint32_t>(mix(seed + i * 0x9E3779B97F4A7C15ull)) | 0x01010101u;
}
// int8 weights in [-127, 127], four per thread step: a byte of 0x80 (-128) is moved to -127.
__global__ void fill_int8(int8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int v = static_cast<int>(mix(seed + i) & 0xffu) - 128;
    p[i] = static_cast<int8_t>(v < -127 ? -127 : v);
  }
}
// f16 scales with magnitude in [1e-3, 2e-2] and random sign.
__global__ void fill_scales(uint16_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed + i);
    const float mag = 1e-3f + 1.9e-2f * static_cast<float>(r & 0xffffu) / 65535.0f;
    p[i] = __half_as_ushort(__float2half_rn((r >> 20) & 1 ? -mag : mag));
  }
}
__global__ void fill_normal(float* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed + i);
    const float u1 = (static_cast<float>(r & 0xffffff) + 1.0f) / 16777217.0f;
    const float u2 = static_cast<float>((r >> 24) & 0xffffff) / 16777216.0f;
    p[i] = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}


template <class K, class... A>
void fill(K kernel, A... args) {
  kernel<<<2048, 256>>>(args...);
  BENCH_CHECK(cudaGetLastError());
}

// Median seconds of `reps` timed runs of `body` (after one warm-up), timed with events on `s`.
inline double time_median(cudaStream_t s, int reps, const std::function<void()>& body) {
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  body();
  BENCH_CHECK(cudaStreamSynchronize(s));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    BENCH_CHECK(cudaEventRecord(a, s));
    body();
    BENCH_CHECK(cudaEventRecord(b, s));
    BENCH_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e-3);
  }
  BENCH_CHECK(cudaEventDestroy(a));
  BENCH_CHECK(cudaEventDestroy(b));
  return median(t);
}

// "e2 C8 R1 c4 S4 g1 t2" (engine 2: consumer warps, rows per warp, chunk, stages, blocks per SM, trigger),
// "e3 W8 R1 U8 g2 t2", "e1 R1 U4 b4"; "auto" for the launcher's choice.
inline std::string tuning_label(const qc::gpu::TileTuning& t) {
  char b[96];
  if (t.engine == 1)
    std::snprintf(b, sizeof b, "e1 R%d U%d b%d", t.rows_per_warp, t.unroll, t.blocks_per_sm);
  else if (t.engine == 2)
    std::snprintf(b, sizeof b, "e2 C%d R%d c%d S%d g%d t%d", t.warps, t.rows_per_warp, t.chunk, t.stages,
                  t.grid_per_sm, t.trigger);
  else if (t.engine == 3)
    std::snprintf(b, sizeof b, "e3 W%d R%d U%d g%d t%d", t.warps, t.rows_per_warp, t.unroll, t.grid_per_sm,
                  t.trigger);
  else
    std::snprintf(b, sizeof b, "auto");
  std::string out = b;
  if (t.grid > 0) out += " G" + std::to_string(t.grid);
  return out;
}

inline qc::gpu::TileTuning e1(int r, int u, int b) {
  qc::gpu::TileTuning t;
  t.engine = 1;
  t.rows_per_warp = r;
  t.unroll = u;
  t.blocks_per_sm = b;
  return t;
}
inline qc::gpu::TileTuning e2(int c, int r, int chunk, int stages, int g, int trig) {
  qc::gpu::TileTuning t;
  t.engine = 2;
  t.warps = c;
  t.rows_per_warp = r;
  t.chunk = chunk;
  t.stages = stages;
  t.grid_per_sm = g;
  t.trigger = trig;
  return t;
}
inline qc::gpu::TileTuning e3(int w, int r, int u, int g, int trig) {
  qc::gpu::TileTuning t;
  t.engine = 3;
  t.warps = w;
  t.rows_per_warp = r;
  t.unroll = u;
  t.grid_per_sm = g;
  t.trigger = trig;
  return t;
}

}  // namespace qc::bench
