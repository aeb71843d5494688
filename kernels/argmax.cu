// Stage 1: grid (chunks, M), 256 threads; each block reduces a 2048-element chunk to its best (value,
// index). Stage 2: one block per row reduces the chunk candidates in the same order.
#include <climits>

#include "argmax.h"
#include "common.cuh"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kChunk = 2048;
constexpr int kMaxChunks = 1024;  // n <= 2M entries

struct Best {
  float v;
  int i;
};

// (v, i) beats (bv, bi) if larger, or equal with a lower index; NaN never beats anything.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) {
  return v > bv || (v == bv && i < bi);
}

__device__ __forceinline__ Best warp_best(Best b) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(kFullMask, b.v, o);
    const int i = __shfl_xor_sync(kFullMask, b.i, o);
    if (better(v, i, b.v, b.i)) b = Best{v, i};
  }
  return b;
}

__device__ Best block_best(Best b) {
  __shared__ float sv[32];
  __shared__ int si[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  b = warp_best(b);
  if (lane == 0) {
    sv[warp] = b.v;
    si[warp] = b.i;
  }
  __syncthreads();
  Best t = lane < nw ? Best{sv[lane], si[lane]} : Best{-INFINITY, INT_MAX};
  return warp_best(t);
}

__global__ void __launch_bounds__(kThreads)
    argmax_stage1(const float* x, int ld_x, int n, float* cand_v, int* cand_i, int chunks) {
  pdl_wait();
  pdl_trigger();
  const int m = blockIdx.y;
  const float* row = x + static_cast<size_t>(m) * ld_x;
  const int begin = blockIdx.x * kChunk, end = min(n, begin + kChunk);
  Best b{-INFINITY, INT_MAX};
  for (int i = begin + threadIdx.x; i < end; i += kThreads) {
    const float v = row[i];
    if (better(v, i, b.v, b.i)) b = Best{v, i};
  }
  b = block_best(b);
  if (threadIdx.x == 0) {
    cand_v[m * chunks + blockIdx.x] = b.v;
    cand_i[m * chunks + blockIdx.x] = b.i;
  }
}

__global__ void __launch_bounds__(kThreads)
    argmax_stage2(const float* cand_v, const int* cand_i, int chunks, int* out) {
  pdl_wait();
  pdl_trigger();
  const int m = blockIdx.x;
  Best b{-INFINITY, INT_MAX};
  for (int c = threadIdx.x; c < chunks; c += kThreads) {
    const float v = cand_v[m * chunks + c];
    const int i = cand_i[m * chunks + c];
    if (better(v, i, b.v, b.i)) b = Best{v, i};
  }
  b = block_best(b);
  if (threadIdx.x == 0) out[m] = b.i == INT_MAX ? 0 : b.i;
}

int num_chunks(int n) {
  return (n + kChunk - 1) / kChunk;
}

}  // namespace

size_t argmax_scratch_bytes(int n, int m) {
  return static_cast<size_t>(num_chunks(n)) * static_cast<size_t>(m) * (sizeof(float) + sizeof(int));
}

GpuStatus argmax(const ArgmaxArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.x && a.out && a.scratch, "argmax: x, out and scratch must be non-null");
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens, "argmax: M must be in [1, 4], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(
      a.n > 0 && num_chunks(a.n) <= kMaxChunks,
      "argmax: n must be in [1, " + std::to_string(kMaxChunks * kChunk) + "], got " + std::to_string(a.n));
  QC_GPU_REQUIRE(a.ld_x >= a.n, "argmax: ld_x must be >= n");
  const int chunks = num_chunks(a.n);
  float* cand_v = static_cast<float*>(a.scratch);
  int* cand_i = reinterpret_cast<int*>(cand_v + static_cast<size_t>(chunks) * a.m);
  QC_CUDA_CHECK(launch_kernel(argmax_stage1, dim3(chunks, a.m), dim3(kThreads), 0, stream, a.pdl, a.x, a.ld_x,
                              a.n, cand_v, cand_i, chunks));
  QC_LAUNCH_CHECK("argmax_stage1", stream);
  QC_CUDA_CHECK(launch_kernel(argmax_stage2, dim3(a.m), dim3(kThreads), 0, stream, a.pdl,
                              static_cast<const float*>(cand_v), static_cast<const int*>(cand_i), chunks,
                              a.out));
  QC_LAUNCH_CHECK("argmax_stage2", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
