// The Q8_0 GEMV on int8 tensor cores ("mma", "mma_h": kernels/gemv_q8/gemv_q8_mma.cu) against a CPU mirror
// of its contract, bit for bit: K from one block to the FFN width (slices that are short, empty, or one
// block each), N on and off the 16-row tile, M = 1..4, formats h and hl, the residual separate and in place,
// padded activation rows whose padding holds garbage, PDL launches, every schedule (registers refilled by
// slot or by batch, 4 or 8 blocks in flight, the batch with lean loads too; shared-memory stages, 2 or 3; a
// grid of several tiles a block:
// the same bits). The distance from the double GEMV
// and the M-invariance are test_gemv_q8.cpp's, which runs every variant.
#include <algorithm>
#include <cmath>

#include "cpu_ref.h"
#include "gemv_q8/gemv_q8.h"
#include "gpu_test_util.h"

namespace qc::gpu::test {
namespace {

constexpr int kSlices = 8;  // the contract's K slices (gemv_q8_mma.cu)

struct Shape {
  int k, n;
};
// K / 32 = 1 (seven empty slices), 3, 8 (one block a slice), 9 (the last slice one block, ceil(9/8) = 2 so
// four slices used), 33, 160 (27B hidden), 544 (FFN width); N = 1, 16, 17, 40, 300, 7000 (438 tiles: more
// than an H100's resident blocks, so the launcher's own grid walks several tiles a block too).
const Shape kShapes[] = {{32, 17},  {96, 40},   {256, 16},   {288, 300},
                         {1056, 1}, {5120, 40}, {17408, 17}, {96, 7000}};

// The contract of gemv_q8_mma.cu in the same f32 steps: y[m][n] (+ residual[m][n] when given).
std::vector<float> mirror(const HostQ8& w, const HostAct& x, int m_rows, bool hl, const float* residual) {
  const int nb = w.cols / 32, per = (nb + kSlices - 1) / kSlices;
  std::vector<float> y(static_cast<size_t>(m_rows) * w.rows);
  for (int m = 0; m < m_rows; ++m)
    for (int n = 0; n < w.rows; ++n) {
      const int8_t* q = w.q.data() + static_cast<size_t>(n) * w.stride;
      const int8_t* h = x.hi.data() + static_cast<size_t>(m) * x.ld;
      const int8_t* l = x.lo.data() + static_cast<size_t>(m) * x.ld;
      float sum = 0.0f;
      for (int s = 0; s < kSlices && s * per < nb; ++s) {
        float p = 0.0f;
        for (int b = s * per; b < std::min(nb, (s + 1) * per); ++b)
          p = q8_mma_block_step(p, q + 32 * b, h + 32 * b, l + 32 * b, hl,
                                x.scale[static_cast<size_t>(m) * x.ld_s + b],
                                w.d[static_cast<size_t>(n) * nb + b]);
        sum = s == 0 ? p : sum + p;
      }
      const size_t i = static_cast<size_t>(m) * w.rows + n;
      y[i] = residual ? residual[i] + sum : sum;
    }
  return y;
}

// The schedules (TileTuning fields of gemv_q8_mma.cu and gemv_q8_mma_staged.cu): registers refilled slot by
// slot (engine 3) or a batch at a time (engine 1; engine 4 with lean loads: clamped addresses, no zero
// fill), 4 or 8 blocks in flight; shared-memory stages (engine 2), 2 or 3 of them.
struct Schedule {
  int engine, unroll, stages;
};
const Schedule kSchedules[] = {{3, 4, 0}, {3, 8, 0}, {1, 4, 0}, {1, 8, 0},
                               {4, 4, 0}, {4, 8, 0}, {2, 0, 2}, {2, 0, 3}};
constexpr int kNumSchedules = sizeof(kSchedules) / sizeof(kSchedules[0]);

struct Case {
  HostQ8 w;
  HostAct x;
  DevBuf<int8_t> wq, xh, xl;
  DevBuf<uint16_t> wd;
  DevBuf<float> xs;
  Case(std::mt19937& rng, int m, const Shape& s)
      : w(random_q8(rng, s.n, s.k)),
        x(make_act(rng, m, s.k)),
        wq(w.q),
        xh(x.hi),
        xl(x.lo),
        wd(w.d),
        xs(x.scale) {}
  GemvQ8Args args(bool hl, float* y, int m) const {
    GemvQ8Args a;
    a.w = Q8Weights{wq.get(), wd.get(), w.rows, w.cols, w.stride};
    a.x = QActIn{xh.get(), hl ? xl.get() : nullptr, xs.get(), x.ld, x.ld_s};
    a.y = y;
    a.ld_y = w.rows;
    a.m = m;
    a.variant = hl ? GemvVariant::kMma : GemvVariant::kMmaH;
    return a;
  }
};

TEST(GemvQ8Mma, MatchesTheContractMirrorBitForBit) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(4242);
  for (const Shape& s : kShapes)
    for (int m = 1; m <= 4; ++m) {
      const Case c(rng, m, s);
      const std::vector<float> res = random_floats(rng, static_cast<size_t>(m) * s.n, -3.0f, 3.0f);
      // mode % 3: plain, residual, residual in place (y aliases it); mode / 3 % kNumSchedules: the schedule;
      // mode / (3 kNumSchedules): the launcher's grid, or 3 blocks walking several tiles each.
      for (bool hl : {false, true})
        for (int mode = 0; mode < 6 * kNumSchedules; ++mode) {
          const Schedule& sch = kSchedules[mode / 3 % kNumSchedules];
          const std::string what = std::string(hl ? "mma" : "mma_h") + " K=" + std::to_string(s.k) +
                                   " N=" + std::to_string(s.n) + " M=" + std::to_string(m) +
                                   " mode=" + std::to_string(mode);
          DevBuf<float> y(static_cast<size_t>(m) * s.n);
          if (mode % 3 == 2)
            y.upload(res);
          else
            y.poison();
          DevBuf<float> r(res);
          GemvQ8Args a = c.args(hl, y.get(), m);
          if (mode % 3 > 0) {
            a.residual = mode % 3 == 2 ? y.get() : r.get();
            a.ld_residual = s.n;
          }
          a.pdl = mode % 3 == 1;
          a.tile.engine = sch.engine;
          a.tile.unroll = sch.unroll;
          a.tile.stages = sch.stages;
          a.tile.grid = mode / (3 * kNumSchedules) ? 3 : 0;
          QC_ASSERT_OK(gemv_q8(a, nullptr));
          const std::vector<float> got = y.download();
          const std::vector<float> want = mirror(c.w, c.x, m, hl, mode % 3 > 0 ? res.data() : nullptr);
          ASSERT_TRUE(same_bits(got, want)) << what;
        }
    }
}

// The activation rows' padding (bytes between K and ld, scales beyond K / 32) is never read: garbage there
// changes nothing.
TEST(GemvQ8Mma, PaddedActivationRowsIgnorePadding) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(99);
  const int m = 3, k = 288, n = 40, ld = k + 64, ld_s = k / 32 + 5;
  const HostQ8 w = random_q8(rng, n, k);
  const HostAct x = make_act(rng, m, k);
  std::vector<int8_t> hi(static_cast<size_t>(m) * ld, 0x5A), lo(hi.size(), -0x5A);
  std::vector<float> sc(static_cast<size_t>(m) * ld_s, std::nanf(""));
  for (int r = 0; r < m; ++r) {
    std::copy_n(x.hi.begin() + static_cast<ptrdiff_t>(r) * x.ld, k,
                hi.begin() + static_cast<ptrdiff_t>(r) * ld);
    std::copy_n(x.lo.begin() + static_cast<ptrdiff_t>(r) * x.ld, k,
                lo.begin() + static_cast<ptrdiff_t>(r) * ld);
    std::copy_n(x.scale.begin() + static_cast<ptrdiff_t>(r) * x.ld_s, k / 32,
                sc.begin() + static_cast<ptrdiff_t>(r) * ld_s);
  }
  DevBuf<int8_t> wq(w.q), dh(hi), dl(lo);
  DevBuf<uint16_t> wd(w.d);
  DevBuf<float> ds(sc), y(static_cast<size_t>(m) * n);
  for (bool hl : {false, true}) {
    y.poison();
    GemvQ8Args a;
    a.w = Q8Weights{wq.get(), wd.get(), n, k, w.stride};
    a.x = QActIn{dh.get(), hl ? dl.get() : nullptr, ds.get(), ld, ld_s};
    a.y = y.get();
    a.ld_y = n;
    a.m = m;
    a.variant = hl ? GemvVariant::kMma : GemvVariant::kMmaH;
    QC_ASSERT_OK(gemv_q8(a, nullptr));
    ASSERT_TRUE(same_bits(y.download(), mirror(w, x, m, hl, nullptr))) << (hl ? "mma" : "mma_h");
  }
}

// A ring length other than 4 or 8, an engine other than 0..4, or a stage count other than 2 or 3 comes back
// as an error naming the knob, and launches nothing.
TEST(GemvQ8Mma, RejectsAnUnknownSchedule) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(7);
  const Case c(rng, 1, Shape{64, 16});
  DevBuf<float> y(16);
  for (const char* knob : {"tile.unroll", "tile.engine", "tile.stages"}) {
    GemvQ8Args a = c.args(true, y.get(), 1);
    if (std::string(knob) == "tile.unroll")
      a.tile.unroll = 3;
    else if (std::string(knob) == "tile.engine")
      a.tile.engine = 5;
    else
      a.tile = TileTuning{.engine = 2, .stages = 5};
    const GpuStatus st = gemv_q8(a, nullptr);
    ASSERT_FALSE(st.ok()) << knob;
    EXPECT_NE(st.describe().find(knob), std::string::npos) << st.describe();
  }
}

}  // namespace
}  // namespace qc::gpu::test
