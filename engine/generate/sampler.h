// Token sampling: greedy, temperature, top-k, top-p, min-p, presence and repetition penalties. A
// counter-based RNG (Philox-4x32-10, keyed by seed and draw index) makes the same seed give the same tokens
// on every run and on both backends. Scratch is allocated once per sampler; sample() never allocates.
//
// Pipeline (the order is part of the contract; a CUDA sampler must follow it step for step):
//   0. NaN logits become -inf (never chosen while any other token is available).
//   1. penalties over the distinct tokens of the window (the last penalty_last_n accepted tokens):
//      presence: x -= presence_penalty (once per distinct token, however often it occurs);
//      repetition (CTRL / llama.cpp): x = x > 0 ? x / r : x * r.
//   2. temperature 0: greedy = argmax of the penalised logits, ties to the lowest id; no draw is used.
//      Otherwise x /= temperature, then +inf becomes FLT_MAX (tokens at +inf share the mass equally).
//   3. candidates = tokens with x > -inf; top-k keeps the k best by (x desc, id asc).
//   4. softmax over the candidates: e = expf(x - max) (so the best token has e = 1), sums in double.
//   5. top-p: the kept tokens sorted by (x desc, id asc), which is prob desc with ties broken by logit and
//      then id (sorting on x keeps the order independent of the expf implementation); keep the smallest
//      prefix whose mass reaches top_p of the candidates' mass.
//   6. min-p: keep tokens with e >= min_p (e is prob / max prob, the max prob's e is 1).
//   7. renormalise over the kept set; draw u = counter_uniform(seed, counter++) and return the first kept
//      token, in the order of step 5, whose cumulative weight exceeds u * (kept weight sum); tokens of
//      weight 0 (expf underflow) are never returned (if rounding leaves u past the sum: the last kept
//      token of non-zero weight).
// Every non-greedy sample() uses exactly one draw; verify_draft() one, plus one when it rejects.
//
// Degenerate input: if no token survives steps 0-3 (every logit NaN/-inf, or penalties/temperature
// overflowed every finite logit to -inf) the sampler falls back to greedy on the raw logits (NaN as
// -inf); if every raw logit is NaN or -inf it returns token 0 and last_degenerate() is true. It never
// fails, so the caller decides what a degenerate row means (the generator stops with an error).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "qwenchat/result.h"
#include "qwenchat/sampling.h"

namespace qc {

// Philox-4x32-10 (Salmon et al., SC'11; Random123's philox4x32 with 10 rounds), pure 32-bit integer ops.
// Exposed for the known-answer test and for CUDA kernels that must match it bit for bit.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// Counter-based RNG: uniform in [0,1) from (seed, counter), stateless, so device and host agree.
//   key = {seed & 0xffffffff, seed >> 32}, counter words = {counter & 0xffffffff, counter >> 32, 0, 0},
//   u = (philox4x32_10(counter, key)[0] >> 8) * 2^-24   (24 bits: every value is exact in a float).
float counter_uniform(uint64_t seed, uint64_t counter);

// Outcome of checking one speculative draft against the main model's logits.
struct DraftVerdict {
  int32_t token = 0;      // the token to emit: the draft when accepted, otherwise the replacement
  bool accepted = false;  // token == draft and it passed the test
};

class Sampler {
 public:
  // `params` must pass validate() (create() checks it); n_vocab > 0.
  Sampler(SamplerParams params, int n_vocab);
  static Result<Sampler> create(SamplerParams params, int n_vocab);

  const SamplerParams& params() const { return params_; }
  Status set_params(const SamplerParams& p);  // validates; keeps the old params on error
  int n_vocab() const { return n_vocab_; }

  void reset();                // forget history, restart the draw counter
  void accept(int32_t token);  // record a token of the context for the penalties (out-of-range ids ignored)
  const std::vector<int32_t>& history() const { return history_; }

  // Picks the next token from logits ([n_vocab]; extra entries are ignored, missing ones count as -inf);
  // does not record it (call accept()).
  int32_t sample(std::span<const float> logits);

  // The probability distribution sample() draws from after penalties/temperature/filters ([n_vocab],
  // zeros outside the kept set; a point mass on the argmax when greedy). Uses no draw.
  std::span<const float> distribution(std::span<const float> logits);

  // Speculative sampling with the draft as a point mass q = delta(draft) (Leviathan et al. 2023 with
  // q(draft) = 1): accept with probability min(1, p(draft)/q(draft)) = p(draft); on rejection draw from
  // the residual norm(max(0, p - q)), which is p with the draft removed and renormalised. Then
  //   P(emit draft) = p(draft),  P(emit x != draft) = (1 - p(draft)) * p(x) / (1 - p(draft)) = p(x),
  // so the emitted token has exactly the distribution of sample(). Greedy: accepted iff the argmax is the
  // draft, the token is the argmax, no draw. Does not record the token (call accept()).
  DraftVerdict verify_draft(std::span<const float> logits, int32_t draft);

  uint64_t draws() const { return counter_; }
  // True when the last call saw no usable logit at all (every raw logit NaN or -inf) and returned 0.
  bool last_degenerate() const { return degenerate_; }

 private:
  // One candidate token: its scaled logit, its softmax weight expf(x - max), its id. Contiguous records
  // sort several times faster than ids compared through an indirection.
  struct Cand {
    float x = 0.0f;
    float w = 0.0f;
    int32_t id = 0;
  };
  // Runs steps 0-6 on `logits`: the kept set is cand_[0, n_kept_) with weight sum total_, of which the
  // prefix cand_[0, n_sorted_) is in the final order (the rest is sorted on demand by the draw).
  void prepare(std::span<const float> logits);
  void load_and_penalise(std::span<const float> logits);
  int32_t greedy_fallback(std::span<const float> logits);
  void keep_single(int32_t id);
  void sort_prefix(int m, int n);  // makes cand_[0, m) the first m of cand_[0, n) in the final order
  int32_t draw(int32_t excluded);  // step 7, skipping `excluded` (-1 = none); uses one draw

  SamplerParams params_;
  int n_vocab_;
  uint64_t counter_ = 0;
  bool degenerate_ = false;
  std::vector<int32_t> history_;
  std::vector<float> scratch_logits_;  // [n_vocab] penalised / scaled logits
  std::vector<Cand> cand_;             // [n_vocab] candidates, kept set first
  std::vector<float> probs_;           // [n_vocab] distribution() output
  std::vector<uint8_t> seen_;          // [n_vocab] distinct-token marks for the penalty window
  int n_kept_ = 0;
  int n_sorted_ = 0;
  double total_ = 0.0;
};

}  // namespace qc
