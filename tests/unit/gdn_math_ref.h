// The Gated DeltaNet recurrence of one value head in double, and the inputs the tests of its prompt-path
// forms feed it (test_gdn_chunk_math.cpp, test_gdn_group_math.cpp, test_gdn_scaled_math.cpp): shared so
// that all check their algebra against the same reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace qc::test::gdn_math {

struct Shape {
  int dk, dv;
};

// One value head's prompt: q (times 1/sqrt(dk)) and k as the model makes them (silu of the conv output,
// L2-normalised: mostly positive entries, so keys are correlated and T = (I + A)^-1 is far from I), v,
// beta in (0, 1), log decay < 0.
struct Inputs {
  int m = 0;
  std::vector<double> q, k, v, beta, gl, s0;  // [m][dk], [m][dk], [m][dv], [m], [m], [dk][dv]
};

inline Inputs make_inputs(std::mt19937& rng, const Shape& sh, int m) {
  std::normal_distribution<double> n01(0.0, 1.0);
  std::uniform_real_distribution<double> ua(-2.0, -0.05);
  Inputs in;
  in.m = m;
  auto unit_rows = [&](std::vector<double>& x, int d, double scale) {
    x.resize(static_cast<size_t>(m) * d);
    for (int t = 0; t < m; ++t) {
      double* row = &x[static_cast<size_t>(t) * d];
      double ss = 0.0;
      for (int i = 0; i < d; ++i) {
        const double x0 = n01(rng);
        row[i] = x0 / (1.0 + std::exp(-x0));  // silu, as after the model's conv: keys correlate
        ss += row[i] * row[i];
      }
      for (int i = 0; i < d; ++i) row[i] *= scale / std::sqrt(ss);
    }
  };
  unit_rows(in.q, sh.dk, 1.0 / std::sqrt(static_cast<double>(sh.dk)));
  unit_rows(in.k, sh.dk, 1.0);
  in.v.resize(static_cast<size_t>(m) * sh.dv);
  for (double& x : in.v) x = n01(rng);
  const double a = ua(rng), dt = 0.5 * n01(rng);
  for (int t = 0; t < m; ++t) {
    in.beta.push_back(1.0 / (1.0 + std::exp(-n01(rng))));
    in.gl.push_back(std::log1p(std::exp(n01(rng) + dt)) * a);  // softplus(alpha + dt_bias) * ssm_a
  }
  in.s0.resize(static_cast<size_t>(sh.dk) * sh.dv);
  for (double& x : in.s0) x = 0.1 * n01(rng);
  return in;
}

// The token recurrence (QWEN35.md section 3), double: outputs [m][dv], the state left in s.
inline std::vector<double> token_scan(const Inputs& in, const Shape& sh, std::vector<double>& s) {
  const int dk = sh.dk, dv = sh.dv;
  s = in.s0;
  std::vector<double> o(static_cast<size_t>(in.m) * dv), mem(dv);
  for (int t = 0; t < in.m; ++t) {
    const double* k = &in.k[static_cast<size_t>(t) * dk];
    const double* q = &in.q[static_cast<size_t>(t) * dk];
    const double decay = std::exp(in.gl[t]);
    for (double& x : s) x *= decay;
    std::fill(mem.begin(), mem.end(), 0.0);
    for (int i = 0; i < dk; ++i)
      for (int c = 0; c < dv; ++c) mem[c] += s[static_cast<size_t>(i) * dv + c] * k[i];
    for (int c = 0; c < dv; ++c) {
      const double delta = in.beta[t] * (in.v[static_cast<size_t>(t) * dv + c] - mem[c]);
      for (int i = 0; i < dk; ++i) s[static_cast<size_t>(i) * dv + c] += k[i] * delta;
    }
    for (int c = 0; c < dv; ++c) {
      double acc = 0.0;
      for (int i = 0; i < dk; ++i) acc += s[static_cast<size_t>(i) * dv + c] * q[i];
      o[static_cast<size_t>(t) * dv + c] = acc;
    }
  }
  return o;
}

}  // namespace qc::test::gdn_math
