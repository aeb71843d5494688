// Each operation of the reference forward (engine/reference/ops.h) against a plain double implementation
// written here independently, on seeded random inputs, in both precisions.
//
// Tolerances. u = 2^-24 (f32 unit roundoff), u64 = 2^-53. A length-n sum evaluated with kLanes = 16
// partial sums and a 4-level tree has at most n/16 + 4 rounding steps per term, so its error is bounded by
// gamma_m * sum|terms| with m = n/16 + 5 and gamma_m = m u / (1 - m u) (Higham, ch. 3); the inputs here are
// representable in both precisions, so this is the whole error of a dot product. Element-wise operations
// with a few roundings (exp, division) get a few ulps, written as c * u * |value| with c stated.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "model/quant.h"
#include "model/tensor.h"
#include "reference/ops.h"
#include "reference/thread_pool.h"

namespace qc::ref {
namespace {

constexpr double kU32 = 0x1p-24;
constexpr double kU64 = 0x1p-53;

template <class T>
constexpr double unit() {
  return std::is_same_v<T, double> ? kU64 : kU32;
}

// gamma for a length-n lane-summed dot product (see the header comment).
template <class T>
double gamma_dot(int64_t n) {
  const double m = static_cast<double>(n) / kLanes + 5.0;
  return m * unit<T>() / (1.0 - m * unit<T>());
}

std::vector<double> random_vec(std::mt19937& rng, int64_t n, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  // Values representable in f32 so both precisions start from the same numbers.
  for (double& x : v) x = static_cast<float>(u(rng));
  return v;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

double plain_silu(double x) {
  return x / (1.0 + std::exp(-x));
}

// ---- dot / matvec ----

template <class T>
void check_dot(int64_t n) {
  std::mt19937 rng(11);
  const std::vector<double> a = random_vec(rng, n);
  const std::vector<double> b = random_vec(rng, n);
  double want = 0.0;
  double mag = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    want += a[i] * b[i];  // a[i]*b[i] is exact in double for f32 inputs; the sum errs by ~n u64
    mag += std::fabs(a[i] * b[i]);
  }
  const std::vector<T> at = as<T>(a);
  const std::vector<T> bt = as<T>(b);
  const double got = static_cast<double>(dot(at.data(), bt.data(), n));
  EXPECT_NEAR(got, want, gamma_dot<T>(n) * mag + n * kU64 * mag) << "n=" << n;
}

TEST(RefOps, DotMatchesPlainSumBothPrecisions) {
  for (int64_t n : {1, 7, 16, 33, 100, 1000}) {
    check_dot<float>(n);
    check_dot<double>(n);
  }
}

// A weight matrix stored as `type`, and its exact values (decoded through quant.cpp's decode_row).
struct Matrix {
  TensorView view;
  std::vector<uint8_t> bytes;
  std::vector<double> values;  // [rows][cols] as decoded
};

Matrix random_matrix(std::mt19937& rng, DType type, int64_t rows, int64_t cols) {
  Matrix m;
  m.bytes.resize(dtype_bytes(type, static_cast<uint64_t>(rows * cols)));
  m.view.type = type;
  m.view.rows = rows;
  m.view.cols = cols;
  m.view.data = m.bytes.data();
  std::vector<float> row(static_cast<size_t>(cols));
  std::vector<float> back(static_cast<size_t>(cols));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& x : row) x = u(rng);
    encode_row(type, row.data(), m.bytes.data() + r * m.view.row_bytes(), cols);
    decode_row(type, m.bytes.data() + r * m.view.row_bytes(), back.data(), cols);
    m.values.insert(m.values.end(), back.begin(), back.end());
  }
  return m;
}

template <class T>
void check_matvec(DType type, int64_t rows, int64_t cols) {
  std::mt19937 rng(static_cast<uint32_t>(rows * 131 + cols));
  const Matrix m = random_matrix(rng, type, rows, cols);
  const std::vector<double> x = random_vec(rng, cols);
  const std::vector<T> xt = as<T>(x);
  std::vector<T> y(static_cast<size_t>(rows));
  ThreadPool pool(1);
  matvec(pool, m.view, xt.data(), y.data());
  for (int64_t r = 0; r < rows; ++r) {
    double want = 0.0;
    double mag = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      want += m.values[r * cols + c] * x[c];
      mag += std::fabs(m.values[r * cols + c] * x[c]);
    }
    EXPECT_NEAR(static_cast<double>(y[r]), want, gamma_dot<T>(cols) * mag + cols * kU64 * mag)
        << dtype_name(type) << " row " << r;
  }
}

TEST(RefOps, MatvecEveryDtypeBothPrecisions) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0}) {
    // 96 and 320 are whole Q8_0 blocks but not multiples of the 16 lanes x 2 decode width; 45 has a tail.
    for (int64_t cols : {32, 96, 320, 45}) {
      if (t == DType::kQ8_0 && cols % 32 != 0) continue;
      check_matvec<float>(t, 7, cols);
      check_matvec<double>(t, 7, cols);
    }
  }
}

TEST(RefOps, MatvecBitIdenticalAcrossThreadCounts) {
  std::mt19937 rng(5);
  const Matrix m = random_matrix(rng, DType::kQ8_0, 3001, 64);  // enough rows to split over 3 threads
  const std::vector<float> x = as<float>(random_vec(rng, 64));
  std::vector<float> y1(3001), y2(3001), y3(3001);
  ThreadPool p1(1), p2(2), p3(3);
  matvec(p1, m.view, x.data(), y1.data());
  matvec(p2, m.view, x.data(), y2.data());
  matvec(p3, m.view, x.data(), y3.data());
  EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float)));
}

TEST(RefOps, ThreadPoolCoversEveryIndexOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 10, 1001}) {
    std::vector<int> hits(static_cast<size_t>(n), 0);
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) ++hits[i];
    });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[i], 1) << "n=" << n << " i=" << i;
  }
}

// ---- norms ----

template <class T>
void check_rmsnorm() {
  std::mt19937 rng(3);
  const int64_t n = 200;
  const std::vector<double> x = random_vec(rng, n, -3.0, 3.0);
  const std::vector<double> w = random_vec(rng, n, 0.5, 1.5);
  double ss = 0.0;
  for (double v : x) ss += v * v;
  const double r = 1.0 / std::sqrt(ss / n + 1e-6);
  const std::vector<T> xt = as<T>(x);
  const std::vector<T> wt = as<T>(w);
  std::vector<T> y(static_cast<size_t>(n));
  rmsnorm(xt.data(), wt.data(), n, static_cast<T>(1e-6), y.data());
  // Relative error: the sum of squares (gamma_dot, all terms positive), the division, sqrt, reciprocal and
  // two products: gamma_dot(n) + 6u relative (the sqrt halves the sum's error; kept whole for margin).
  for (int64_t i = 0; i < n; ++i) {
    const double want = x[i] * r * w[i];
    EXPECT_NEAR(static_cast<double>(y[i]), want,
                (gamma_dot<T>(n) + 6 * unit<T>()) * std::fabs(want) + 1e-300);
  }
}

TEST(RefOps, RmsNormMatchesPlain) {
  check_rmsnorm<float>();
  check_rmsnorm<double>();
}

template <class T>
void check_l2norm() {
  std::mt19937 rng(4);
  const int64_t n = 48;
  const std::vector<double> x = random_vec(rng, n, -2.0, 2.0);
  double ss = 0.0;
  for (double v : x) ss += v * v;
  const double r = 1.0 / std::sqrt(ss + 1e-6);
  std::vector<T> xt = as<T>(x);
  l2norm(xt.data(), n, static_cast<T>(1e-6));
  for (int64_t i = 0; i < n; ++i) {
    const double want = x[i] * r;  // same bound as rmsnorm: gamma_dot(n) + 5u relative
    EXPECT_NEAR(static_cast<double>(xt[i]), want,
                (gamma_dot<T>(n) + 5 * unit<T>()) * std::fabs(want) + 1e-300);
  }
}

TEST(RefOps, L2NormMatchesPlain) {
  check_l2norm<float>();
  check_l2norm<double>();
  // A zero vector stays finite thanks to eps (a GDN head can be all zeros at the first token).
  std::vector<float> z(16, 0.0f);
  l2norm(z.data(), 16, 1e-6f);
  for (float v : z) EXPECT_EQ(v, 0.0f);
}

// ---- RoPE ----

template <class T>
void check_rope(int pos) {
  std::mt19937 rng(6);
  const int head_dim = 32;
  const int rope_dims = 12;  // partial: dims 12..31 pass through
  const double theta = 1e7;
  const std::vector<double> x = random_vec(rng, head_dim);
  std::vector<T> inv(rope_dims / 2);
  for (int i = 0; i < rope_dims / 2; ++i)
    inv[i] = std::pow(static_cast<T>(theta), -static_cast<T>(2 * i) / rope_dims);
  std::vector<T> xt = as<T>(x);
  rope(xt.data(), inv.data(), rope_dims, pos);
  // Plain NeoX rotation of pairs (i, i + rope_dims/2) by pos * theta^(-2i/rope_dims).
  std::vector<double> want = x;
  for (int i = 0; i < rope_dims / 2; ++i) {
    const double a = pos * std::pow(theta, -2.0 * i / rope_dims);
    want[i] = x[i] * std::cos(a) - x[i + rope_dims / 2] * std::sin(a);
    want[i + rope_dims / 2] = x[i + rope_dims / 2] * std::cos(a) + x[i] * std::sin(a);
  }
  // The angle pos * inv_freq carries a relative error of ~3u (pow, product), i.e. an absolute error of
  // 3u * pos * inv_freq <= 3u * pos radians, which moves each rotated value by at most that times |x| <= 1;
  // plus ~4u for the rotation itself.
  const double tol = (3.0 * pos + 8.0) * unit<T>();
  for (int i = 0; i < head_dim; ++i) {
    EXPECT_NEAR(static_cast<double>(xt[i]), want[i], tol) << "dim " << i << " pos " << pos;
    if (i >= rope_dims) {
      EXPECT_EQ(static_cast<double>(xt[i]), x[i]);
    }
  }
}

TEST(RefOps, RopeMatchesPlainPartialNeox) {
  for (int pos : {0, 1, 7, 1000}) {
    check_rope<float>(pos);
    check_rope<double>(pos);
  }
}

// ---- causal conv ----

template <class T>
void check_conv() {
  std::mt19937 rng(7);
  const int64_t C = 40;
  const int K = 4;
  const int steps = 6;
  const std::vector<double> taps = random_vec(rng, C * K);
  std::vector<std::vector<double>> inputs;
  for (int t = 0; t < steps; ++t) inputs.push_back(random_vec(rng, C));
  std::vector<T> window(static_cast<size_t>(C * (K - 1)), T(0));
  const std::vector<T> taps_t = as<T>(taps);
  std::vector<T> out(static_cast<size_t>(C));
  for (int t = 0; t < steps; ++t) {
    const std::vector<T> in = as<T>(inputs[t]);
    conv_step(in.data(), window.data(), taps_t.data(), ConvShape{C, K}, out.data());
    for (int64_t c = 0; c < C; ++c) {
      // Plain causal conv over the whole history, zeros before t = 0: sum_j w[c][j] x_{t-K+1+j}[c].
      double acc = 0.0;
      double mag = 0.0;
      for (int j = 0; j < K; ++j) {
        const int src = t - (K - 1) + j;
        if (src < 0) continue;
        acc += taps[c * K + j] * inputs[src][c];
        mag += std::fabs(taps[c * K + j] * inputs[src][c]);
      }
      // K-term sequential sum (K u) then silu (about 4u relative; |silu'| <= 1.1).
      const double want = plain_silu(acc);
      EXPECT_NEAR(static_cast<double>(out[c]), want,
                  1.1 * (K + 1) * unit<T>() * mag + 4 * unit<T>() * std::fabs(want))
          << "t=" << t << " c=" << c;
    }
  }
}

TEST(RefOps, ConvStepMatchesPlainCausalConv) {
  check_conv<float>();
  check_conv<double>();
}

// ---- gated delta rule ----

template <class T>
void check_delta_rule() {
  std::mt19937 rng(8);
  const int dk = 8;
  const int dv = 12;  // dk != dv catches a transposed state
  const int steps = 5;
  std::vector<double> S(static_cast<size_t>(dk * dv), 0.0);  // plain state, S[a][b]
  std::vector<T> St(S.size(), T(0));
  std::vector<T> mem(dv), o(dv);
  for (int t = 0; t < steps; ++t) {
    std::vector<double> q = random_vec(rng, dk);
    std::vector<double> k = random_vec(rng, dk);
    const std::vector<double> v = random_vec(rng, dv);
    // Keys of unit length as the model feeds them; values representable in f32.
    double kn = 0.0;
    for (double x : k) kn += x * x;
    for (double& x : k) x = static_cast<float>(x / std::sqrt(kn));
    const double g = static_cast<float>(-0.3 * (t + 1));
    const double beta = static_cast<float>(0.2 + 0.15 * t);
    // Plain: S = S e^g; for each b: mem_b = sum_a S[a][b] k_a; S[a][b] += k_a beta (v_b - mem_b); o = S^T q.
    for (double& s : S) s *= std::exp(g);
    std::vector<double> want(dv, 0.0);
    for (int b = 0; b < dv; ++b) {
      double m = 0.0;
      for (int a = 0; a < dk; ++a) m += S[a * dv + b] * k[a];
      for (int a = 0; a < dk; ++a) S[a * dv + b] += k[a] * beta * (v[b] - m);
    }
    for (int b = 0; b < dv; ++b) {
      for (int a = 0; a < dk; ++a) want[b] += S[a * dv + b] * q[a];
    }
    const std::vector<T> qt = as<T>(q);
    const std::vector<T> kt = as<T>(k);
    const std::vector<T> vt = as<T>(v);
    delta_rule_step(St.data(), qt.data(), kt.data(), vt.data(), static_cast<T>(g), static_cast<T>(beta),
                    DeltaShape{dk, dv}, mem.data(), o.data());
    // Entries of S stay below ~2 (unit keys, |v| <= 1, beta < 1, decay < 1); each step adds ~(2 dk + 6) u
    // relative error to an entry and the decay keeps old errors from growing: 2 (2 dk + 6) u (t + 1) absolute
    // per entry, times |q|_1 <= dk for o. Margin 4x on the whole.
    const double tol = 4.0 * 2.0 * (2 * dk + 6) * unit<T>() * (t + 1) * dk;
    for (int b = 0; b < dv; ++b)
      EXPECT_NEAR(static_cast<double>(o[b]), want[b], tol) << "t=" << t << " b=" << b;
    for (size_t i = 0; i < S.size(); ++i) EXPECT_NEAR(static_cast<double>(St[i]), S[i], tol / dk);
  }
}

TEST(RefOps, DeltaRuleStepMatchesPlain) {
  check_delta_rule<float>();
  check_delta_rule<double>();
}

// ---- attention over a few positions ----

template <class T>
void check_attention(int n_pos) {
  std::mt19937 rng(9);
  const int hd = 24;
  const int n_kv = 3;
  const int kv_head = 1;  // read the middle head of an interleaved [pos][n_kv][hd] cache
  const int64_t stride = int64_t{n_kv} * hd;
  const std::vector<double> q = random_vec(rng, hd, -2.0, 2.0);
  const std::vector<double> kc = random_vec(rng, n_pos * stride);
  const std::vector<double> vc = random_vec(rng, n_pos * stride);
  // Plain: s_t = q.k_t / sqrt(hd), softmax, weighted sum of v_t.
  std::vector<double> s(n_pos);
  double mx = -1e300;
  for (int t = 0; t < n_pos; ++t) {
    double d = 0.0;
    for (int i = 0; i < hd; ++i) d += q[i] * kc[t * stride + kv_head * hd + i];
    s[t] = d / std::sqrt(static_cast<double>(hd));
    mx = std::max(mx, s[t]);
  }
  double sum = 0.0;
  for (double& x : s) sum += (x = std::exp(x - mx));
  std::vector<double> want(hd, 0.0);
  for (int t = 0; t < n_pos; ++t) {
    for (int i = 0; i < hd; ++i) want[i] += s[t] / sum * vc[t * stride + kv_head * hd + i];
  }
  const std::vector<T> qt = as<T>(q), kt = as<T>(kc), vt = as<T>(vc);
  std::vector<T> scores(n_pos), out(hd);
  attention_head(qt.data(), kt.data() + kv_head * hd, vt.data() + kv_head * hd,
                 AttentionShape{hd, n_pos, stride}, scores.data(), out.data());
  // Scores: |q.k| <= 2 hd / sqrt(hd) ~ 10, error gamma_dot(hd) * 10; exp turns an absolute score error
  // into a relative weight error of the same size, plus ~(n_pos + 4) u for the normalisation, and the
  // output (|v| <= 1) inherits it.
  const double tol = gamma_dot<T>(hd) * 20.0 + (n_pos + 8) * unit<T>() * 4.0;
  for (int i = 0; i < hd; ++i) EXPECT_NEAR(static_cast<double>(out[i]), want[i], tol) << "n_pos " << n_pos;
}

TEST(RefOps, AttentionHeadMatchesPlainSoftmax) {
  for (int n : {1, 2, 5, 17}) {
    check_attention<float>(n);
    check_attention<double>(n);
  }
}

// ---- SwiGLU and the scalar functions ----

TEST(RefOps, SwigluAndActivationsMatchPlain) {
  std::mt19937 rng(10);
  const std::vector<double> g = random_vec(rng, 64, -8.0, 8.0);
  const std::vector<double> u = random_vec(rng, 64, -2.0, 2.0);
  const std::vector<float> gf = as<float>(g), uf = as<float>(u);
  std::vector<float> out(64);
  swiglu(gf.data(), uf.data(), 64, out.data());
  for (int i = 0; i < 64; ++i) {
    const double want = plain_silu(g[i]) * u[i];
    EXPECT_NEAR(out[i], want, 6 * kU32 * std::fabs(want) + 1e-30);  // exp, +, /, * : a few ulps, 6u kept
  }
  // softplus: log(1 + e^x), and x itself past the threshold of 20 (torch's rule); sigmoid at extremes.
  for (double x : {-30.0, -3.0, -0.5, 0.0, 0.7, 5.0, 19.5, 20.5, 60.0}) {
    const double want = x > 20.0 ? x : std::log1p(std::exp(x));
    EXPECT_NEAR(softplus(x), want, 4 * kU64 * std::fabs(want));
    EXPECT_NEAR(static_cast<double>(softplus(static_cast<float>(x))), want,
                4 * kU32 * std::fabs(want) + 1e-12);
    EXPECT_NEAR(sigmoid(x), 1.0 / (1.0 + std::exp(-x)), 4 * kU64);
  }
  EXPECT_EQ(sigmoid(-1000.0f), 0.0f);
  EXPECT_EQ(sigmoid(1000.0f), 1.0f);
}

}  // namespace
}  // namespace qc::ref
