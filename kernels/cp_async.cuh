// cp.async (sm_80+): 16-byte global -> shared copies through L2 only (.cg), 4-byte ones through L1 (.ca),
// completing in commit groups.
// Data written by earlier kernels is read after pdl_wait() (common.cuh), through L2 (coherent). A lane's
// copies are visible to the other lanes of its warp after cp_async_wait and __syncwarp(), to the block
// after cp_async_wait and __syncthreads().
#pragma once

#include <cstdint>

namespace qc::gpu {

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(gmem) : "memory");
#else
  *static_cast<float4*>(smem) = *static_cast<const float4*>(gmem);
#endif
}

// The same, but 16 zero bytes instead when !valid (gmem is then not read; pass any mapped address).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(gmem), "r"(valid ? 16 : 0)
               : "memory");
#else
  *static_cast<float4*>(smem) = valid ? *static_cast<const float4*>(gmem) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

// 4 bytes (both addresses 4-byte aligned) through L1 (.ca: the only form below 16 bytes), 4 zero bytes when
// !valid.
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(gmem), "r"(valid ? 4 : 0)
               : "memory");
#else
  *static_cast<uint32_t*>(smem) = valid ? *static_cast<const uint32_t*>(gmem) : 0u;
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most N of this thread's most recent groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

}  // namespace qc::gpu
