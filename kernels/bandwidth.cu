#include "bandwidth.h"
#include "common.cuh"

namespace qc::gpu {
namespace {

__device__ __forceinline__ int4 ld_stream(const int4* p) {
  int4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

__global__ void __launch_bounds__(kReadStreamThreads) read_stream_kernel(const int4* p, size_t n, int* sink) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  int acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const int4 a = ld_stream(p + i), b = ld_stream(p + i + stride), c = ld_stream(p + i + 2 * stride),
               d = ld_stream(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    const int4 a = ld_stream(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x7e57c0de) *sink = acc;
}

}  // namespace

GpuStatus read_stream(const ReadStreamArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.data && a.sink, "read_stream: data and sink must be non-null");
  QC_GPU_REQUIRE(reinterpret_cast<uintptr_t>(a.data) % 16 == 0, "read_stream: data must be 16-byte aligned");
  QC_GPU_REQUIRE(a.bytes >= 16 && a.grid > 0, "read_stream: need bytes >= 16 and grid > 0, got bytes=" +
                                                  std::to_string(a.bytes) + " grid=" + std::to_string(a.grid));
  read_stream_kernel<<<a.grid, kReadStreamThreads, 0, stream>>>(static_cast<const int4*>(a.data), a.bytes / 16,
                                                                 a.sink);
  QC_LAUNCH_CHECK("read_stream_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
