// Gated DeltaNet prefill (gdn_prefill.h), with each form of the scan (GdnArgs::scan: token, group of 4 in
// gdn_group.h, chunked in gdn_chunk.h): against the double CPU reference over whole chunks (from position 0
// and after a gdn_step warm-up), bit-identical results however a prompt is split into calls (group and
// chunked: calls starting on their grid; elsewhere within the rounding), continuation with gdn_step, the
// conv ring it leaves, and the argument checks.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>

#include "cpu_ref.h"
#include "gdn.h"
#include "gdn_prefill.h"
#include "gemm_f16.h"
#include "gpu_test_util.h"

namespace qc::gpu::test {
namespace {

const GdnShape k27B{16, 48, 128, 128, 4};
const GdnShape kSmall{2, 4, 64, 32, 4};
const GdnShape kWideV{2, 4, 64, 256, 4};

struct Inputs {
  std::vector<float> qkv, z, beta, alpha;  // [tokens][...], dense
  std::vector<float> conv_w, dt_bias, ssm_a, norm_w, state0;
};

Inputs make_inputs(std::mt19937& rng, const GdnShape& s, int tokens) {
  Inputs in;
  const int cd = s.conv_dim(), inner = s.nv * s.dv;
  in.qkv = random_normal(rng, static_cast<size_t>(tokens) * cd, 1.0f);
  in.z = random_normal(rng, static_cast<size_t>(tokens) * inner, 1.0f);
  in.beta = random_normal(rng, static_cast<size_t>(tokens) * s.nv, 1.0f);
  in.alpha = random_normal(rng, static_cast<size_t>(tokens) * s.nv, 1.0f);
  in.conv_w = random_normal(rng, static_cast<size_t>(cd) * s.kc, 0.5f);
  in.dt_bias = random_normal(rng, s.nv, 0.5f);
  in.ssm_a = random_floats(rng, s.nv, -2.0f, -0.05f);  // -exp(A_log) < 0
  in.norm_w = random_floats(rng, s.dv, 0.5f, 1.5f);
  in.state0 = random_normal(rng, static_cast<size_t>(s.nv) * s.dk * s.dv, 0.1f);
  return in;
}

// Rows [t0, t0+m) of a dense [tokens][cols] array at a row stride ld > cols, the padding NaN (never read).
std::vector<float> padded_rows(const std::vector<float>& src, int cols, int t0, int m, int ld) {
  std::vector<float> out(static_cast<size_t>(m) * ld, std::nanf(""));
  for (int r = 0; r < m; ++r)
    std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(t0 + r) * cols), cols,
                out.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * ld));
  return out;
}

// [m][ld] -> [m][cols]
template <class T>
std::vector<T> unpad(const std::vector<T>& src, int m, int cols, int ld) {
  std::vector<T> out(static_cast<size_t>(m) * cols);
  for (int r = 0; r < m; ++r)
    std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * ld), cols,
                out.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * cols));
  return out;
}

struct RunOut {
  std::vector<float> y;        // [m][Nv*dv]
  std::vector<int8_t> hi, lo;  // [m][Nv*dv] (format hl)
  std::vector<float> scale;    // [m][Nv*dv/32]
  // With Seq::shift16 set: GdnArgs::out16 [m][Nv*dv], and rows_to_f16 of y with that shift (what it must be).
  std::vector<uint16_t> y16, y16_want;
};

constexpr size_t kGuard = 256;  // poisoned floats after the scratch gdn_prefill asked for

// The device side of one sequence: weights, ring (zeroed at the start), state. Calls use padded row strides
// (NaN in the padding) so that a wrong stride shows up as a non-finite output.
struct Seq {
  GdnShape s;
  GdnScan scan = GdnScan::kToken;  // GdnArgs::scan
  std::optional<int> shift16;      // gdn_prefill calls also write out16 with this shift
  DevBuf<float> conv_w, dt_bias, ssm_a, norm_w, ring, state;
  Seq(const GdnShape& shape, const Inputs& in, GdnScan form = GdnScan::kToken)
      : s(shape),
        scan(form),
        conv_w(in.conv_w),
        dt_bias(in.dt_bias),
        ssm_a(in.ssm_a),
        norm_w(in.norm_w),
        ring(std::vector<float>(static_cast<size_t>(kConvRing) * shape.conv_dim(), 0.0f)),
        state(in.state0) {}

  // Tokens [t0, t0+m) at positions t0..; gdn_prefill, or gdn_step when `prefill` is false (m <= 4).
  RunOut run(const Inputs& in, int t0, int m, bool prefill) {
    const int cd = s.conv_dim(), inner = s.nv * s.dv;
    const int ld_qkv = cd + 4, ld_z = inner + 32, ld_g = s.nv + 3, ld_out = inner + 32;
    const int ld_q = inner + 16, ld_s = inner / 32 + 1;
    DevBuf<float> qkv(padded_rows(in.qkv, cd, t0, m, ld_qkv)), z(padded_rows(in.z, inner, t0, m, ld_z));
    DevBuf<float> beta(padded_rows(in.beta, s.nv, t0, m, ld_g)),
        alpha(padded_rows(in.alpha, s.nv, t0, m, ld_g));
    DevBuf<int> pos(std::vector<int>{t0});
    DevBuf<float> out(static_cast<size_t>(m) * ld_out), qs(static_cast<size_t>(m) * ld_s);
    DevBuf<int8_t> qh(static_cast<size_t>(m) * ld_q), ql(static_cast<size_t>(m) * ld_q);
    out.poison();
    qs.poison();
    qh.poison(0x80);
    ql.poison(0x80);
    GdnArgs a;
    a.m = m;
    a.n_k_heads = s.nk;
    a.n_v_heads = s.nv;
    a.head_k_dim = s.dk;
    a.head_v_dim = s.dv;
    a.conv_kernel = s.kc;
    a.qkv = qkv.get();
    a.ld_qkv = ld_qkv;
    a.z = z.get();
    a.ld_z = ld_z;
    a.beta = beta.get();
    a.ld_beta = ld_g;
    a.alpha = alpha.get();
    a.ld_alpha = ld_g;
    a.conv_w = conv_w.get();
    a.dt_bias = dt_bias.get();
    a.ssm_a = ssm_a.get();
    a.norm_w = norm_w.get();
    a.conv_ring = ring.get();
    a.state = state.get();
    a.d_pos = pos.get();
    a.out = out.get();
    a.ld_out = ld_out;
    a.out_q = QActOut{qh.get(), ql.get(), qs.get(), ld_q, ld_s};
    a.scan = scan;
    const int ld16 = inner + 8;
    DevBuf<uint16_t> o16(prefill && shift16 ? static_cast<size_t>(m) * ld16 : 1);
    o16.poison();
    if (prefill && shift16) {
      a.out16 = o16.get();
      a.ld_out16 = ld16;
      a.shift16 = *shift16;
    }
    if (prefill) {
      const size_t need = gdn_prefill_scratch_floats(a);
      DevBuf<float> scratch(need + kGuard);
      scratch.poison();  // every scratch value the kernels read must have been written by this call
      const GpuStatus st = gdn_prefill(a, scratch.get(), nullptr);
      if (!st.ok()) {
        ADD_FAILURE() << st.describe();
        return {};
      }
      const std::vector<float> sc = scratch.download();
      size_t touched = 0;
      for (size_t e = need; e < sc.size(); ++e) {
        uint32_t u;
        std::memcpy(&u, &sc[e], 4);
        touched += u != 0xFFFFFFFFu;
      }
      EXPECT_EQ(touched, 0u) << "gdn_prefill wrote past its scratch";
    } else {
      const GpuStatus st = gdn_step(a, nullptr);
      if (!st.ok()) {
        ADD_FAILURE() << st.describe();
        return {};
      }
    }
    RunOut r;
    if (prefill && shift16) {
      DevBuf<uint16_t> want(static_cast<size_t>(m) * ld16);
      want.poison();
      const GpuStatus st = rows_to_f16(out.get(), ld_out, m, inner, *shift16, want.get(), ld16, nullptr);
      EXPECT_TRUE(st.ok()) << st.describe();
      r.y16 = unpad(o16.download(), m, inner, ld16);
      r.y16_want = unpad(want.download(), m, inner, ld16);
    }
    r.y = unpad(out.download(), m, inner, ld_out);
    r.hi = unpad(qh.download(), m, inner, ld_q);
    r.lo = unpad(ql.download(), m, inner, ld_q);
    r.scale = unpad(qs.download(), m, inner / 32, ld_s);
    return r;
  }

  // gdn_step over [t0, t1) in calls of up to 4 tokens (the decode path).
  void steps(const Inputs& in, int t0, int t1) {
    for (int t = t0; t < t1; t += 4) run(in, t, std::min(4, t1 - t), false);
  }
};

void append(RunOut& all, const RunOut& r) {
  all.y.insert(all.y.end(), r.y.begin(), r.y.end());
  all.hi.insert(all.hi.end(), r.hi.begin(), r.hi.end());
  all.lo.insert(all.lo.end(), r.lo.begin(), r.lo.end());
  all.scale.insert(all.scale.end(), r.scale.begin(), r.scale.end());
}

::testing::AssertionResult same_bytes(const std::vector<int8_t>& a, const std::vector<int8_t>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return ::testing::AssertionFailure()
             << "first difference at " << i << ": " << int{a[i]} << " vs " << int{b[i]};
  return ::testing::AssertionSuccess();
}

// The ring a sequence of n_pos processed positions leaves (zeroed at the start): slot p % 8 holds the conv
// input of position p for the last min(n_pos, 8) positions.
std::vector<float> expected_ring(const Inputs& in, const GdnShape& s, int n_pos) {
  const int cd = s.conv_dim();
  std::vector<float> ring(static_cast<size_t>(kConvRing) * cd, 0.0f);
  for (int p = std::max(0, n_pos - kConvRing); p < n_pos; ++p)
    std::copy_n(in.qkv.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(p) * cd), cd,
                ring.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(p % kConvRing) * cd));
  return ring;
}

double rms(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

// The quantised rows are the bit-exact mirror of the f32 rows (quantize_ref).
::testing::AssertionResult quant_matches(const RunOut& r, int m, int inner) {
  std::vector<int8_t> eh(inner), el(inner);
  std::vector<float> es(inner / 32);
  for (int i = 0; i < m; ++i) {
    quantize_ref(r.y.data() + static_cast<size_t>(i) * inner, inner, eh.data(), el.data(), es.data());
    for (int c = 0; c < inner; ++c) {
      const size_t at = static_cast<size_t>(i) * inner + c;
      if (r.hi[at] != eh[c] || r.lo[at] != el[c])
        return ::testing::AssertionFailure() << "row " << i << " col " << c << ": q " << int{r.hi[at]} << "/"
                                             << int{r.lo[at]} << " vs " << int{eh[c]} << "/" << int{el[c]};
    }
    for (int b = 0; b < inner / 32; ++b)
      if (r.scale[static_cast<size_t>(i) * inner / 32 + b] != es[b])
        return ::testing::AssertionFailure() << "row " << i << " scale " << b;
  }
  return ::testing::AssertionSuccess();
}

std::string name(const GdnShape& s) {
  return "nk=" + std::to_string(s.nk) + " nv=" + std::to_string(s.nv) + " dk=" + std::to_string(s.dk) +
         " dv=" + std::to_string(s.dv);
}

// Tolerance (the bound of test_gdn.cpp, argued for long chunks). Per token the kernels round like gdn_step:
// dk-long dot products (worst case gamma_dk ~ 8e-6 of the sum of |terms|, typically ~1e-7 * sqrt(dk)),
// L2 and RMS norms (~1e-6 relative), exp/silu/softplus (a few ulp). The state carries earlier rounding
// forward, but the recurrence contracts it: S_t = decay_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T
// with |k_t| <= 1 (L2-normalised) and 0 < beta_t < 1, so I - beta k k^T has norm <= 1 and an error made at
// token s is multiplied by decay_{s+1} ... decay_t < 1 later. With these inputs (ssm_a in [-2, -0.05],
// softplus(a + dt_bias) ~ 0.8 on average) even the slowest head forgets with an average decay ~0.96 a
// token, so the accumulated error stays below ~25x the per-token error however long the chunk: the same
// 2e-4 of the RMS that test_gdn.cpp uses for 16 tokens holds for 300 (it is ~25x the worst-case per-token
// chain bound, hundreds of times the typical error), and any wrong index, head mapping, gate or ring slot
// moves outputs by O(1). Measured on an H200 (this test, printed): max |err| / rms 1.1e-5 for outputs and
// state over all shapes and chunks, 18x inside the bound.
constexpr double kRelTol = 2e-4;
// The chunked scan (gdn_chunk.h) rounds differently: its products are f32-accurate (3xTF32, 2^-22 relative
// per product) but the tensor cores sum them truncating, and it forms each output and delta from sums
// over the chunk weighted by T = (I + A)^-1 and P, whose terms are larger than their result (U - W S and
// Qw S + Ou cancel to the chunk's new information), so a sum's rounding is relative to sum |T||x| rather
// than to |T x|. The CPU mirror (tests/unit/test_gdn_chunk_math.cpp) reproduces the kernel's error with
// truncated sums (1.2e-4) and shows a fifth of it with sums rounded to nearest. Measured on an H100
// (this test, printed): max |err| / rms 1.7e-4 (outputs) and 2.9e-4 (state) over all shapes, chunks and
// starts, 25x the token scan's. The bound, 1e-3 of the RMS, is 3.5x above that, below the f16 rounding
// (2^-11 = 4.9e-4 relative, twice per product) the prompt path's GEMMs apply to the same activations, and
// hundreds of times below what a wrong index, head mapping, gate, chunk boundary or ring slot does (O(1)).
constexpr double kRelTolChunked = 1e-3;
// The grouped scan (gdn_group.h) keeps the token scan's f32 products and sums on CUDA cores; per group it
// adds at most 2 x 4 scalar terms (products of decays < 1 times Gram entries |k.k| <= 1, |k.q| <=
// 1/sqrt(dk)) to the same dk-long dot products, so the token scan's per-token analysis and its bound hold.
// The scaled scan (gdn_scaled.h) runs the token scan's dot products on S / D (the same relative rounding:
// floating point is scale-invariant) with two scalar roundings more a position (D d_t, 1/D within 1 ulp) and
// one per element where a segment ends: the same analysis, the same bound.
double tolerance(GdnScan scan) {
  return scan == GdnScan::kChunked ? kRelTolChunked : kRelTol;
}

const char* scan_name(GdnScan scan) {
  switch (scan) {
    case GdnScan::kChunked:
      return "chunked";
    case GdnScan::kGroup:
      return "group";
    case GdnScan::kScaled:
      return "scaled";
    case GdnScan::kToken:
      break;
  }
  return "token";
}

struct ErrStat {
  double worst = 0.0;  // max |err| / tolerance unit (rms of the reference)
  void add(double err, double unit) { worst = std::max(worst, err / unit); }
};

class GdnPrefillModes : public ::testing::TestWithParam<GdnScan> {};  // GdnArgs::scan

// Rows [start, start + m) of `in` through gdn_prefill after `start` gdn_step tokens, against the f64
// recurrence: every output and the state within the scan's bound of the rms, the ring bit for bit.
void expect_matches_double(const GdnShape& s, const Inputs& in, int start, int m, GdnScan scan,
                           ErrStat& ystat, ErrStat& sstat) {
  const int inner = s.nv * s.dv;
  const double rel_tol = tolerance(scan);
  GdnRef ref(s, in.conv_w, in.dt_bias, in.ssm_a, in.norm_w, in.state0, 1e-6, 1e-6);
  Seq dev(s, in, scan);
  for (int t = 0; t < start; ++t)
    ref.step(in.qkv.data() + static_cast<size_t>(t) * s.conv_dim(),
             in.z.data() + static_cast<size_t>(t) * inner, in.beta.data() + t * s.nv,
             in.alpha.data() + t * s.nv);
  dev.steps(in, 0, start);
  const RunOut r = dev.run(in, start, m, true);
  ASSERT_EQ(r.y.size(), static_cast<size_t>(m) * inner);
  ASSERT_TRUE(all_finite(r.y));
  ASSERT_TRUE(quant_matches(r, m, inner));
  for (int i = 0; i < m; ++i) {
    const int t = start + i;
    const std::vector<double> yr = ref.step(in.qkv.data() + static_cast<size_t>(t) * s.conv_dim(),
                                            in.z.data() + static_cast<size_t>(t) * inner,
                                            in.beta.data() + t * s.nv, in.alpha.data() + t * s.nv);
    const double unit = rms(yr), tol = rel_tol * unit;
    for (int c = 0; c < inner; ++c) {
      const double err = std::fabs(r.y[static_cast<size_t>(i) * inner + c] - yr[c]);
      ystat.add(err, unit);
      ASSERT_LE(err, tol) << "token " << t << " col " << c << ": " << r.y[static_cast<size_t>(i) * inner + c]
                          << " vs " << yr[c];
    }
  }
  const std::vector<float> st = dev.state.download();
  const std::vector<double>& sr = ref.state();
  const double unit = rms(sr), stol = rel_tol * unit;
  for (size_t e = 0; e < st.size(); ++e) {
    const double err = std::fabs(st[e] - sr[e]);
    sstat.add(err, unit);
    ASSERT_LE(err, stol) << "state elem " << e << ": " << st[e] << " vs " << sr[e];
  }
  ASSERT_TRUE(same_bits(dev.ring.download(), expected_ring(in, s, start + m)));
}

TEST_P(GdnPrefillModes, MatchesCpuDouble) {
  QC_REQUIRE_DEVICE();
  const GdnScan scan = GetParam();
  std::mt19937 rng(40);
  const int ms[] = {1, 4, 5, 63, 64, 65, 300};
  ErrStat ystat, sstat;
  for (const GdnShape& s : {kSmall, kWideV, k27B}) {
    for (int start : {0, 13}) {  // 13: after gdn_step calls of 4, 4, 4, 1 tokens (the ring has wrapped)
      for (int m : ms) {
        SCOPED_TRACE(name(s) + " start " + std::to_string(start) + " M " + std::to_string(m));
        expect_matches_double(s, make_inputs(rng, s, start + m), start, m, scan, ystat, sstat);
        if (HasFatalFailure()) return;
      }
    }
  }
  std::printf("[gdn_prefill] %s scan: max |err| / rms: outputs %.3g, state %.3g (tolerance %.3g)\n",
              scan_name(scan), ystat.worst, sstat.worst, tolerance(scan));
}

// Decays of 1e-13 or less at every fifth token (alpha 600: softplus(alpha + dt_bias) * ssm_a <= -30) and of
// exactly 0 at tokens 37 and 150 (alpha 5000: far below exp's underflow in float and double): the state is
// all but, or wholly, forgotten there. The scaled scan folds its scale into the state at such tokens
// (gdn_scaled.h); every scan stays within its bound of the double recurrence.
TEST_P(GdnPrefillModes, StrongDecaysMatchCpuDouble) {
  QC_REQUIRE_DEVICE();
  const GdnScan scan = GetParam();
  std::mt19937 rng(44);
  ErrStat ystat, sstat;
  for (const GdnShape& s : {kSmall, k27B}) {
    SCOPED_TRACE(name(s));
    const int m = 300;
    Inputs in = make_inputs(rng, s, m);
    for (int t = 0; t < m; ++t)
      for (int j = 0; j < s.nv; ++j) {
        float& a = in.alpha[static_cast<size_t>(t) * s.nv + j];
        if (t == 37 || t == 150)
          a = 5000.0f;
        else if (t % 5 == 2)
          a = 600.0f;
      }
    expect_matches_double(s, in, 0, m, scan, ystat, sstat);
    if (HasFatalFailure()) return;
  }
  std::printf(
      "[gdn_prefill] %s scan, strong decays: max |err| / rms: outputs %.3g, state %.3g (tolerance %.3g)\n",
      scan_name(scan), ystat.worst, sstat.worst, tolerance(scan));
}

// One call of 300 rows == the same rows split into calls, bit for bit: outputs (f32 and quantised), state,
// ring. Splits with short calls (< kConvRing rows) check the ring handover. The group and chunked scans: bit
// for bit when every call starts on their grid (gdn_prefill_grid); otherwise both runs are within the
// tolerance of the exact result, so within twice it of each other (the ring still bit for bit: raw inputs).
TEST_P(GdnPrefillModes, SplitInvariantBits) {
  QC_REQUIRE_DEVICE();
  const GdnScan scan = GetParam();
  const int grid = gdn_prefill_grid(scan);
  std::mt19937 rng(41);
  const int total = 300;
  const std::vector<std::vector<int>> splits = {{1, 299},      {64, 236},   {100, 100, 100}, {75, 75, 75, 75},
                                                {299, 1},      {2, 3, 295}, {7, 16, 277},    {128, 172},
                                                {64, 64, 172}, {256, 44}};
  for (const GdnShape& s : {kSmall, kWideV, k27B}) {
    SCOPED_TRACE(name(s));
    const Inputs in = make_inputs(rng, s, total);
    Seq one(s, in, scan);
    const RunOut whole = one.run(in, 0, total, true);
    ASSERT_TRUE(all_finite(whole.y));
    const std::vector<float> state1 = one.state.download(), ring1 = one.ring.download();
    for (const std::vector<int>& split : splits) {
      ASSERT_EQ(std::accumulate(split.begin(), split.end(), 0), total);
      SCOPED_TRACE("split of " + std::to_string(split.size()) + " starting with " + std::to_string(split[0]));
      Seq seq(s, in, scan);
      RunOut parts;
      int t = 0;
      bool on_grid = true;
      for (int m : split) {
        on_grid = on_grid && t % grid == 0;
        append(parts, seq.run(in, t, m, true));
        t += m;
      }
      const std::vector<float> state = seq.state.download();
      EXPECT_TRUE(same_bits(seq.ring.download(), ring1));
      if (on_grid) {
        EXPECT_TRUE(same_bits(parts.y, whole.y));
        EXPECT_TRUE(same_bytes(parts.hi, whole.hi));
        EXPECT_TRUE(same_bytes(parts.lo, whole.lo));
        EXPECT_TRUE(same_bits(parts.scale, whole.scale));
        EXPECT_TRUE(same_bits(state, state1));
        continue;
      }
      ASSERT_EQ(parts.y.size(), whole.y.size());
      ASSERT_TRUE(all_finite(parts.y));
      const int inner = s.nv * s.dv;
      for (int r = 0; r < total; ++r) {
        const std::vector<double> yw(whole.y.begin() + static_cast<std::ptrdiff_t>(r) * inner,
                                     whole.y.begin() + static_cast<std::ptrdiff_t>(r + 1) * inner);
        const double tol = 2 * tolerance(scan) * rms(yw);
        for (int c = 0; c < inner; ++c)
          ASSERT_NEAR(parts.y[static_cast<size_t>(r) * inner + c], yw[c], tol) << "row " << r << " col " << c;
      }
      const double stol = 2 * tolerance(scan) * rms(std::vector<double>(state1.begin(), state1.end()));
      for (size_t e = 0; e < state.size(); ++e) ASSERT_NEAR(state[e], state1[e], stol) << "state elem " << e;
    }
  }
}

// A prompt of 100 rows through gdn_prefill, then a decode call of 3 tokens through gdn_step, against gdn_step
// token by token over all 103: outputs and state within the tolerance above (different reduction trees),
// the ring bit for bit (it holds raw inputs).
TEST_P(GdnPrefillModes, ContinuesWithGdnStep) {
  QC_REQUIRE_DEVICE();
  const GdnScan scan = GetParam();
  std::mt19937 rng(42);
  for (const GdnShape& s : {kSmall, k27B}) {
    SCOPED_TRACE(name(s));
    const int inner = s.nv * s.dv;
    const Inputs in = make_inputs(rng, s, 103);
    Seq pre(s, in, scan), seq(s, in);
    RunOut a = pre.run(in, 0, 100, true);
    append(a, pre.run(in, 100, 3, false));
    RunOut b;
    for (int t = 0; t < 103; ++t) append(b, seq.run(in, t, 1, false));
    ASSERT_EQ(a.y.size(), b.y.size());
    ASSERT_TRUE(all_finite(a.y));
    for (int t = 0; t < 103; ++t) {
      const std::vector<double> yb(b.y.begin() + static_cast<std::ptrdiff_t>(t) * inner,
                                   b.y.begin() + static_cast<std::ptrdiff_t>(t + 1) * inner);
      const double tol = tolerance(scan) * rms(yb);
      for (int c = 0; c < inner; ++c)
        ASSERT_NEAR(a.y[static_cast<size_t>(t) * inner + c], yb[c], tol) << "token " << t << " col " << c;
    }
    const std::vector<float> sa = pre.state.download(), sb = seq.state.download();
    const double stol = tolerance(scan) * rms(std::vector<double>(sb.begin(), sb.end()));
    for (size_t e = 0; e < sa.size(); ++e) ASSERT_NEAR(sa[e], sb[e], stol) << "state elem " << e;
    EXPECT_TRUE(same_bits(pre.ring.download(), seq.ring.download()));
  }
}

// The gated norm's f16 output (what the f16 prompt path's out projection reads, GdnArgs::out16) has
// rows_to_f16's bits for the f32 output of the same call, saturation included (a norm weight of 1e6 takes
// that column past f16's range), with and without a shift.
TEST_P(GdnPrefillModes, Out16IsTheRoundingOfItsF32Output) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(45);
  for (const GdnShape& s : {kSmall, k27B}) {
    for (const int shift : {0, -3}) {
      SCOPED_TRACE(name(s) + " shift " + std::to_string(shift));
      Inputs in = make_inputs(rng, s, 65);
      in.norm_w[5] = 1e6f;
      Seq dev(s, in, GetParam());
      dev.shift16 = shift;
      const RunOut r = dev.run(in, 0, 65, true);
      ASSERT_EQ(r.y16.size(), r.y.size());
      ASSERT_TRUE(r.y16 == r.y16_want);
      int saturated = 0;
      for (const uint16_t h : r.y16) saturated += (h & 0x7FFF) == 0x7BFF;  // +-65504
      EXPECT_GT(saturated, 0);
    }
  }
}

TEST(GdnPrefill, RejectsBadArguments) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(43);
  const GdnShape s = kSmall;
  const int m = 8, cd = s.conv_dim(), inner = s.nv * s.dv;
  const Inputs in = make_inputs(rng, s, m);
  Seq dev(s, in);
  DevBuf<float> qkv(in.qkv), z(in.z), beta(in.beta), alpha(in.alpha), out(static_cast<size_t>(m) * inner);
  DevBuf<int> pos(std::vector<int>{0});
  GdnArgs a;
  a.m = m;
  a.n_k_heads = s.nk;
  a.n_v_heads = s.nv;
  a.head_k_dim = s.dk;
  a.head_v_dim = s.dv;
  a.conv_kernel = s.kc;
  a.qkv = qkv.get();
  a.ld_qkv = cd;
  a.z = z.get();
  a.ld_z = inner;
  a.beta = beta.get();
  a.ld_beta = s.nv;
  a.alpha = alpha.get();
  a.ld_alpha = s.nv;
  a.conv_w = dev.conv_w.get();
  a.dt_bias = dev.dt_bias.get();
  a.ssm_a = dev.ssm_a.get();
  a.norm_w = dev.norm_w.get();
  a.conv_ring = dev.ring.get();
  a.state = dev.state.get();
  a.d_pos = pos.get();
  a.out = out.get();
  a.ld_out = inner;
  GdnArgs big = a;
  big.m = kGdnPrefillMaxRows;
  DevBuf<float> scratch(gdn_prefill_scratch_floats(big) + 4);
  QC_ASSERT_OK(gdn_prefill(a, scratch.get(), nullptr));  // the baseline is valid

  auto refused = [&](GdnArgs b, float* sc, const char* what) {
    const GpuStatus st = gdn_prefill(b, sc, nullptr);
    EXPECT_FALSE(st.ok()) << what;
    EXPECT_FALSE(st.describe().empty()) << what;
  };
  GdnArgs b = a;
  b.m = 0;
  refused(b, scratch.get(), "m = 0");
  b.m = kGdnPrefillMaxRows + 1;
  refused(b, scratch.get(), "m > max");
  b = a;
  b.state_per_token = dev.state.get();
  refused(b, scratch.get(), "state_per_token");
  refused(a, nullptr, "null scratch");
  refused(a, scratch.get() + 1, "misaligned scratch");
  b = a;
  b.qkv = nullptr;
  refused(b, scratch.get(), "null qkv");
  b = a;
  b.state = nullptr;
  refused(b, scratch.get(), "null state");
  b = a;
  b.conv_ring = nullptr;
  refused(b, scratch.get(), "null ring");
  b = a;
  b.d_pos = nullptr;
  refused(b, scratch.get(), "null d_pos");
  b = a;
  b.out = nullptr;
  refused(b, scratch.get(), "no output");
  b = a;
  b.conv_kernel = kConvRing + 1;
  refused(b, scratch.get(), "conv_kernel too long");
  b = a;
  b.head_k_dim = 96;
  refused(b, scratch.get(), "head_k_dim");
  b = a;
  b.ld_qkv = cd - 1;
  refused(b, scratch.get(), "ld_qkv");
  DevBuf<uint16_t> o16(static_cast<size_t>(m) * inner);
  b = a;
  b.out16 = o16.get();
  b.ld_out16 = inner - 1;
  refused(b, scratch.get(), "ld_out16");
  b.ld_out16 = inner;
  b.shift16 = 25;
  refused(b, scratch.get(), "shift16");
  b.shift16 = 0;
  b.m = 1;
  EXPECT_FALSE(gdn_step(b, nullptr).ok()) << "out16 is the prompt path's only";
  b.out16 = nullptr;
  EXPECT_TRUE(gdn_step(b, nullptr).ok()) << "the same step without out16";
  // The scratch size grows with M and the shape alone.
  EXPECT_EQ(gdn_prefill_scratch_floats(a),
            static_cast<size_t>(m) * (2 * s.nk * s.dk + s.nv * s.dv) + 2 * static_cast<size_t>(s.nv) * 16);
  // The chunked scan adds, per value head, two 64-row chunk slots (8 rows can straddle a grid point) of
  // w, qw (dk each), ou (dv) and G as hi and lo (1 each).
  GdnArgs ch = a;
  ch.scan = GdnScan::kChunked;
  const size_t chunk_floats = static_cast<size_t>(2 * 64) * s.nv * (2 * s.dk + s.dv + 2);
  EXPECT_EQ(gdn_prefill_scratch_floats(ch), gdn_prefill_scratch_floats(a) + chunk_floats);
  // The grouped scan adds a row of 12 coefficients per (value head, row rounded up to 16).
  GdnArgs gr = a;
  gr.scan = GdnScan::kGroup;
  EXPECT_EQ(gdn_prefill_scratch_floats(gr),
            gdn_prefill_scratch_floats(a) + static_cast<size_t>(s.nv) * 16 * 12);
  // The scaled scan needs nothing beyond the token scan's.
  GdnArgs sc = a;
  sc.scan = GdnScan::kScaled;
  EXPECT_EQ(gdn_prefill_scratch_floats(sc), gdn_prefill_scratch_floats(a));
}

INSTANTIATE_TEST_SUITE_P(Scan, GdnPrefillModes,
                         ::testing::Values(GdnScan::kToken, GdnScan::kGroup, GdnScan::kChunked,
                                           GdnScan::kScaled),
                         [](const ::testing::TestParamInfo<GdnScan>& p) {
                           return std::string(scan_name(p.param));
                         });

}  // namespace
}  // namespace qc::gpu::test
