// Weights generated in GPU memory for qwenchat-bench (no 28 GB file to ship or read), with the magnitudes
// of a trained model so a forward pass stays finite; and random KV caches / GDN states for the
// long-context runs.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/cuda_probe.h"

namespace qc::bench_app {

// Projections ~ N(0, 1/K) (Q8_0: int8 uniform in [-127, 127], whose standard deviation is 73.3, times
// scales 1/(73.3 sqrt(K)) +-20%), embedding rows of unit variance, norm weights in [0.9, 1.1], ssm_a in
// [-16, -1], dt bias = softplus^-1 of [1e-3, 1e-1], conv taps N(0, 0.5^2).
class RandomWeights final : public cuda::WeightSource {
 public:
  explicit RandomWeights(uint64_t seed) : seed_(seed) {}
  Status fill(const cuda::TensorSlot& slot, cudaStream_t s) override;

 private:
  uint64_t seed_;
  uint64_t n_ = 0;  // tensors filled so far: every tensor gets its own stream of values
};

// KV caches ~ N(0, 1) (f16), GDN states ~ N(0, 0.05^2): what attention and the delta rule read at a long
// context, without running the tokens before it.
Status fill_state_random(const std::vector<cuda::CudaProbe::Region>& regions, uint64_t seed, cudaStream_t s);

}  // namespace qc::bench_app
