// Gated attention against a double CPU loop, the decode step (attention_decode) and the prompt path's
// (attention_prefill, up to kMaxRows rows): q/k norm + partial NeoX RoPE, the f16 KV store, split softmax
// with the fixed-order merge, the output gate, the quantised output; GQA groups 1..8, several positions
// and split lengths; determinism; the prompt path's row bits independent of the chunking.
#include <algorithm>
#include <optional>

#include "attention.h"
#include "cpu_ref.h"
#include "gemm_f16.h"
#include "gpu_test_util.h"

namespace qc::gpu::test {
namespace {

struct AttnCase {
  int n_head, n_kv, dim, rope_dims, pos, m, split_len;
  int kv_ahead = 0;  // AttentionArgs::kv_ahead (decode)
};

struct AttnRun {
  std::vector<float> out;
  std::vector<uint16_t> k_cache, v_cache;
  std::vector<int8_t> q_hi;
  std::vector<float> q_scale;
  // With a shift16 (prefill): AttentionArgs::out16 [M][width], and rows_to_f16 of out (what it must be).
  std::vector<uint16_t> out16, out16_want;
};

struct AttnInputs {
  std::vector<float> q_gate, k, v, q_norm, k_norm;
  std::vector<uint16_t> k_cache, v_cache;  // pre-filled history (random f16)
};

constexpr int kMaxCtx = 1536;
constexpr float kTheta = 1e7f;

AttnInputs make_inputs(std::mt19937& rng, const AttnCase& c) {
  AttnInputs in;
  in.q_gate = random_normal(rng, static_cast<size_t>(c.m) * c.n_head * 2 * c.dim, 1.0f);
  in.k = random_normal(rng, static_cast<size_t>(c.m) * c.n_kv * c.dim, 1.0f);
  in.v = random_normal(rng, static_cast<size_t>(c.m) * c.n_kv * c.dim, 1.0f);
  in.q_norm = random_floats(rng, c.dim, 0.5f, 1.5f);
  in.k_norm = random_floats(rng, c.dim, 0.5f, 1.5f);
  // History: keys of the size normalised keys have (|k| ~ sqrt(dim)), so scores are O(1).
  const std::vector<float> kh = random_normal(rng, static_cast<size_t>(c.n_kv) * kMaxCtx * c.dim, 1.0f);
  const std::vector<float> vh = random_normal(rng, static_cast<size_t>(c.n_kv) * kMaxCtx * c.dim, 1.0f);
  in.k_cache.resize(kh.size());
  in.v_cache.resize(vh.size());
  for (size_t i = 0; i < kh.size(); ++i) {
    in.k_cache[i] = f2h_bits(kh[i]);
    in.v_cache[i] = f2h_bits(vh[i]);
  }
  return in;
}

int sm_count() {
  int dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 0;
  return n;
}

// `status`: where a failed call's status goes (the run is then empty); null: a failure is a test failure.
AttnRun run_attention(const AttnCase& c, const AttnInputs& in, bool pdl = false, bool prefill = false,
                      int flash_rows = 0, GpuStatus* status = nullptr,
                      std::optional<int> shift16 = std::nullopt) {
  DevBuf<float> q(in.q_gate), k(in.k), v(in.v), qn(in.q_norm), kn(in.k_norm);
  DevBuf<uint16_t> kc(in.k_cache), vc(in.v_cache);
  DevBuf<int> pos(std::vector<int>{c.pos});
  const int ctx_hint = std::min(kMaxCtx, c.pos + c.m + 100);
  const int split = c.split_len;  // 0 = per-row lengths
  DevBuf<float> qs(attention_q_scratch_floats(c.n_head, c.dim, c.m));
  DevBuf<float> parts(attention_partial_floats(
      c.n_head, c.dim, c.m, prefill ? 1 : attention_grid_splits(ctx_hint, split, c.n_kv, sm_count())));
  const int width = c.n_head * c.dim;
  DevBuf<float> out(static_cast<size_t>(c.m) * width);
  DevBuf<int8_t> qh(static_cast<size_t>(c.m) * width);
  DevBuf<float> qsc(static_cast<size_t>(c.m) * width / 32);
  out.poison();
  qh.poison(0x80);
  parts.poison();
  AttentionArgs a;
  a.q_gate = q.get();
  a.ld_q = 2 * width;
  a.k = k.get();
  a.ld_k = c.n_kv * c.dim;
  a.v = v.get();
  a.ld_v = c.n_kv * c.dim;
  a.q_norm = qn.get();
  a.k_norm = kn.get();
  a.eps = 1e-6f;
  a.rope_theta = kTheta;
  a.rope_dims = c.rope_dims;
  a.n_head = c.n_head;
  a.n_kv = c.n_kv;
  a.head_dim = c.dim;
  a.k_cache = kc.get();
  a.v_cache = vc.get();
  a.max_ctx = kMaxCtx;
  a.d_pos = pos.get();
  a.m = c.m;
  a.ctx_hint = ctx_hint;
  a.split_len = split;
  a.q_scratch = qs.get();
  a.partials = parts.get();
  a.out = out.get();
  a.ld_out = width;
  a.out_q = QActOut{qh.get(), nullptr, qsc.get(), width, width / 32};
  a.flash_rows = flash_rows;
  a.kv_ahead = c.kv_ahead;
  a.pdl = pdl;
  const int ld16 = width + 8;  // padded rows (rows_to_f16, the reference, takes multiples of 8)
  DevBuf<uint16_t> o16(shift16 ? static_cast<size_t>(c.m) * ld16 : 1);
  o16.poison();
  if (shift16) {
    a.out16 = o16.get();
    a.ld_out16 = ld16;
    a.shift16 = *shift16;
  }
  AttnRun r;
  const GpuStatus st = prefill ? attention_prefill(a, nullptr) : attention_decode(a, nullptr);
  if (status) *status = st;
  if (!st.ok()) {
    if (!status) ADD_FAILURE() << st.describe();
    return r;
  }
  if (shift16) {
    DevBuf<uint16_t> want(static_cast<size_t>(c.m) * ld16);
    want.poison();
    const GpuStatus conv = rows_to_f16(out.get(), width, c.m, width, *shift16, want.get(), ld16, nullptr);
    EXPECT_TRUE(conv.ok()) << conv.describe();
    const std::vector<uint16_t> got = o16.download(), w = want.download();
    for (int row = 0; row < c.m; ++row) {
      r.out16.insert(r.out16.end(), got.begin() + static_cast<size_t>(row) * ld16,
                     got.begin() + static_cast<size_t>(row) * ld16 + width);
      r.out16_want.insert(r.out16_want.end(), w.begin() + static_cast<size_t>(row) * ld16,
                          w.begin() + static_cast<size_t>(row) * ld16 + width);
    }
  }
  r.out = out.download();
  r.k_cache = kc.download();
  r.v_cache = vc.download();
  r.q_hi = qh.download();
  r.q_scale = qsc.download();
  return r;
}

// Tolerances. New cache entries: the kernel's f32 k (norm + RoPE, relative error ~1e-6) rounded to f16;
// the double reference may round to the neighbouring f16 at a tie-break boundary, so allow one f16 ulp
// (2^-10 relative) plus 1e-6 relative. Output: the scores are 256-long f32 dot products of O(1) terms
// (error ~ 256 * 2^-24 * sum|q k| / 16 < 1e-4 absolute in the score), the softmax and weighted sum add
// f32 roundings over <= 1600 positions; outputs are O(0.1-1). 2e-4 absolute + 1e-4 relative leaves
// margin and still fails on any wrong position, head mapping, rotation pair or gate (O(0.1) changes).
TEST(Attention, MatchesCpuDouble) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(30);
  const AttnCase cases[] = {
      {8, 2, 256, 64, 0, 1, 64},       // first token, G = 4
      {12, 2, 256, 64, 300, 3, 64},    // G = 6 (27B group), many splits
      {4, 4, 128, 32, 1000, 4, 0},     // G = 1, auto split length, head_dim 128
      {6, 2, 128, 128, 77, 2, 32},     // G = 3, rope over the whole head, split 32
      {16, 2, 256, 64, 1400, 1, 512},  // G = 8, long history, few splits
      {4, 2, 256, 64, 5, 4, 64},       // batch longer than the history
  };
  std::vector<std::pair<AttnCase, bool>> runs;  // (case, prompt path)
  for (const bool prefill : {false, true})
    for (const AttnCase& c : cases) runs.emplace_back(c, prefill);
  // The prompt path alone: several 64-row blocks whose rows straddle 64-position tiles, from position 0,
  // after a long history with head_dim 128.
  runs.emplace_back(AttnCase{12, 2, 256, 64, 100, 150, 0}, true);
  runs.emplace_back(AttnCase{8, 2, 256, 64, 0, 97, 0}, true);
  runs.emplace_back(AttnCase{4, 4, 128, 32, 1200, 130, 0}, true);
  for (const auto& [c, prefill] : runs) {
    const AttnInputs in = make_inputs(rng, c);
    const AttnRun r = run_attention(c, in, false, prefill);
    ASSERT_FALSE(r.out.empty());
    ASSERT_TRUE(all_finite(r.out)) << "pos=" << c.pos;
    const int G = c.n_head / c.n_kv, width = c.n_head * c.dim;
    // 1. new cache entries
    for (int m = 0; m < c.m; ++m)
      for (int h = 0; h < c.n_kv; ++h) {
        const std::vector<double> kr =
            norm_rope_ref(in.k.data() + (static_cast<size_t>(m) * c.n_kv + h) * c.dim, in.k_norm.data(),
                          c.dim, 1e-6, c.rope_dims, kTheta, c.pos + m);
        for (int d = 0; d < c.dim; ++d) {
          const size_t at = (static_cast<size_t>(h) * kMaxCtx + c.pos + m) * c.dim + d;
          ASSERT_NEAR(h_bits2f(r.k_cache[at]), kr[d], std::fabs(kr[d]) * (std::ldexp(1.0, -10) + 1e-6) + 1e-7)
              << "k cache pos " << c.pos + m << " head " << h << " dim " << d;
          ASSERT_EQ(r.v_cache[at], f2h_bits(in.v[(static_cast<size_t>(m) * c.n_kv + h) * c.dim + d]));
        }
      }
    // 2. outputs, with the cache as the kernel left it (so f16 rounding of k is not counted twice)
    for (int m = 0; m < c.m; ++m) {
      const int last = c.pos + m;
      for (int h = 0; h < c.n_head; ++h) {
        const int g = h / G;
        const float* qrow =
            in.q_gate.data() + static_cast<size_t>(m) * 2 * width + static_cast<size_t>(h) * 2 * c.dim;
        std::vector<double> q = norm_rope_ref(qrow, in.q_norm.data(), c.dim, 1e-6, c.rope_dims, kTheta, last);
        // The prompt path rounds the rotated query to f16 once (attention_flash.h): so does the reference.
        if (prefill)
          for (double& x : q) x = h_bits2f(f2h_bits(static_cast<float>(x)));
        std::vector<double> keys(static_cast<size_t>(last + 1) * c.dim), values(keys.size());
        for (int t = 0; t <= last; ++t)
          for (int d = 0; d < c.dim; ++d) {
            const size_t at = (static_cast<size_t>(g) * kMaxCtx + t) * c.dim + d;
            keys[static_cast<size_t>(t) * c.dim + d] = h_bits2f(r.k_cache[at]);
            values[static_cast<size_t>(t) * c.dim + d] = h_bits2f(r.v_cache[at]);
          }
        const std::vector<double> o = attention_head_ref(q, keys, values, last, c.dim, qrow + c.dim);
        for (int d = 0; d < c.dim; ++d) {
          // The prompt path also rounds each probability to f16 before P.V (relative 2^-11 each, the sum
          // l stays f32): |error| <= 2^-11 * sum_t w_t |v_t| <= 2^-11 * max_t |v_t| in this dimension.
          double vmax = 0.0;
          if (prefill)
            for (int t = 0; t <= last; ++t) vmax = std::max(vmax, std::fabs(values[static_cast<size_t>(t) * c.dim + d]));
          ASSERT_NEAR(r.out[static_cast<size_t>(m) * width + h * c.dim + d], o[d],
                      2e-4 + 1e-4 * std::fabs(o[d]) + std::ldexp(vmax, -11))
              << (prefill ? "prefill" : "decode") << " pos=" << c.pos << " token " << m << " head " << h
              << " dim " << d;
        }
      }
      // 3. quantised output (format h) consistent with the f32 output
      std::vector<int8_t> eh(width);
      std::vector<float> es(width / 32);
      quantize_ref(r.out.data() + static_cast<size_t>(m) * width, width, eh.data(), nullptr, es.data());
      for (int i = 0; i < width; ++i) ASSERT_EQ(r.q_hi[static_cast<size_t>(m) * width + i], eh[i]) << i;
      for (int b = 0; b < width / 32; ++b)
        ASSERT_EQ(r.q_scale[static_cast<size_t>(m) * width / 32 + b], es[b]);
    }
  }
}

// Same inputs, same bits (fixed-order merge); a different split length stays within the tolerance.
TEST(Attention, DeterministicAndSplitInvariant) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(31);
  AttnCase c{12, 2, 256, 64, 900, 2, 64};
  const AttnInputs in = make_inputs(rng, c);
  const AttnRun a = run_attention(c, in);
  const AttnRun b = run_attention(c, in, /*pdl=*/true);
  ASSERT_TRUE(same_bits(a.out, b.out));
  c.split_len = 1024;
  const AttnRun d = run_attention(c, in);
  ASSERT_EQ(a.out.size(), d.out.size());
  for (size_t i = 0; i < a.out.size(); ++i)
    ASSERT_NEAR(a.out[i], d.out[i], 2e-4 + 1e-4 * std::fabs(a.out[i])) << i;
}

// The split kernel's schedules (AttentionArgs::kv_ahead: positions loaded a batch, 1 or 4) compute the same
// positions in the same order with the same operations, so they give the same bits: GQA groups 1, 6 and 8,
// head_dim 128 and 256, positions that end inside a batch and on one, a split longer than a warp's batch
// and shorter (64 positions: 16 a warp, one batch of 4), M = 1..4 and the default (0).
TEST(Attention, KvAheadSchedulesGiveTheSameBits) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(47);
  const AttnCase cases[] = {{24, 4, 256, 64, 0, 1, 0},     {24, 4, 256, 64, 700, 1, 0},
                            {24, 4, 256, 64, 1397, 4, 0},  {24, 4, 256, 64, 517, 3, 64},
                            {16, 2, 128, 32, 63, 2, 0},    {8, 8, 128, 64, 1000, 1, 0},
                            {16, 2, 256, 64, 129, 4, 64}};
  for (AttnCase c : cases) {
    const AttnInputs in = make_inputs(rng, c);
    const std::string what = "H=" + std::to_string(c.n_head) + " kv=" + std::to_string(c.n_kv) +
                             " D=" + std::to_string(c.dim) + " pos=" + std::to_string(c.pos) +
                             " M=" + std::to_string(c.m) + " split=" + std::to_string(c.split_len);
    c.kv_ahead = 1;
    const AttnRun one = run_attention(c, in);
    for (int ahead : {0, 4}) {
      c.kv_ahead = ahead;
      const AttnRun r = run_attention(c, in, /*pdl=*/ahead == 4);
      ASSERT_FALSE(r.out.empty()) << what;
      ASSERT_TRUE(same_bits(one.out, r.out)) << what << " kv_ahead=" << ahead;
      ASSERT_EQ(one.q_hi, r.q_hi) << what << " kv_ahead=" << ahead;
      ASSERT_TRUE(same_bits(one.q_scale, r.q_scale)) << what << " kv_ahead=" << ahead;
    }
  }
}

// A kv_ahead other than 0, 1 or 4 comes back as an error naming it, and launches nothing.
TEST(Attention, RejectsAnUnknownKvAhead) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(48);
  AttnCase c{24, 4, 256, 64, 100, 1, 0, 3};
  const AttnInputs in = make_inputs(rng, c);
  GpuStatus st = GpuStatus::success();
  run_attention(c, in, false, false, 0, &st);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("kv_ahead"), std::string::npos) << st.describe();
}

}  // namespace
}  // namespace qc::gpu::test

namespace qc::gpu::test {
namespace {

// The prompt path's attention: 40 rows in one call against the decode kernel four rows at a time, and the
// same rows in two calls (17 + 23, the second reading the cache the first wrote; the second call's 64-row
// block starts at position 317, so its rows meet the tile that starts at 320 in other blocks than the one
// call's) give the one call's bits.
TEST(Attention, PrefillRowsDependOnTheirPositionOnly) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(32);
  const AttnCase all{12, 2, 256, 64, 300, 40, 0};
  const AttnInputs in = make_inputs(rng, all);
  const AttnRun one = run_attention(all, in, false, /*prefill=*/true);
  ASSERT_FALSE(one.out.empty());
  const int width = all.n_head * all.dim;
  auto rows = [&](const std::vector<float>& v, int r0, int n, int w) {
    return std::vector<float>(v.begin() + static_cast<size_t>(r0) * w, v.begin() + static_cast<size_t>(r0 + n) * w);
  };
  AttnInputs first = in, second = in;
  const int split = 17;
  first.q_gate = rows(in.q_gate, 0, split, 2 * width);
  first.k = rows(in.k, 0, split, all.n_kv * all.dim);
  first.v = rows(in.v, 0, split, all.n_kv * all.dim);
  const AttnRun r1 = run_attention(AttnCase{12, 2, 256, 64, 300, split, 0}, first, false, true);
  second.q_gate = rows(in.q_gate, split, all.m - split, 2 * width);
  second.k = rows(in.k, split, all.m - split, all.n_kv * all.dim);
  second.v = rows(in.v, split, all.m - split, all.n_kv * all.dim);
  second.k_cache = r1.k_cache;
  second.v_cache = r1.v_cache;
  const AttnRun r2 = run_attention(AttnCase{12, 2, 256, 64, 300 + split, all.m - split, 0}, second, false, true);
  EXPECT_TRUE(same_bits(r1.out, rows(one.out, 0, split, width)));
  EXPECT_TRUE(same_bits(r2.out, rows(one.out, split, all.m - split, width)));
  EXPECT_EQ(r2.k_cache, one.k_cache);
  // Against the decode kernel, four rows at a time on the same cache.
  AttnInputs dec = in;
  dec.k_cache = one.k_cache;
  dec.v_cache = one.v_cache;
  for (int r0 = 0; r0 < all.m; r0 += 4) {
    AttnInputs part = dec;
    part.q_gate = rows(in.q_gate, r0, 4, 2 * width);
    part.k = rows(in.k, r0, 4, all.n_kv * all.dim);
    part.v = rows(in.v, r0, 4, all.n_kv * all.dim);
    const AttnRun d = run_attention(AttnCase{12, 2, 256, 64, 300 + r0, 4, 0}, part);
    const std::vector<float> want = rows(one.out, r0, 4, width);
    ASSERT_EQ(d.out.size(), want.size());
    // The decode kernel keeps q and the probabilities in f32, the prompt path rounds both to f16. Query
    // rounding moves a score by scale * sum_i dq_i k_i, a sum of 256 independent errors of at most
    // 2^-11 |q_i k_i|: sigma ~ (1/16) * 2^-11 / sqrt(3) * |q o k|_2 ~ 3.5e-4 for these O(1) inputs; the
    // output moves by at most the spread of the score errors (6 sigma: 2e-3) times |v| <= 4.5 (normal
    // values of 1500 positions), plus the probability rounding 2^-11 * 4.5, plus f32 terms of 4e-4.
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(d.out[i], want[i], 1.2e-2 + 2e-4 * std::fabs(want[i])) << "row " << r0 + i / width;
  }
}

// Many blocks: 260 rows from position 45 in one call, and as 70 + 190 rows (the second call's blocks start
// at other rows and meet the tiles at other places), give the same bits, for head_dim 256 and 128.
TEST(Attention, PrefillChunksOfManyBlocksGiveTheSameBits) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(33);
  for (const AttnCase all : {AttnCase{12, 2, 256, 64, 45, 260, 0}, AttnCase{8, 4, 128, 32, 45, 260, 0}}) {
    const AttnInputs in = make_inputs(rng, all);
    const AttnRun one = run_attention(all, in, false, /*prefill=*/true);
    ASSERT_FALSE(one.out.empty());
    ASSERT_TRUE(all_finite(one.out));
    const int width = all.n_head * all.dim, kw = all.n_kv * all.dim;
    auto rows = [&](const std::vector<float>& v, int r0, int n, int w) {
      return std::vector<float>(v.begin() + static_cast<size_t>(r0) * w, v.begin() + static_cast<size_t>(r0 + n) * w);
    };
    const int split = 70;
    AttnInputs first = in, second = in;
    first.q_gate = rows(in.q_gate, 0, split, 2 * width);
    first.k = rows(in.k, 0, split, kw);
    first.v = rows(in.v, 0, split, kw);
    AttnCase c1 = all;
    c1.m = split;
    const AttnRun r1 = run_attention(c1, first, false, true);
    second.q_gate = rows(in.q_gate, split, all.m - split, 2 * width);
    second.k = rows(in.k, split, all.m - split, kw);
    second.v = rows(in.v, split, all.m - split, kw);
    second.k_cache = r1.k_cache;
    second.v_cache = r1.v_cache;
    AttnCase c2 = all;
    c2.pos = all.pos + split;
    c2.m = all.m - split;
    const AttnRun r2 = run_attention(c2, second, false, true);
    EXPECT_TRUE(same_bits(r1.out, rows(one.out, 0, split, width))) << "head_dim " << all.dim;
    EXPECT_TRUE(same_bits(r2.out, rows(one.out, split, all.m - split, width))) << "head_dim " << all.dim;
    const AttnRun again = run_attention(all, in, /*pdl=*/true, true);
    EXPECT_TRUE(same_bits(again.out, one.out)) << "repeat with PDL, head_dim " << all.dim;
    // Either block height (64 or 128 query rows), in one call and in the two calls: the same bits.
    for (const int fr : {64, 128}) {
      const AttnRun tall = run_attention(all, in, false, true, fr);
      EXPECT_TRUE(same_bits(tall.out, one.out)) << fr << " rows a block, head_dim " << all.dim;
      const AttnRun t1 = run_attention(c1, first, false, true, fr);
      const AttnRun t2 = run_attention(c2, second, false, true, fr);
      EXPECT_TRUE(same_bits(t1.out, r1.out) && same_bits(t2.out, r2.out))
          << fr << " rows a block in two calls, head_dim " << all.dim;
    }
  }
}

// The f16 output (what the f16 prompt path's out projection reads, AttentionArgs::out16) has rows_to_f16's
// bits for the f32 output of the same call, with and without a shift (2^17: outputs above 0.5 saturate).
TEST(Attention, PrefillOut16IsTheRoundingOfItsF32Output) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(35);
  for (const AttnCase c : {AttnCase{12, 2, 256, 64, 45, 260, 0}, AttnCase{8, 4, 128, 32, 45, 260, 0}}) {
    const AttnInputs in = make_inputs(rng, c);
    for (const int shift : {0, -17}) {
      const AttnRun r = run_attention(c, in, false, /*prefill=*/true, 0, nullptr, shift);
      ASSERT_EQ(r.out16.size(), r.out.size());
      EXPECT_TRUE(r.out16 == r.out16_want) << "head_dim " << c.dim << " shift " << shift;
      int saturated = 0;
      for (const uint16_t h : r.out16) saturated += (h & 0x7FFF) == 0x7BFF;  // +-65504
      if (shift < 0) {
        EXPECT_GT(saturated, 0) << "head_dim " << c.dim;
      }
    }
  }
}

// flash_rows other than 0, 64 and 128 is an error that says what was expected.
TEST(Attention, PrefillRejectsAnUnknownBlockHeight) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(34);
  const AttnCase c{8, 2, 256, 64, 0, 10, 0};
  const AttnInputs in = make_inputs(rng, c);
  GpuStatus st = GpuStatus::success();
  run_attention(c, in, false, /*prefill=*/true, /*flash_rows=*/96, &st);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("flash_rows must be 0 (default), 64 or 128, got 96"), std::string::npos)
      << st.describe();
}

}  // namespace
}  // namespace qc::gpu::test
