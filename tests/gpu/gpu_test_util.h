// Shared helpers of the GPU tests: the device check that turns every test into a clean skip on machines
// without a GPU, RAII device buffers, poisoning (so unwritten outputs are caught), random inputs with
// fixed seeds, and f16 conversions on the host.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "status.h"

namespace qc::gpu::test {

// Empty when a usable device is present, else why not ("cudaErrorNoDevice: no CUDA-capable device...").
inline std::string device_unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  if (n == 0) return "cudaGetDeviceCount returned 0 devices";
  return {};
}

#define QC_REQUIRE_DEVICE()                                                   \
  do {                                                                        \
    const std::string qc_why_ = ::qc::gpu::test::device_unavailable_reason(); \
    if (!qc_why_.empty()) GTEST_SKIP() << "no CUDA device: " << qc_why_;      \
  } while (0)

// ASSERT that a GpuStatus is ok, printing its message otherwise.
#define QC_ASSERT_OK(expr)                                          \
  do {                                                              \
    const ::qc::gpu::GpuStatus qc_st_ = (expr);                     \
    ASSERT_TRUE(qc_st_.ok()) << #expr << ": " << qc_st_.describe(); \
  } while (0)

inline void cuda_or_throw(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Synchronise and surface asynchronous kernel faults.
inline void sync_or_throw() {
  cuda_or_throw(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

template <class T>
class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(size_t n) : n_(n) {
    if (n) cuda_or_throw(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)), "cudaMalloc");
  }
  explicit DevBuf(const std::vector<T>& host) : DevBuf(host.size()) { upload(host); }
  ~DevBuf() {
    if (p_) cudaFree(p_);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p_(o.p_), n_(o.n_) {
    o.p_ = nullptr;
    o.n_ = 0;
  }
  DevBuf& operator=(DevBuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }

  T* get() const { return p_; }
  size_t size() const { return n_; }
  void upload(const std::vector<T>& host) {
    if (host.size() != n_) throw std::runtime_error("DevBuf::upload: size mismatch");
    cuda_or_throw(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<T> download() const {
    sync_or_throw();
    std::vector<T> host(n_);
    cuda_or_throw(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }
  // Fill every byte with `byte`: 0xFF makes f32/f16 NaN and ints -1; 0x80 makes int8 -128, a value the
  // quantiser never writes.
  void poison(uint8_t byte = 0xFF) { cuda_or_throw(cudaMemset(p_, byte, n_ * sizeof(T)), "poison"); }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

inline uint16_t f2h_bits(float v) {
  return static_cast<__half_raw>(__float2half_rn(v)).x;
}
inline float h_bits2f(uint16_t b) {
  __half_raw r;
  r.x = b;
  return __half2float(__half(r));
}
inline float bf_bits2f(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t f2bf_bits(float v) {  // round to nearest even
  uint32_t u;
  std::memcpy(&u, &v, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}
inline std::vector<float> random_normal(std::mt19937& rng, size_t n, float sigma) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Bitwise equality of two float arrays (NaN patterns included), reporting the first difference.
inline ::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (x != y)
      return ::testing::AssertionFailure() << "first difference at " << i << ": " << a[i] << " vs " << b[i];
  }
  return ::testing::AssertionSuccess();
}

// Every element written (no NaN left from the poison); inputs of the tests are finite.
inline ::testing::AssertionResult all_finite(const std::vector<float>& a) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!std::isfinite(a[i])) return ::testing::AssertionFailure() << "element " << i << " is " << a[i];
  return ::testing::AssertionSuccess();
}

}  // namespace qc::gpu::test
