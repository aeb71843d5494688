// Gated DeltaNet decode step against a double CPU loop over a token sequence, fed in calls of M = 1..4
// tokens; the conv ring across calls; per-token states; M-token calls equal M single-token calls bit for bit.
#include "cpu_ref.h"
#include "gdn.h"
#include "gpu_test_util.h"

namespace qc::gpu::test {
namespace {

struct GdnCase {
  GdnShape shape;
  int tokens;
};

struct GdnInputs {
  std::vector<float> qkv, z, beta, alpha;  // [tokens][...]
  std::vector<float> conv_w, dt_bias, ssm_a, norm_w, state0;
};

GdnInputs make_inputs(std::mt19937& rng, const GdnShape& s, int tokens) {
  GdnInputs in;
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

// The device side of one sequence: weights, ring, state.
struct GdnDevice {
  GdnShape s;
  DevBuf<float> conv_w, dt_bias, ssm_a, norm_w, ring, state;
  GdnDevice(const GdnShape& shape, const GdnInputs& in)
      : s(shape),
        conv_w(in.conv_w),
        dt_bias(in.dt_bias),
        ssm_a(in.ssm_a),
        norm_w(in.norm_w),
        ring(std::vector<float>(static_cast<size_t>(kConvRing) * shape.conv_dim(), 0.0f)),  // zeroed at start
        state(in.state0) {}

  // Runs tokens [t0, t0+m) at positions t0.. and returns y [m][nv*dv] (and the per-token states).
  std::vector<float> run(const GdnInputs& in, int t0, int m, std::vector<float>* per_token, bool quant_hl,
                         std::vector<int8_t>* qhi = nullptr, std::vector<float>* qscale = nullptr) {
    const int cd = s.conv_dim(), inner = s.nv * s.dv;
    DevBuf<float> qkv(std::vector<float>(in.qkv.begin() + static_cast<size_t>(t0) * cd,
                                         in.qkv.begin() + static_cast<size_t>(t0 + m) * cd));
    DevBuf<float> z(std::vector<float>(in.z.begin() + static_cast<size_t>(t0) * inner,
                                       in.z.begin() + static_cast<size_t>(t0 + m) * inner));
    DevBuf<float> beta(std::vector<float>(in.beta.begin() + t0 * s.nv, in.beta.begin() + (t0 + m) * s.nv));
    DevBuf<float> alpha(std::vector<float>(in.alpha.begin() + t0 * s.nv, in.alpha.begin() + (t0 + m) * s.nv));
    DevBuf<int> pos(std::vector<int>{t0});
    DevBuf<float> out(static_cast<size_t>(m) * inner), pts(static_cast<size_t>(m) * s.nv * s.dk * s.dv);
    DevBuf<int8_t> qh(static_cast<size_t>(m) * inner), ql(static_cast<size_t>(m) * inner);
    DevBuf<float> qs(static_cast<size_t>(m) * inner / 32);
    out.poison();
    pts.poison();
    qh.poison(0x80);
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
    a.conv_w = conv_w.get();
    a.dt_bias = dt_bias.get();
    a.ssm_a = ssm_a.get();
    a.norm_w = norm_w.get();
    a.conv_ring = ring.get();
    a.state = state.get();
    a.state_per_token = per_token ? pts.get() : nullptr;
    a.d_pos = pos.get();
    a.out = out.get();
    a.ld_out = inner;
    if (qhi) a.out_q = QActOut{qh.get(), quant_hl ? ql.get() : nullptr, qs.get(), inner, inner / 32};
    const GpuStatus st = gdn_step(a, nullptr);
    if (!st.ok()) {
      ADD_FAILURE() << st.describe();
      return {};
    }
    if (per_token) *per_token = pts.download();
    if (qhi) {
      *qhi = qh.download();
      *qscale = qs.download();
    }
    return out.download();
  }
};

double rms(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

// Tolerance: the f32 step runs dk-long FMA chains (gamma_128 ~ 8e-6 of the sum of |terms|, terms of the
// size of the state x k), L2 and RMS norms (~1e-6 relative) and exp/silu (a few ulp), and the state
// carries the previous tokens' rounding forward, decayed. Outputs are O(1) after the gated norm; 2e-4 of
// the output RMS (~25x the worst-case chain bound after 16 tokens) still catches any wrong index, head
// mapping or gate, which move outputs by O(1).
TEST(Gdn, MatchesCpuDoubleOverSequence) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(20);
  // Nv != Nk so the j % Nk mapping matters; dk = 128 (27B) and dk = 64; dv 128 and 64.
  const GdnCase cases[] = {{{2, 6, 128, 128, 4}, 16}, {{4, 4, 64, 64, 4}, 12}, {{1, 3, 128, 32, 4}, 9}};
  for (const GdnCase& c : cases) {
    const GdnInputs in = make_inputs(rng, c.shape, c.tokens);
    GdnRef ref(c.shape, in.conv_w, in.dt_bias, in.ssm_a, in.norm_w, in.state0, 1e-6, 1e-6);
    GdnDevice dev(c.shape, in);
    const int inner = c.shape.nv * c.shape.dv;
    const size_t state_n = static_cast<size_t>(c.shape.nv) * c.shape.dk * c.shape.dv;
    int t = 0, call = 0;
    while (t < c.tokens) {
      const int m = std::min(1 + call % 4, c.tokens - t);  // calls of 1, 2, 3, 4, 1, ... tokens
      std::vector<float> per_token;
      std::vector<int8_t> qhi;
      std::vector<float> qscale;
      const std::vector<float> y = dev.run(in, t, m, &per_token, true, &qhi, &qscale);
      ASSERT_EQ(y.size(), static_cast<size_t>(m) * inner);
      ASSERT_TRUE(all_finite(y));
      ASSERT_TRUE(all_finite(per_token));
      for (int i = 0; i < m; ++i) {
        const int tok = t + i;
        const std::vector<double> yr =
            ref.step(in.qkv.data() + static_cast<size_t>(tok) * c.shape.conv_dim(),
                     in.z.data() + static_cast<size_t>(tok) * inner, in.beta.data() + tok * c.shape.nv,
                     in.alpha.data() + tok * c.shape.nv);
        const double tol = 2e-4 * rms(yr);
        for (int j = 0; j < inner; ++j)
          ASSERT_NEAR(y[static_cast<size_t>(i) * inner + j], yr[j], tol)
              << "shape nk=" << c.shape.nk << " nv=" << c.shape.nv << " token " << tok << " col " << j;
        // The state after this token (optional per-token output).
        const std::vector<double>& sr = ref.state();
        const double stol = 2e-4 * rms(sr);
        for (size_t e = 0; e < state_n; ++e)
          ASSERT_NEAR(per_token[i * state_n + e], sr[e], stol)
              << "state after token " << tok << " elem " << e;
        // Quantised output consistent with the f32 output (bit-exact mirror).
        std::vector<int8_t> eh(inner), el(inner);
        std::vector<float> es(inner / 32);
        quantize_ref(y.data() + static_cast<size_t>(i) * inner, inner, eh.data(), el.data(), es.data());
        for (int j = 0; j < inner; ++j) ASSERT_EQ(qhi[static_cast<size_t>(i) * inner + j], eh[j]) << j;
        for (int b = 0; b < inner / 32; ++b)
          ASSERT_EQ(qscale[static_cast<size_t>(i) * inner / 32 + b], es[b]) << b;
      }
      // The in-place state equals the last per-token state bit for bit.
      const std::vector<float> st = dev.state.download();
      ASSERT_TRUE(same_bits(st, std::vector<float>(per_token.end() - state_n, per_token.end())));
      t += m;
      ++call;
    }
  }
}

// One call with M tokens == M calls of one token, bit for bit (outputs, state): what lets MTP verification
// replace sequential decoding without moving a token.
TEST(Gdn, BatchEqualsSequentialBits) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(21);
  const GdnShape s{2, 6, 128, 128, 4};
  const int tokens = 11;  // 3 warm-up tokens, then a batch of 4, then 4 more
  const GdnInputs in = make_inputs(rng, s, tokens);
  GdnDevice a(s, in), b(s, in);
  const int inner = s.nv * s.dv;
  std::vector<float> ya, yb;
  for (int t = 0; t < 3; ++t) {
    ya = a.run(in, t, 1, nullptr, true);
    yb = b.run(in, t, 1, nullptr, true);
  }
  for (int t0 : {3, 7}) {
    ya = a.run(in, t0, 4, nullptr, true);
    for (int i = 0; i < 4; ++i) {
      yb = b.run(in, t0 + i, 1, nullptr, true);
      ASSERT_TRUE(same_bits(std::vector<float>(ya.begin() + i * inner, ya.begin() + (i + 1) * inner), yb))
          << "token " << t0 + i;
    }
    ASSERT_TRUE(same_bits(a.state.download(), b.state.download()));
    ASSERT_TRUE(same_bits(a.ring.download(), b.ring.download()));
  }
}

// Rolling back: after a rejected draft, continuing from the earlier position with the per-token state
// restored reproduces the sequential result (the ring needs no snapshot).
TEST(Gdn, RollbackByPositionAndPerTokenState) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(22);
  const GdnShape s{2, 4, 128, 128, 4};
  GdnInputs in = make_inputs(rng, s, 8);
  GdnInputs alt = in;  // a different ("rejected") token at position 5
  const int cd = s.conv_dim();
  for (int c = 0; c < cd; ++c) alt.qkv[static_cast<size_t>(5) * cd + c] += 1.0f;
  GdnDevice seq(s, in), spec(s, in);
  for (int t = 0; t < 4; ++t) {
    seq.run(in, t, 1, nullptr, true);
    spec.run(in, t, 1, nullptr, true);
  }
  // spec verifies [4 (accepted), 5' (rejected)] in one call, keeping the per-token states.
  std::vector<float> per_token;
  spec.run(alt, 4, 2, &per_token, true);
  const size_t state_n = static_cast<size_t>(s.nv) * s.dk * s.dv;
  spec.state.upload(
      std::vector<float>(per_token.begin(), per_token.begin() + state_n));  // state after token 4
  seq.run(in, 4, 1, nullptr, true);
  // Both continue with the true tokens 5, 6, 7.
  for (int t = 5; t < 8; ++t) {
    const std::vector<float> y1 = seq.run(in, t, 1, nullptr, true);
    const std::vector<float> y2 = spec.run(in, t, 1, nullptr, true);
    ASSERT_TRUE(same_bits(y1, y2)) << "token " << t;
  }
}

// The CUDA backend's history layout: per-token states at a stride wider than one state (the slots of
// every GDN layer interleaved) and only for the first n_state_per_token tokens. The written slots equal
// the dense per-token states bit for bit; the last token's slot, the gaps and the slots past n stay
// untouched (poisoned); the in-place state is unchanged by the option.
TEST(Gdn, PerTokenStatesAtAStrideForTheFirstN) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(23);
  const GdnShape s{2, 6, 128, 64, 4};
  const int tokens = 7;  // 3 single tokens, then one call of 4
  const GdnInputs in = make_inputs(rng, s, tokens);
  GdnDevice dense(s, in), strided(s, in);
  for (int t = 0; t < 3; ++t) {
    dense.run(in, t, 1, nullptr, false);
    strided.run(in, t, 1, nullptr, false);
  }
  std::vector<float> want;  // [4][state_n]
  const std::vector<float> y_dense = dense.run(in, 3, 4, &want, false);

  const int cd = s.conv_dim(), inner = s.nv * s.dv, m = 4;
  const size_t state_n = static_cast<size_t>(s.nv) * s.dk * s.dv;
  const size_t ld = 3 * state_n + 64;  // as if 3 layers' states lay between two tokens, plus a gap
  DevBuf<float> qkv(std::vector<float>(in.qkv.begin() + 3 * cd, in.qkv.begin() + 7 * cd));
  DevBuf<float> z(std::vector<float>(in.z.begin() + 3 * inner, in.z.begin() + 7 * inner));
  DevBuf<float> beta(std::vector<float>(in.beta.begin() + 3 * s.nv, in.beta.begin() + 7 * s.nv));
  DevBuf<float> alpha(std::vector<float>(in.alpha.begin() + 3 * s.nv, in.alpha.begin() + 7 * s.nv));
  DevBuf<int> pos(std::vector<int>{3});
  DevBuf<float> out(static_cast<size_t>(m) * inner), hist(static_cast<size_t>(m) * ld);
  out.poison();
  hist.poison();
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
  a.conv_w = strided.conv_w.get();
  a.dt_bias = strided.dt_bias.get();
  a.ssm_a = strided.ssm_a.get();
  a.norm_w = strided.norm_w.get();
  a.conv_ring = strided.ring.get();
  a.state = strided.state.get();
  a.state_per_token = hist.get();
  a.ld_state_per_token = ld;
  a.n_state_per_token = m - 1;
  a.d_pos = pos.get();
  a.out = out.get();
  a.ld_out = inner;
  QC_ASSERT_OK(gdn_step(a, nullptr));
  EXPECT_TRUE(same_bits(out.download(), y_dense));
  EXPECT_TRUE(same_bits(strided.state.download(), dense.state.download()));
  const std::vector<float> got = hist.download();
  for (int t = 0; t < m; ++t) {
    const auto slot = got.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(t) * ld);
    if (t < m - 1) {
      const auto w = want.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(t) * state_n);
      EXPECT_TRUE(same_bits(std::vector<float>(slot, slot + static_cast<std::ptrdiff_t>(state_n)),
                            std::vector<float>(w, w + static_cast<std::ptrdiff_t>(state_n))))
          << "slot " << t;
    }
    // Untouched: everything past the state in slots 0..m-2, all of slot m-1.
    const size_t from = t < m - 1 ? state_n : 0;
    size_t written = 0;
    for (size_t e = from; e < ld; ++e) written += std::isnan(slot[static_cast<std::ptrdiff_t>(e)]) ? 0 : 1;
    EXPECT_EQ(written, 0u) << "slot " << t << ": values written outside the state";
  }
  // A bad stride is refused.
  a.ld_state_per_token = state_n - 1;
  EXPECT_FALSE(gdn_step(a, nullptr).ok());
}

}  // namespace
}  // namespace qc::gpu::test
