// Error values of the kernel layer. The kernels library depends on the CUDA toolkit only, so it carries its
// own small status type instead of qc::Status; the engine's CUDA backend converts it with describe().
//
// Nothing here exits or aborts: a failed CUDA call or a bad argument comes back as a GpuStatus naming the
// statement (or the argument), the expected and the actual value, and the file and line.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace qc::gpu {

struct [[nodiscard]] GpuStatus {
  cudaError_t code = cudaSuccess;
  std::string message;  // empty on success

  bool ok() const { return code == cudaSuccess; }
  explicit operator bool() const { return ok(); }
  const std::string& describe() const { return message; }

  static GpuStatus success() { return {}; }
  // A failed CUDA call: "cudaMalloc(&p, n) failed: out of memory (cudaErrorMemoryAllocation) at f.cu:12".
  static GpuStatus cuda(cudaError_t e, const char* statement, const char* file, int line) {
    GpuStatus s;
    s.code = e;
    s.message = std::string(statement) + " failed: " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) +
                ") at " + file + ":" + std::to_string(line);
    return s;
  }
  // A bad argument: "gemv_q8: K must be a multiple of 32, got 100".
  static GpuStatus invalid(std::string what) {
    GpuStatus s;
    s.code = cudaErrorInvalidValue;
    s.message = std::move(what);
    return s;
  }
};

}  // namespace qc::gpu

// Return a GpuStatus from the enclosing function when a CUDA runtime call fails.
#define QC_CUDA_CHECK(stmt)                                                       \
  do {                                                                            \
    const cudaError_t qc_cuda_err_ = (stmt);                                      \
    if (qc_cuda_err_ != cudaSuccess)                                              \
      return ::qc::gpu::GpuStatus::cuda(qc_cuda_err_, #stmt, __FILE__, __LINE__); \
  } while (0)

// Return the error of a GpuStatus expression.
#define QC_GPU_TRY(expr)                      \
  do {                                        \
    ::qc::gpu::GpuStatus qc_gpu_st_ = (expr); \
    if (!qc_gpu_st_.ok()) return qc_gpu_st_;  \
  } while (0)

// Return an argument error when `cond` is false: QC_GPU_REQUIRE(k % 32 == 0, "gemv_q8: K must be ...").
#define QC_GPU_REQUIRE(cond, msg)                                        \
  do {                                                                   \
    if (!(cond)) return ::qc::gpu::GpuStatus::invalid(std::string(msg)); \
  } while (0)

// After every kernel launch. cudaGetLastError costs no device round trip, so it always runs. Debug builds
// (no NDEBUG, or QWENCHAT_KERNEL_SYNC_CHECK defined) also synchronise the stream so an asynchronous fault
// is blamed on the launch that caused it -- unless the stream is being captured into a graph, where a
// synchronise is illegal.
#if !defined(NDEBUG) || defined(QWENCHAT_KERNEL_SYNC_CHECK)
#define QC_LAUNCH_CHECK(name, stream)                                              \
  do {                                                                             \
    QC_CUDA_CHECK(cudaGetLastError());                                             \
    cudaStreamCaptureStatus qc_cap_ = cudaStreamCaptureStatusNone;                 \
    QC_CUDA_CHECK(cudaStreamIsCapturing((stream), &qc_cap_));                      \
    if (qc_cap_ == cudaStreamCaptureStatusNone) {                                  \
      const cudaError_t qc_sync_err_ = cudaStreamSynchronize(stream);              \
      if (qc_sync_err_ != cudaSuccess)                                             \
        return ::qc::gpu::GpuStatus::cuda(qc_sync_err_, name, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)
#else
#define QC_LAUNCH_CHECK(name, stream)                                              \
  do {                                                                             \
    const cudaError_t qc_launch_err_ = cudaGetLastError();                         \
    if (qc_launch_err_ != cudaSuccess)                                             \
      return ::qc::gpu::GpuStatus::cuda(qc_launch_err_, name, __FILE__, __LINE__); \
    (void)(stream);                                                                \
  } while (0)
#endif
