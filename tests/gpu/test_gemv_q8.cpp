// Q8_0 GEMV family: every variant against a double CPU GEMV, the bit-identity classes of
// qwenchat_kernels/gemv_variant.h, M-invariance (a token's result does not depend on the other rows of the batch),
// residual epilogue, split-K determinism, the fused gate+up, PDL launches inside a captured graph.
#include <cstring>

#include "cpu_ref.h"
#include "gemv_q8/gemv_q8.h"
#include "gpu_test_util.h"
#include "swiglu.h"

namespace qc::gpu::test {
namespace {

struct Shape {
  int k, n;
};
// K: one segment, 2 segments + a 32-wide tail, 4 + tail, the 27B hidden size (10 segments), only a partial
// segment, the FFN width (34 segments). N: multiples and non-multiples of 8 and 16 rows per block.
const Shape kShapes[] = {{512, 64}, {1056, 77}, {2080, 129}, {5120, 300}, {96, 33}, {17408, 40}};

const GemvVariant kAllVariants[] = {GemvVariant::kH,    GemvVariant::kHL,     GemvVariant::kHU,
                                    GemvVariant::kHLU,  GemvVariant::kHLU4,   GemvVariant::kH2,
                                    GemvVariant::kHL2,  GemvVariant::kSplitK, GemvVariant::kDeq,
                                    GemvVariant::kTile, GemvVariant::kTileH,  GemvVariant::kMma,
                                    GemvVariant::kMmaH};

// Tile schedules of every engine (gemv_q8.h TileTuning), small explicit grids included so that blocks walk
// several row groups and chunks (the real shapes' paths) even on the tests' small matrices.
TileTuning engine1(int r, int u, int bps) {
  TileTuning t;
  t.engine = 1;
  t.rows_per_warp = r;
  t.unroll = u;
  t.blocks_per_sm = bps;
  return t;
}
TileTuning engine2(int warps, int r, int chunk, int stages, int grid, int trigger) {
  TileTuning t;
  t.engine = 2;
  t.warps = warps;
  t.rows_per_warp = r;
  t.chunk = chunk;
  t.stages = stages;
  t.grid = grid;
  t.grid_per_sm = 1;
  t.trigger = trigger;
  return t;
}
TileTuning engine3(int warps, int r, int u, int grid, int trigger) {
  TileTuning t;
  t.engine = 3;
  t.warps = warps;
  t.rows_per_warp = r;
  t.unroll = u;
  t.grid = grid;
  t.grid_per_sm = 2;
  t.trigger = trigger;
  return t;
}
std::string describe(const TileTuning& t) {
  return "engine=" + std::to_string(t.engine) + " R=" + std::to_string(t.rows_per_warp) +
         " U=" + std::to_string(t.unroll) + " bps=" + std::to_string(t.blocks_per_sm) +
         " warps=" + std::to_string(t.warps) + " chunk=" + std::to_string(t.chunk) +
         " stages=" + std::to_string(t.stages) + " grid=" + std::to_string(t.grid) +
         " trigger=" + std::to_string(t.trigger);
}
// Every engine; grid 0 = the balanced persistent grid of the launcher, 1..3 = few blocks (many groups each).
const TileTuning kTileSchedules[] = {
    engine1(1, 4, 0),          engine1(1, 8, 2),           engine1(2, 4, 1),
    engine1(1, 4, 3),          engine1(1, 8, 0),           engine1(2, 4, 0),
    engine2(8, 1, 4, 4, 0, 2), engine2(4, 1, 1, 2, 1, 1),  engine2(3, 2, 3, 3, 2, 2),
    engine2(2, 4, 2, 5, 3, 1), engine2(15, 1, 8, 2, 0, 1), engine3(8, 1, 8, 0, 2),
    engine3(4, 1, 4, 1, 1),    engine3(3, 2, 4, 2, 2),     engine3(16, 1, 8, 3, 1),
};

// Weights and activations on the device.
struct GemvData {
  HostQ8 w;
  HostAct x;
  DevBuf<int8_t> wq;
  DevBuf<uint16_t> wd;
  DevBuf<int8_t> xh, xl;
  DevBuf<float> xs, xf;
  GemvData(std::mt19937& rng, int m, int k, int n)
      : w(random_q8(rng, n, k)),
        x(make_act(rng, m, k)),
        wq(w.q),
        wd(w.d),
        xh(x.hi),
        xl(x.lo),
        xs(x.scale),
        xf(x.src) {}
  Q8Weights weights() const { return Q8Weights{wq.get(), wd.get(), w.rows, w.cols, w.stride}; }
  QActIn act() const { return QActIn{xh.get(), xl.get(), xs.get(), x.ld, x.ld_s}; }
};

GemvQ8Args make_args(const GemvData& d, GemvVariant v, float* y, int m) {
  GemvQ8Args a;
  a.w = d.weights();
  a.x = d.act();
  a.x_f32 = d.xf.get();
  a.ld_x_f32 = d.x.k;
  a.y = y;
  a.ld_y = d.w.rows;
  a.m = m;
  a.variant = v;
  return a;
}

// Runs one variant; returns y [m][n]. Output poisoned first; scratch for split-K allocated here.
std::vector<float> run_gemv(const GemvData& d, GemvVariant v, int m, const TileTuning& tile = {},
                            int split_k = 4, bool pdl = false) {
  DevBuf<float> y(static_cast<size_t>(m) * d.w.rows);
  y.poison();
  DevBuf<float> scratch(gemv_q8_split_scratch_floats(split_k, m, d.w.rows));
  GemvQ8Args a = make_args(d, v, y.get(), m);
  a.tile = tile;
  a.split_k = split_k;
  a.split_scratch = scratch.get();
  a.pdl = pdl;
  const GpuStatus st = gemv_q8(a, nullptr);
  if (!st.ok()) {
    ADD_FAILURE() << gemv_variant_name(v) << ": " << st.describe();
    return {};
  }
  return y.download();
}

// Error bound of the f32 evaluation against the exact (double) sum: every term passes through at most
// n_seg fused multiply-adds in its lane's chain, the 5 levels of the lane butterfly, and two roundings of
// its own (the hl combine fma, the weight-scale x activation-scale product): |err| <= gamma_L * sum|terms|
// with L = n_seg + 8 and gamma_L ~ L * 2^-24 (Higham, recursive summation). deq folds 16 products per lane
// before the scale (+16), split-K adds up to S partials (+S); mma / mma_h chain ceil(K/32 / 8) blocks per
// slice, then add the 8 slices (gemv_q8_mma.cu): L = ceil(K/256) + 8 + 2. A factor 2 covers the small
// second-order terms; an indexing or ordering bug moves a result by O(sum|terms|), ~10^6 times more.
double tolerance(GemvVariant v, int k, double abs_sum, int split_k) {
  const int n_seg = (k + 511) / 512;
  int chain = n_seg + 8;
  if (v == GemvVariant::kMma || v == GemvVariant::kMmaH) chain = (k + 255) / 256 + 10;
  if (v == GemvVariant::kDeq) chain += 16;
  if (v == GemvVariant::kSplitK) chain += split_k;
  return 2.0 * chain * std::ldexp(1.0, -24) * abs_sum;
}

TEST(GemvQ8, EveryVariantMatchesCpuDouble) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(1234);
  for (const Shape& s : kShapes) {
    for (int m = 1; m <= 4; ++m) {
      GemvData d(rng, m, s.k, s.n);
      const RefGemv ref_h = gemv_q8_ref(d.w, d.x, false);
      const RefGemv ref_hl = gemv_q8_ref(d.w, d.x, true);
      const RefGemv ref_f = gemv_q8_f32_ref(d.w, d.x.src, m);
      for (GemvVariant v : kAllVariants) {
        const std::vector<float> y = run_gemv(d, v, m);
        ASSERT_EQ(y.size(), static_cast<size_t>(m) * s.n) << gemv_variant_name(v);
        ASSERT_TRUE(all_finite(y)) << gemv_variant_name(v) << " K=" << s.k << " N=" << s.n << " M=" << m;
        const ActFormat f = gemv_act_format(v);
        const RefGemv& ref = f == ActFormat::kH ? ref_h : (f == ActFormat::kHL ? ref_hl : ref_f);
        for (size_t i = 0; i < y.size(); ++i) {
          const double tol = tolerance(v, s.k, ref.abs[i], 4);
          ASSERT_NEAR(y[i], ref.y[i], tol) << gemv_variant_name(v) << " K=" << s.k << " N=" << s.n
                                           << " M=" << m << " token " << i / s.n << " row " << i % s.n;
        }
      }
    }
  }
}

// The activation formats themselves: hl is ~127x closer to the f32 activations than h. Bound on the
// quantisation error of one output: sum_k |w_k| * err_k with, per element (layout.h; s its block scale),
// err_k <= s * (1/2 + 200 * 2^-24) for h and s * (1/254 + 200 * 2^-24) for hl: the rounding of hi (1/2) or of
// lo (1/254), plus t = a/s rounded in f32 (|t| <= 127: 127 * 2^-24) and the f32 1/127 and r*127 roundings.
TEST(GemvQ8, ActivationQuantisationErrorWithinBound) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(99);
  GemvData d(rng, 2, 5120, 128);
  const RefGemv exact = gemv_q8_f32_ref(d.w, d.x.src, 2);
  for (GemvVariant v : {GemvVariant::kTileH, GemvVariant::kTile}) {
    const std::vector<float> y = run_gemv(d, v, 2);
    const bool hl = v == GemvVariant::kTile;
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 128; ++n) {
        double bound = 0.0;
        for (int k = 0; k < 5120; ++k) {
          const double s = d.x.scale[static_cast<size_t>(m) * d.x.ld_s + k / 32];
          bound += std::fabs(d.w.weight(n, k)) * s * ((hl ? 1.0 / 254.0 : 0.5) + 200 * std::ldexp(1.0, -24));
        }
        const size_t i = static_cast<size_t>(m) * 128 + n;
        ASSERT_NEAR(y[i], exact.y[i], bound + tolerance(v, 5120, exact.abs[i], 4)) << gemv_variant_name(v);
      }
  }
}

// Variants in one class of qwenchat_kernels/gemv_variant.h give identical bits, for every tile schedule too.
TEST(GemvQ8, BitIdentityClasses) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(77);
  for (const Shape& s : kShapes) {
    for (int m = 1; m <= 4; ++m) {
      GemvData d(rng, m, s.k, s.n);
      const std::vector<float> h = run_gemv(d, GemvVariant::kH, m);
      const std::vector<float> hl = run_gemv(d, GemvVariant::kHL, m);
      for (GemvVariant v : {GemvVariant::kHU, GemvVariant::kH2})
        ASSERT_TRUE(same_bits(h, run_gemv(d, v, m))) << gemv_variant_name(v) << " K=" << s.k << " N=" << s.n;
      for (GemvVariant v : {GemvVariant::kHLU, GemvVariant::kHLU4, GemvVariant::kHL2})
        ASSERT_TRUE(same_bits(hl, run_gemv(d, v, m))) << gemv_variant_name(v) << " K=" << s.k << " N=" << s.n;
      for (const TileTuning& t : kTileSchedules) {
        ASSERT_TRUE(same_bits(h, run_gemv(d, GemvVariant::kTileH, m, t)))
            << "tile_h " << describe(t) << " K=" << s.k << " N=" << s.n << " M=" << m;
        ASSERT_TRUE(same_bits(hl, run_gemv(d, GemvVariant::kTile, m, t)))
            << "tile " << describe(t) << " K=" << s.k << " N=" << s.n << " M=" << m;
      }
      // The launcher's own choice, and the PDL launch attribute (scheduling only), per engine.
      ASSERT_TRUE(same_bits(hl, run_gemv(d, GemvVariant::kTile, m, {}, 4, true)));
      for (const TileTuning& t : {engine1(1, 4, 2), engine2(8, 1, 4, 4, 0, 2), engine3(8, 1, 8, 0, 2)})
        ASSERT_TRUE(same_bits(hl, run_gemv(d, GemvVariant::kTile, m, t, 4, true))) << "PDL " << describe(t);
    }
  }
}

// Token m of an M-row batch gets the bits of an M=1 run on that token (MTP verification cannot move a
// greedy token). Holds for every variant, split-K and deq included.
TEST(GemvQ8, BatchRowsMatchSingleRows) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(5);
  struct Case {
    GemvVariant v;
    TileTuning t;
  };
  std::vector<Case> cases;
  for (GemvVariant v : kAllVariants) cases.push_back({v, {}});
  for (const TileTuning& t : {engine1(1, 8, 0), engine2(4, 2, 2, 3, 2, 2), engine3(4, 1, 8, 2, 2)})
    cases.push_back({GemvVariant::kTile, t});
  for (const Shape& s : {Shape{1056, 77}, Shape{5120, 300}}) {
    GemvData d4(rng, 4, s.k, s.n);
    for (const Case& c : cases) {
      const GemvVariant v = c.v;
      const std::vector<float> y4 = run_gemv(d4, v, 4, c.t);
      for (int m = 0; m < 4; ++m) {
        // Row m alone: same weights, activation row m moved to row 0.
        GemvData d1(rng, 1, s.k, s.n);
        d1.w = d4.w;
        d1.wq.upload(d4.w.q);
        d1.wd.upload(d4.w.d);
        d1.x.hi.assign(d4.x.hi.begin() + m * d4.x.ld, d4.x.hi.begin() + (m + 1) * d4.x.ld);
        d1.x.lo.assign(d4.x.lo.begin() + m * d4.x.ld, d4.x.lo.begin() + (m + 1) * d4.x.ld);
        d1.x.scale.assign(d4.x.scale.begin() + m * d4.x.ld_s, d4.x.scale.begin() + (m + 1) * d4.x.ld_s);
        d1.x.src.assign(d4.x.src.begin() + m * s.k, d4.x.src.begin() + (m + 1) * s.k);
        d1.xh.upload(d1.x.hi);
        d1.xl.upload(d1.x.lo);
        d1.xs.upload(d1.x.scale);
        d1.xf.upload(d1.x.src);
        const std::vector<float> y1 = run_gemv(d1, v, 1, c.t);
        const std::vector<float> row(y4.begin() + m * s.n, y4.begin() + (m + 1) * s.n);
        ASSERT_TRUE(same_bits(row, y1))
            << gemv_variant_name(v) << " " << describe(c.t) << " token " << m << " K=" << s.k;
      }
    }
  }
}

// y = W a + r equals (W a) + r in f32, bit for bit, also in place (r aliasing y).
TEST(GemvQ8, ResidualEpilogueIsOneAdd) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(11);
  const int m = 3;
  GemvData d(rng, m, 2080, 129);
  const std::vector<float> r = random_floats(rng, static_cast<size_t>(m) * 129, -3.0f, 3.0f);
  std::vector<std::pair<GemvVariant, TileTuning>> cases;
  for (GemvVariant v : kAllVariants) cases.push_back({v, {}});
  for (const TileTuning& t : {engine1(1, 4, 0), engine2(4, 2, 2, 3, 2, 2), engine3(4, 2, 4, 2, 1)})
    cases.push_back({GemvVariant::kTile, t});
  for (const auto& [v, t] : cases) {
    const std::vector<float> plain = run_gemv(d, v, m, t);
    std::vector<float> expect(plain.size());
    for (size_t i = 0; i < plain.size(); ++i) expect[i] = plain[i] + r[i];
    DevBuf<float> y(r);  // in place: residual == y
    DevBuf<float> scratch(gemv_q8_split_scratch_floats(4, m, 129));
    GemvQ8Args a = make_args(d, v, y.get(), m);
    a.residual = y.get();
    a.ld_residual = 129;
    a.split_scratch = scratch.get();
    a.tile = t;
    QC_ASSERT_OK(gemv_q8(a, nullptr));
    ASSERT_TRUE(same_bits(expect, y.download())) << gemv_variant_name(v) << " " << describe(t);
  }
}

// Split-K: fixed-order combine, so two runs give the same bits; every split factor stays within the bound.
TEST(GemvQ8, SplitKDeterministic) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(21);
  GemvData d(rng, 2, 17408, 40);
  const RefGemv ref = gemv_q8_ref(d.w, d.x, true);
  for (int sk : {2, 3, 4, 7, 16}) {
    const std::vector<float> a = run_gemv(d, GemvVariant::kSplitK, 2, {}, sk);
    const std::vector<float> b = run_gemv(d, GemvVariant::kSplitK, 2, {}, sk);
    ASSERT_TRUE(same_bits(a, b)) << "split_k=" << sk;
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_NEAR(a[i], ref.y[i], tolerance(GemvVariant::kSplitK, 17408, ref.abs[i], sk)) << "split_k=" << sk;
  }
}

// Fused gate+up: its f32 output equals swiglu() over the tile GEMVs' outputs and its quantised output
// equals swiglu()'s quantisation, bit for bit; against double within the silu/f32 bound.
TEST(GemvQ8, GateUpMatchesSeparateKernels) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(31);
  for (const Shape& s : {Shape{1056, 96}, Shape{5120, 256}, Shape{96, 32}}) {
    for (int m = 1; m <= 4; ++m) {
      for (bool hl : {false, true}) {
        GemvData gate(rng, m, s.k, s.n);
        HostQ8 up_w = random_q8(rng, s.n, s.k);
        DevBuf<int8_t> up_q(up_w.q);
        DevBuf<uint16_t> up_d(up_w.d);
        const Q8Weights up{up_q.get(), up_d.get(), s.n, s.k, up_w.stride};
        const GemvVariant v = hl ? GemvVariant::kTile : GemvVariant::kTileH;
        // Separate: g, u by the tile GEMV, then swiglu with quantised output.
        const std::vector<float> g = run_gemv(gate, v, m);
        DevBuf<float> u(static_cast<size_t>(m) * s.n);
        GemvQ8Args ua = make_args(gate, v, u.get(), m);
        ua.w = up;
        QC_ASSERT_OK(gemv_q8(ua, nullptr));
        DevBuf<float> g_dev(g), h_sep(static_cast<size_t>(m) * s.n);
        DevBuf<int8_t> qh_sep(static_cast<size_t>(m) * s.n), ql_sep(static_cast<size_t>(m) * s.n);
        DevBuf<float> qs_sep(static_cast<size_t>(m) * s.n / 32);
        SwigluArgs sa;
        sa.gate = g_dev.get();
        sa.ld_gate = s.n;
        sa.up = u.get();
        sa.ld_up = s.n;
        sa.n = s.n;
        sa.m = m;
        sa.out = h_sep.get();
        sa.ld_out = s.n;
        sa.out_q = QActOut{qh_sep.get(), hl ? ql_sep.get() : nullptr, qs_sep.get(), s.n, s.n / 32};
        QC_ASSERT_OK(swiglu(sa, nullptr));
        // Fused, with the launcher's choice and with every engine (few blocks: several 32-row tiles each).
        std::vector<float> hf;
        for (const TileTuning& t :
             {TileTuning{}, engine1(1, 8, 2), engine2(8, 1, 4, 4, 0, 2), engine2(4, 2, 3, 3, 2, 1),
              engine3(8, 1, 8, 0, 2), engine3(3, 1, 4, 1, 1)}) {
          DevBuf<float> h(static_cast<size_t>(m) * s.n);
          DevBuf<int8_t> qh(static_cast<size_t>(m) * s.n), ql(static_cast<size_t>(m) * s.n);
          DevBuf<float> qs(static_cast<size_t>(m) * s.n / 32);
          h.poison();
          qh.poison(0x80);
          ql.poison(0x80);
          qs.poison();
          GemvQ8GateUpArgs ga;
          ga.gate = gate.weights();
          ga.up = up;
          ga.x = gate.act();
          ga.format = hl ? ActFormat::kHL : ActFormat::kH;
          ga.out_f32 = h.get();
          ga.ld_out = s.n;
          ga.out_q = QActOut{qh.get(), hl ? ql.get() : nullptr, qs.get(), s.n, s.n / 32};
          ga.m = m;
          ga.tile = t;
          QC_ASSERT_OK(gemv_q8_gateup(ga, nullptr));
          hf = h.download();
          ASSERT_TRUE(same_bits(h_sep.download(), hf))
              << "K=" << s.k << " N=" << s.n << " M=" << m << " hl=" << hl << " " << describe(t);
          ASSERT_EQ(qh_sep.download(), qh.download()) << describe(t);
          if (hl) {
            ASSERT_EQ(ql_sep.download(), ql.download()) << describe(t);
          }
          ASSERT_TRUE(same_bits(qs_sep.download(), qs.download())) << describe(t);
        }
        // Against double: g, u each within the GEMV bound; silu(g)*u then moves by at most
        // |u| * |silu'| * err_g + |silu(g)| * err_u (|silu'| <= 1.1) plus a few f32 roundings.
        const RefGemv rg = gemv_q8_ref(gate.w, gate.x, hl);
        const RefGemv ru = gemv_q8_ref(up_w, gate.x, hl);
        for (size_t i = 0; i < hf.size(); ++i) {
          const double eg = tolerance(v, s.k, rg.abs[i], 4), eu = tolerance(v, s.k, ru.abs[i], 4);
          const double expect = silu(rg.y[i]) * ru.y[i];
          const double tol = 1.1 * std::fabs(ru.y[i]) * eg + std::fabs(silu(rg.y[i])) * eu + eg * eu +
                             8 * std::ldexp(1.0, -24) * std::fabs(expect);
          ASSERT_NEAR(hf[i], expect, tol) << i;
        }
      }
    }
  }
}

// N not a multiple of 32 with f32 output only; PDL attribute on.
TEST(GemvQ8, GateUpF32OnlyOddN) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(41);
  const int k = 2080, n = 77, m = 2;
  GemvData gate(rng, m, k, n);
  HostQ8 up_w = random_q8(rng, n, k);
  DevBuf<int8_t> up_q(up_w.q);
  DevBuf<uint16_t> up_d(up_w.d);
  DevBuf<float> h(static_cast<size_t>(m) * n);
  h.poison();
  GemvQ8GateUpArgs ga;
  ga.gate = gate.weights();
  ga.up = Q8Weights{up_q.get(), up_d.get(), n, k, up_w.stride};
  ga.x = gate.act();
  ga.out_f32 = h.get();
  ga.ld_out = n;
  ga.m = m;
  ga.pdl = true;
  const RefGemv rg = gemv_q8_ref(gate.w, gate.x, true), ru = gemv_q8_ref(up_w, gate.x, true);
  std::vector<float> first;
  for (const TileTuning& t :
       {TileTuning{}, engine1(1, 4, 0), engine2(4, 1, 2, 2, 5, 2), engine3(4, 1, 4, 3, 2)}) {
    h.poison();
    ga.tile = t;
    QC_ASSERT_OK(gemv_q8_gateup(ga, nullptr));
    const std::vector<float> hf = h.download();
    ASSERT_TRUE(all_finite(hf)) << describe(t);
    for (size_t i = 0; i < hf.size(); ++i) {
      const double expect = silu(rg.y[i]) * ru.y[i];
      // loose relative check (the exact bound is exercised in GateUpMatchesSeparateKernels)
      ASSERT_NEAR(hf[i], expect, 1e-4 * (std::fabs(ru.y[i]) * rg.abs[i] + ru.abs[i]) + 1e-6) << i;
    }
    if (first.empty()) first = hf;
    ASSERT_TRUE(same_bits(first, hf)) << describe(t);  // every engine: the same bits
  }
}

// A sequence of PDL launches captured in a CUDA graph and replayed gives the eager bits.
TEST(GemvQ8, GraphCaptureWithPdlMatchesEager) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(51);
  const int m = 2;
  GemvData d(rng, m, 5120, 300);
  const std::vector<float> eager = run_gemv(d, GemvVariant::kTile, m);
  DevBuf<float> y(static_cast<size_t>(m) * 300);
  y.poison();
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  GemvQ8Args a = make_args(d, GemvVariant::kTile, y.get(), m);
  a.pdl = true;
  GpuStatus st;
  for (int i = 0; i < 3 && st.ok(); ++i) st = gemv_q8(a, s);  // same output three times, chained by PDL
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  ASSERT_TRUE(st.ok()) << st.describe();
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_TRUE(same_bits(eager, y.download()));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

// Engine 2 copies each row's f16 scales as a 16-byte aligned superset; where that would leave the scale
// array (its first or last row when the array's ends are not 16-byte aligned) the producer copies the exact
// bytes instead. Scale array at a 2-byte offset, K = 1056 (66 bytes of scales per row): every row boundary
// is unaligned, both ends of the array too. Every engine must still give the bits of "hl" / "h".
TEST(GemvQ8, TileEnginesUnalignedScaleArray) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(61);
  for (const Shape& s : {Shape{1056, 77}, Shape{96, 33}, Shape{2080, 129}}) {
    const int m = 2;
    GemvData d(rng, m, s.k, s.n);
    std::vector<uint16_t> shifted(d.w.d.size() + 8, 0x3c00);  // f16 1.0 around the array
    std::copy(d.w.d.begin(), d.w.d.end(), shifted.begin() + 1);
    DevBuf<uint16_t> dd(shifted);
    for (bool hl : {true, false}) {
      const GemvVariant base = hl ? GemvVariant::kHL : GemvVariant::kH;
      const GemvVariant tile = hl ? GemvVariant::kTile : GemvVariant::kTileH;
      auto run = [&](GemvVariant v, const TileTuning& t) {
        DevBuf<float> y(static_cast<size_t>(m) * s.n);
        y.poison();
        GemvQ8Args a = make_args(d, v, y.get(), m);
        a.w.d = dd.get() + 1;
        a.tile = t;
        const GpuStatus st = gemv_q8(a, nullptr);
        EXPECT_TRUE(st.ok()) << st.describe();
        return y.download();
      };
      const std::vector<float> ref = run(base, {});
      ASSERT_TRUE(all_finite(ref));
      for (const TileTuning& t :
           {engine2(8, 1, 1, 2, 0, 2), engine2(4, 2, 2, 3, 3, 1), engine2(3, 1, 3, 4, 1, 2),
            engine2(2, 4, 16, 2, 2, 1), engine3(4, 1, 8, 2, 2)})
        ASSERT_TRUE(same_bits(ref, run(tile, t)))
            << describe(t) << " K=" << s.k << " N=" << s.n << " hl=" << hl;
    }
  }
}

// Argument errors come back as messages, before any device work (these run without a GPU too).
TEST(GemvQ8Args, RejectsBadArguments) {
  alignas(16) int8_t q[64] = {};
  uint16_t d[2] = {};
  float y[4] = {};
  GemvQ8Args a;
  a.w = Q8Weights{q, d, 1, 48, 48};
  a.y = y;
  a.ld_y = 1;
  GpuStatus st = gemv_q8(a, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("multiple of 32, got 48"), std::string::npos) << st.describe();
  a.w.cols = 32;
  a.w.row_stride = 32;
  a.m = 5;
  st = gemv_q8(a, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("M must be in [1, 4], got 5"), std::string::npos) << st.describe();
  a.m = 1;
  a.variant = GemvVariant::kHL;  // no activation pointers
  st = gemv_q8(a, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("activation"), std::string::npos) << st.describe();
  alignas(16) int8_t xh[32] = {}, xl[32] = {};
  float xs[1] = {};
  a.x = QActIn{xh, xl, xs, 32, 1};
  a.variant = GemvVariant::kTile;
  a.tile.engine = 7;  // rejected while resolving the schedule, before any launch
  st = gemv_q8(a, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("engine must be 0 (auto), 1, 2 or 3, got 7"), std::string::npos)
      << st.describe();
}

}  // namespace
}  // namespace qc::gpu::test
