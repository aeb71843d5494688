// gemm_q8 (the prefill GEMM on int8 tensor cores) against a CPU mirror of its contract (gemm_q8.h), bit for
// bit: shapes on every tile boundary (64 and 128 rows, 64 and 128 columns, stages of 128 K-bytes), formats
// h and hl, every schedule, the residual (separate and aliasing y), padded strides whose padding holds
// garbage, extreme values; a row's bits do not depend on the batch; runs repeat; bad arguments come back
// as errors.
#include <cstring>

#include "cpu_ref.h"
#include "gemm_q8.h"
#include "gpu_test_util.h"

namespace qc::gpu::test {
namespace {

struct Shape {
  int m, n, k;
};
// M: 1, 7, 16, 17, 63, 64, 65, 70, 128, 129, 300 (tile edges 64 and 128); N: 1, 8, 40, 127, 128, 129, 260
// (column tiles 64 and 128); K: 32, 96, 160 (a stage partly beyond K), 64, 128 (one stage), 5120 (40).
const Shape kShapes[] = {
    {1, 1, 32},      {1, 40, 64},      {7, 8, 96},      {16, 127, 160},  {17, 128, 128},
    {63, 129, 64},   {64, 40, 5120},   {65, 260, 96},   {128, 129, 160}, {129, 128, 32},
    {300, 260, 128}, {300, 40, 5120},  {1, 260, 5120},  {70, 127, 64},   {128, 8, 160},
    {63, 1, 96},     {129, 260, 5120}, {300, 129, 160}, {7, 129, 5120},  {65, 64, 32},
};
std::string describe(const Shape& s) {
  return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
}

constexpr uint8_t kGarbage = 0x5A;  // fills the padding of the int8 rows: a kernel that reads it is wrong

// Weights and quantised activations with padded strides (pad extra 16-byte chunks per row; the scale rows
// get pad extra floats, all NaN), on the host and (upload()) on the device.
struct GemmCase {
  Shape s;
  int w_stride, ld, ld_s;
  std::vector<int8_t> wq;      // [N][w_stride]
  std::vector<uint16_t> wd;    // [N][K/32] f16 bits
  std::vector<int8_t> hi, lo;  // [M][ld]
  std::vector<float> scale;    // [M][ld_s]
  DevBuf<int8_t> dwq, dhi, dlo;
  DevBuf<uint16_t> dwd;
  DevBuf<float> dscale;

  GemmCase(std::mt19937& rng, Shape shape, int pad, bool on_device = true) : s(shape) {
    w_stride = s.k + 16 * pad;
    ld = s.k + 16 * pad;
    ld_s = s.k / 32 + pad;
    wq.assign(static_cast<size_t>(s.n) * w_stride, static_cast<int8_t>(kGarbage));
    std::uniform_int_distribution<int> qd(-127, 127);
    for (int r = 0; r < s.n; ++r)
      for (int k = 0; k < s.k; ++k) wq[static_cast<size_t>(r) * w_stride + k] = static_cast<int8_t>(qd(rng));
    wd.resize(static_cast<size_t>(s.n) * (s.k / 32));
    std::uniform_real_distribution<float> sd(1e-3f, 2e-2f);
    std::bernoulli_distribution neg(0.25);
    for (auto& d : wd) d = f2h_bits(neg(rng) ? -sd(rng) : sd(rng));
    // Activations as norm_quant writes them: quantised normals with a few outliers per row.
    hi.assign(static_cast<size_t>(s.m) * ld, static_cast<int8_t>(kGarbage));
    lo.assign(static_cast<size_t>(s.m) * ld, static_cast<int8_t>(kGarbage));
    scale.assign(static_cast<size_t>(s.m) * ld_s, std::nanf(""));
    std::uniform_int_distribution<int> pick(0, s.k - 1);
    for (int r = 0; r < s.m; ++r) {
      std::vector<float> src = random_normal(rng, static_cast<size_t>(s.k), 1.0f);
      for (int i = 0; i < 3; ++i) src[pick(rng)] *= 20.0f;
      quantize_ref(src.data(), s.k, hi.data() + static_cast<size_t>(r) * ld,
                   lo.data() + static_cast<size_t>(r) * ld, scale.data() + static_cast<size_t>(r) * ld_s);
    }
    if (on_device) upload();
  }
  void upload() {
    dwq = DevBuf<int8_t>(wq);
    dwd = DevBuf<uint16_t>(wd);
    dhi = DevBuf<int8_t>(hi);
    dlo = DevBuf<int8_t>(lo);
    dscale = DevBuf<float>(scale);
  }
  Q8Weights weights() const { return Q8Weights{dwq.get(), dwd.get(), s.n, s.k, w_stride}; }
  QActIn act(bool hl) const { return QActIn{dhi.get(), hl ? dlo.get() : nullptr, dscale.get(), ld, ld_s}; }

  // The contract of gemm_q8.h, in the same f32 steps: acc[m][n] before the residual.
  std::vector<float> mirror(bool hl) const {
    const int kb = s.k / 32;
    std::vector<float> acc(static_cast<size_t>(s.m) * s.n);
    for (int m = 0; m < s.m; ++m)
      for (int n = 0; n < s.n; ++n) {
        const int8_t* q = wq.data() + static_cast<size_t>(n) * w_stride;
        const int8_t* h = hi.data() + static_cast<size_t>(m) * ld;
        const int8_t* l = lo.data() + static_cast<size_t>(m) * ld;
        float a = 0.0f;
        for (int b = 0; b < kb; ++b)
          a = q8_mma_block_step(a, q + 32 * b, h + 32 * b, l + 32 * b, hl,
                                scale[static_cast<size_t>(m) * ld_s + b],
                                wd[static_cast<size_t>(n) * kb + b]);
        acc[static_cast<size_t>(m) * s.n + n] = a;
      }
    return acc;
  }
};

struct Schedule {
  int tile_m = 0, tile_n = 0, stages = 0;
};
std::string describe(const Schedule& c) {
  return "tile " + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + " stages " +
         std::to_string(c.stages);
}
// The launcher's choice, then every tile with every stage count.
std::vector<Schedule> all_schedules() {
  std::vector<Schedule> v{{}};
  for (const auto& [bm, bn] : std::vector<std::pair<int, int>>{{128, 128}, {64, 128}, {64, 64}})
    for (int st = 2; st <= 4; ++st) v.push_back({bm, bn, st});
  return v;
}

enum class Residual { kNone, kSeparate, kAliasY };

// One call. y is [M + 1][ld_y] with ld_y = N + 3: before the call it holds poison (or the residual, when
// the residual is y itself); afterwards every element outside [M][N] must still hold it. Returns the whole
// buffer; `before` receives its initial content.
std::vector<float> run(const GemmCase& c, bool hl, const Schedule& sch, Residual res,
                       const std::vector<float>& residual, std::vector<float>& before, bool pdl = false) {
  const int ld_y = c.s.n + 3, ld_res = c.s.n + 5;
  const size_t y_count = static_cast<size_t>(c.s.m + 1) * ld_y;
  DevBuf<float> y(y_count);
  DevBuf<float> r;
  if (res == Residual::kAliasY) {
    before.assign(y_count, 0.0f);
    for (int m = 0; m <= c.s.m; ++m)
      for (int n = 0; n < ld_y; ++n)
        before[static_cast<size_t>(m) * ld_y + n] = residual[(m * 7 + n) % residual.size()];
    y.upload(before);
  } else {
    y.poison();
    before.assign(y_count, 0.0f);
    std::memset(before.data(), 0xFF, y_count * sizeof(float));
    if (res == Residual::kSeparate) {
      std::vector<float> rh(static_cast<size_t>(c.s.m) * ld_res);
      for (size_t i = 0; i < rh.size(); ++i) rh[i] = residual[i % residual.size()];
      r = DevBuf<float>(rh);
    }
  }
  GemmQ8Args a;
  a.w = c.weights();
  a.x = c.act(hl);
  a.m = c.s.m;
  a.y = y.get();
  a.ld_y = ld_y;
  if (res == Residual::kAliasY) {
    a.residual = y.get();
    a.ld_residual = ld_y;
  } else if (res == Residual::kSeparate) {
    a.residual = r.get();
    a.ld_residual = ld_res;
  }
  a.tile_m = sch.tile_m;
  a.tile_n = sch.tile_n;
  a.stages = sch.stages;
  a.pdl = pdl;
  const GpuStatus st = gemm_q8(a, nullptr);
  if (!st.ok()) {
    ADD_FAILURE() << describe(c.s) << " " << describe(sch) << ": " << st.describe();
    return {};
  }
  return y.download();
}

// What `run` must return: `before` with the in-bounds elements replaced by residual + acc (or acc).
std::vector<float> expected(const GemmCase& c, const std::vector<float>& acc, Residual res,
                            const std::vector<float>& residual, std::vector<float> before) {
  const int ld_y = c.s.n + 3, ld_res = c.s.n + 5;
  for (int m = 0; m < c.s.m; ++m)
    for (int n = 0; n < c.s.n; ++n) {
      const float a = acc[static_cast<size_t>(m) * c.s.n + n];
      float& out = before[static_cast<size_t>(m) * ld_y + n];
      if (res == Residual::kAliasY)
        out = out + a;
      else if (res == Residual::kSeparate)
        out = residual[(static_cast<size_t>(m) * ld_res + n) % residual.size()] + a;
      else
        out = a;
    }
  return before;
}

TEST(GemmQ8, MatchesCpuMirrorBitForBitInEverySchedule) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(20240611);
  const std::vector<float> none;
  int idx = 0;
  for (const Shape& s : kShapes) {
    const GemmCase c(rng, s, idx++ % 3);
    for (bool hl : {false, true}) {
      const std::vector<float> acc = c.mirror(hl);
      for (const Schedule& sch : all_schedules()) {
        std::vector<float> before;
        const std::vector<float> y = run(c, hl, sch, Residual::kNone, none, before);
        ASSERT_TRUE(same_bits(y, expected(c, acc, Residual::kNone, none, before)))
            << describe(s) << (hl ? " hl " : " h ") << describe(sch);
      }
    }
  }
}

TEST(GemmQ8, ResidualIsOneAddAndMayAliasY) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(31);
  const std::vector<float> residual = random_normal(rng, 4099, 3.0f);
  int idx = 0;
  for (const Shape& s : kShapes) {
    const GemmCase c(rng, s, idx++ % 3);
    for (bool hl : {false, true}) {
      const std::vector<float> acc = c.mirror(hl);
      for (Residual res : {Residual::kSeparate, Residual::kAliasY})
        for (const Schedule& sch : {Schedule{}, Schedule{128, 128, 3}, Schedule{64, 64, 2}}) {
          std::vector<float> before;
          const std::vector<float> y = run(c, hl, sch, res, residual, before);
          ASSERT_TRUE(same_bits(y, expected(c, acc, res, residual, before)))
              << describe(s) << (hl ? " hl " : " h ") << describe(sch)
              << (res == Residual::kAliasY ? " residual = y" : " separate residual");
        }
    }
  }
}

// The mirror itself against the math (double): guards against a mirror that shares a kernel's mistake.
// Each term passes through at most K/32 chained fmas plus 3 roundings of its own (hl combine, scale
// product, the f32 1/127): |err| <= gamma_L * sum|terms|, L = K/32 + 3, gamma_L ~ L * 2^-24; factor 2 for
// second-order terms. An indexing bug moves a result by O(sum|terms|).
TEST(GemmQ8, MirrorAgreesWithDoubleReference) {
  std::mt19937 rng(8);
  const GemmCase c(rng, {5, 33, 5120}, 1, false);
  const int kb = c.s.k / 32;
  for (bool hl : {false, true}) {
    const std::vector<float> acc = c.mirror(hl);
    for (int m = 0; m < c.s.m; ++m)
      for (int n = 0; n < c.s.n; ++n) {
        double sum = 0.0, abs_sum = 0.0;
        for (int k = 0; k < c.s.k; ++k) {
          const size_t xi = static_cast<size_t>(m) * c.ld + k;
          const double x = static_cast<double>(c.scale[static_cast<size_t>(m) * c.ld_s + k / 32]) *
                           (c.hi[xi] + (hl ? c.lo[xi] * static_cast<double>(kInv127f) : 0.0));
          const double w = static_cast<double>(h_bits2f(c.wd[static_cast<size_t>(n) * kb + k / 32])) *
                           c.wq[static_cast<size_t>(n) * c.w_stride + k];
          sum += x * w;
          abs_sum += std::fabs(x * w);
        }
        const double tol = 2.0 * (kb + 3) * std::ldexp(1.0, -24) * abs_sum;
        ASSERT_NEAR(acc[static_cast<size_t>(m) * c.s.n + n], sum, tol) << "m=" << m << " n=" << n;
      }
  }
}

// The largest block dot products (|ih| = 32 * 127 * 127, |il| = 32 * 64 * 127): the int32 -> f32 path of
// the kernel (an offset of 1.5 * 2^23 on the accumulator) stays exact at the extremes.
TEST(GemmQ8, ExtremeValuesExact) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(4);
  GemmCase c(rng, {17, 9, 96}, 0);
  for (int n = 0; n < c.s.n; ++n)
    for (int k = 0; k < c.s.k; ++k)
      c.wq[static_cast<size_t>(n) * c.w_stride + k] = static_cast<int8_t>(n % 2 ? 127 : -127);
  for (int m = 0; m < c.s.m; ++m)
    for (int k = 0; k < c.s.k; ++k) {
      const size_t i = static_cast<size_t>(m) * c.ld + k;
      c.hi[i] = static_cast<int8_t>((m + k / 32) % 2 ? 127 : -127);
      c.lo[i] = static_cast<int8_t>(m % 3 ? 64 : -64);
    }
  c.upload();
  const std::vector<float> none;
  for (bool hl : {false, true}) {
    std::vector<float> before;
    const std::vector<float> y = run(c, hl, {}, Residual::kNone, none, before);
    ASSERT_TRUE(same_bits(y, expected(c, c.mirror(hl), Residual::kNone, none, before))) << (hl ? "hl" : "h");
  }
}

// Row r of an M = 300 batch has the bits of the same row computed alone (M = 1): the prefill may chunk a
// prompt any way it likes. Two runs give the same bits; so does a PDL launch.
TEST(GemmQ8, RowBitsIndependentOfBatchAndRepeatable) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(5);
  const GemmCase big(rng, {300, 129, 5120}, 1);
  const std::vector<float> none;
  for (bool hl : {false, true}) {
    std::vector<float> before;
    const std::vector<float> y = run(big, hl, {}, Residual::kNone, none, before);
    ASSERT_TRUE(same_bits(y, run(big, hl, {}, Residual::kNone, none, before))) << "second run";
    ASSERT_TRUE(same_bits(y, run(big, hl, {}, Residual::kNone, none, before, true))) << "PDL launch";
    const int ld_y = big.s.n + 3;
    for (int r : {0, 1, 63, 64, 127, 128, 200, 299}) {
      GemmCase one(rng, {1, big.s.n, big.s.k}, 1, false);
      one.wq = big.wq;
      one.wd = big.wd;
      one.hi.assign(big.hi.begin() + static_cast<ptrdiff_t>(r) * big.ld,
                    big.hi.begin() + static_cast<ptrdiff_t>(r + 1) * big.ld);
      one.lo.assign(big.lo.begin() + static_cast<ptrdiff_t>(r) * big.ld,
                    big.lo.begin() + static_cast<ptrdiff_t>(r + 1) * big.ld);
      one.scale.assign(big.scale.begin() + static_cast<ptrdiff_t>(r) * big.ld_s,
                       big.scale.begin() + static_cast<ptrdiff_t>(r + 1) * big.ld_s);
      one.upload();
      std::vector<float> before1;
      const std::vector<float> y1 = run(one, hl, {}, Residual::kNone, none, before1);
      const std::vector<float> row(y.begin() + static_cast<ptrdiff_t>(r) * ld_y,
                                   y.begin() + static_cast<ptrdiff_t>(r) * ld_y + big.s.n);
      const std::vector<float> row1(y1.begin(), y1.begin() + big.s.n);
      ASSERT_TRUE(same_bits(row, row1)) << "row " << r << (hl ? " hl" : " h");
    }
  }
}

// Argument errors come back as messages naming the field, before any device work (these run without a
// GPU too).
TEST(GemmQ8Args, RejectsBadArguments) {
  alignas(16) static int8_t q[4 * 64] = {};
  alignas(16) static int8_t xh[2 * 64] = {}, xl[2 * 64] = {};
  static uint16_t d[4 * 2] = {};
  static float xs[2 * 2] = {}, y[2 * 4] = {};
  auto good = [] {
    GemmQ8Args a;
    a.w = Q8Weights{q, d, 4, 64, 64};
    a.x = QActIn{xh, xl, xs, 64, 2};
    a.m = 2;
    a.y = y;
    a.ld_y = 4;
    return a;
  };
  struct Bad {
    const char* what;
    void (*edit)(GemmQ8Args&);
  };
  const Bad cases[] = {
      {"weight pointers must be non-null", [](GemmQ8Args& a) { a.w.q = nullptr; }},
      {"weight pointers must be non-null", [](GemmQ8Args& a) { a.w.d = nullptr; }},
      {"N (w.rows) must be in [1, ", [](GemmQ8Args& a) { a.w.rows = 0; }},
      {"K (w.cols) must be a positive multiple of 32, got 48", [](GemmQ8Args& a) { a.w.cols = 48; }},
      {"K (w.cols) must be a positive multiple of 32, got 0", [](GemmQ8Args& a) { a.w.cols = 0; }},
      {"w.row_stride must be a multiple of 16 and >= K=64, got 56",
       [](GemmQ8Args& a) { a.w.row_stride = 56; }},
      {"w.row_stride must be a multiple of 16 and >= K=64, got 72",
       [](GemmQ8Args& a) { a.w.row_stride = 72; }},
      {"w.q must be 16-byte aligned", [](GemmQ8Args& a) { a.w.q = q + 4; }},
      {"activation pointers must be non-null", [](GemmQ8Args& a) { a.x.hi = nullptr; }},
      {"activation pointers must be non-null", [](GemmQ8Args& a) { a.x.scale = nullptr; }},
      {"x.hi must be 16-byte aligned", [](GemmQ8Args& a) { a.x.hi = xh + 8; }},
      {"x.lo must be 16-byte aligned", [](GemmQ8Args& a) { a.x.lo = xl + 1; }},
      {"x.ld must be a multiple of 16 and >= K=64, got 48", [](GemmQ8Args& a) { a.x.ld = 48; }},
      {"x.ld must be a multiple of 16 and >= K=64, got 66", [](GemmQ8Args& a) { a.x.ld = 66; }},
      {"x.ld_scale must be >= K/32=2, got 1", [](GemmQ8Args& a) { a.x.ld_scale = 1; }},
      {"M must be in [1, 2048], got 0", [](GemmQ8Args& a) { a.m = 0; }},
      {"M must be in [1, 2048], got 2049", [](GemmQ8Args& a) { a.m = 2049; }},
      {"y must be non-null", [](GemmQ8Args& a) { a.y = nullptr; }},
      {"ld_y must be >= N=4, got 3", [](GemmQ8Args& a) { a.ld_y = 3; }},
      {"ld_residual must be >= N=4, got 2",
       [](GemmQ8Args& a) {
         a.residual = xs;
         a.ld_residual = 2;
       }},
      {"a residual that aliases y needs ld_residual == ld_y=4, got 5",
       [](GemmQ8Args& a) {
         a.residual = a.y;
         a.ld_residual = 5;
       }},
      {"tile_m must be 0 (auto), 64 or 128, got 32", [](GemmQ8Args& a) { a.tile_m = 32; }},
      {"tile_n must be 0 (auto), 64 or 128, got 256", [](GemmQ8Args& a) { a.tile_n = 256; }},
      {"stages must be 0 (auto) or in [2, 4], got 5", [](GemmQ8Args& a) { a.stages = 5; }},
      {"stages must be 0 (auto) or in [2, 4], got 1", [](GemmQ8Args& a) { a.stages = 1; }},
  };
  for (const Bad& b : cases) {
    GemmQ8Args a = good();
    b.edit(a);
    const GpuStatus st = gemm_q8(a, nullptr);
    ASSERT_FALSE(st.ok()) << b.what;
    EXPECT_NE(st.describe().find(b.what), std::string::npos)
        << "expected \"" << b.what << "\", got \"" << st.describe() << "\"";
    EXPECT_EQ(st.describe().rfind("gemm_q8: ", 0), 0u) << st.describe();
  }
}

}  // namespace
}  // namespace qc::gpu::test
