// Two launches. Stage 1: grid of chunks (2048-8192 logits each), 1024 threads; each block bitonic-sorts
// its chunk's 64-bit keys (orderable value << 32 | ~index) in shared memory and writes its top k. Stage 2:
// one block sorts the chunks' candidates the same way and thread 0 runs the sequential rule of sample.h
// over at most 256 candidates in double. Sorting keys that embed the index makes every order total, so
// the result depends on the data only. Cost: ~1 MB read plus a few sorts of <= 8192 keys: tens of us,
// a fraction of a 27B token; a threshold pre-filter would cut it when it matters.
#include <math.h>

#include "common.cuh"
#include "sample.h"
#include "sample_rng.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 1024;
constexpr int kMaxKeys = 8192;  // 64 KB of shared memory per sort

__device__ __forceinline__ unsigned long long make_key(float v, int i) {
  uint32_t bits = __float_as_uint(v);
  if (isnan(v)) bits = 0xff800000u;  // -inf
  const uint32_t ord = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<unsigned long long>(ord) << 32) |
         static_cast<uint32_t>(0xffffffffu - static_cast<uint32_t>(i));
}
__device__ __forceinline__ float key_value(unsigned long long key) {
  const uint32_t ord = static_cast<uint32_t>(key >> 32);
  const uint32_t bits = (ord & 0x80000000u) ? (ord & 0x7fffffffu) : ~ord;
  return __uint_as_float(bits);
}
__device__ __forceinline__ int key_index(unsigned long long key) {
  return static_cast<int>(0xffffffffu - static_cast<uint32_t>(key & 0xffffffffu));
}

// Descending bitonic sort of n (a power of two) keys in shared memory by the whole block.
__device__ void bitonic_desc(unsigned long long* s, int n) {
  for (int k = 2; k <= n; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const int ixj = i ^ j;
        if (ixj > i) {
          const unsigned long long a = s[i], b = s[ixj];
          const bool desc = (i & k) == 0;
          if (desc ? (a < b) : (a > b)) {
            s[i] = b;
            s[ixj] = a;
          }
        }
      }
      __syncthreads();
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    sample_stage1(const float* logits, int n_vocab, int chunk, int top_k, unsigned long long* cand) {
  extern __shared__ unsigned long long keys[];
  pdl_wait();
  pdl_trigger();
  const int begin = blockIdx.x * chunk;
  for (int i = threadIdx.x; i < chunk; i += kThreads) {
    const int g = begin + i;
    keys[i] = g < n_vocab ? make_key(logits[g], g) : 0ull;  // 0 sorts below every real key
  }
  __syncthreads();
  bitonic_desc(keys, chunk);
  for (int i = threadIdx.x; i < top_k; i += kThreads) cand[blockIdx.x * top_k + i] = keys[i];
}

__global__ void __launch_bounds__(kThreads)
    sample_stage2(const unsigned long long* cand, int n_cand, int n_pow2, DeviceSampleParams p,
                  unsigned long long* d_counter, int* out_token) {
  extern __shared__ unsigned long long keys[];
  pdl_wait();
  pdl_trigger();
  for (int i = threadIdx.x; i < n_pow2; i += kThreads) keys[i] = i < n_cand ? cand[i] : 0ull;
  __syncthreads();
  bitonic_desc(keys, n_pow2);
  if (threadIdx.x != 0) return;
  const int k = p.top_k;
  if (!(p.temperature > 0.0f)) {
    *out_token = key_index(keys[0]);
    return;
  }
  const double z0 = key_value(keys[0]);
  const double t = p.temperature;
  double e[kMaxDeviceTopK];
  double total = 0.0;
  for (int i = 0; i < k; ++i) {
    e[i] = exp((static_cast<double>(key_value(keys[i])) - z0) / t);
    total += e[i];
  }
  int keep = k;
  if (p.top_p < 1.0f) {
    const double target = static_cast<double>(p.top_p) * total;
    double run = 0.0;
    for (int i = 0; i < k; ++i) {
      run += e[i];
      if (run >= target) {
        keep = i + 1;
        break;
      }
    }
  }
  if (p.min_p > 0.0f) {
    int j = 1;
    while (j < keep && e[j] >= static_cast<double>(p.min_p)) ++j;
    keep = j;
  }
  double kept = 0.0;
  for (int i = 0; i < keep; ++i) kept += e[i];
  const unsigned long long counter = *d_counter;
  const double u = counter_uniform24(p.seed, counter);
  const double target = u * kept;
  int pick = keep - 1;
  double run = 0.0;
  for (int i = 0; i < keep; ++i) {
    run += e[i];
    if (target < run) {
      pick = i;
      break;
    }
  }
  *out_token = key_index(keys[pick]);
  *d_counter = counter + 1;
}

int next_pow2(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Chunk size: the smallest of 2048/4096/8192 whose candidates (chunks * k) fit one stage-2 sort.
int pick_chunk(int n_vocab, int top_k) {
  for (int chunk = 2048; chunk <= kMaxKeys; chunk <<= 1) {
    const int chunks = (n_vocab + chunk - 1) / chunk;
    if (static_cast<long long>(chunks) * top_k <= kMaxKeys) return chunk;
  }
  return 0;
}

}  // namespace

size_t sample_scratch_bytes(int n_vocab, int top_k) {
  const int chunk = pick_chunk(n_vocab, top_k);
  if (chunk == 0) return 0;
  return static_cast<size_t>((n_vocab + chunk - 1) / chunk) * top_k * sizeof(unsigned long long);
}

GpuStatus sample_token(const SampleArgs& a, cudaStream_t stream) {
  const DeviceSampleParams& p = a.params;
  QC_GPU_REQUIRE(a.logits && a.d_counter && a.out_token && a.scratch,
                 "sample_token: logits, d_counter, out_token and scratch must be non-null");
  QC_GPU_REQUIRE(
      p.top_k >= 1 && p.top_k <= kMaxDeviceTopK,
      "sample_token: top_k must be in [1, 256] on the device (0/off or larger: sample on the host), got " +
          std::to_string(p.top_k));
  QC_GPU_REQUIRE(a.n_vocab >= p.top_k, "sample_token: n_vocab must be >= top_k");
  QC_GPU_REQUIRE(p.top_p > 0.0f && p.top_p <= 1.0f,
                 "sample_token: top_p must be in (0, 1], got " + std::to_string(p.top_p));
  QC_GPU_REQUIRE(p.min_p >= 0.0f && p.min_p <= 1.0f,
                 "sample_token: min_p must be in [0, 1], got " + std::to_string(p.min_p));
  const int chunk = pick_chunk(a.n_vocab, p.top_k);
  QC_GPU_REQUIRE(chunk > 0, "sample_token: vocabulary of " + std::to_string(a.n_vocab) + " with top_k " +
                                std::to_string(p.top_k) + " needs more than 8192 stage-2 candidates");
  const int chunks = (a.n_vocab + chunk - 1) / chunk;
  const int n_cand = chunks * p.top_k;
  const int n_pow2 = next_pow2(n_cand);
  auto* cand = static_cast<unsigned long long*>(a.scratch);
  const size_t smem1 = static_cast<size_t>(chunk) * sizeof(unsigned long long);
  const size_t smem2 = static_cast<size_t>(n_pow2) * sizeof(unsigned long long);
  QC_CUDA_CHECK(cudaFuncSetAttribute(sample_stage1, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem1)));
  QC_CUDA_CHECK(cudaFuncSetAttribute(sample_stage2, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem2)));
  QC_CUDA_CHECK(launch_kernel(sample_stage1, dim3(chunks), dim3(kThreads), smem1, stream, a.pdl, a.logits,
                              a.n_vocab, chunk, p.top_k, cand));
  QC_LAUNCH_CHECK("sample_stage1", stream);
  QC_CUDA_CHECK(launch_kernel(sample_stage2, dim3(1), dim3(kThreads), smem2, stream, a.pdl,
                              static_cast<const unsigned long long*>(cand), n_cand, n_pow2, p, a.d_counter,
                              a.out_token));
  QC_LAUNCH_CHECK("sample_stage2", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
