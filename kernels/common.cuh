// Device helpers shared by every kernel file: reductions in a fixed order, the activation quantiser, the
// scalar functions of the model (silu, sigmoid, softplus), number-format conversions, Hopper's
// programmatic-dependent-launch hooks, and the host-side launch helper.
//
// Determinism: every reduction here has an order fixed by the thread layout alone (butterflies over lanes,
// then warp partials in ascending warp order), never by scheduling, and nothing uses float atomics.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

inline constexpr unsigned kFullMask = 0xffffffffu;
// The f32 nearest 1/127: the weight of the low word in the hl activation format (layout.h).
inline constexpr float kInv127 = 1.0f / 127.0f;

// ---- programmatic dependent launch (sm_90) ----
// Every kernel calls pdl_trigger() early, so a kernel launched after it with the programmatic-serialization
// attribute may start its blocks (and prefetch its weights, which nothing writes) while this one drains.
// Every kernel calls pdl_wait() before it reads anything an earlier kernel wrote or writes anything an
// earlier kernel reads; the wait returns once all earlier grids have completed and their memory is visible.
// Because every kernel waits unconditionally (in all threads, before any early return), completion is
// transitive along the stream. On older GPUs, and when the attribute is not set, both are no-ops.
// Loads: data written by earlier kernels is read with ordinary (coherent) loads after pdl_wait(), never
// through __ldg / ld.global.nc, whose contract (read-only for the kernel's lifetime) a PDL overlap with
// the still-running producer would break. Only the weights, written once at load time, use the .nc path.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// ---- conversions ----
__device__ __forceinline__ float h2f(uint16_t bits) {
  return __half2float(__ushort_as_half(bits));
}
__device__ __forceinline__ float bf2f(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}
__device__ __forceinline__ uint16_t f2h(float v) {
  return __half_as_ushort(__float2half_rn(v));
}
// A finite value beyond f16's range becomes +-kF16Max instead of infinity (NaN stays NaN): the f16 prompt
// path's activation rounding (gemm_f16.h rows_to_f16, swiglu.h out16), one definition for both.
__device__ __forceinline__ float saturate_f16(float v) {
  return (isfinite(v) && fabsf(v) > kF16Max) ? copysignf(kF16Max, v) : v;
}

// ---- reductions ----
// Butterfly over the 32 lanes: every lane ends with the same value, summed in the same tree on every run.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
// `scratch` is 32 floats of shared memory; the call starts and ends with __syncthreads so it can be reused.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float t = lane < nwarps ? scratch[lane] : 0.0f;
  t = warp_sum(t);  // every warp reduces the partials the same way: no second broadcast needed
  __syncthreads();
  return t;
}
__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float t = lane < nwarps ? scratch[lane] : -INFINITY;
  t = warp_max(t);
  __syncthreads();
  return t;
}

// ---- model scalar functions (accurate library versions: they feed exponentials and gates) ----
__device__ __forceinline__ float silu(float x) {
  return __fdiv_rn(x, __fadd_rn(1.0f, expf(-x)));
}
// 1 / (1 + e^-x) correctly rounded: __frcp_rn gives the bits of __fdiv_rn(1.0f, y) (both round the exact
// quotient to nearest) without the division's range check and slow-path call (attn_flash_kernel's epilogue
// has head_dim / 4 of these a thread).
__device__ __forceinline__ float sigmoid(float x) {
  return __frcp_rn(__fadd_rn(1.0f, expf(-x)));
}
// softplus(x) = log(1 + exp(x)), linear above 20 like torch.nn.functional.softplus (threshold 20).
__device__ __forceinline__ float softplus(float x) {
  return x > 20.0f ? x : log1pf(expf(x));
}

// ---- activation quantiser (layout.h: formats h and hl) ----
// One warp quantises one 32-element block: lane j holds element j. Writes hi (and lo when non-null) at
// [base + lane] and the block scale (lane 0). The same arithmetic as the CPU mirror in the tests:
//   s = max|v| / 127; t = v / s; hi = rint(t); lo = rint((t - hi) * 127)   (IEEE f32, rint half-even)
// t - hi is exact (Sterbenz), |t - hi| <= 1/2 so |lo| <= 64. All-zero blocks get s = 0 and q = 0.
__device__ __forceinline__ void quantize_block_warp(float v, int8_t* hi, int8_t* lo, float* scale_slot) {
  const int lane = threadIdx.x & 31;
  const float amax = warp_max(fabsf(v));
  const float s = __fdiv_rn(amax, 127.0f);
  int qh = 0, ql = 0;
  if (s > 0.0f) {
    const float t = __fdiv_rn(v, s);
    qh = min(max(__float2int_rn(t), -127), 127);
    ql = __float2int_rn(__fmul_rn(__fsub_rn(t, __int2float_rn(qh)), 127.0f));
  }
  hi[lane] = static_cast<int8_t>(qh);
  if (lo) lo[lane] = static_cast<int8_t>(ql);
  if (lane == 0) *scale_slot = s;
}

// Launch `kernel` with an optional programmatic-serialization attribute (Hopper PDL). The attribute is set
// only on compute capability >= 9 and when `pdl` is true; everything else is a plain launch.
template <typename... KArgs, typename... Args>
cudaError_t launch_kernel(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          bool pdl, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  cfg.attrs = attr;
  cfg.numAttrs = 0;
  if (pdl) {
    int dev = 0, major = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e != cudaSuccess) return e;
    if (major >= 9) {
      attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.numAttrs = 1;
    }
  }
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// An attribute of the current device, `fallback` on error.
inline int device_attribute(cudaDeviceAttr attr, int fallback) {
  int dev = 0, v = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) return fallback;
  return v;
}

// Number of multiprocessors of the current device (0 on error).
inline int device_sm_count() { return device_attribute(cudaDevAttrMultiProcessorCount, 0); }

inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

}  // namespace qc::gpu
