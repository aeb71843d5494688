// Sampler: see sampler.h for the pipeline contract. Costs per call (V = n_vocab): one O(V) copy with the
// NaN rule, O(window) for the penalties, O(V) for temperature and the candidate records, one O(V) heap
// pass for top-k, then work on the kept set only. Sorting is progressive (the best 64, then 512, 4096 ...)
// in top-p and in the draw, so a peaked distribution never sorts the vocabulary. Measured at V = 248320,
// N(0, 3) logits, 256-token penalty window, on the shared 2-core build machine (not the target host):
// greedy 0.6 ms, Qwen instruct defaults (top-k 20) 1.0 ms, top-k off + top-p 0.95 8.8 ms (thousands of
// tokens kept), every filter off 11.8 ms (before: index sort, nth_element: 0.9 / 6.4 / 11.4 / 72 ms).
#include "generate/sampler.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>

namespace qc {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// High and low 32-bit halves of a 32x32 -> 64-bit product (__umulhi and a plain multiply in CUDA).
inline void mulhilo32(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

}  // namespace

// ---- parameters ----

Status SamplerParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    return make_error("sampler temperature must be finite and >= 0 (0 = greedy), got " + fmt(temperature));
  if (top_k < 0) return make_error("sampler top_k must be >= 0 (0 = off), got " + std::to_string(top_k));
  if (!(top_p > 0.0f && top_p <= 1.0f))
    return make_error("sampler top_p must be in (0, 1] (1 = off), got " + fmt(top_p));
  if (!(min_p >= 0.0f && min_p <= 1.0f))
    return make_error("sampler min_p must be in [0, 1] (0 = off), got " + fmt(min_p));
  if (!std::isfinite(presence_penalty))
    return make_error("sampler presence_penalty must be finite (0 = off), got " + fmt(presence_penalty));
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f)
    return make_error("sampler repetition_penalty must be finite and > 0 (1 = off), got " +
                      fmt(repetition_penalty));
  if (penalty_last_n < -1)
    return make_error("sampler penalty_last_n must be >= -1 (-1 = all, 0 = none), got " +
                      std::to_string(penalty_last_n));
  return Status::success();
}

SamplerParams SamplerParams::greedy() {
  SamplerParams p;
  p.temperature = 0.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.presence_penalty = 0.0f;
  p.repetition_penalty = 1.0f;
  return p;
}

SamplerParams SamplerParams::qwen_thinking() {
  SamplerParams p;
  p.temperature = 1.0f;
  p.top_p = 0.95f;
  p.top_k = 20;
  p.min_p = 0.0f;
  p.presence_penalty = 1.5f;
  return p;
}

SamplerParams SamplerParams::qwen_instruct() {
  SamplerParams p;
  p.temperature = 0.7f;
  p.top_p = 0.8f;
  p.top_k = 20;
  p.min_p = 0.0f;
  p.presence_penalty = 1.5f;
  return p;
}

// ---- RNG ----

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // key bump before rounds 2..10
      key[0] += kW0;
      key[1] += kW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo32(kM0, ctr[0], &hi0, &lo0);
    mulhilo32(kM1, ctr[2], &hi1, &lo1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
  }
  return ctr;
}

float counter_uniform(uint64_t seed, uint64_t counter) {
  const std::array<uint32_t, 4> out =
      philox4x32_10({static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  return static_cast<float>(out[0] >> 8) * (1.0f / 16777216.0f);  // 2^-24: exact, max 1 - 2^-24
}

// ---- sampler ----

namespace {

// Strict total order of the pipeline: logit desc, then id asc. Because it is total, the top-k set and
// every sorted prefix are unique, whatever algorithm (heap, nth_element, partial_sort, a GPU radix sort)
// produced them.
template <class C>
bool better(const C& a, const C& b) {
  return a.x > b.x || (a.x == b.x && a.id < b.id);
}

}  // namespace

Sampler::Sampler(SamplerParams params, int n_vocab)
    : params_(params),
      n_vocab_(std::max(n_vocab, 1)),
      scratch_logits_(static_cast<size_t>(n_vocab_)),
      cand_(static_cast<size_t>(n_vocab_)),
      probs_(static_cast<size_t>(n_vocab_)),
      seen_(static_cast<size_t>(n_vocab_), 0) {
  history_.reserve(1024);
}

Result<Sampler> Sampler::create(SamplerParams params, int n_vocab) {
  QC_TRY(params.validate());
  if (n_vocab <= 0) return make_error("sampler n_vocab must be > 0, got " + std::to_string(n_vocab));
  return Sampler(params, n_vocab);
}

Status Sampler::set_params(const SamplerParams& p) {
  QC_TRY(p.validate());
  params_ = p;
  return Status::success();
}

void Sampler::reset() {
  history_.clear();
  counter_ = 0;
  degenerate_ = false;
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_) return;
  history_.push_back(token);
}

// Step 0 and 1: copy with NaN -> -inf, then the penalties over the distinct tokens of the window.
void Sampler::load_and_penalise(std::span<const float> logits) {
  const size_t n_in = std::min(logits.size(), static_cast<size_t>(n_vocab_));
  for (size_t i = 0; i < n_in; ++i) scratch_logits_[i] = std::isnan(logits[i]) ? kNegInf : logits[i];
  std::fill(scratch_logits_.begin() + static_cast<std::ptrdiff_t>(n_in), scratch_logits_.end(), kNegInf);

  const float presence = params_.presence_penalty;
  const float rep = params_.repetition_penalty;
  if ((presence == 0.0f && rep == 1.0f) || params_.penalty_last_n == 0 || history_.empty()) return;
  const size_t n_hist = history_.size();
  const size_t begin = params_.penalty_last_n < 0 || static_cast<size_t>(params_.penalty_last_n) >= n_hist
                           ? 0
                           : n_hist - static_cast<size_t>(params_.penalty_last_n);
  for (size_t j = begin; j < n_hist; ++j) {
    const auto t = static_cast<size_t>(history_[j]);
    if (seen_[t]) continue;
    seen_[t] = 1;
    float x = scratch_logits_[t];
    // llama.cpp order: repetition first, then presence. x = 0 is unchanged by either branch.
    x = x > 0.0f ? x / rep : x * rep;
    x -= presence;
    scratch_logits_[t] = x;
  }
  for (size_t j = begin; j < n_hist; ++j) seen_[static_cast<size_t>(history_[j])] = 0;
}

// Argmax of the raw logits (NaN as -inf, ties to the lowest id); 0 and degenerate when none is usable.
int32_t Sampler::greedy_fallback(std::span<const float> logits) {
  const size_t n_in = std::min(logits.size(), static_cast<size_t>(n_vocab_));
  int32_t best = -1;
  float best_x = kNegInf;
  for (size_t i = 0; i < n_in; ++i) {
    const float x = logits[i];
    if (x > best_x) {  // false for NaN and for -inf
      best_x = x;
      best = static_cast<int32_t>(i);
    }
  }
  if (best < 0) {
    degenerate_ = true;
    return 0;
  }
  return best;
}

void Sampler::keep_single(int32_t id) {
  cand_[0] = Cand{0.0f, 1.0f, id};
  n_kept_ = 1;
  n_sorted_ = 1;
  total_ = 1.0;
}

void Sampler::sort_prefix(int m, int n) {
  if (m <= n_sorted_) return;
  Cand* c = cand_.data();
  if (m >= n) {
    std::sort(c + n_sorted_, c + n, better<Cand>);
  } else {
    // The first n_sorted_ are already the first of the order, so a partial sort of the rest extends them.
    std::partial_sort(c + n_sorted_, c + m, c + n, better<Cand>);
  }
  n_sorted_ = std::min(m, n);
}

void Sampler::prepare(std::span<const float> logits) {
  degenerate_ = false;
  load_and_penalise(logits);
  const float* x = scratch_logits_.data();
  Cand* c = cand_.data();

  if (params_.is_greedy()) {
    int32_t best = -1;
    float best_x = kNegInf;
    for (int i = 0; i < n_vocab_; ++i) {
      if (x[i] > best_x) {
        best_x = x[i];
        best = i;
      }
    }
    keep_single(best >= 0 ? best : greedy_fallback(logits));
    return;
  }

  // Step 2: temperature, +inf -> FLT_MAX. Step 3: candidates.
  const float temp = params_.temperature;
  int n = 0;
  for (int i = 0; i < n_vocab_; ++i) {
    float v = x[i] / temp;
    if (v == std::numeric_limits<float>::infinity()) v = FLT_MAX;
    if (v > kNegInf) c[n++] = Cand{v, 0.0f, i};
  }
  if (n == 0) {
    keep_single(greedy_fallback(logits));
    return;
  }
  const int k = params_.top_k;
  if (k > 0 && k < n) {
    if (static_cast<int64_t>(k) * 16 <= n) {
      // Heap of the k best, its front the worst of them: one comparison rejects almost every token, so
      // this is one pass over the vocabulary (nth_element moves and compares several times more).
      std::make_heap(c, c + k, better<Cand>);
      for (int i = k; i < n; ++i) {
        if (better(c[i], c[0])) {
          std::pop_heap(c, c + k, better<Cand>);
          c[k - 1] = c[i];
          std::push_heap(c, c + k, better<Cand>);
        }
      }
    } else {
      std::nth_element(c, c + k, c + n, better<Cand>);
    }
    n = k;
  }

  // Step 4: softmax weights; sums in double, so their order changes them by ~1e-16 relative only.
  float x_max = kNegInf;
  for (int i = 0; i < n; ++i) x_max = std::max(x_max, c[i].x);
  double total = 0.0;
  for (int i = 0; i < n; ++i) total += c[i].w = std::exp(c[i].x - x_max);

  n_sorted_ = 0;
  // Step 5: top-p, sorting only as far as needed (64, 512, 4096 ... tokens).
  if (params_.top_p < 1.0f) {
    const double target = static_cast<double>(params_.top_p) * total;
    double cum = 0.0;
    int i = 0, cut = n;
    for (int m = std::min(n, 64);; m = std::min(n, m * 8)) {
      sort_prefix(m, n);
      for (; i < m && cut == n; ++i) {
        cum += c[i].w;
        if (cum >= target) cut = i + 1;
      }
      if (cut < n || m == n) break;  // m == n: found at the end, or rounding left the sum short
    }
    n = cut;
  }

  // Step 6: min-p (the best token's weight is exactly 1, so the threshold is min_p itself).
  if (params_.min_p > 0.0f) {
    const float thr = params_.min_p;
    if (n_sorted_ >= n) {
      int keep = 0;
      while (keep < n && c[keep].w >= thr) ++keep;
      n = keep;
    } else {
      n = static_cast<int>(std::partition(c, c + n, [thr](const Cand& a) { return a.w >= thr; }) - c);
      n_sorted_ = 0;
    }
    // n >= 1: the best token has weight 1 >= min_p.
  }

  total = 0.0;
  for (int i = 0; i < n; ++i) total += c[i].w;
  n_kept_ = n;
  n_sorted_ = std::min(n_sorted_, n);
  total_ = total;
}

// Step 7: inverse CDF over the kept set in the final order, sorting progressively (a peaked
// distribution is settled within the first 64 tokens). Zero-weight tokens are never returned.
int32_t Sampler::draw(int32_t excluded) {
  const Cand* c = cand_.data();
  const int n = n_kept_;
  double total = total_;
  if (excluded >= 0) {  // resum rather than subtract: no cancellation when the draft held most mass
    total = 0.0;
    for (int i = 0; i < n; ++i)
      if (c[i].id != excluded) total += c[i].w;
  }
  const double target = static_cast<double>(counter_uniform(params_.seed, counter_++)) * total;
  double cum = 0.0;
  int32_t last = -1;
  int i = 0;
  for (int m = std::min(n, 64);; m = std::min(n, m * 8)) {
    sort_prefix(m, n);
    for (; i < m; ++i) {
      if (c[i].id == excluded || c[i].w == 0.0f) continue;
      cum += c[i].w;
      last = c[i].id;
      if (target < cum) return last;
    }
    if (m == n) break;
  }
  // Rounding left the target past the sum: the last token with weight (the excluded one if none).
  return last >= 0 ? last : (excluded >= 0 ? excluded : c[0].id);
}

int32_t Sampler::sample(std::span<const float> logits) {
  prepare(logits);
  if (params_.is_greedy()) return cand_[0].id;
  return draw(-1);
}

std::span<const float> Sampler::distribution(std::span<const float> logits) {
  prepare(logits);
  std::fill(probs_.begin(), probs_.end(), 0.0f);
  for (int i = 0; i < n_kept_; ++i) {
    const Cand& k = cand_[static_cast<size_t>(i)];
    probs_[static_cast<size_t>(k.id)] = static_cast<float>(k.w / total_);
  }
  return {probs_.data(), probs_.size()};
}

DraftVerdict Sampler::verify_draft(std::span<const float> logits, int32_t draft) {
  prepare(logits);
  if (params_.is_greedy()) return DraftVerdict{cand_[0].id, cand_[0].id == draft};
  double p_draft = 0.0;
  for (int i = 0; i < n_kept_; ++i) {
    if (cand_[static_cast<size_t>(i)].id == draft) {
      p_draft = cand_[static_cast<size_t>(i)].w / total_;
      break;
    }
  }
  const double u = counter_uniform(params_.seed, counter_++);
  if (u < p_draft) return DraftVerdict{draft, true};
  return DraftVerdict{draw(draft), false};
}

}  // namespace qc
