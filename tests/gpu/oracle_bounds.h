// The bounds on a whole model's distance to the f64 CPU oracle that the CUDA backend tests share
// (test_backend_oracle.cpp, _speculative, _prefill, _kquant): one derivation, one set of constants.
//
// Bounds on the relative distance ||gpu - f64|| / ||f64|| of a token's logits (or hidden state):
// - Activation quantisation (kernels/layout.h). In a 32-element block with scale s = max|a| / 127, format
//   h rounds a/s to an integer: the error is uniform in [-s/2, s/2], rms s/sqrt(12). The block's rms is at
//   least max|a|/sqrt(32), so relative to it eps_h <= sqrt(32) / (127 sqrt(12)) = 0.0129. Format hl adds a
//   second word that divides the error by 127: eps_hl = 1.0e-4.
// - A token passes Q = 4 quantised GEMV inputs per layer (in_proj, out_proj, gate|up, down) plus the
//   lm_head input: Q = 4 * 8 + 1 = 33 independent errors, added in quadrature, carried to the logits with
//   a gain G: distance <= G sqrt(Q) eps. G = 4 allows for what the network does to a perturbation (norms
//   rescale it, GDN states and attention carry it to later tokens); the tests print the measured values.
// - Floor for every variant: the f16 KV cache (relative rounding <= 2^-11 per element, k and v) in the
//   attention layers, same gain: 4 sqrt(2) 2^-11 = 2.8e-3; f32 arithmetic elsewhere is ~1e-6 and falls
//   under it. The prompt path's attention also rounds q and the probabilities to f16 (attention_flash.h):
//   four roundings of that size, 4 sqrt(4) 2^-11.
// - The prompt path's f16 GEMM rounds a weight and an input once each to f16 (gemm_f16.h): relative rms
//   sqrt(2/3) 2^-11 = 4.0e-4 per projection output (two independent uniform roundings of at most 2^-11).
//   h: 4 sqrt(33) 0.0129 = 0.296; hl: 4 sqrt(33) 1.0e-4 = 2.3e-3; deq and dense weights: the floor.
#pragma once

#include <cmath>

#include "qwenchat_kernels/gemv_variant.h"

namespace qc::cuda::test {

constexpr double kOracleGain = 4.0;
constexpr double kQuantPoints = 33.0;
constexpr double kEpsH = 0.0129;
constexpr double kEpsHL = kEpsH / 127.0;
inline const double kEpsF16 = std::sqrt(2.0 / 3.0) * std::ldexp(1.0, -11);
// The decode path's floor (k and v rounded to f16) and the prompt path's (q and p as well).
inline const double kDecodeFloor = kOracleGain * std::sqrt(2.0) * std::ldexp(1.0, -11);
inline const double kPromptFloor = kOracleGain * std::sqrt(4.0) * std::ldexp(1.0, -11);

// The error each quantised input adds in activation format f.
inline double act_eps(ActFormat f) {
  switch (f) {
    case ActFormat::kH:
      return kEpsH;
    case ActFormat::kHL:
      return kEpsHL;
    case ActFormat::kF32:
      return 0.0;
  }
  return 0.0;
}

// G sqrt(points) eps + floor: a decode-path token through `points` quantised inputs of format f.
inline double oracle_bound(ActFormat f, double points = kQuantPoints, double floor = kDecodeFloor) {
  return kOracleGain * std::sqrt(points) * act_eps(f) + floor;
}
inline double oracle_bound(GemvVariant v) {
  return oracle_bound(gemv_act_format(v));
}
// The prompt path on the f16 GEMM: every projection output off by eps_f16, over the prompt path's floor.
inline double prompt_f16_bound() {
  return kOracleGain * std::sqrt(kQuantPoints) * kEpsF16 + kPromptFloor;
}

}  // namespace qc::cuda::test
