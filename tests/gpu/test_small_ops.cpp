// Embedding, argmax, L2 probe, KV store and the dense-weight GEMV.
#include <algorithm>
#include <limits>

#include "argmax.h"
#include "attention.h"
#include "cpu_ref.h"
#include "embed.h"
#include "gemv_dense.h"
#include "gpu_test_util.h"
#include "probe.h"

namespace qc::gpu::test {
namespace {

TEST(SmallOps, EmbedAllTypesExact) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(10);
  const int vocab = 1000, dim = 1056, m = 4;
  const std::vector<int> toks = {0, 999, 517, 3};
  DevBuf<int> dtok(toks);
  HostQ8 q8 = random_q8(rng, vocab, dim);
  DevBuf<int8_t> qq(q8.q);
  DevBuf<uint16_t> qd(q8.d);
  const std::vector<float> f32 = random_normal(rng, static_cast<size_t>(vocab) * dim, 1.0f);
  std::vector<uint16_t> f16(f32.size()), bf16(f32.size());
  for (size_t i = 0; i < f32.size(); ++i) {
    f16[i] = f2h_bits(f32[i]);
    bf16[i] = f2bf_bits(f32[i]);
  }
  DevBuf<float> df32(f32);
  DevBuf<uint16_t> df16(f16), dbf16(bf16);
  DevBuf<float> out(static_cast<size_t>(m) * dim);
  for (EmbedType t : {EmbedType::kQ8, EmbedType::kF32, EmbedType::kF16, EmbedType::kBF16}) {
    out.poison();
    EmbedArgs a;
    a.d_tokens = dtok.get();
    a.m = m;
    a.type = t;
    a.q8 = Q8Weights{qq.get(), qd.get(), vocab, dim, q8.stride};
    a.dense = t == EmbedType::kF32
                  ? static_cast<const void*>(df32.get())
                  : (t == EmbedType::kF16 ? static_cast<const void*>(df16.get()) : dbf16.get());
    a.n_vocab = vocab;
    a.dim = dim;
    a.out = out.get();
    a.ld_out = dim;
    QC_ASSERT_OK(embed(a, nullptr));
    const std::vector<float> o = out.download();
    for (int r = 0; r < m; ++r)
      for (int i = 0; i < dim; ++i) {
        const size_t at = static_cast<size_t>(toks[r]) * dim + i;
        float expect = 0.0f;
        switch (t) {
          case EmbedType::kQ8:
            expect = static_cast<float>(q8.weight(toks[r], i));
            break;  // one rounding: exact
          case EmbedType::kF32:
            expect = f32[at];
            break;
          case EmbedType::kF16:
            expect = h_bits2f(f16[at]);
            break;
          case EmbedType::kBF16:
            expect = bf_bits2f(bf16[at]);
            break;
          case EmbedType::kBlock:  // not in this loop: test_backend_kquant.cpp
            break;
        }
        ASSERT_EQ(o[static_cast<size_t>(r) * dim + i], expect)
            << "type " << static_cast<int>(t) << " row " << r;
      }
  }
  // An id out of range gives NaN, never a read outside the table.
  const std::vector<int> bad = {-1, vocab};
  DevBuf<int> dbad(bad);
  EmbedArgs a;
  a.d_tokens = dbad.get();
  a.m = 2;
  a.type = EmbedType::kF32;
  a.dense = df32.get();
  a.n_vocab = vocab;
  a.dim = dim;
  a.out = out.get();
  a.ld_out = dim;
  QC_ASSERT_OK(embed(a, nullptr));
  const std::vector<float> o = out.download();
  for (int i = 0; i < 2 * dim; ++i) ASSERT_TRUE(std::isnan(o[i])) << i;
}

int argmax_cpu(const float* x, int n) {
  int best = -1;
  for (int i = 0; i < n; ++i) {
    if (std::isnan(x[i])) continue;
    if (best < 0 || x[i] > x[best]) best = i;  // strict: the first of equal maxima wins
  }
  return best < 0 ? 0 : best;
}

TEST(SmallOps, ArgmaxTiesToLowestIndex) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(12);
  for (int n : {248320, 1000, 1, 2049}) {
    const int m = 4;
    std::vector<float> x = random_normal(rng, static_cast<size_t>(m) * n, 1.0f);
    if (n > 100) {
      // row 0: the maximum twice, far apart (two stage-1 chunks); row 1: NaNs before the maximum;
      // row 2: all -inf (index 0); row 3 random.
      x[17] = x[n - 5] = 100.0f;
      for (int i = 0; i < 50; ++i)
        x[static_cast<size_t>(n) + i * 7] = std::numeric_limits<float>::quiet_NaN();
      x[static_cast<size_t>(n) + n / 2] = 50.0f;
      for (int i = 0; i < n; ++i) x[static_cast<size_t>(2) * n + i] = -INFINITY;
    }
    DevBuf<float> dx(x);
    DevBuf<int> out(m);
    DevBuf<uint8_t> scratch(argmax_scratch_bytes(n, m));
    out.poison();
    ArgmaxArgs a;
    a.x = dx.get();
    a.ld_x = n;
    a.n = n;
    a.m = m;
    a.out = out.get();
    a.scratch = scratch.get();
    QC_ASSERT_OK(argmax(a, nullptr));
    const std::vector<int> got = out.download();
    for (int r = 0; r < m; ++r)
      ASSERT_EQ(got[r], argmax_cpu(x.data() + static_cast<size_t>(r) * n, n)) << "n=" << n << " row " << r;
    if (n > 100) {
      EXPECT_EQ(got[0], 17);
      EXPECT_EQ(got[1], n / 2);
      EXPECT_EQ(got[2], 0);
    }
  }
}

TEST(SmallOps, ProbeL2) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(13);
  const int n = 5120;
  const std::vector<float> x = random_normal(rng, n, 3.0f);
  DevBuf<float> dx(x), out(64);
  out.poison();
  ProbeArgs a;
  a.x = dx.get();
  a.n = n;
  a.out = out.get();
  a.index = 37;
  QC_ASSERT_OK(probe_l2(a, nullptr));
  const std::vector<float> o = out.download();
  double ss = 0.0;
  for (float v : x) ss += static_cast<double>(v) * v;
  // f32 sum of squares: per-thread chain of n/256 + 8-level tree: relative error <= (20+8) * 2^-24, halved
  // by the square root; use 4e-6.
  EXPECT_NEAR(o[37], std::sqrt(ss), 4e-6 * std::sqrt(ss));
  for (int i = 0; i < 64; ++i)
    if (i != 37) {
      EXPECT_TRUE(std::isnan(o[i])) << "slot " << i << " must not be written";
    }
}

TEST(SmallOps, KvStoreF16) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(14);
  const int n_kv = 4, dim = 256, max_ctx = 64, m = 3, pos = 60;
  const std::vector<float> k = random_normal(rng, static_cast<size_t>(m) * n_kv * dim, 2.0f);
  const std::vector<float> v = random_normal(rng, static_cast<size_t>(m) * n_kv * dim, 2.0f);
  DevBuf<float> dk(k), dv(v);
  DevBuf<uint16_t> kc(static_cast<size_t>(n_kv) * max_ctx * dim),
      vc(static_cast<size_t>(n_kv) * max_ctx * dim);
  kc.poison();
  vc.poison();
  DevBuf<int> dpos(std::vector<int>{pos});
  KvStoreArgs a;
  a.k = dk.get();
  a.ld_k = n_kv * dim;
  a.v = dv.get();
  a.ld_v = n_kv * dim;
  a.n_kv = n_kv;
  a.head_dim = dim;
  a.k_cache = kc.get();
  a.v_cache = vc.get();
  a.max_ctx = max_ctx;
  a.d_pos = dpos.get();
  a.m = m;
  QC_ASSERT_OK(kv_store(a, nullptr));
  const std::vector<uint16_t> K = kc.download(), V = vc.download();
  for (int r = 0; r < m; ++r)
    for (int h = 0; h < n_kv; ++h)
      for (int d = 0; d < dim; ++d) {
        const size_t at = (static_cast<size_t>(h) * max_ctx + pos + r) * dim + d;
        const size_t src = static_cast<size_t>(r) * n_kv * dim + h * dim + d;
        ASSERT_EQ(K[at], f2h_bits(k[src]));
        ASSERT_EQ(V[at], f2h_bits(v[src]));
      }
  // Untouched positions stay poisoned (0xFFFF); positions >= max_ctx are not written at all.
  EXPECT_EQ(K[0], 0xFFFFu);
  EXPECT_EQ(V[static_cast<size_t>(max_ctx - 5) * dim], 0xFFFFu);
}

// Dense GEMV: per lane an FMA chain over K/32/wpr elements, a 5-level butterfly and up to 8 warp partials:
// |err| <= 2 * (K/32 + 16) * 2^-24 * sum|w x| (same argument as the Q8 GEMV bound).
TEST(SmallOps, DenseGemvAllTypes) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(15);
  struct Case {
    int k, n, wpr;
  };
  for (const Case c : {Case{5120, 48, 0}, Case{101, 300, 1}, Case{1024, 2500, 0}, Case{5120, 48, 2}}) {
    for (DenseType t : {DenseType::kF32, DenseType::kF16, DenseType::kBF16}) {
      for (int m = 1; m <= 4; ++m) {
        const std::vector<float> wf = random_normal(rng, static_cast<size_t>(c.n) * c.k, 0.05f);
        std::vector<uint16_t> w16(wf.size());
        std::vector<double> wv(wf.size());
        for (size_t i = 0; i < wf.size(); ++i) {
          if (t == DenseType::kF16)
            w16[i] = f2h_bits(wf[i]), wv[i] = h_bits2f(w16[i]);
          else if (t == DenseType::kBF16)
            w16[i] = f2bf_bits(wf[i]), wv[i] = bf_bits2f(w16[i]);
          else
            wv[i] = wf[i];
        }
        const std::vector<float> x = random_normal(rng, static_cast<size_t>(m) * c.k, 1.0f);
        const std::vector<float> res = random_normal(rng, static_cast<size_t>(m) * c.n, 1.0f);
        DevBuf<float> dwf(wf), dx(x), dy(res);
        DevBuf<uint16_t> dw16(w16);
        GemvDenseArgs a;
        a.w = t == DenseType::kF32 ? static_cast<const void*>(dwf.get()) : dw16.get();
        a.type = t;
        a.n = c.n;
        a.k = c.k;
        a.ld_w = c.k;
        a.x = dx.get();
        a.ld_x = c.k;
        a.y = dy.get();
        a.ld_y = c.n;
        a.residual = dy.get();  // in place
        a.ld_residual = c.n;
        a.m = m;
        a.warps_per_row = c.wpr;
        QC_ASSERT_OK(gemv_dense(a, nullptr));
        const std::vector<float> y = dy.download();
        for (int r = 0; r < m; ++r)
          for (int n = 0; n < c.n; ++n) {
            double s = 0.0, abs = 0.0;
            for (int k = 0; k < c.k; ++k) {
              const double p = wv[static_cast<size_t>(n) * c.k + k] * x[static_cast<size_t>(r) * c.k + k];
              s += p;
              abs += std::fabs(p);
            }
            const size_t i = static_cast<size_t>(r) * c.n + n;
            const double ref = s + res[i];
            const double tol = 2.0 * (c.k / 32 + 16) * std::ldexp(1.0, -24) * (abs + std::fabs(res[i]));
            ASSERT_NEAR(y[i], ref, tol)
                << "K=" << c.k << " N=" << c.n << " type " << static_cast<int>(t) << " M=" << m;
          }
      }
    }
  }
}

}  // namespace
}  // namespace qc::gpu::test
