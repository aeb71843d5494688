// Small host-side helpers of the CUDA backend: CUDA errors as qc::Error values, RAII owners for device
// memory, pinned host memory, events and graphs, and a carver that lays out sub-allocations of one block.
//
// Every allocation of the backend goes through Carver, run twice with the same code: once without a base
// pointer to measure (that is the memory estimate, exact to the byte, padding included), once with the
// block cudaMalloc returned to hand out the pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "qwenchat/result.h"
#include "status.h"

namespace qc::cuda {

// "cudaMalloc(...) failed: out of memory (cudaErrorMemoryAllocation) at f.cpp:12" as a qc::Error.
inline Error cuda_error(cudaError_t e, const char* statement, const char* file, int line) {
  return make_error(gpu::GpuStatus::cuda(e, statement, file, line).describe());
}
// Bytes as GiB, for messages ("needs 19.23 GiB").
inline double gib(uint64_t b) {
  return static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0);
}
inline Status to_status(const gpu::GpuStatus& s) {
  if (s.ok()) return Status::success();
  return make_error(s.describe());
}

}  // namespace qc::cuda

// Return a qc::Error from the enclosing function when a CUDA runtime call fails.
#define QC_CU(stmt)                                                                                      \
  do {                                                                                                   \
    const cudaError_t qc_cu_err_ = (stmt);                                                               \
    if (qc_cu_err_ != cudaSuccess) return ::qc::cuda::cuda_error(qc_cu_err_, #stmt, __FILE__, __LINE__); \
  } while (0)

// Return the error of a kernel-layer call (gpu::GpuStatus) as a qc::Error.
#define QC_GPU(expr)                                                              \
  do {                                                                            \
    const ::qc::gpu::GpuStatus qc_gpu_status_ = (expr);                           \
    if (!qc_gpu_status_.ok()) return ::qc::make_error(qc_gpu_status_.describe()); \
  } while (0)

namespace qc::cuda {

inline constexpr size_t kAlign = 256;  // every sub-allocation starts on a 256-byte boundary

inline size_t align_up(size_t n, size_t a = kAlign) {
  return (n + a - 1) / a * a;
}

// Lays out typed sub-allocations of one block. Without a base it only counts (pointers come back null).
class Carver {
 public:
  explicit Carver(void* base = nullptr) : base_(static_cast<char*>(base)) {}
  template <class T>
  T* take(size_t count) {
    const size_t off = align_up(used_);
    used_ = off + count * sizeof(T);
    return base_ ? reinterpret_cast<T*>(base_ + off) : nullptr;
  }
  size_t bytes() const { return align_up(used_); }

 private:
  char* base_ = nullptr;
  size_t used_ = 0;
};

// How a block is allocated and freed: device memory, or page-locked host memory (asynchronous copies
// need it). The names go into the error message.
struct DeviceMemory {
  static constexpr const char* kAlloc = "cudaMalloc";
  static cudaError_t alloc(void** p, size_t n) { return cudaMalloc(p, n); }
  static void release(void* p) { cudaFree(p); }
};
struct PinnedHostMemory {
  static constexpr const char* kAlloc = "cudaMallocHost";
  static cudaError_t alloc(void** p, size_t n) { return cudaMallocHost(p, n); }
  static void release(void* p) { cudaFreeHost(p); }
};

// One allocated block, freed by its destructor; movable, not copyable.
template <class Memory>
class Block {
 public:
  Block() = default;
  ~Block() { reset(); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  Block(Block&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  Block& operator=(Block&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  // `what` names the block in the error ("weights", "KV cache").
  Status allocate(size_t bytes, const std::string& what) {
    reset();
    if (bytes == 0) return Status::success();
    const cudaError_t e = Memory::alloc(&p_, bytes);
    if (e != cudaSuccess) {
      p_ = nullptr;
      (void)cudaGetLastError();
      return make_error(std::string(Memory::kAlloc) + " of " + std::to_string(bytes) + " bytes for the " +
                        what + " failed: " + cudaGetErrorString(e));
    }
    n_ = bytes;
    return Status::success();
  }
  void reset() {
    if (p_) Memory::release(p_);
    p_ = nullptr;
    n_ = 0;
  }
  void* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  void* p_ = nullptr;
  size_t n_ = 0;
};
using DeviceBlock = Block<DeviceMemory>;
using PinnedBlock = Block<PinnedHostMemory>;

class Event {
 public:
  Event() = default;
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Status create(unsigned flags = cudaEventDefault) {
    QC_CU(cudaEventCreateWithFlags(&e_, flags));
    return Status::success();
  }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class Graph {
 public:
  Graph() = default;
  ~Graph() { reset(); }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void reset() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  int kernel_nodes = 0;
};

}  // namespace qc::cuda
