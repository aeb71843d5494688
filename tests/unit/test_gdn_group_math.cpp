// The grouped form of the Gated DeltaNet recurrence that kernels/gdn_group.h runs (GdnScan::kGroup),
// mirrored on the CPU: its algebra (coefficient rows R_d, R_d k.k, R_d k.q per position; groups of 4 on the
// absolute grid, cut where a call starts and where the scan's 16-position tiles end) against the token
// recurrence in double, and the same form in float against that reference, within the bound
// tests/gpu/test_gdn_prefill.cpp derives for the token scan (which the kernel's form is held to). Runs
// without a GPU, so the algebra of a new variant can be checked before device time is spent on it.
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

constexpr int kG = 4;      // the group (kGdnGroupPositions)
constexpr int kTile = 16;  // the scan's staging tile (gdn_group.cu)

// One position's coefficient row, as gdn_group_coef_kernel writes it: beta, R_0..R_4 (R_0 = 1),
// kk[d] = R_d k_{t-d}.k_t (d >= 1), kq[d] = R_d k_{t-d}.q_t (kq[0] = k_t.q_t). Predecessors before the
// call's first row count as k = 0, decay 1 (never used: groups do not reach before a call's start).
template <class T>
struct Coef {
  T beta, r[kG + 1], kk[kG], kq[kG];
};

template <class T>
T dot(const double* a, const double* b, int n) {
  T acc = 0;
  for (int i = 0; i < n; ++i) acc += static_cast<T>(a[i]) * static_cast<T>(b[i]);
  return acc;
}

// Positions [start, start + m) of `in` in one call: the state s ([dk][dv], in T) is updated in place,
// the outputs [m][dv] returned.
template <class T>
std::vector<T> group_call(const Inputs& in, const Shape& sh, int start, int m, std::vector<T>& s) {
  const int dk = sh.dk, dv = sh.dv;
  std::vector<Coef<T>> cf(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) {
    const int t = start + i;
    Coef<T>& c = cf[static_cast<size_t>(i)];
    c.beta = static_cast<T>(in.beta[t]);
    c.r[0] = 1;
    for (int d = 1; d <= kG; ++d) {
      const int w = t - d + 1;  // R_d = R_{d-1} * decay_{t-d+1}
      c.r[d] = c.r[d - 1] * (w >= start ? static_cast<T>(std::exp(static_cast<T>(in.gl[w]))) : T(1));
    }
    for (int d = 0; d < kG; ++d) {
      const bool in_call = t - d >= start;
      const double* kd = &in.k[static_cast<size_t>(in_call ? t - d : t) * dk];
      const T kq = in_call ? dot<T>(kd, &in.q[static_cast<size_t>(t) * dk], dk) : T(0);
      const T kk = in_call && d > 0 ? dot<T>(kd, &in.k[static_cast<size_t>(t) * dk], dk) : T(0);
      c.kq[d] = d == 0 ? kq : c.r[d] * kq;
      c.kk[d] = c.r[d] * kk;
    }
  }
  std::vector<T> o(static_cast<size_t>(m) * dv), ab(2 * kG);
  std::vector<T> delta(kG), dsc(kG);
  for (int t0 = 0; t0 < m; t0 += kTile) {
    const int nt = std::min(kTile, m - t0);
    for (int tt = 0; tt < nt;) {
      const int L = std::min(kG - (start + t0 + tt) % kG, nt - tt);
      const int i0 = t0 + tt;  // the group's first row of the call
      for (int col = 0; col < dv; ++col) {
        for (int u = 0; u < L; ++u) {  // a_u, b_u from the state entering the group
          T a = 0, b = 0;
          const double* k = &in.k[static_cast<size_t>(start + i0 + u) * dk];
          const double* q = &in.q[static_cast<size_t>(start + i0 + u) * dk];
          for (int r = 0; r < dk; ++r) {
            a += s[static_cast<size_t>(r) * dv + col] * static_cast<T>(k[r]);
            b += s[static_cast<size_t>(r) * dv + col] * static_cast<T>(q[r]);
          }
          ab[u] = a;
          ab[L + u] = b;
        }
        for (int u = 0; u < L; ++u) {
          const Coef<T>& c = cf[static_cast<size_t>(i0 + u)];
          T mem = c.r[u + 1] * ab[u];
          for (int v = 0; v < u; ++v) mem += c.kk[u - v] * delta[v];
          delta[u] = c.beta * (static_cast<T>(in.v[static_cast<size_t>(start + i0 + u) * dv + col]) - mem);
        }
        for (int u = 0; u < L; ++u) {
          const Coef<T>& c = cf[static_cast<size_t>(i0 + u)];
          T out = c.r[u + 1] * ab[L + u];
          for (int v = 0; v <= u; ++v) out += c.kq[u - v] * delta[v];
          o[static_cast<size_t>(i0 + u) * dv + col] = out;
        }
        const Coef<T>& last = cf[static_cast<size_t>(i0 + L - 1)];
        for (int u = 0; u < L; ++u) dsc[u] = last.r[L - 1 - u] * delta[u];
        for (int r = 0; r < dk; ++r) {
          T x = s[static_cast<size_t>(r) * dv + col] * last.r[L];
          for (int u = 0; u < L; ++u)
            x += static_cast<T>(in.k[static_cast<size_t>(start + i0 + u) * dk + r]) * dsc[u];
          s[static_cast<size_t>(r) * dv + col] = x;
        }
      }
      tt += L;
    }
  }
  return o;
}

// Calls of the given sizes from position 0 (the last size repeats); outputs and the final state.
template <class T>
std::vector<T> group_calls(const Inputs& in, const Shape& sh, const std::vector<int>& calls,
                           std::vector<T>& s) {
  s.assign(in.s0.begin(), in.s0.end());
  std::vector<T> o;
  for (size_t i = 0, at = 0; static_cast<int>(at) < in.m; ++i) {
    const int n = std::min(calls[std::min(i, calls.size() - 1)], in.m - static_cast<int>(at));
    const std::vector<T> part = group_call(in, sh, static_cast<int>(at), n, s);
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

// The 27B head (dk 128) and the small test shape's (dk 64); 16 columns are as many as any column needs.
const Shape kShapes[] = {{128, 16}, {64, 32}};
// Call sizes: one call; calls starting on the grid; calls starting off it (groups cut at the starts, and
// tiles cutting groups inside a call).
const std::vector<std::vector<int>> kSplits = {{300},    {100, 200},   {64}, {4, 296},
                                               {1, 299}, {7, 16, 277}, {75}};

// In double the grouped form is the token recurrence: whatever the call starts, to the rounding of doubles
// (2^-53 per operation, a few hundred operations per value, errors contracted by the decays as in the token
// scan's analysis: ~1e-14 of the rms). The bound 1e-12 leaves that room; a wrong coefficient, index or group
// boundary moves values by O(1).
TEST(GdnGroupMath, AlgebraEqualsTheTokenRecurrence) {
  std::mt19937 rng(7);
  for (const Shape& sh : kShapes) {
    const Inputs in = make_inputs(rng, sh, 300);
    std::vector<double> s_ref;
    const std::vector<double> o_ref = token_scan(in, sh, s_ref);
    for (const std::vector<int>& calls : kSplits) {
      std::vector<double> s;
      const std::vector<double> o = group_calls(in, sh, calls, s);
      EXPECT_LT(max_rel(o, o_ref), 1e-12) << "dk " << sh.dk << ", calls of " << calls[0];
      EXPECT_LT(max_rel(s, s_ref), 1e-12) << "dk " << sh.dk << ", calls of " << calls[0];
    }
  }
}

// In float (the kernel's precision; its sums run in another order, same magnitude of rounding) within the
// token scan's bound, 2e-4 of the rms (tests/gpu/test_gdn_prefill.cpp); the same bits for calls starting on
// the grid, within twice the bound of one call for the others.
TEST(GdnGroupMath, FloatIsWithinTheTokenScansBoundAndKeepsItsBitsOnTheGrid) {
  constexpr double kRelTol = 2e-4;
  std::mt19937 rng(8);
  for (const Shape& sh : kShapes) {
    const Inputs in = make_inputs(rng, sh, 300);
    std::vector<double> s_ref;
    const std::vector<double> o_ref = token_scan(in, sh, s_ref);
    std::vector<float> s_one;
    const std::vector<float> o_one = group_calls(in, sh, {300}, s_one);
    const double eo = max_rel(o_one, o_ref), es = max_rel(s_one, s_ref);
    std::printf("[gdn group math] dk %d, float: max |err| / rms outputs %.3g, state %.3g (bound %.3g)\n",
                sh.dk, eo, es, kRelTol);
    EXPECT_LT(eo, kRelTol);
    EXPECT_LT(es, kRelTol);
    for (const std::vector<int>& calls : kSplits) {
      std::vector<float> s;
      const std::vector<float> o = group_calls(in, sh, calls, s);
      bool on_grid = true;
      for (size_t i = 0, at = 0; static_cast<int>(at) < in.m; ++i) {
        on_grid = on_grid && at % kG == 0;
        at += static_cast<size_t>(calls[std::min(i, calls.size() - 1)]);
      }
      if (on_grid) {
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

}  // namespace
