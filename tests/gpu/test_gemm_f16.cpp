// gemm_f16 (the prefill GEMM through cuBLASLt on f16, gemm_f16.h): the dequantisation and the activation
// rounding bit for bit against the host's f16 rounding; the GEMM against a double-precision product of the
// same f16 inputs within the f32 accumulation bound; a row's bits independent of M and of where the row sat
// in the batch (the property the prompt path's chunking relies on); repeatable runs; the residual epilogue;
// bad arguments as errors. Skipped without a device, or without the toolkit's libcublasLt (with the reason).
#include <cmath>
#include <cstring>

#include "gemm_f16.h"
#include "norm_quant.h"
#include "swiglu.h"
#include "gpu_test_util.h"

namespace qc::gpu::test {
namespace {

struct Lt {
  DevBuf<unsigned char> ws{GemmF16::kWorkspaceBytes};
  std::string why;
  std::unique_ptr<GemmF16> g;
  explicit Lt(int plan_rows) { g = GemmF16::create(plan_rows, ws.get(), &why); }
};

struct Q8Host {
  int n, k, stride;
  std::vector<int8_t> q;
  std::vector<uint16_t> d;
  Q8Host(std::mt19937& rng, int nn, int kk) : n(nn), k(kk), stride(q8_row_stride(kk) + 16) {
    q.assign(static_cast<size_t>(n) * stride, 0x5A);  // padding holds garbage
    std::uniform_int_distribution<int> qd(-127, 127);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < k; ++c) q[static_cast<size_t>(r) * stride + c] = static_cast<int8_t>(qd(rng));
    d.resize(static_cast<size_t>(n) * (k / 32));
    std::uniform_real_distribution<float> sd(1e-4f, 2e-2f);
    std::bernoulli_distribution neg(0.25);
    for (auto& s : d) s = f2h_bits(neg(rng) ? -sd(rng) : sd(rng));
  }
  float w16(int r, int c) const {  // the contract: f16(q * d), q * d exact in f32
    return h_bits2f(f2h_bits(static_cast<float>(q[static_cast<size_t>(r) * stride + c]) *
                             h_bits2f(d[static_cast<size_t>(r) * (k / 32) + c / 32])));
  }
};

Q8Weights device_weights(const Q8Host& h, DevBuf<int8_t>& dq, DevBuf<uint16_t>& dd) {
  dq = DevBuf<int8_t>(h.q);
  dd = DevBuf<uint16_t>(h.d);
  return Q8Weights{dq.get(), dd.get(), h.n, h.k, h.stride};
}

TEST(GemmF16, DequantIsTheF16OfEachWeight) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(1);
  const Q8Host h(rng, 37, 96);
  DevBuf<int8_t> dq;
  DevBuf<uint16_t> dd;
  const Q8Weights w = device_weights(h, dq, dd);
  const int ld = 104, row0 = 5, rows = 30;
  DevBuf<uint16_t> out(static_cast<size_t>(rows) * ld);
  out.poison();
  ASSERT_TRUE(dequant_q8_f16(w, row0, rows, out.get(), ld, nullptr).ok());
  const auto got = out.download();
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < h.k; ++c)
      ASSERT_EQ(got[static_cast<size_t>(r) * ld + c], f2h_bits(h.w16(row0 + r, c))) << "row " << r << " col " << c;
    for (int c = h.k; c < ld; ++c) ASSERT_EQ(got[static_cast<size_t>(r) * ld + c], 0xFFFF) << "wrote past K";
  }
}

TEST(GemmF16, ActivationsRoundOnceAndSaturate) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(2);
  const int m = 3, k = 40, ld_x = 44, ld = 48;
  std::vector<float> x = random_normal(rng, static_cast<size_t>(m) * ld_x, 3.0f);
  x[0] = 1e6f;
  x[1] = -7e4f;
  x[2] = std::nanf("");
  x[3] = 65519.0f;   // / 4: well inside the range; 65520 (before the shift) would be f16's overflow threshold
  x[4] = 1e-9f;      // below the f16 subnormals after the shift
  DevBuf<float> dx(x);
  DevBuf<uint16_t> out(static_cast<size_t>(m) * ld);
  out.poison();
  const int shift = 2;
  ASSERT_TRUE(rows_to_f16(dx.get(), ld_x, m, k, shift, out.get(), ld, nullptr).ok());
  const auto got = out.download();
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < k; ++c) {
      float v = x[static_cast<size_t>(r) * ld_x + c] * 0.25f;
      if (std::isfinite(v) && std::fabs(v) > kF16Max) v = std::copysign(kF16Max, v);
      const uint16_t want = f2h_bits(v), g = got[static_cast<size_t>(r) * ld + c];
      if (std::isnan(v))
        ASSERT_TRUE(std::isnan(h_bits2f(g))) << c;
      else
        ASSERT_EQ(g, want) << "row " << r << " col " << c << " x " << x[static_cast<size_t>(r) * ld_x + c];
    }
  EXPECT_EQ(h_bits2f(got[0]), kF16Max);  // 1e6 / 4 saturates
}

// The SwiGLU kernel's f16 output (what the prompt path's down projection reads) has rows_to_f16's bits for
// the kernel's own f32 output, saturation included, on both kernels: the vectorised one (f16 output only,
// aligned rows) and the warp one (an odd row stride).
TEST(GemmF16, SwigluOut16IsTheRoundingOfItsF32Output) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(47);
  const int m = 5, n = 96, ld = 200, ld16 = 104, shift = 4;
  std::vector<float> gu = random_normal(rng, static_cast<size_t>(m) * ld, 4.0f);
  for (int r = 0; r < m; ++r) {  // gate 3000 (silu = 3000), up +-2000: |h| / 16 = 375000 > kF16Max
    gu[static_cast<size_t>(r) * ld + 5] = 3000.0f;
    gu[static_cast<size_t>(r) * ld + n + 5] = r % 2 ? 2000.0f : -2000.0f;
  }
  DevBuf<float> dgu(gu), out(static_cast<size_t>(m) * n), again(static_cast<size_t>(m) * n);
  DevBuf<uint16_t> o16(static_cast<size_t>(m) * ld16), want(static_cast<size_t>(m) * ld16);
  o16.poison();
  want.poison();
  SwigluArgs a;
  a.gate = dgu.get();
  a.ld_gate = ld;
  a.up = dgu.get() + n;
  a.ld_up = ld;
  a.n = n;
  a.m = m;
  a.out = out.get();
  a.ld_out = n;
  ASSERT_TRUE(swiglu(a, nullptr).ok());
  a.out = nullptr;
  a.out16 = o16.get();
  a.ld_out16 = ld16;
  a.shift16 = shift;
  ASSERT_TRUE(swiglu(a, nullptr).ok());
  ASSERT_TRUE(rows_to_f16(out.get(), n, m, n, shift, want.get(), ld16, nullptr).ok());
  const auto ref = want.download();
  auto check = [&](const char* which) {
    const auto got = o16.download();
    int saturated = 0;
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        const size_t i = static_cast<size_t>(r) * ld16 + c;
        ASSERT_EQ(got[i], ref[i]) << which << " row " << r << " col " << c;
        saturated += h_bits2f(got[i]) == kF16Max || h_bits2f(got[i]) == -kF16Max;
      }
    EXPECT_EQ(saturated, m) << which;
  };
  check("vectorised");
  o16.poison();
  a.ld_gate = a.ld_up = ld + 1;  // rows no longer 16-byte aligned: the warp kernel
  std::vector<float> shifted(static_cast<size_t>(m) * (ld + 1));
  for (int r = 0; r < m; ++r)
    std::copy(gu.begin() + static_cast<size_t>(r) * ld, gu.begin() + static_cast<size_t>(r + 1) * ld,
              shifted.begin() + static_cast<size_t>(r) * (ld + 1));
  DevBuf<float> dsh(shifted);
  a.gate = dsh.get();
  a.up = dsh.get() + n;
  ASSERT_TRUE(swiglu(a, nullptr).ok());
  check("warp");
  a.ld_out16 = n - 1;
  EXPECT_FALSE(swiglu(a, nullptr).ok());
}

// The same for the RMSNorm's f16 output (the prompt path's projection inputs), with a shift.
TEST(GemmF16, RmsNormOut16IsTheRoundingOfItsF32Output) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(48);
  const int m = 4, n = 320, ld16 = 328, shift = -3;
  const std::vector<float> x = random_normal(rng, static_cast<size_t>(m) * n, 2.0f);
  std::vector<float> w = random_normal(rng, n, 1.0f);
  w[7] = 30000.0f;  // * 8 after the shift: beyond kF16Max
  DevBuf<float> dx(x), dw(w), out(static_cast<size_t>(m) * n);
  DevBuf<uint16_t> o16(static_cast<size_t>(m) * ld16), want(static_cast<size_t>(m) * ld16);
  o16.poison();
  want.poison();
  RmsNormArgs a;
  a.x = dx.get();
  a.ld_x = n;
  a.weight = dw.get();
  a.n = n;
  a.m = m;
  a.out = out.get();
  a.ld_out = n;
  ASSERT_TRUE(rmsnorm(a, nullptr).ok());
  a.out = nullptr;
  a.out16 = o16.get();
  a.ld_out16 = ld16;
  a.shift16 = shift;
  ASSERT_TRUE(rmsnorm(a, nullptr).ok());
  ASSERT_TRUE(rows_to_f16(out.get(), n, m, n, shift, want.get(), ld16, nullptr).ok());
  const auto got = o16.download(), ref = want.download();
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      ASSERT_EQ(got[static_cast<size_t>(r) * ld16 + c], ref[static_cast<size_t>(r) * ld16 + c]) << r << " " << c;
  a.shift16 = 25;
  EXPECT_FALSE(rmsnorm(a, nullptr).ok());
}

struct Problem {
  int n, k, m;
  std::vector<uint16_t> w, x;  // f16 [N][K], [M][K]
  DevBuf<uint16_t> dw, dx;
  Problem(std::mt19937& rng, int nn, int kk, int mm) : n(nn), k(kk), m(mm) {
    const Q8Host h(rng, n, k);
    w.resize(static_cast<size_t>(n) * k);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < k; ++c) w[static_cast<size_t>(r) * k + c] = f2h_bits(h.w16(r, c));
    const auto xf = random_normal(rng, static_cast<size_t>(m) * k, 1.0f);
    x.resize(xf.size());
    for (size_t i = 0; i < xf.size(); ++i) x[i] = f2h_bits(xf[i]);
    dw = DevBuf<uint16_t>(w);
    dx = DevBuf<uint16_t>(x);
  }
  GemmF16Args args(const uint16_t* xp, int rows, float* y) const {
    GemmF16Args a;
    a.w = dw.get();
    a.n = n;
    a.k = k;
    a.ld_w = k;
    a.x = xp;
    a.ld_x = k;
    a.m = rows;
    a.y = y;
    a.ld_y = n;
    return a;
  }
};

// |y - alpha exact| <= alpha K 2^-22 sum |w x| per element: f32 accumulation of exact f16 products in any
// order (2^-24 per addition, at most K additions along a path, doubled for the tensor cores' internal
// accumulation that may truncate instead of rounding), scaled by alpha (a power of two: exact).
TEST(GemmF16, MatchesDoubleProductWithinTheAccumulationBound) {
  QC_REQUIRE_DEVICE();
  Lt lt(256);
  if (!lt.g) GTEST_SKIP() << "cuBLASLt unavailable: " << lt.why;
  auto& g = lt.g;
  std::mt19937 rng(3);
  for (const auto& [n, k, m] : {std::tuple{40, 64, 1}, {260, 512, 70}, {129, 5120, 33}}) {
    Problem p(rng, n, k, m);
    DevBuf<float> y(static_cast<size_t>(m) * n);
    GemmF16Args a = p.args(p.dx.get(), m, y.get());
    a.alpha = 4.0f;
    ASSERT_TRUE(g->run(a, nullptr).ok());
    const auto got = y.download();
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        double exact = 0.0, mag = 0.0;
        for (int i = 0; i < k; ++i) {
          const double t = static_cast<double>(h_bits2f(p.w[static_cast<size_t>(c) * k + i])) *
                           h_bits2f(p.x[static_cast<size_t>(r) * k + i]);
          exact += t;
          mag += std::fabs(t);
        }
        const double bound = a.alpha * k * std::ldexp(1.0, -22) * mag + 1e-30;
        ASSERT_LE(std::fabs(got[static_cast<size_t>(r) * n + c] - a.alpha * exact), bound)
            << "N " << n << " K " << k << " row " << r << " col " << c;
      }
  }
}

TEST(GemmF16, RowBitsIndependentOfBatchAndRepeatable) {
  QC_REQUIRE_DEVICE();
  Lt lt(512);
  if (!lt.g) GTEST_SKIP() << "cuBLASLt unavailable: " << lt.why;
  auto& g = lt.g;
  std::mt19937 rng(4);
  for (const auto& [n, k] : {std::pair{1024, 1024}, {5120, 640}, {384, 5120}}) {
    const int m = 600;
    Problem p(rng, n, k, m);
    DevBuf<float> y(static_cast<size_t>(m) * n);
    ASSERT_TRUE(g->run(p.args(p.dx.get(), m, y.get()), nullptr).ok()) << g->describe(p.args(p.dx.get(), m, y.get()));
    const auto full = y.download();
    std::printf("[ algo ] N %d K %d: %s\n", n, k, g->describe(p.args(p.dx.get(), m, y.get())).c_str());
    ASSERT_TRUE(g->run(p.args(p.dx.get(), m, y.get()), nullptr).ok());
    EXPECT_TRUE(same_bits(y.download(), full)) << "a second run differs";
    // Rows r0 .. r0+rows-1 as a batch of their own, starting at row 0 of another buffer (as a chunk does).
    for (const auto& [r0, rows] : {std::pair{0, 1}, {5, 7}, {63, 65}, {150, 200}, {599, 1}, {0, 512}}) {
      DevBuf<uint16_t> xs(std::vector<uint16_t>(p.x.begin() + static_cast<size_t>(r0) * k,
                                                p.x.begin() + static_cast<size_t>(r0 + rows) * k));
      DevBuf<float> ys(static_cast<size_t>(rows) * n);
      ASSERT_TRUE(g->run(p.args(xs.get(), rows, ys.get()), nullptr).ok());
      const std::vector<float> want(full.begin() + static_cast<size_t>(r0) * n,
                                    full.begin() + static_cast<size_t>(r0 + rows) * n);
      EXPECT_TRUE(same_bits(ys.download(), want)) << "N " << n << " K " << k << ": rows " << r0 << ".." << r0 + rows - 1;
    }
  }
}

TEST(GemmF16, ResidualIsOneAddAndMayAliasY) {
  QC_REQUIRE_DEVICE();
  Lt lt(128);
  if (!lt.g) GTEST_SKIP() << "cuBLASLt unavailable: " << lt.why;
  auto& g = lt.g;
  std::mt19937 rng(5);
  const int n = 200, k = 256, m = 9;
  Problem p(rng, n, k, m);
  DevBuf<float> plain(static_cast<size_t>(m) * n);
  ASSERT_TRUE(g->run(p.args(p.dx.get(), m, plain.get()), nullptr).ok());
  const auto base = plain.download();
  const auto res = random_normal(rng, base.size(), 10.0f);
  DevBuf<float> y(res);
  GemmF16Args a = p.args(p.dx.get(), m, y.get());
  a.residual = y.get();
  a.ld_residual = n;
  ASSERT_TRUE(g->run(a, nullptr).ok());
  const auto got = y.download();
  for (size_t i = 0; i < got.size(); ++i) {
    const float want = res[i] + base[i];
    ASSERT_NEAR(got[i], want, std::ldexp(std::fabs(want), -22) + 1e-30) << i;  // one rounding, maybe fused
  }
}

TEST(GemmF16Args, RejectsBadArguments) {
  QC_REQUIRE_DEVICE();
  Lt lt(64);
  if (!lt.g) GTEST_SKIP() << "cuBLASLt unavailable: " << lt.why;
  auto& g = lt.g;
  DevBuf<uint16_t> w(64 * 64), x(64 * 64);
  DevBuf<float> y(64 * 64);
  GemmF16Args a;
  a.w = w.get();
  a.x = x.get();
  a.y = y.get();
  a.n = a.k = a.ld_w = a.ld_x = a.ld_y = 64;
  a.m = 0;
  auto st = g->run(a, nullptr);
  EXPECT_NE(st.describe().find("M must be in 1..2048, got 0"), std::string::npos) << st.describe();
  a.m = 4;
  a.k = 60;
  st = g->run(a, nullptr);
  EXPECT_NE(st.describe().find("K a positive multiple of 8"), std::string::npos) << st.describe();
  a.k = 64;
  a.ld_x = 32;
  EXPECT_FALSE(g->run(a, nullptr).ok());
  EXPECT_NE(rows_to_f16(nullptr, 64, 1, 64, 0, x.get(), 64, nullptr).describe().find("null"), std::string::npos);
  EXPECT_FALSE(GemmF16::create(0, y.get(), nullptr));
}

}  // namespace
}  // namespace qc::gpu::test
