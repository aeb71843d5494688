// The chunked (WY) form of the Gated DeltaNet recurrence that kernels/gdn_chunk.h runs on tensor cores,
// mirrored on the CPU: its algebra (the chunk grid with a call starting inside a chunk, identity rows for
// positions outside the call, T by 16x16 diagonal blocks and block rows, Qw / Ou folded outputs) against the
// token recurrence in double, and the kernel's product precision (3xTF32) emulated in float against the
// same reference, within the bound tests/gpu/test_gdn_prefill.cpp derives. The emulation also reports the
// error 1xTF32 would have (one rounding of each operand to TF32) and 3xBF16's (the same three-product split
// with bf16 parts), for the next attempt's choice of precision (docs/PERFORMANCE.md, 2026-12-06 third and
// eighth sessions). Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "gdn_math_ref.h"

namespace {

constexpr int kC = 64;  // the chunk (kGdnPrefillGrid)

using qc::test::gdn_math::Inputs;
using qc::test::gdn_math::make_inputs;
using qc::test::gdn_math::Shape;
using qc::test::gdn_math::token_scan;

// Products as the kernel forms them. kExact: double. kTf32x3 / kTf32: float operands, each split into a
// TF32 high part and a TF32 remainder (hi*hi + hi*lo + lo*hi) or rounded once; the products (exact in
// double) summed in float rounding toward zero at every addition, a model of the tensor cores'
// accumulation (Fasi, Higham, Mikaitis and Pranesh, 2021, measured truncated accumulation on V100, T4 and
// A100 tensor cores). With round-to-nearest sums this emulation's 3xTF32 error is 2.0e-5 of the rms, with
// truncation 1.2e-4, the latter what the kernel shows on an H100 for the nearest shape (1.3e-4, dk 64):
// truncation, not the TF32 split, is what the kernel's error is made of.
enum class Prec { kExact, kTf32x3, kTf32, kBf16x3 };

float to_tf32(float x) {  // cvt.rna.tf32.f32: round to nearest (ties away) at 10 mantissa bits
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x1000u) & 0xFFFFE000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

float to_bf16(float x) {  // round to nearest even at 7 stored mantissa bits (cvt.rn.bf16.f32)
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

double product_sum(Prec p, const double* a, size_t sa, const double* b, size_t sb, int n) {
  if (p == Prec::kExact) {
    double acc = 0.0;
    for (int i = 0; i < n; ++i) acc += a[i * sa] * b[i * sb];
    return acc;
  }
  float acc = 0.0f;
  auto add_rz = [](float s, double t) {  // s + t rounded toward zero to float
    const double e = static_cast<double>(s) + t;
    float r = static_cast<float>(e);
    if (std::fabs(static_cast<double>(r)) > std::fabs(e)) r = std::nextafter(r, 0.0f);
    return r;
  };
  for (int i = 0; i < n; ++i) {
    const float x = static_cast<float>(a[i * sa]), y = static_cast<float>(b[i * sb]);
    if (p == Prec::kBf16x3) {  // the same split with bf16 parts (mma.m16n8k16 bf16: twice TF32's rate)
      const float xh = to_bf16(x), yh = to_bf16(y), xl = to_bf16(x - xh), yl = to_bf16(y - yh);
      acc = add_rz(acc, static_cast<double>(xl) * yh);
      acc = add_rz(acc, static_cast<double>(xh) * yl);
      acc = add_rz(acc, static_cast<double>(xh) * yh);
      continue;
    }
    const float xh = to_tf32(x), yh = to_tf32(y);
    if (p == Prec::kTf32) {
      acc = add_rz(acc, static_cast<double>(xh) * yh);
    } else {
      const float xl = to_tf32(x - xh), yl = to_tf32(y - yh);
      acc = add_rz(acc, static_cast<double>(xl) * yh);
      acc = add_rz(acc, static_cast<double>(xh) * yl);
      acc = add_rz(acc, static_cast<double>(xh) * yh);
    }
  }
  return acc;
}

// Rounds a stored intermediate like the kernel (f32 in memory), or not for kExact.
double store(Prec p, double x) {
  return p == Prec::kExact ? x : static_cast<double>(static_cast<float>(x));
}

// The kernel's floor on a position's log decay (kernels/gdn_chunk.h kGdnChunkMinLogDecay, which this
// test does not include: it runs without the CUDA headers).
constexpr double kMinLogDecay = -200.0;

// How the cumulative log decay G is kept. kHiLo: the kernel's (a double sum split into two floats, the
// differences G_t - G_s taken hi from hi and lo from lo, each rounded to float); kF32: one float summed in
// float (the kernel before 2026-12-06's eighth session), for the comparison. kExact ignores it.
enum class GForm { kHiLo, kF32 };

// The chunked form over calls: `calls` sizes from position 0 (each call's chunks on the absolute grid;
// rows outside the call are identity rows). Outputs [m][dv], the state left in s. Outside kExact G is
// kept as `gf` says, with the kernel's floor on each log decay.
std::vector<double> chunked_scan(const Inputs& in, const Shape& sh, const std::vector<int>& calls, Prec p,
                                 std::vector<double>& s, GForm gf = GForm::kHiLo) {
  const int dk = sh.dk, dv = sh.dv;
  s = in.s0;
  for (double& x : s) x = store(p, x);
  std::vector<double> o(static_cast<size_t>(in.m) * dv);
  std::vector<double> K(kC * dk), Q(kC * dk), V(kC * dv), beta(kC), G(kC), A(kC * kC), T(kC * kC), P(kC * kC);
  std::vector<double> W(kC * dk), U(kC * dv), Qw(kC * dk), Ou(kC * dv), D(kC * dv), col(kC);
  int pos0 = 0;
  for (const int m : calls) {
    const int off = pos0 % kC, nc = (off + m + kC - 1) / kC;
    for (int ci = 0; ci < nc; ++ci) {
      const int r0 = ci * kC - off;  // call row of chunk row 0
      double g = 0.0;
      for (int l = 0; l < kC; ++l) {
        const int r = r0 + l, t = pos0 + r;
        const bool ok = r >= 0 && r < m;
        for (int i = 0; i < dk; ++i) {
          K[l * dk + i] = ok ? in.k[static_cast<size_t>(t) * dk + i] : 0.0;
          Q[l * dk + i] = ok ? in.q[static_cast<size_t>(t) * dk + i] : 0.0;
        }
        for (int c = 0; c < dv; ++c) V[l * dv + c] = ok ? in.v[static_cast<size_t>(t) * dv + c] : 0.0;
        beta[l] = ok ? in.beta[t] : 0.0;
        const double gl = ok ? (p != Prec::kExact ? std::max(in.gl[t], kMinLogDecay) : in.gl[t]) : 0.0;
        g = gf == GForm::kF32 ? store(p, g + gl) : g + gl;
        G[l] = g;
      }
      // G_t - G_s as the kernel forms it.
      auto gdiff = [&](int t, int u) {
        if (p == Prec::kExact || gf == GForm::kF32) return store(p, G[t] - G[u]);
        const double ht = store(p, G[t]), hu = store(p, G[u]);
        return store(p, store(p, ht - hu) + store(p, store(p, G[t] - ht) - store(p, G[u] - hu)));
      };
      // A, P (lower), T = (I + A)^-1: diagonal 16x16 blocks by substitution, then block rows.
      for (int t = 0; t < kC; ++t)
        for (int u = 0; u < kC; ++u) {
          const double e = u <= t ? std::exp(gdiff(t, u)) : 0.0;
          A[t * kC + u] =
              u < t ? store(p, beta[t] * e * product_sum(p, &K[t * dk], 1, &K[u * dk], 1, dk)) : 0.0;
          P[t * kC + u] = u <= t ? store(p, e * product_sum(p, &Q[t * dk], 1, &K[u * dk], 1, dk)) : 0.0;
          T[t * kC + u] = 0.0;
        }
      for (int b = 0; b < 4; ++b)
        for (int c = 0; c < 16; ++c)
          for (int i = 0; i < 16; ++i) {
            double acc = i == c ? 1.0 : 0.0;
            for (int jj = 0; jj < i; ++jj)
              acc -= A[(16 * b + i) * kC + 16 * b + jj] * T[(16 * b + jj) * kC + 16 * b + c];
            T[(16 * b + i) * kC + 16 * b + c] = store(p, acc);
          }
      for (int ib = 1; ib < 4; ++ib) {
        std::vector<double> R(16 * 16 * ib);
        for (int b = 0; b < ib; ++b)
          for (int rr = 0; rr < 16; ++rr)
            for (int cc = 0; cc < 16; ++cc) {
              double acc = 0.0;
              for (int q = 16 * b; q < 16 * ib; ++q)
                acc += A[(16 * ib + rr) * kC + q] * T[q * kC + 16 * b + cc];
              R[(b * 16 + rr) * 16 + cc] = store(p, acc);
            }
        for (int b = 0; b < ib; ++b)
          for (int rr = 0; rr < 16; ++rr)
            for (int cc = 0; cc < 16; ++cc) {
              double acc = 0.0;
              for (int mm = 0; mm < 16; ++mm)
                acc += T[(16 * ib + rr) * kC + 16 * ib + mm] * R[(b * 16 + mm) * 16 + cc];
              T[(16 * ib + rr) * kC + 16 * b + cc] = store(p, -acc);
            }
      }
      // W = T diag(beta gamma) K, U = T diag(beta) V, Qw = gamma Q - P W, Ou = P U.
      for (int l = 0; l < kC; ++l) col[l] = beta[l] * std::exp(store(p, G[l]));  // the kernel: exp(hi)
      std::vector<double> X(kC);
      for (int i = 0; i < dk; ++i) {
        for (int l = 0; l < kC; ++l) X[l] = store(p, col[l] * K[l * dk + i]);
        for (int t = 0; t < kC; ++t) W[t * dk + i] = store(p, product_sum(p, &T[t * kC], 1, X.data(), 1, kC));
      }
      for (int i = 0; i < dk; ++i)
        for (int t = 0; t < kC; ++t)
          Qw[t * dk + i] = store(
              p, std::exp(store(p, G[t])) * Q[t * dk + i] - product_sum(p, &P[t * kC], 1, &W[i], dk, kC));
      for (int c = 0; c < dv; ++c) {
        for (int l = 0; l < kC; ++l) X[l] = store(p, beta[l] * V[l * dv + c]);
        for (int t = 0; t < kC; ++t) U[t * dv + c] = store(p, product_sum(p, &T[t * kC], 1, X.data(), 1, kC));
      }
      for (int c = 0; c < dv; ++c)
        for (int t = 0; t < kC; ++t) Ou[t * dv + c] = store(p, product_sum(p, &P[t * kC], 1, &U[c], dv, kC));
      // delta = U - W S, O = Qw S + Ou, S = gamma_L S + (e K)^T delta.
      for (int t = 0; t < kC; ++t)
        for (int c = 0; c < dv; ++c) {
          D[t * dv + c] = store(p, U[t * dv + c] - product_sum(p, &W[t * dk], 1, &s[c], dv, dk));
          const int r = r0 + t;
          if (r >= 0 && r < m)
            o[static_cast<size_t>(pos0 + r) * dv + c] =
                store(p, Ou[t * dv + c] + product_sum(p, &Qw[t * dk], 1, &s[c], dv, dk));
        }
      const double gamma_l = std::exp(store(p, G[kC - 1]));
      std::vector<double> EK(kC);
      for (int i = 0; i < dk; ++i) {
        for (int l = 0; l < kC; ++l) EK[l] = store(p, std::exp(gdiff(kC - 1, l)) * K[l * dk + i]);
        for (int c = 0; c < dv; ++c) {
          const double upd = product_sum(p, EK.data(), 1, &D[c], dv, kC);
          s[static_cast<size_t>(i) * dv + c] =
              store(p, store(p, gamma_l * s[static_cast<size_t>(i) * dv + c]) + upd);
        }
      }
    }
    pos0 += m;
  }
  return o;
}

double rms(const std::vector<double>& x) {
  double ss = 0.0;
  for (double v : x) ss += v * v;
  return std::sqrt(ss / static_cast<double>(x.size()));
}

// max |a - b| over rows of `width`, each row's error relative to the rms of b's row (the GPU test's unit).
double worst_row_rel(const std::vector<double>& a, const std::vector<double>& b, size_t width) {
  double worst = 0.0;
  for (size_t r = 0; r * width < b.size(); ++r) {
    const std::vector<double> row(b.begin() + static_cast<std::ptrdiff_t>(r * width),
                                  b.begin() + static_cast<std::ptrdiff_t>((r + 1) * width));
    const double unit = rms(row);
    for (size_t c = 0; c < width; ++c)
      worst = std::max(worst, std::fabs(a[r * width + c] - b[r * width + c]) / unit);
  }
  return worst;
}

// The larger of worst_row_rel over the outputs (rows of dv) and over the state (one row), against the
// reference's outputs and state.
double worst_of(const std::vector<double>& o, const std::vector<double>& st, const std::vector<double>& o_ref,
                const std::vector<double>& st_ref, int dv) {
  return std::max(worst_row_rel(o, o_ref, static_cast<size_t>(dv)), worst_row_rel(st, st_ref, st_ref.size()));
}

struct Case {
  int m;
  std::vector<int> calls;
};

const std::vector<Case> kCases = {{1, {1}},         {63, {63}},         {64, {64}},
                                  {65, {65}},       {200, {200}},       {200, {13, 187}},
                                  {200, {64, 136}}, {150, {1, 63, 86}}, {130, {70, 3, 57}}};

// In exact arithmetic the chunked form is the token recurrence, whatever the calls (off-grid starts
// included): agreement to double rounding (~1e-13 here) shows the algebra, the grid and the identity rows
// are right; a wrong index or gate is O(1).
TEST(GdnChunkMath, ChunkedFormIsTheTokenRecurrence) {
  std::mt19937 rng(7);
  for (const Shape sh : {Shape{32, 32}, Shape{64, 16}}) {
    for (const Case& cs : kCases) {
      SCOPED_TRACE("dk " + std::to_string(sh.dk) + " dv " + std::to_string(sh.dv) + " m " +
                   std::to_string(cs.m) + " calls " + std::to_string(cs.calls.size()));
      const Inputs in = make_inputs(rng, sh, cs.m);
      std::vector<double> s_tok, s_chk;
      const std::vector<double> o_tok = token_scan(in, sh, s_tok);
      const std::vector<double> o_chk = chunked_scan(in, sh, cs.calls, Prec::kExact, s_chk);
      EXPECT_LT(worst_row_rel(o_chk, o_tok, static_cast<size_t>(sh.dv)), 1e-10);
      EXPECT_LT(worst_row_rel(s_chk, s_tok, s_tok.size()), 1e-10);
    }
  }
}

// The kernel's precision, emulated: products in 3xTF32 with truncating sums, intermediates stored in f32.
// Within the 1e-3 of the rms that tests/gpu/test_gdn_prefill.cpp allows the chunked kernel (measured there
// 1.7e-4 outputs, 2.9e-4 state on an H100 with its shapes). Also printed, not asserted: 1xTF32's error
// (2.4e-2 here: one TF32 rounding per operand is far outside the bound, so a faster kernel cannot simply
// drop the split), and 3xBF16's (2.8e-4: inside the bound, so the split on bf16 mma.m16n8k16 -- k 16 an
// instruction instead of 8, two values a register -- is numerically open to the next chunked kernel).
TEST(GdnChunkMath, Tf32x3ProductsStayWithinTheKernelBound) {
  std::mt19937 rng(8);
  double worst3 = 0.0, worst1 = 0.0, worst_b3 = 0.0;
  const std::vector<Case> cases = {
      {65, {65}}, {200, {13, 187}}, {150, {1, 63, 86}}};  // (the sanitizer build)
  for (const Shape sh : {Shape{32, 32}, Shape{64, 16}}) {
    for (const Case& cs : cases) {
      const Inputs in = make_inputs(rng, sh, cs.m);
      std::vector<double> s_tok, s3, s1, sb;
      const std::vector<double> o_tok = token_scan(in, sh, s_tok);
      const std::vector<double> o3 = chunked_scan(in, sh, cs.calls, Prec::kTf32x3, s3);
      const std::vector<double> o1 = chunked_scan(in, sh, cs.calls, Prec::kTf32, s1);
      const std::vector<double> ob = chunked_scan(in, sh, cs.calls, Prec::kBf16x3, sb);
      worst_b3 = std::max(worst_b3, worst_of(ob, sb, o_tok, s_tok, sh.dv));
      worst3 = std::max(worst3, worst_of(o3, s3, o_tok, s_tok, sh.dv));
      worst1 = std::max(worst1, worst_of(o1, s1, o_tok, s_tok, sh.dv));
    }
  }
  std::printf(
      "[gdn_chunk_math] max |err| / rms vs the double recurrence: 3xTF32 %.3g (bound 1e-3), 1xTF32 %.3g, "
      "3xBF16 %.3g\n",
      worst3, worst1, worst_b3);
  EXPECT_LT(worst3, 1e-3);
  EXPECT_GT(worst3, 0.0) << "the emulation rounds nothing";
}

// Decays of e^-30 .. e^-1200 every fifth position and an exact 0 (e^-10000 in double) at position 37,
// tests/gpu/test_gdn_prefill.cpp's StrongDecaysMatchCpuDouble in this mirror: G reaches thousands. With G in
// one float its rounding (~|G| 2^-24) alone moves exp(G_t - G_s) by ~1e-4 relative (the kernel's outputs
// were 1.6e-3 of their rms off on an H100); with G as hi + lo (kernels/gdn_chunk.h) the chunked form
// stays within its 1e-3 bound of the double recurrence, which keeps the true decays, as with ordinary
// decays. The one-float error is printed and must be the larger: the mirror models the mechanism.
TEST(GdnChunkMath, StrongDecaysStayWithinTheKernelBound) {
  std::mt19937 rng(9);
  double worst_hilo = 0.0, worst_f32 = 0.0, worst_b3 = 0.0;
  for (const Shape sh : {Shape{32, 32}, Shape{64, 16}}) {
    Inputs in = make_inputs(rng, sh, 200);
    std::uniform_real_distribution<double> ua(-2.0, -0.05);
    for (int t = 0; t < in.m; ++t) {
      if (t == 37)
        in.gl[t] = -1e4;
      else if (t % 5 == 2)
        in.gl[t] = 600.0 * ua(rng);  // softplus(600 + dt_bias) * ssm_a
    }
    for (const std::vector<int>& calls : {std::vector<int>{200}, std::vector<int>{13, 187}}) {
      std::vector<double> s_tok, s_h, s_f, s_b;
      const std::vector<double> o_tok = token_scan(in, sh, s_tok);
      const std::vector<double> o_h = chunked_scan(in, sh, calls, Prec::kTf32x3, s_h, GForm::kHiLo);
      const std::vector<double> o_f = chunked_scan(in, sh, calls, Prec::kTf32x3, s_f, GForm::kF32);
      const std::vector<double> o_b = chunked_scan(in, sh, calls, Prec::kBf16x3, s_b, GForm::kHiLo);
      worst_b3 = std::max(worst_b3, worst_of(o_b, s_b, o_tok, s_tok, sh.dv));
      worst_hilo = std::max(worst_hilo, worst_of(o_h, s_h, o_tok, s_tok, sh.dv));
      worst_f32 = std::max(worst_f32, worst_of(o_f, s_f, o_tok, s_tok, sh.dv));
    }
  }
  std::printf(
      "[gdn_chunk_math] strong decays, max |err| / rms: 3xTF32 with G as hi + lo %.3g (bound 1e-3), "
      "G in one float %.3g; 3xBF16 with hi + lo %.3g\n",
      worst_hilo, worst_f32, worst_b3);
  EXPECT_LT(worst_hilo, 1e-3);
  EXPECT_GT(worst_f32, worst_hilo);
}

}  // namespace
