// RMSNorm (+ residual add) with the fused quantiser, the standalone quantiser, SwiGLU, the MTP adapter.
// The quantised words are checked bit-exactly against the CPU mirror applied to the kernel's own f32
// output; the f32 output against double within the bound derived below.
#include "cpu_ref.h"
#include "gpu_test_util.h"
#include "mtp.h"
#include "norm_quant.h"
#include "swiglu.h"

namespace qc::gpu::test {
namespace {

// rmsnorm in f32 vs double, relative to |y|: the sum of squares is a per-thread chain of n/512 FMAs then
// a 9-level (512 threads) + 5-level tree: relative error <= (n/512 + 14) * 2^-24; the square root halves
// it; mean, +eps, sqrt, reciprocal and the two products add 6 roundings. For n <= 12288 that is < 40 *
// 2^-24 = 2.4e-6; use 4e-6 (plus 1e-30 for zeros).
double norm_tol(double y) {
  return 4e-6 * std::fabs(y) + 1e-30;
}

// Checks q words and scales against the CPU mirror over the kernel's f32 values (bit-exact).
void expect_quant_matches(const std::vector<float>& f32, int rows, int n, int ld_f,
                          const std::vector<int8_t>& hi, const std::vector<int8_t>* lo,
                          const std::vector<float>& scale, int ld, int ld_s, const char* what) {
  for (int m = 0; m < rows; ++m) {
    std::vector<int8_t> eh(n), el(n);
    std::vector<float> es(n / 32);
    quantize_ref(f32.data() + static_cast<size_t>(m) * ld_f, n, eh.data(), el.data(), es.data());
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(hi[static_cast<size_t>(m) * ld + i], eh[i]) << what << " hi row " << m << " col " << i;
      if (lo) {
        ASSERT_EQ((*lo)[static_cast<size_t>(m) * ld + i], el[i]) << what << " lo row " << m << " col " << i;
      }
    }
    for (int b = 0; b < n / 32; ++b)
      ASSERT_EQ(scale[static_cast<size_t>(m) * ld_s + b], es[b])
          << what << " scale row " << m << " block " << b;
  }
}

TEST(NormQuant, RmsNormWithResidualAndQuant) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(3);
  for (int n : {5120, 1056, 64, 12288}) {
    for (int m = 1; m <= 4; ++m) {
      for (int mode = 0; mode < 3; ++mode) {  // 0: plain + h, 1: residual + hl, 2: residual in place + hl
        const bool add = mode > 0, hl = mode > 0, in_place = mode == 2;
        const std::vector<float> x = random_normal(rng, static_cast<size_t>(m) * n, 2.0f);
        const std::vector<float> y = random_normal(rng, static_cast<size_t>(m) * n, 1.0f);
        const std::vector<float> w = random_floats(rng, n, 0.5f, 1.5f);
        DevBuf<float> dx(x), dy(y), dw(w), dxo(static_cast<size_t>(m) * n), dout(static_cast<size_t>(m) * n);
        DevBuf<int8_t> qh(static_cast<size_t>(m) * n), ql(static_cast<size_t>(m) * n);
        DevBuf<float> qs(static_cast<size_t>(m) * n / 32);
        dxo.poison();
        dout.poison();
        qh.poison(0x80);
        ql.poison(0x80);
        qs.poison();
        RmsNormArgs a;
        a.x = dx.get();
        a.ld_x = n;
        if (add) {
          a.add = dy.get();
          a.ld_add = n;
          a.x_out = in_place ? dx.get() : dxo.get();
          a.ld_x_out = n;
        }
        a.weight = dw.get();
        a.n = n;
        a.m = m;
        a.eps = 1e-6f;
        a.out = dout.get();
        a.ld_out = n;
        a.out_q = QActOut{qh.get(), hl ? ql.get() : nullptr, qs.get(), n, n / 32};
        QC_ASSERT_OK(rmsnorm(a, nullptr));
        // Residual: x' = x + y in f32 exactly.
        std::vector<float> xs = x;
        if (add) {
          for (size_t i = 0; i < xs.size(); ++i) xs[i] = x[i] + y[i];
          ASSERT_TRUE(same_bits(xs, in_place ? dx.download() : dxo.download())) << "n=" << n << " m=" << m;
        }
        const std::vector<float> out = dout.download();
        ASSERT_TRUE(all_finite(out));
        for (int r = 0; r < m; ++r) {
          const std::vector<double> ref =
              rmsnorm_ref(xs.data() + static_cast<size_t>(r) * n, w.data(), n, 1e-6);
          for (int i = 0; i < n; ++i)
            ASSERT_NEAR(out[static_cast<size_t>(r) * n + i], ref[i], norm_tol(ref[i]))
                << "n=" << n << " row " << r;
        }
        const std::vector<int8_t> hi = qh.download(), lo = ql.download();
        expect_quant_matches(out, m, n, n, hi, hl ? &lo : nullptr, qs.download(), n, n / 32, "rmsnorm");
        if (!hl) {
          for (int8_t v : lo) ASSERT_EQ(v, static_cast<int8_t>(-128)) << "format h must not write lo";
        }
      }
    }
  }
}

// The token path's norms (M <= 4 rows, no residual add) split each row over n / 512 blocks that each reduce
// the whole row (norm.cuh rmsnorm_row_slice); M = 5 rows take one block a row (rmsnorm_row_block). Both must
// give every output the same bits: run the same rows both ways and compare f32, f16, words and scales. The
// sizes: n = 5120 (ten whole slices), 1056 (a last slice of one warp), 96 (one part-filled slice) and 6144
// (the largest n the split takes: twelve slices, every register of the reduction in use); strided rows.
TEST(NormQuant, TokenRowsSplitOverBlocksGiveTheRowBlockBits) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(6);
  for (int n : {5120, 1056, 96, 6144}) {
    const int ld = n + 64, big = 5;
    const std::vector<float> x = random_normal(rng, static_cast<size_t>(big) * ld, 2.0f);
    const std::vector<float> w = random_floats(rng, n, 0.5f, 1.5f);
    DevBuf<float> dx(x), dw(w);
    struct Outputs {
      std::vector<float> f, scale;
      std::vector<int8_t> hi, lo;
      std::vector<uint16_t> f16;
    };
    auto run = [&](int m) {
      DevBuf<float> out(static_cast<size_t>(m) * ld), qs(static_cast<size_t>(m) * ld / 32);
      DevBuf<int8_t> qh(static_cast<size_t>(m) * ld), ql(static_cast<size_t>(m) * ld);
      DevBuf<uint16_t> o16(static_cast<size_t>(m) * ld);
      out.poison();
      qs.poison();
      qh.poison(0x80);
      ql.poison(0x80);
      o16.poison();
      RmsNormArgs a;
      a.x = dx.get();
      a.ld_x = ld;
      a.weight = dw.get();
      a.n = n;
      a.m = m;
      a.out = out.get();
      a.ld_out = ld;
      a.out_q = QActOut{qh.get(), ql.get(), qs.get(), ld, ld / 32};
      a.out16 = o16.get();
      a.ld_out16 = ld;
      a.shift16 = 3;
      EXPECT_TRUE(rmsnorm(a, nullptr).ok());
      return Outputs{out.download(), qs.download(), qh.download(), ql.download(), o16.download()};
    };
    const Outputs rows = run(big);  // one block a row
    for (int m = 1; m <= 4; ++m) {
      const Outputs split = run(m);
      for (int r = 0; r < m; ++r) {
        const size_t o = static_cast<size_t>(r) * ld;
        const std::string what =
            "n=" + std::to_string(n) + " m=" + std::to_string(m) + " row " + std::to_string(r);
        ASSERT_EQ(std::memcmp(split.f.data() + o, rows.f.data() + o, sizeof(float) * n), 0) << what << " f32";
        ASSERT_EQ(std::memcmp(split.f16.data() + o, rows.f16.data() + o, sizeof(uint16_t) * n), 0)
            << what << " f16";
        ASSERT_EQ(std::memcmp(split.hi.data() + o, rows.hi.data() + o, n), 0) << what << " hi";
        ASSERT_EQ(std::memcmp(split.lo.data() + o, rows.lo.data() + o, n), 0) << what << " lo";
        ASSERT_EQ(
            std::memcmp(split.scale.data() + o / 32, rows.scale.data() + o / 32, sizeof(float) * (n / 32)), 0)
            << what << " scales";
      }
    }
    for (int r = 0; r < big; ++r)  // every element written (the f32 poison is NaN)
      ASSERT_TRUE(all_finite(std::vector<float>(rows.f.begin() + static_cast<long>(r) * ld,
                                                rows.f.begin() + static_cast<long>(r) * ld + n)));
  }
}

TEST(NormQuant, QuantizeIsBitExactWithCpuMirror) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(4);
  const int n = 2080, m = 4, ld = 2096, ld_s = 70;  // padded strides
  std::vector<float> x = random_normal(rng, static_cast<size_t>(m) * n, 3.0f);
  for (int i = 0; i < 32; ++i) x[64 + i] = 0.0f;  // an all-zero block: scale 0, words 0
  for (int i = 192; i < 224; ++i) x[i] = 0.0f;    // a block whose scale is subnormal
  x[200] = -1e-40f;
  DevBuf<float> dx(x);
  DevBuf<int8_t> qh(static_cast<size_t>(m) * ld), ql(static_cast<size_t>(m) * ld);
  DevBuf<float> qs(static_cast<size_t>(m) * ld_s);
  for (bool hl : {false, true}) {
    qh.poison(0x80);
    ql.poison(0x80);
    qs.poison();
    QuantizeArgs a;
    a.x = dx.get();
    a.ld_x = n;
    a.n = n;
    a.m = m;
    a.out = QActOut{qh.get(), hl ? ql.get() : nullptr, qs.get(), ld, ld_s};
    QC_ASSERT_OK(quantize_act(a, nullptr));
    const std::vector<int8_t> lo = ql.download();
    expect_quant_matches(x, m, n, n, qh.download(), hl ? &lo : nullptr, qs.download(), ld, ld_s, "quantize");
  }
}

// silu(g) * u in f32: expf within 2 ulp, then 1 + e, division, product: relative error <= 8 * 2^-24 of
// each factor's magnitude; use 1e-6 relative plus 1e-7 absolute for results near 0.
TEST(NormQuant, SwigluWithQuant) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(6);
  for (int n : {17408, 96, 100}) {
    for (int m = 1; m <= 4; ++m) {
      const bool quant = n % 32 == 0;
      const std::vector<float> g = random_normal(rng, static_cast<size_t>(m) * n, 3.0f);
      const std::vector<float> u = random_normal(rng, static_cast<size_t>(m) * n, 1.0f);
      DevBuf<float> dg(g), du(u), out(static_cast<size_t>(m) * n);
      DevBuf<int8_t> qh(static_cast<size_t>(m) * n), ql(static_cast<size_t>(m) * n);
      DevBuf<float> qs(static_cast<size_t>(m) * (n / 32 + 1));
      out.poison();
      qh.poison(0x80);
      ql.poison(0x80);
      SwigluArgs a;
      a.gate = dg.get();
      a.ld_gate = n;
      a.up = du.get();
      a.ld_up = n;
      a.n = n;
      a.m = m;
      a.out = out.get();
      a.ld_out = n;
      if (quant) a.out_q = QActOut{qh.get(), ql.get(), qs.get(), n, n / 32};
      QC_ASSERT_OK(swiglu(a, nullptr));
      const std::vector<float> h = out.download();
      ASSERT_TRUE(all_finite(h));
      for (size_t i = 0; i < h.size(); ++i) {
        const double ref = silu(g[i]) * u[i];
        ASSERT_NEAR(h[i], ref, 1e-6 * std::fabs(ref) + 1e-7) << "n=" << n << " i=" << i;
      }
      if (quant) {
        const std::vector<int8_t> lo = ql.download();
        expect_quant_matches(h, m, n, n, qh.download(), &lo, qs.download(), n, n / 32, "swiglu");
      }
    }
  }
}

TEST(NormQuant, MtpConcat) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(8);
  const int n = 1024;
  for (int m = 1; m <= 4; ++m) {
    const std::vector<float> e = random_normal(rng, static_cast<size_t>(m) * n, 0.05f);
    const std::vector<float> h = random_normal(rng, static_cast<size_t>(m) * n, 4.0f);
    const std::vector<float> we = random_floats(rng, n, 0.5f, 1.5f), wh = random_floats(rng, n, 0.5f, 1.5f);
    DevBuf<float> de(e), dh(h), dwe(we), dwh(wh), out(static_cast<size_t>(m) * 2 * n);
    DevBuf<int8_t> qh(static_cast<size_t>(m) * 2 * n), ql(static_cast<size_t>(m) * 2 * n);
    DevBuf<float> qs(static_cast<size_t>(m) * 2 * n / 32);
    out.poison();
    qh.poison(0x80);
    ql.poison(0x80);
    qs.poison();
    MtpConcatArgs a;
    a.e = de.get();
    a.ld_e = n;
    a.h = dh.get();
    a.ld_h = n;
    a.enorm = dwe.get();
    a.hnorm = dwh.get();
    a.n = n;
    a.m = m;
    a.out = out.get();
    a.ld_out = 2 * n;
    a.out_q = QActOut{qh.get(), ql.get(), qs.get(), 2 * n, 2 * n / 32};
    QC_ASSERT_OK(mtp_concat(a, nullptr));
    const std::vector<float> o = out.download();
    ASSERT_TRUE(all_finite(o));
    for (int r = 0; r < m; ++r) {
      const auto re = rmsnorm_ref(e.data() + static_cast<size_t>(r) * n, we.data(), n, 1e-6);
      const auto rh = rmsnorm_ref(h.data() + static_cast<size_t>(r) * n, wh.data(), n, 1e-6);
      for (int i = 0; i < n; ++i) {
        ASSERT_NEAR(o[static_cast<size_t>(r) * 2 * n + i], re[i], norm_tol(re[i]))
            << "embedding half, row " << r;
        ASSERT_NEAR(o[static_cast<size_t>(r) * 2 * n + n + i], rh[i], norm_tol(rh[i]))
            << "hidden half, row " << r;
      }
    }
    const std::vector<int8_t> lo = ql.download();
    expect_quant_matches(o, m, 2 * n, 2 * n, qh.download(), &lo, qs.download(), 2 * n, 2 * n / 32,
                         "mtp_concat");
  }
}

TEST(NormQuantArgs, RejectsBadArguments) {
  float x[64] = {}, w[64] = {};
  int8_t q[64] = {};
  float s[2] = {};
  RmsNormArgs a;
  a.x = x;
  a.ld_x = 40;
  a.weight = w;
  a.n = 40;
  a.out_q = QActOut{q, nullptr, s, 40, 2};
  const GpuStatus st = rmsnorm(a, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("multiple of 32, got 40"), std::string::npos) << st.describe();
}

}  // namespace
}  // namespace qc::gpu::test
