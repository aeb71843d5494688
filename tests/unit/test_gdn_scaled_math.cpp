// The scaled form of the Gated DeltaNet recurrence that kernels/gdn_scaled.h runs (GdnScan::kScaled),
// mirrored on the CPU: the state of a segment held as S = D S~ (D <- D d_t; mem = D S~^T k; S~ += k beta
// (v - D mem) / D; o = D S~^T q), segments cut where a call's 16-position tiles end and where D would fall
// below 2^-64 (the decay then folded into S~), against the token recurrence in double; the same form in
// float within the bound tests/gpu/test_gdn_prefill.cpp derives for the token scan, and with the same bits
// for calls starting on the grid of 16. Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "gdn_math_ref.h"

namespace {

using qc::test::gdn_math::Inputs;
using qc::test::gdn_math::make_inputs;
using qc::test::gdn_math::Shape;
using qc::test::gdn_math::token_scan;

constexpr int kTile = 16;                // kGdnScaledTile
constexpr double kFoldBelow = 0x1p-64;   // kGdnScaledFoldBelow
enum class Mutation { kNone, kNoFold };  // kNoFold: D never restarts inside a tile

// Positions [start, start + m) in one call; the state s ([dk][dv], in T) updated in place, the outputs
// [m][dv] returned. The kernel's order of operations per value (its sums' trees aside).
template <class T>
std::vector<T> scaled_call(const Inputs& in, const Shape& sh, int start, int m, std::vector<T>& s,
                           Mutation mut = Mutation::kNone) {
  const int dk = sh.dk, dv = sh.dv;
  std::vector<T> o(static_cast<size_t>(m) * dv);
  for (int t0 = 0; t0 < m; t0 += kTile) {
    const int nt = std::min(kTile, m - t0);
    T D = 1;
    for (int tt = 0; tt < nt; ++tt) {
      const int t = start + t0 + tt;
      const T decay = static_cast<T>(std::exp(static_cast<T>(in.gl[t])));
      T dn = D * decay;
      if (mut != Mutation::kNoFold && dn < static_cast<T>(kFoldBelow)) {
        for (T& x : s) x *= dn;
        dn = 1;
      }
      D = dn;
      const double* k = &in.k[static_cast<size_t>(t) * dk];
      const double* q = &in.q[static_cast<size_t>(t) * dk];
      const T c = static_cast<T>(in.beta[t]) * (T(1) / D);
      for (int col = 0; col < dv; ++col) {
        T mem = 0;
        for (int r = 0; r < dk; ++r) mem += s[static_cast<size_t>(r) * dv + col] * static_cast<T>(k[r]);
        const T dl = c * (static_cast<T>(in.v[static_cast<size_t>(t) * dv + col]) - D * mem);
        T acc = 0;
        for (int r = 0; r < dk; ++r) {
          T& x = s[static_cast<size_t>(r) * dv + col];
          x += static_cast<T>(k[r]) * dl;
          acc += x * static_cast<T>(q[r]);
        }
        o[static_cast<size_t>(t0 + tt) * dv + col] = D * acc;
      }
    }
    for (T& x : s) x *= D;  // the segment ends with the tile
  }
  return o;
}

// Calls of the given sizes from position 0 (the last size repeats); outputs and the final state.
template <class T>
std::vector<T> scaled_calls(const Inputs& in, const Shape& sh, const std::vector<int>& calls,
                            std::vector<T>& s, Mutation mut = Mutation::kNone) {
  s.assign(in.s0.begin(), in.s0.end());
  std::vector<T> o;
  for (size_t i = 0, at = 0; static_cast<int>(at) < in.m; ++i) {
    const int n = std::min(calls[std::min(i, calls.size() - 1)], in.m - static_cast<int>(at));
    const std::vector<T> part = scaled_call(in, sh, static_cast<int>(at), n, s, mut);
    o.insert(o.end(), part.begin(), part.end());
    at += static_cast<size_t>(n);
  }
  return o;
}

double rms(const std::vector<double>& x) {
  double ss = 0.0;
  for (double v : x) ss += v * v;
  return std::sqrt(ss / static_cast<double>(x.size()));
}

template <class T>
double max_rel(const std::vector<T>& got, const std::vector<double>& want) {
  double worst = 0.0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
  return worst / rms(want);
}

// Inputs whose decays force folds: every 5th position of the head decays by ~1e-12 (log decay -27.6, so
// three of them in a tile take D below 2^-64), and positions 37 and 150 by exactly 0 (a log decay of -1e4
// underflows exp in float and double alike: the state is cleared there, as the token step clears it).
Inputs with_strong_decays(Inputs in) {
  for (int t = 0; t < in.m; ++t)
    if (t % 5 == 2) in.gl[t] = -27.6;
  in.gl[37] = -1e4;
  if (in.m > 150) in.gl[150] = -1e4;
  return in;
}

// The 27B head (dk 128) and the small test shape's (dk 64); 16 columns are as many as any column needs.
const Shape kShapes[] = {{128, 16}, {64, 32}};
// Call sizes: one call; calls starting on the grid of 16; calls starting off it.
const std::vector<std::vector<int>> kSplits = {{300},    {64, 236},    {16}, {48, 252},
                                               {1, 299}, {7, 16, 277}, {100}};

bool on_grid(const std::vector<int>& calls, int m) {
  bool on = true;
  for (size_t i = 0, at = 0; static_cast<int>(at) < m; ++i) {
    on = on && at % kTile == 0;
    at += static_cast<size_t>(calls[std::min(i, calls.size() - 1)]);
  }
  return on;
}

// In double the scaled form is the token recurrence, whatever the call starts and wherever a decay forces a
// fold: to the rounding of doubles (2^-53 per operation, a few hundred operations per value, contracted by
// the decays as in the token scan's analysis: ~1e-14 of the rms). The bound 1e-12 leaves that room; a wrong
// scale, a fold in the wrong place or a missed one moves values by O(1).
TEST(GdnScaledMath, AlgebraEqualsTheTokenRecurrence) {
  std::mt19937 rng(9);
  for (const Shape& sh : kShapes) {
    for (const bool strong : {false, true}) {
      const Inputs base = make_inputs(rng, sh, 300);
      const Inputs in = strong ? with_strong_decays(base) : base;
      std::vector<double> s_ref;
      const std::vector<double> o_ref = token_scan(in, sh, s_ref);
      for (const std::vector<int>& calls : kSplits) {
        std::vector<double> s;
        const std::vector<double> o = scaled_calls(in, sh, calls, s);
        EXPECT_LT(max_rel(o, o_ref), 1e-12)
            << "dk " << sh.dk << (strong ? ", strong decays" : "") << ", calls of " << calls[0];
        EXPECT_LT(max_rel(s, s_ref), 1e-12)
            << "dk " << sh.dk << (strong ? ", strong decays" : "") << ", calls of " << calls[0];
      }
    }
  }
}

// The folds are needed: without them the strong decays take D to 0 (or below the smallest double), 1/D
// overflows and the outputs are no longer finite or no longer the recurrence's.
TEST(GdnScaledMath, WithoutFoldsStrongDecaysBreakIt) {
  std::mt19937 rng(10);
  const Shape sh = kShapes[0];
  const Inputs in = with_strong_decays(make_inputs(rng, sh, 300));
  std::vector<double> s_ref;
  const std::vector<double> o_ref = token_scan(in, sh, s_ref);
  std::vector<float> s;
  const std::vector<float> o = scaled_calls(in, sh, {300}, s, Mutation::kNoFold);
  bool finite = true;
  for (float x : o) finite = finite && std::isfinite(x);
  EXPECT_TRUE(!finite || max_rel(o, o_ref) > 1e-2);
}

// In float (the kernel's precision; its sums run in other trees, the same magnitude of rounding) within the
// token scan's bound, 2e-4 of the rms (tests/gpu/test_gdn_prefill.cpp), folds included; the same bits for
// calls starting on the grid of 16, within twice the bound of one call for the others.
TEST(GdnScaledMath, FloatIsWithinTheTokenScansBoundAndKeepsItsBitsOnTheGrid) {
  constexpr double kRelTol = 2e-4;
  std::mt19937 rng(11);
  for (const Shape& sh : kShapes) {
    for (const bool strong : {false, true}) {
      const Inputs base = make_inputs(rng, sh, 300);
      const Inputs in = strong ? with_strong_decays(base) : base;
      std::vector<double> s_ref;
      const std::vector<double> o_ref = token_scan(in, sh, s_ref);
      std::vector<float> s_one;
      const std::vector<float> o_one = scaled_calls(in, sh, {300}, s_one);
      const double eo = max_rel(o_one, o_ref), es = max_rel(s_one, s_ref);
      std::printf("[gdn scaled math] dk %d%s, float: max |err| / rms outputs %.3g, state %.3g (bound %.3g)\n",
                  sh.dk, strong ? ", strong decays" : "", eo, es, kRelTol);
      EXPECT_LT(eo, kRelTol);
      EXPECT_LT(es, kRelTol);
      for (const std::vector<int>& calls : kSplits) {
        std::vector<float> s;
        const std::vector<float> o = scaled_calls(in, sh, calls, s);
        if (on_grid(calls, in.m)) {
          EXPECT_EQ(0, std::memcmp(o.data(), o_one.data(), o.size() * sizeof(float)))
              << "calls of " << calls[0];
          EXPECT_EQ(0, std::memcmp(s.data(), s_one.data(), s.size() * sizeof(float)))
              << "calls of " << calls[0];
        } else {
          EXPECT_LT(max_rel(o, o_ref), 2 * kRelTol) << "calls of " << calls[0];
          EXPECT_LT(max_rel(s, s_ref), 2 * kRelTol) << "calls of " << calls[0];
        }
      }
    }
  }
}

}  // namespace
