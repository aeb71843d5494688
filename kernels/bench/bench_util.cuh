// Measurement helpers shared by the benchmarks (qwenchat-gemv-bench, qwenchat-bench): random device data
// from a hash of (seed, index) -- never zeros, no curand --, the read-only bandwidth ceiling and the
// device-to-device copy rate measured in the same run as the code being judged (PERFORMANCE.md "Method"),
// and event timing with medians.
//
// Definitions, not declarations: include this header in exactly one CUDA translation unit per program.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#include <vector>

#include "bandwidth.h"
#include "layout.h"

// Benchmarks only: a failed CUDA call ends the program with the statement, file and line.
#define QC_BENCH_CHECK(stmt)                                                                           \
  do {                                                                                                 \
    const cudaError_t e_ = (stmt);                                                                     \
    if (e_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "FATAL: %s failed: %s at %s:%d\n", #stmt, cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                                                          \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)

// The same for the kernel layer's GpuStatus.
#define QC_BENCH_CHECK_GPU(stmt)                                                      \
  do {                                                                                \
    const ::qc::gpu::GpuStatus st_ = (stmt);                                          \
    if (!st_.ok()) {                                                                  \
      std::fprintf(stderr, "FATAL: %s failed: %s\n", #stmt, st_.describe().c_str()); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

namespace qc::bench {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// ---- random fills: SplitMix64's output function over seed + index ----
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
// int8 weights in [-127, 127]: a byte of 0x80 (-128) is moved to -127.
__global__ void fill_int8(int8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int v = static_cast<int>(mix(seed + i) & 0xffu) - 128;
    p[i] = static_cast<int8_t>(v < -127 ? -127 : v);
  }
}
// f16 values with magnitude in [lo, hi] and random sign (lo = 1e-3, hi = 2e-2: the GEMV bench's scales).
__global__ void fill_scales(uint16_t* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed + i);
    const float mag = lo + (hi - lo) * static_cast<float>(r & 0xffffu) / 65535.0f;
    p[i] = __half_as_ushort(__float2half_rn((r >> 20) & 1 ? -mag : mag));
  }
}
// The same f16 magnitudes at byte `offset` of each of n blocks of `block_bytes` (the scale fields of
// llama.cpp's block formats; block sizes and offsets are even, so the stores are aligned).
__global__ void fill_block_scales(uint8_t* base, size_t n, int block_bytes, int offset, uint64_t seed, float lo,
                                  float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed + i);
    const float mag = lo + (hi - lo) * static_cast<float>(r & 0xffffu) / 65535.0f;
    *reinterpret_cast<uint16_t*>(base + i * block_bytes + offset) = __half_as_ushort(__float2half_rn(mag));
  }
}
// mean + stddev * N(0, 1) (Box-Muller), as f32 or f16.
__global__ void fill_normal(float* p, size_t n, uint64_t seed, float mean, float stddev) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed + i);
    const float u1 = (static_cast<float>(r & 0xffffff) + 1.0f) / 16777217.0f;
    const float u2 = static_cast<float>((r >> 24) & 0xffffff) / 16777216.0f;
    p[i] = mean + stddev * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}
__global__ void fill_normal_f16(uint16_t* p, size_t n, uint64_t seed, float mean, float stddev) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed + i);
    const float u1 = (static_cast<float>(r & 0xffffff) + 1.0f) / 16777217.0f;
    const float u2 = static_cast<float>((r >> 24) & 0xffffff) / 16777216.0f;
    p[i] = __half_as_ushort(__float2half_rn(mean + stddev * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2)));
  }
}
// Uniform in [lo, hi).
__global__ void fill_uniform(float* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = lo + (hi - lo) * static_cast<float>(mix(seed + i) >> 40) / 16777216.0f;
}

template <class K, class... A>
void fill(K kernel, A... args) {
  kernel<<<1024, 256>>>(args...);
  QC_BENCH_CHECK(cudaGetLastError());
}
template <class K, class... A>
void fill_on(cudaStream_t s, K kernel, A... args) {
  kernel<<<1024, 256, 0, s>>>(args...);
  QC_BENCH_CHECK(cudaGetLastError());
}

// Bytes of one N x K Q8_0 matrix in the split layout (layout.h): int8 values and f16 scales.
inline double q8_bytes(int n, int k) {
  return static_cast<double>(qc::gpu::q8_split_q_bytes(n, k)) + 2.0 * qc::gpu::q8_split_d_count(n, k);
}

// Copies of one N x K Q8_0 matrix in the split layout (layout.h), filled on the device: enough copies to
// span min_total bytes, used in turn through copy(i), so that timed launches read DRAM, not L2. Shared by
// qwenchat-gemv-bench and qwenchat-gemm-bench (the same fill seeds in both).
struct Q8Copies {
  int n = 0, k = 0, copies = 0;
  size_t q_bytes = 0, d_count = 0;
  int8_t* q = nullptr;
  uint16_t* d = nullptr;
  double bytes() const { return q8_bytes(n, k); }
  qc::gpu::Q8Weights copy(int i) const {
    const size_t c = static_cast<size_t>(i % copies);
    return qc::gpu::Q8Weights{q + c * q_bytes, d + c * d_count, n, k, qc::gpu::q8_row_stride(k)};
  }
  void alloc(int nn, int kk, double min_total) {
    n = nn;
    k = kk;
    q_bytes = qc::gpu::q8_split_q_bytes(n, k);
    d_count = qc::gpu::q8_split_d_count(n, k);
    copies = std::max(2, static_cast<int>(std::ceil(min_total / bytes())));
    QC_BENCH_CHECK(cudaMalloc(&q, q_bytes * copies));
    QC_BENCH_CHECK(cudaMalloc(&d, d_count * copies * sizeof(uint16_t)));
    fill(fill_int8, q, q_bytes * copies, uint64_t{1000} + n + k);
    fill(fill_scales, d, d_count * copies, uint64_t{2000} + n + k, 1e-3f, 2e-2f);
    QC_BENCH_CHECK(cudaDeviceSynchronize());
  }
  void release() {
    QC_BENCH_CHECK(cudaFree(q));
    QC_BENCH_CHECK(cudaFree(d));
    q = nullptr;
    d = nullptr;
  }
};

// ---- the read-only stream ----

// Median seconds of `reps` timed runs of `body` (after one warm-up), timed with events on `s`.
double time_median(cudaStream_t s, int reps, const std::function<void()>& body) {
  cudaEvent_t a, b;
  QC_BENCH_CHECK(cudaEventCreate(&a));
  QC_BENCH_CHECK(cudaEventCreate(&b));
  body();
  QC_BENCH_CHECK(cudaStreamSynchronize(s));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    QC_BENCH_CHECK(cudaEventRecord(a, s));
    body();
    QC_BENCH_CHECK(cudaEventRecord(b, s));
    QC_BENCH_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    QC_BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e-3);
  }
  QC_BENCH_CHECK(cudaEventDestroy(a));
  QC_BENCH_CHECK(cudaEventDestroy(b));
  return median(t);
}

struct Ceilings {
  double read_gbs = 0.0;  // best median over the block counts
  double copy_gbs = 0.0;  // device-to-device, bytes read + written
  double buffer_gib = 0.0;
  std::vector<std::pair<int, double>> read_runs;  // blocks per SM, GB/s
};

// Read ceiling: 16-byte loads, four in flight per thread, grid-stride over a buffer of up to `max_bytes`
// (halved until it allocates), blocks of 512 threads x {2, 4, 8, 16} per SM, median of `reps` each. Copy:
// cudaMemcpyAsync of half the buffer onto the other half. Prints one line per measurement.
Ceilings measure_ceilings(cudaStream_t s, int sm_count, int reps, size_t max_bytes = size_t{8} << 30) {
  Ceilings c;
  size_t bytes = max_bytes;
  void* buf = nullptr;
  while (cudaMalloc(&buf, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    bytes /= 2;
    if (bytes < (size_t{1} << 30)) {
      std::printf("!! could not allocate 1 GiB for the read ceiling\n");
      return c;
    }
  }
  c.buffer_gib = bytes / 1073741824.0;
  if (bytes != max_bytes)
    std::printf("note: read buffer reduced to %.0f GiB (allocation failed)\n", c.buffer_gib);
  int* sink = nullptr;
  QC_BENCH_CHECK(cudaMalloc(&sink, sizeof(int)));
  fill(fill_bytes, static_cast<uint32_t*>(buf), bytes / 4, uint64_t{1});
  QC_BENCH_CHECK(cudaDeviceSynchronize());
  for (int bps : {2, 4, 8, 16}) {
    const int grid = bps * sm_count;
    const double t = time_median(
        s, reps, [&] { QC_BENCH_CHECK_GPU(gpu::read_stream({buf, bytes, grid, sink}, s)); });
    const double gbs = bytes / t / 1e9;
    c.read_runs.push_back({bps, gbs});
    c.read_gbs = std::max(c.read_gbs, gbs);
    std::printf(
        "read ceiling: %2d blocks x 512 threads per SM: %7.0f GB/s (%.3f ms for %.1f GiB, median of %d)\n",
        bps, gbs, t * 1e3, c.buffer_gib, reps);
  }
  const size_t half = bytes / 2;
  const double t = time_median(s, reps, [&] {
    QC_BENCH_CHECK(cudaMemcpyAsync(static_cast<char*>(buf) + half, buf, half, cudaMemcpyDeviceToDevice, s));
  });
  c.copy_gbs = 2.0 * half / t / 1e9;
  std::printf("device-to-device copy of %.1f GiB: %.0f GB/s counting read + write (median of %d)\n",
              half / 1073741824.0, c.copy_gbs, reps);
  QC_BENCH_CHECK(cudaFree(sink));
  QC_BENCH_CHECK(cudaFree(buf));
  return c;
}

}  // namespace qc::bench
