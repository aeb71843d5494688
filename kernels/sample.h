// Sampling on the device: temperature, top-k, top-p, min-p with the counter-based RNG of sample_rng.h.
// Deterministic: the same logits, parameters, seed and counter give the same token on every run.
//
// The exact rule, so the CPU sampler can match it (logits z over the vocabulary, T = temperature):
//  1. Candidates: the top_k largest logits, ties to the lower index, sorted by (z descending, index
//     ascending). NaN logits count as -inf. 1 <= top_k <= 256 (larger k or k = 0 "off": use the host).
//  2. T <= 0: the first candidate (greedy); the counter is not read or advanced.
//  3. Weights in double: e_i = exp((z_i - z_0) / T), so e_0 = 1; S = sum of e_i in candidate order.
//  4. top-p (if top_p < 1): keep the shortest prefix with (running sum of e_i) >= top_p * S, at least 1.
//  5. min-p (if min_p > 0): from that prefix keep the candidates with e_i >= min_p (p_i >= min_p * p_max);
//     a prefix again, since the candidates are sorted.
//  6. u = counter_uniform24(seed, *d_counter); S' = sum of the kept e_i; pick the first kept i with
//     u * S' < (running sum of e_0..e_i); if rounding leaves none, the last kept. Then *d_counter += 1.
// Temperature is applied before top-p/min-p (the transformers order); top-k does not depend on T.
// Penalties (presence, repetition) are not applied here: they change logits before this step.
// The device exp() and the host's may differ in the last bit of a double, so a CPU mirror can disagree
// only when u lands within ~1e-16 of a boundary.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "status.h"

namespace qc::gpu {

inline constexpr int kMaxDeviceTopK = 256;

struct DeviceSampleParams {
  float temperature = 0.7f;
  int top_k = 20;
  float top_p = 0.8f;  // 1 = off
  float min_p = 0.0f;  // 0 = off
  uint64_t seed = 0;
};

struct SampleArgs {
  const float* logits = nullptr;  // [n_vocab] device
  int n_vocab = 0;
  DeviceSampleParams params{};
  unsigned long long* d_counter = nullptr;  // device: the draw counter, read and advanced
  int* out_token = nullptr;                 // device
  void* scratch = nullptr;                  // sample_scratch_bytes(n_vocab, top_k)
  bool pdl = false;
};
size_t sample_scratch_bytes(int n_vocab, int top_k);
GpuStatus sample_token(const SampleArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
