#include "cuda/prefill_profile.h"

namespace qc::cuda {

size_t PrefillProfile::begin(const char* phase, cudaStream_t s) {
  Mark m;
  m.phase = phase;
  // A failed event (out of resources) leaves the mark empty: the phase is then left out of the totals.
  if (cudaEventCreate(&m.start) != cudaSuccess || cudaEventCreate(&m.stop) != cudaSuccess) {
    (void)cudaGetLastError();
    if (m.start) cudaEventDestroy(m.start);
    m.start = m.stop = nullptr;
  } else {
    cudaEventRecord(m.start, s);
  }
  marks_.push_back(std::move(m));
  return marks_.size() - 1;
}

void PrefillProfile::end(size_t handle, cudaStream_t s) {
  if (handle < marks_.size() && marks_[handle].stop) cudaEventRecord(marks_[handle].stop, s);
}

std::vector<std::pair<std::string, double>> PrefillProfile::totals() const {
  std::vector<std::pair<std::string, double>> out;
  for (const Mark& m : marks_) {
    float ms = 0.0f;
    if (!m.start || cudaEventElapsedTime(&ms, m.start, m.stop) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    auto it = out.begin();
    while (it != out.end() && it->first != m.phase) ++it;
    if (it == out.end())
      out.emplace_back(m.phase, ms);
    else
      it->second += ms;
  }
  return out;
}

void PrefillProfile::note(std::string line) {
  for (const std::string& n : notes_)
    if (n == line) return;
  notes_.push_back(std::move(line));
}

void PrefillProfile::clear() {
  for (Mark& m : marks_) {
    if (m.start) cudaEventDestroy(m.start);
    if (m.stop) cudaEventDestroy(m.stop);
  }
  marks_.clear();
  notes_.clear();
}

}  // namespace qc::cuda
