// Device time of the prompt path per phase (norms, each projection's dequantisation and GEMM, GDN,
// attention, ...): CUDA events around every group of kernels of PrefillProgram::enqueue, summed by phase.
// For the benchmark's breakdown (qwenchat-bench --only-prefill prints it for a 2048-token prompt); the
// program records nothing when no profile is set. Events serialise nothing, but each pair costs a few
// microseconds of host time per phase, so profiled runs are a little slower than plain ones.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

namespace qc::cuda {

class PrefillProfile {
 public:
  PrefillProfile() = default;
  ~PrefillProfile() { clear(); }
  PrefillProfile(const PrefillProfile&) = delete;
  PrefillProfile& operator=(const PrefillProfile&) = delete;

  // Start and end of one phase on stream s; begin returns the handle end takes.
  size_t begin(const char* phase, cudaStream_t s);
  void end(size_t handle, cudaStream_t s);
  // Milliseconds per phase, in the order phases first appeared. Call after the stream is synchronised.
  std::vector<std::pair<std::string, double>> totals() const;
  // What ran, beside when: one line per distinct note (the f16 GEMM's cuBLASLt algorithm of each
  // projection's shape), in the order first noted.
  void note(std::string line);
  const std::vector<std::string>& notes() const { return notes_; }
  void clear();

 private:
  struct Mark {
    std::string phase;
    cudaEvent_t start = nullptr, stop = nullptr;
  };
  std::vector<Mark> marks_;
  std::vector<std::string> notes_;
};

// The events of one phase around a scope; nothing when profile is null.
class PhaseScope {
 public:
  PhaseScope(PrefillProfile* profile, const char* phase, cudaStream_t s) : p_(profile), s_(s) {
    if (p_) h_ = p_->begin(phase, s);
  }
  ~PhaseScope() {
    if (p_) p_->end(h_, s_);
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  PrefillProfile* p_;
  cudaStream_t s_;
  size_t h_ = 0;
};

}  // namespace qc::cuda
