// Token sampling: greedy, temperature, top-k, top-p, min-p, presence and repetition penalties. A
// counter-based RNG (Philox-style, keyed by seed and draw index) makes the same seed give the same tokens
// on every run and on both backends. Scratch is allocated once per sampler.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "qwenchat/result.h"

namespace qc {

struct SamplerParams {
  float temperature = 0.7f;     // 0 = greedy
  int top_k = 20;               // 0 = off
  float top_p = 0.8f;           // 1 = off
  float min_p = 0.0f;           // 0 = off
  float presence_penalty = 0.0f;    // subtracted once from the logit of every token already seen
  float repetition_penalty = 1.0f;  // llama.cpp/CTRL rule: logit>0 ? logit/r : logit*r for seen tokens
  int penalty_last_n = 256;     // window of recent tokens the penalties look at (0 = none, -1 = all)
  uint64_t seed = 0;

  // Range checks with messages ("top_p must be in (0, 1], got 1.5").
  Status validate() const;
  static SamplerParams greedy();
};

// Counter-based RNG: uniform in [0,1) from (seed, counter). Stateless, so device and host agree.
float counter_uniform(uint64_t seed, uint64_t counter);

class Sampler {
 public:
  Sampler(SamplerParams params, int n_vocab);
  const SamplerParams& params() const { return params_; }
  void set_params(const SamplerParams& p) { params_ = p; }

  void reset();                 // forget history, restart the draw counter
  void accept(int32_t token);   // record a token of the context (prompt or generated) for the penalties
  // Picks the next token from logits ([n_vocab]); does not record it (call accept()).
  int32_t sample(std::span<const float> logits);
  // The probability distribution sample() draws from after penalties/temperature/filters ([n_vocab],
  // zeros outside the kept set). Used by speculative sampling.
  std::span<const float> distribution(std::span<const float> logits);
  uint64_t draws() const { return counter_; }

 private:
  SamplerParams params_;
  int n_vocab_;
  uint64_t counter_ = 0;
  std::vector<int32_t> history_;
  std::vector<float> scratch_logits_;
  std::vector<int32_t> scratch_idx_;
  std::vector<float> probs_;
  std::vector<uint8_t> seen_;
};

}  // namespace qc
