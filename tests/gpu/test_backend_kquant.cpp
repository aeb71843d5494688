// llama.cpp's block formats on the GPU (#16): Q4_0, Q5_0, Q4_K, Q5_K and Q6_K read as the file stores them.
// - Kernels against the CPU reference's dequantize_row (engine/model/kquant.h, checked against ggml there):
//   the embedding lookup and the prompt path's f16 dequantisation give its values bit for bit (f32, and
//   f16 rounded to nearest); gemv_block, for M = 1..4 and both row splits, is within the f32 summation
//   bound of the exact dot product of those values (with f32 activations, and with the quantised words
//   h / hl of the dp4a form), and gives the same bits twice.
// - A whole model whose matrices mix all the types (tests/unit/kquant_model_file.h) on the CUDA backend
//   against the f64 CPU oracle on the same file, through the decode path and the prompt path.
// Skipped without a device.
#include <cstdio>
#include <cstring>
#include <utility>

#include "../unit/kquant_model_file.h"
#include "../unit/temp_dir.h"
#include "backend_test_util.h"
#include "block_quant.h"
#include "cublaslt.h"
#include "dequant_block.h"
#include "embed.h"
#include "gemv_block.h"
#include "model/kquant.h"
#include "norm_quant.h"
#include "oracle_bounds.h"

namespace qc::cuda::test {
namespace {

using gpu::BlockType;

struct TypeCase {
  BlockType type;
  gguf::TensorType file_type;
};
const TypeCase kTypes[] = {{BlockType::kQ4_0, gguf::TensorType::kQ4_0},
                           {BlockType::kQ5_0, gguf::TensorType::kQ5_0},
                           {BlockType::kQ4_K, gguf::TensorType::kQ4_K},
                           {BlockType::kQ5_K, gguf::TensorType::kQ5_K},
                           {BlockType::kQ6_K, gguf::TensorType::kQ6_K}};

// A random N x K matrix of one type: its bytes on the device and its values as the CPU reference decodes.
struct BlockMatrix {
  int rows = 0, cols = 0;
  std::vector<uint8_t> bytes;
  std::vector<float> values;  // [rows][cols]
  gpu::test::DevBuf<uint8_t> dev;
  gpu::BlockWeights weights(BlockType t) const { return gpu::BlockWeights{dev.get(), t, rows, cols}; }
};

BlockMatrix random_matrix(const TypeCase& tc, int rows, int cols, uint32_t seed) {
  std::mt19937 rng(seed);
  BlockMatrix m;
  m.rows = rows;
  m.cols = cols;
  const uint64_t n = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
  m.bytes = qc::test::random_blocks(tc.file_type, n, 1.0f / std::sqrt(static_cast<float>(cols)), rng);
  m.values.resize(n);
  const Status s = dequantize_row(tc.file_type, m.bytes.data(), m.values.data(), static_cast<int64_t>(n));
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
  m.dev = gpu::test::DevBuf<uint8_t>(m.bytes);
  return m;
}

// Four token rows of random activations and residual rows, with the activations' quantised words (h or hl)
// made on the device by quantize_act and the value each word stands for: the inputs of the dp4a form.
struct QuantisedRows {
  static constexpr int kTokens = 4;
  int K = 0, ld_q = 0, ld_s = 0, ld_y = 0;
  bool hl = false;
  std::vector<float> res;  // [kTokens][ld_y]
  std::vector<int8_t> hi, lo;
  std::vector<float> scale;
  gpu::test::DevBuf<float> dres, dscale;
  gpu::test::DevBuf<int8_t> dhi, dlo;

  gpu::QActIn in(int first_token = 0) const {
    const size_t at = static_cast<size_t>(first_token) * ld_q;
    return gpu::QActIn{dhi.get() + at, hl ? dlo.get() + at : nullptr, dscale.get() + first_token * ld_s, ld_q,
                       ld_s};
  }
  double value(int t, int k) const {
    const size_t i = static_cast<size_t>(t) * ld_q + static_cast<size_t>(k);
    const double s = scale[static_cast<size_t>(t) * ld_s + static_cast<size_t>(k / 32)];
    return hl ? s * (127.0 * hi[i] + lo[i]) / 127.0 : s * hi[i];
  }
};

// Padded strides (ld_x = K + 4, ld_q = K + 16, ld_s = K / 32 + 3, ld_y = N + 3) so that no kernel may assume
// packed rows.
QuantisedRows quantised_rows(int N, int K, ActFormat f, uint32_t seed) {
  QuantisedRows q;
  q.K = K;
  q.ld_q = K + 16;
  q.ld_s = K / 32 + 3;
  q.ld_y = N + 3;
  q.hl = f == ActFormat::kHL;
  const int ld_x = K + 4, T = QuantisedRows::kTokens;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(T) * ld_x);
  q.res.resize(static_cast<size_t>(T) * q.ld_y);
  for (float& v : x) v = nd(rng);
  for (float& v : q.res) v = nd(rng);
  const gpu::test::DevBuf<float> dx(x);
  q.dres = gpu::test::DevBuf<float>(q.res);
  q.dscale = gpu::test::DevBuf<float>(static_cast<size_t>(T) * q.ld_s);
  q.dhi = gpu::test::DevBuf<int8_t>(static_cast<size_t>(T) * q.ld_q);
  q.dlo = gpu::test::DevBuf<int8_t>(static_cast<size_t>(T) * q.ld_q);
  gpu::QuantizeArgs qa;
  qa.x = dx.get();
  qa.ld_x = ld_x;
  qa.n = K;
  qa.m = T;
  qa.out = gpu::QActOut{q.dhi.get(), q.hl ? q.dlo.get() : nullptr, q.dscale.get(), q.ld_q, q.ld_s};
  const gpu::GpuStatus st = gpu::quantize_act(qa, nullptr);
  EXPECT_TRUE(st.ok()) << st.describe();
  q.hi = q.dhi.download();
  q.lo = q.dlo.download();
  q.scale = q.dscale.download();
  return q;
}

// y's first M token rows against the exact dot products of the matrix's values with the words' values
// (+ the residual), within (L + 9 + 5) u sum (|w| + 1/sqrt(K)) |x|: the f32 summation bound of
// GemvIsTheExactDotWithinF32Summation below, plus up to 5 roundings of a piece's term (the scale products,
// the activation unit, hl's 1/127, the min term's fused add; the integer dot products are exact). Q4_K /
// Q5_K's min term is rounded as a product of its own, which can exceed |w x|; random_matrix's scales are
// about 1/sqrt(K), so 1/sqrt(K) |x| bounds it.
void expect_exact_dot(const BlockMatrix& m, const QuantisedRows& q, const std::vector<float>& y, int M,
                      bool with_res, const std::string& what) {
  const int N = m.rows, K = m.cols;
  const double target = 1.0 / std::sqrt(static_cast<double>(K));
  for (int t = 0; t < M; ++t)
    for (int n = 0; n < N; ++n) {
      double exact = with_res ? q.res[static_cast<size_t>(t) * q.ld_y + n] : 0.0, mag = std::fabs(exact);
      for (int k = 0; k < K; ++k) {
        const double w = m.values[static_cast<size_t>(n) * K + k], xv = q.value(t, k);
        exact += w * xv;
        mag += (std::fabs(w) + target) * std::fabs(xv);
      }
      const size_t at = static_cast<size_t>(t) * q.ld_y + static_cast<size_t>(n);
      const double tol = (K / 32 + 9 + 5) * std::ldexp(1.0, -24) * mag;
      ASSERT_LE(std::fabs(y[at] - exact), tol) << what << " M=" << M << " token " << t << " row " << n;
    }
}

TEST(BlockQuantKernels, EmbeddingIsTheReferenceBitForBit) {
  QC_REQUIRE_CUDA_DEVICE();
  for (const TypeCase& tc : kTypes) {
    const int V = 37, D = 512;
    const BlockMatrix m = random_matrix(tc, V, D, 11);
    const std::vector<int> toks = {0, 17, V - 1, -1, V};
    gpu::test::DevBuf<int> d_tok(toks);
    gpu::test::DevBuf<float> out(toks.size() * D);
    gpu::EmbedArgs a;
    a.d_tokens = d_tok.get();
    a.m = static_cast<int>(toks.size());
    a.type = gpu::EmbedType::kBlock;
    a.blocks = m.weights(tc.type);
    a.n_vocab = V;
    a.dim = D;
    a.out = out.get();
    a.ld_out = D;
    QC_ASSERT_OK(gpu::embed(a, nullptr));
    const std::vector<float> got = out.download();
    for (size_t r = 0; r < toks.size(); ++r)
      for (int i = 0; i < D; ++i) {
        const float g = got[r * D + static_cast<size_t>(i)];
        if (toks[r] < 0 || toks[r] >= V) {
          ASSERT_TRUE(std::isnan(g)) << gpu::block_type_name(tc.type) << " id " << toks[r];
        } else {
          const float want = m.values[static_cast<size_t>(toks[r]) * D + static_cast<size_t>(i)];
          ASSERT_EQ(std::memcmp(&g, &want, 4), 0) << gpu::block_type_name(tc.type) << " row " << toks[r]
                                                  << " col " << i << ": " << g << " vs " << want;
        }
      }
  }
}

TEST(BlockQuantKernels, F16DequantisationIsTheReferenceRounded) {
  QC_REQUIRE_CUDA_DEVICE();
  for (const TypeCase& tc : kTypes) {
    const int N = 40, K = 768, row0 = 3, rows = 29, ld = K + 8;
    const BlockMatrix m = random_matrix(tc, N, K, 12);
    gpu::test::DevBuf<uint16_t> out(static_cast<size_t>(rows) * ld);
    QC_ASSERT_OK(gpu::dequant_block_f16(m.weights(tc.type), row0, rows, out.get(), ld, nullptr));
    const std::vector<uint16_t> got = out.download();
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < K; ++k) {
        const float v = m.values[static_cast<size_t>(row0 + r) * K + static_cast<size_t>(k)];
        const uint16_t want = __half_as_ushort(__float2half_rn(v));
        ASSERT_EQ(got[static_cast<size_t>(r) * ld + static_cast<size_t>(k)], want)
            << gpu::block_type_name(tc.type) << " row " << row0 + r << " col " << k;
      }
  }
}

// |computed - exact| <= (L + 9) u sum|w x| to first order, u = 2^-24: a lane's FMA chain over at most
// L = K / 32 products (one piece of 32 per 32 lanes), the 5 levels of the warp sum, up to 3 levels joining
// the row's warps, one for the residual.
TEST(BlockQuantKernels, GemvIsTheExactDotWithinF32Summation) {
  QC_REQUIRE_CUDA_DEVICE();
  for (const TypeCase& tc : kTypes) {
    const int N = 70, K = 1280, ld_x = K + 4, ld_y = N + 3;
    const BlockMatrix m = random_matrix(tc, N, K, 13);
    std::mt19937 rng(14);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(4) * ld_x), res(static_cast<size_t>(4) * ld_y);
    for (float& v : x) v = nd(rng);
    for (float& v : res) v = nd(rng);
    gpu::test::DevBuf<float> dx(x), dres(res), dy(res.size());
    for (int M = 1; M <= 4; ++M)
      for (int wpr : {1, 8})
        for (bool with_res : {false, true}) {
          gpu::GemvBlockArgs a;
          a.w = m.weights(tc.type);
          a.x = dx.get();
          a.ld_x = ld_x;
          a.y = dy.get();
          a.ld_y = ld_y;
          a.residual = with_res ? dres.get() : nullptr;
          a.ld_residual = ld_y;
          a.m = M;
          a.warps_per_row = wpr;
          QC_ASSERT_OK(gpu::gemv_block(a, nullptr));
          const std::vector<float> y1 = dy.download();
          QC_ASSERT_OK(gpu::gemv_block(a, nullptr));
          const std::vector<float> y2 = dy.download();
          for (int t = 0; t < M; ++t)
            for (int n = 0; n < N; ++n) {
              double exact = with_res ? res[static_cast<size_t>(t) * ld_y + n] : 0.0, mag = std::fabs(exact);
              for (int k = 0; k < K; ++k) {
                const double p = static_cast<double>(m.values[static_cast<size_t>(n) * K + k]) *
                                 x[static_cast<size_t>(t) * ld_x + k];
                exact += p;
                mag += std::fabs(p);
              }
              const size_t at = static_cast<size_t>(t) * ld_y + static_cast<size_t>(n);
              const double tol = (K / 32 + 9) * std::ldexp(1.0, -24) * mag;
              ASSERT_LE(std::fabs(y1[at] - exact), tol) << gpu::block_type_name(tc.type) << " M=" << M
                                                        << " wpr=" << wpr << " token " << t << " row " << n;
              ASSERT_EQ(std::memcmp(&y1[at], &y2[at], 4), 0) << "not deterministic";
            }
        }
  }
}

// The quantised-activation forms (h, hl) against the exact dot product of the reference's weights with the
// activations the words stand for (x^ = s hi, or s (127 hi + lo) / 127), in f64. Per piece the kernel rounds
// a0 D (and Q6_K's a1 D1), the min's FMA, s * fl(1/127) (two roundings) and adds it to the chain: at most
// 5 u of that piece's |a q x^| + |mn x^| on top of the f32 chain's (L + 9) u. |a q| + |mn| <= |w| + 2 |mn|,
// and random_blocks keeps |mn| <= 63 dmin <= target / 2, so mag = sum (|w| + target) |x^| bounds it all.
TEST(BlockQuantKernels, QuantisedActivationGemvIsTheExactDotWithinItsRounding) {
  QC_REQUIRE_CUDA_DEVICE();
  for (const TypeCase& tc : kTypes) {
    const int N = 70, K = 1280;
    const BlockMatrix m = random_matrix(tc, N, K, 16);
    for (const ActFormat f : {ActFormat::kH, ActFormat::kHL}) {
      const QuantisedRows q = quantised_rows(N, K, f, 17);
      gpu::test::DevBuf<float> dy(q.res.size());
      const std::string what = std::string(gpu::block_type_name(tc.type)) + (q.hl ? " hl" : " h");
      for (int M = 1; M <= 4; ++M)
        for (int wpr : {1, 8})
          for (bool with_res : {false, true}) {
            gpu::GemvBlockArgs a;
            a.w = m.weights(tc.type);
            a.format = f;
            a.engine = gpu::BlockEngine::kRegisters;  // the stream engine: test_block_stream.cpp
            a.rows_per_warp = 1;
            a.pipeline = 0;
            a.act_sums = 0;
            a.xq = q.in();
            a.y = dy.get();
            a.ld_y = q.ld_y;
            a.residual = with_res ? q.dres.get() : nullptr;
            a.ld_residual = q.ld_y;
            a.m = M;
            a.warps_per_row = wpr;
            QC_ASSERT_OK(gpu::gemv_block(a, nullptr));
            const std::vector<float> y1 = dy.download();
            QC_ASSERT_OK(gpu::gemv_block(a, nullptr));
            const std::vector<float> y2 = dy.download();
            ASSERT_EQ(std::memcmp(y1.data(), y2.data(), sizeof(float) * y1.size()), 0)
                << what << ": not deterministic";
            // Two rows per warp, two pieces per lane in flight, the min term's sums formed once per block:
            // the same order of every sum, the same bits.
            for (int rpw : {1, 2})
              for (int pipe : {0, 1})
                for (int sums : {0, 1}) {
                  a.rows_per_warp = rpw;
                  a.pipeline = pipe;
                  a.act_sums = sums;
                  QC_ASSERT_OK(gpu::gemv_block(a, nullptr));
                  const std::vector<float> yu = dy.download();
                  for (int t = 0; t < M; ++t)
                    ASSERT_EQ(std::memcmp(&yu[static_cast<size_t>(t) * q.ld_y],
                                          &y1[static_cast<size_t>(t) * q.ld_y], sizeof(float) * N),
                              0)
                        << what << " rows/warp " << rpw << " pipeline " << pipe << " sums " << sums
                        << " M=" << M << " wpr=" << wpr;
                }
            expect_exact_dot(m, q, y1, M, with_res, what + " wpr=" + std::to_string(wpr));
            if (::testing::Test::HasFatalFailure()) return;
          }
    }
  }
}

// The segment engine (kernels/gemv_block_seg.cu, Q4_K / Q5_K): the same bound against the exact dot product
// (its per-term roundings are the register engine's, per 16-value half instead of per piece, and its chains
// are shorter); for a fixed warps-per-row split the same bits for every rows per warp and pipeline, and every
// token of an M-token call the bits of the M = 1 call on that token alone (what MTP verification relies on).
// K = 1280 and 2304 leave the last 1024-value window a quarter full; N = 70 and 37 cut the last row group.
TEST(BlockQuantKernels, SegmentEngineIsTheExactDotAndItsBitsDependOnTheSplitOnly) {
  QC_REQUIRE_CUDA_DEVICE();
  for (const TypeCase& tc : {kTypes[2], kTypes[3]})
    for (const auto& [N, K] : {std::pair{70, 1280}, std::pair{37, 2304}}) {
      const BlockMatrix m = random_matrix(tc, N, K, 18);
      for (const ActFormat f : {ActFormat::kH, ActFormat::kHL}) {
        const QuantisedRows q = quantised_rows(N, K, f, 19);
        gpu::test::DevBuf<float> dy(q.res.size());
        const std::string what = std::string(gpu::block_type_name(tc.type)) + (q.hl ? " hl" : " h");
        for (int wpr : {0, 1, 2, 4, 8}) {
          auto run = [&](int M, int rpw, int pipe, int first_token, bool with_res) {
            gpu::GemvBlockArgs a;
            a.w = m.weights(tc.type);
            a.format = f;
            a.engine = gpu::BlockEngine::kSegments;
            a.rows_per_warp = rpw;
            a.pipeline = pipe;
            a.warps_per_row = wpr;
            a.xq = q.in(first_token);
            a.y = dy.get();
            a.ld_y = q.ld_y;
            a.residual = with_res ? q.dres.get() : nullptr;
            a.ld_residual = q.ld_y;
            a.m = M;
            const gpu::GpuStatus st = gpu::gemv_block(a, nullptr);
            EXPECT_TRUE(st.ok()) << st.describe();
            return dy.download();
          };
          for (int M = 1; M <= 4; ++M)
            for (bool with_res : {false, true}) {
              const std::vector<float> y1 = run(M, 2, 0, 0, with_res);
              if (::testing::Test::HasFailure()) return;
              const std::vector<float> y2 = run(M, 2, 0, 0, with_res);
              ASSERT_EQ(std::memcmp(y1.data(), y2.data(), sizeof(float) * y1.size()), 0)
                  << what << ": not deterministic";
              for (int rpw : {0, 2, 4})
                for (int pipe : {-1, 0, 1}) {
                  const std::vector<float> yu = run(M, rpw, pipe, 0, with_res);
                  for (int t = 0; t < M; ++t)
                    ASSERT_EQ(std::memcmp(&yu[static_cast<size_t>(t) * q.ld_y],
                                          &y1[static_cast<size_t>(t) * q.ld_y], sizeof(float) * N),
                              0)
                        << what << " rows/warp " << rpw << " pipeline " << pipe << " M=" << M
                        << " wpr=" << wpr;
                }
              if (!with_res)
                for (int t = 1; t < M; ++t) {  // token t alone (the residual is per token row: skipped)
                  const std::vector<float> yt = run(1, 4, 1, t, false);
                  ASSERT_EQ(std::memcmp(&yt[0], &y1[static_cast<size_t>(t) * q.ld_y], sizeof(float) * N), 0)
                      << what << " token " << t << " of M=" << M << " wpr=" << wpr;
                }
              expect_exact_dot(m, q, y1, M, with_res, what + " wpr=" + std::to_string(wpr));
              if (::testing::Test::HasFatalFailure()) return;
            }
        }
      }
    }
  // Types it does not read are refused with the reason, not run on another engine.
  const BlockMatrix q6 = random_matrix(kTypes[4], 4, 256, 20);
  gpu::test::DevBuf<int8_t> hi(256);
  gpu::test::DevBuf<float> scale(8), y(4);
  gpu::GemvBlockArgs a;
  a.w = q6.weights(BlockType::kQ6_K);
  a.format = ActFormat::kH;
  a.engine = gpu::BlockEngine::kSegments;
  a.xq = gpu::QActIn{hi.get(), nullptr, scale.get(), 256, 8};
  a.y = y.get();
  a.ld_y = 4;
  const gpu::GpuStatus s = gpu::gemv_block(a, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.describe().find("segment engine reads Q4_K and Q5_K, got Q6_K"), std::string::npos)
      << s.describe();
}

// gemv_block() resolves kAuto per matrix as block_engine_for() says (gemv_block.h): a wide Q4_K / Q5_K matrix
// (N >= 2K) read in hl runs on the segment engine, a narrower one or the h form on the registers, for every
// M, with the picked engine's bits exactly. N = 512 and 511 at K = 256 sit on either side of the boundary.
TEST(BlockQuantKernels, AutoEngineRunsTheEngineItPicks) {
  QC_REQUIRE_CUDA_DEVICE();
  using E = gpu::BlockEngine;
  for (const TypeCase& tc : {kTypes[2], kTypes[3]})
    for (const int N : {512, 511}) {
      const int K = 256;
      const BlockMatrix m = random_matrix(tc, N, K, 21);
      for (const ActFormat f : {ActFormat::kH, ActFormat::kHL}) {
        const QuantisedRows q = quantised_rows(N, K, f, 22);
        gpu::test::DevBuf<float> dy(q.res.size());
        auto run = [&](E engine, int M) {
          gpu::GemvBlockArgs a;
          a.w = m.weights(tc.type);
          a.format = f;
          a.engine = engine;
          a.xq = q.in();
          a.y = dy.get();
          a.ld_y = q.ld_y;
          a.m = M;
          dy.poison();
          const gpu::GpuStatus st = gpu::gemv_block(a, nullptr);
          EXPECT_TRUE(st.ok()) << st.describe();
          return dy.download();
        };
        const E picked = gpu::block_engine_for(E::kAuto, m.weights(tc.type), f);
        const std::string what =
            std::string(gpu::block_type_name(tc.type)) + (q.hl ? " hl" : " h") + " N=" + std::to_string(N);
        EXPECT_EQ(picked, f == ActFormat::kHL && N >= 2 * K ? E::kSegments : E::kRegisters) << what;
        for (int M = 1; M <= 4; ++M) {
          const std::vector<float> y_auto = run(E::kAuto, M), y_picked = run(picked, M);
          if (::testing::Test::HasFailure()) return;
          for (int t = 0; t < M; ++t)
            ASSERT_EQ(std::memcmp(&y_auto[static_cast<size_t>(t) * q.ld_y],
                                  &y_picked[static_cast<size_t>(t) * q.ld_y], sizeof(float) * N),
                      0)
                << what << " M=" << M << " token " << t;
        }
      }
    }
}

// The register engine's auto split (warps per row) is chosen from N, K and the device, never from M: with
// N = 60 rows an SM and K = 12288 (long rows, few warps) it used to split rows in two at M >= 2 only, so a
// token's bits in a 2- or 4-token call (MTP verification, prompt reuse) differed from its bits alone. Random
// bytes with small finite scales: the bits, not the values, are under test.
TEST(BlockQuantKernels, RegisterEngineGivesATokenItsBitsAlone) {
  QC_REQUIRE_CUDA_DEVICE();
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  const int N = 60 * sms, K = 12288, ld = K + 16, ld_s = K / 32;
  for (const TypeCase& tc : {kTypes[2], kTypes[4]}) {
    const size_t row = gpu::block_row_bytes(tc.type, K), bb = static_cast<size_t>(gpu::block_bytes(tc.type));
    std::vector<uint8_t> bytes(row * N);
    std::mt19937 rng(23);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng() & 0xffu);
    for (size_t b = 0; b < bytes.size() / bb; ++b)
      for (const int off : {gpu::block_d_offset(tc.type), gpu::block_dmin_offset(tc.type)})
        if (off >= 0) {
          bytes[b * bb + static_cast<size_t>(off)] = 0x00;
          bytes[b * bb + static_cast<size_t>(off) + 1] = 0x14;  // f16 2^-10
        }
    const gpu::test::DevBuf<uint8_t> dw(bytes);
    std::vector<int8_t> hi(static_cast<size_t>(4) * ld);
    for (int8_t& v : hi) v = static_cast<int8_t>(static_cast<int>(rng() % 255u) - 127);
    std::vector<float> sc(static_cast<size_t>(4) * ld_s);
    for (float& v : sc) v = 1e-3f * static_cast<float>(1 + rng() % 100u);
    gpu::test::DevBuf<int8_t> dhi(hi);
    gpu::test::DevBuf<float> dsc(sc), dy(static_cast<size_t>(4) * N);
    auto run = [&](int M, int first_token) {
      gpu::GemvBlockArgs a;
      a.w = gpu::BlockWeights{dw.get(), tc.type, N, K};
      a.format = ActFormat::kH;
      a.engine = gpu::BlockEngine::kRegisters;
      a.xq = gpu::QActIn{dhi.get() + static_cast<size_t>(first_token) * ld, nullptr,
                         dsc.get() + static_cast<size_t>(first_token) * ld_s, ld, ld_s};
      a.y = dy.get();
      a.ld_y = N;
      a.m = M;
      const gpu::GpuStatus st = gpu::gemv_block(a, nullptr);
      EXPECT_TRUE(st.ok()) << st.describe();
      return dy.download();
    };
    for (int M : {2, 4}) {
      const std::vector<float> all = run(M, 0);
      const std::vector<float> alone = run(1, M - 1);
      EXPECT_EQ(std::memcmp(&all[static_cast<size_t>(M - 1) * N], alone.data(), sizeof(float) * N), 0)
          << gpu::block_type_name(tc.type) << ": token " << M - 1 << " of " << M
          << " differs from its M = 1 bits (" << sms << " SMs)";
    }
  }
}

TEST(BlockQuantKernels, BadArgumentsAreRefused) {
  QC_REQUIRE_CUDA_DEVICE();
  const BlockMatrix m = random_matrix(kTypes[2], 4, 256, 15);
  gpu::test::DevBuf<float> x(512), y(16);
  gpu::GemvBlockArgs a;
  a.w = m.weights(BlockType::kQ4_K);
  a.w.cols = 200;  // not a multiple of 256
  a.x = x.get();
  a.ld_x = 256;
  a.y = y.get();
  a.ld_y = 4;
  const gpu::GpuStatus s = gpu::gemv_block(a, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.describe().find("multiple of the Q4_K block"), std::string::npos) << s.describe();
}

// A model shape CUDA supports (GDN key heads of 64) whose every K-quant row is a multiple of 256.
ModelShape kquant_cuda_shape() {
  ModelShape s = qc::test::kquant_test_shape();
  s.name = "kquant-cuda-test";
  s.ssm_head_k_dim = 64;
  return s;
}

class KQuantModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new qc::test::TempDir();
    const qc::test::KQuantFiles f =
        qc::test::write_kquant_model(dir_->path().string(), 3, kquant_cuda_shape());
    path_ = new std::string(f.quantised);
  }
  static void TearDownTestSuite() {
    delete path_;
    delete dir_;
  }
  static std::unique_ptr<Model> load() {
    auto m = Model::load(*path_);
    if (!m.ok()) throw std::runtime_error("Model::load: " + m.error().describe());
    return std::move(m).value();
  }
  static qc::test::TempDir* dir_;
  static std::string* path_;
};
qc::test::TempDir* KQuantModel::dir_ = nullptr;
std::string* KQuantModel::path_ = nullptr;

// Decode path: every matrix's input carries the variant's activation quantisation (gemv_block's dp4a forms
// on the block types, gemv_q8 on Q8_0), so each variant has its oracle_bound() (oracle_bounds.h): tile (hl)
// 4 sqrt(33) 1.0e-4 + the f16 KV floor, tile_h (h) 4 sqrt(33) 0.0129 + the floor, deq (f32 activations,
// gemv_block's f32 form) the floor. The h class is 127x coarser by design; the segment engine's exactness in
// both formats is BlockQuantKernels.SegmentEngine*'s tight bound above.
TEST_F(KQuantModel, DecodePathMatchesTheOracle) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load();
  const auto& c = model->config();
  auto oracle = make_oracle(*model);
  const auto tokens = random_tokens(10, c.n_vocab, 21);
  const SeqOut ref = run_sequence(*oracle, tokens, {10});
  // The segment engine too (its Q4_K / Q5_K matrices; the rest on registers), in both activation forms, and
  // with it a token's bits the same in a 3-token step as alone (what MTP verification relies on).
  const std::pair<GemvVariant, BlockEngine> cases[] = {{GemvVariant::kTile, BlockEngine::kAuto},
                                                       {GemvVariant::kDeq, BlockEngine::kAuto},
                                                       {GemvVariant::kTile, BlockEngine::kSegments},
                                                       {GemvVariant::kTileH, BlockEngine::kSegments}};
  for (const auto& [v, engine] : cases) {
    CudaBackendOptions o;
    o.n_ctx = 256;
    o.prefill_rows = 0;  // forward() only: the decode path
    o.kernels = config_with(v);
    o.kernels.block_engine = engine;
    auto gpu = CudaBackend::create(c, model->weights(), o);
    ASSERT_TRUE(gpu.ok()) << gpu.error().describe();
    const SeqOut out = run_sequence(**gpu, tokens, {3, 1});
    if (engine == BlockEngine::kSegments) {
      auto one = CudaBackend::create(c, model->weights(), o);
      ASSERT_TRUE(one.ok()) << one.error().describe();
      const SeqOut single = run_sequence(**one, tokens, {1});
      ASSERT_EQ(single.logits.size(), out.logits.size());
      EXPECT_EQ(std::memcmp(single.logits.data(), out.logits.data(), sizeof(float) * out.logits.size()), 0)
          << gemv_variant_name(v) << " segments: 3-token steps changed bits";
    }
    const double bound = oracle_bound(v);
    double wl = 0.0, wh = 0.0;
    for (size_t i = 0; i < tokens.size(); ++i) {
      wl = std::max(wl, rel_dist(out.logits, ref.logits, i, static_cast<size_t>(c.n_vocab)));
      wh = std::max(wh, rel_dist(out.hidden, ref.hidden, i, static_cast<size_t>(c.n_embd)));
    }
    std::printf(
        "[ distance ] mixed K-quant model, decode path, %s, %s engine: logits %.3e hidden %.3e (bound "
        "%.3e)\n",
        gemv_variant_name(v), block_engine_name(engine), wl, wh, bound);
    EXPECT_LT(wl, bound) << gemv_variant_name(v);
    EXPECT_LT(wh, bound) << gemv_variant_name(v);
  }
}

// Prompt path on the f16 GEMM: K-quant matrices dequantised to f16 per chunk or resident, the bound of
// test_backend_prefill.cpp's f16 case; then decoding continues from the state it left.
TEST_F(KQuantModel, PromptPathMatchesTheOracle) {
  QC_REQUIRE_CUDA_DEVICE();
  std::string why;
  if (!gpu::cublaslt(&why)) GTEST_SKIP() << "cuBLASLt unavailable: " << why;
  auto model = load();
  const auto& c = model->config();
  const size_t V = static_cast<size_t>(c.n_vocab);
  auto oracle = make_oracle(*model);
  const auto tokens = random_tokens(70, c.n_vocab, 22);
  const SeqOut ref = run_sequence(*oracle, tokens, {32});
  const double bound = prompt_f16_bound();
  for (const PrefillWeights w : {PrefillWeights::kPerChunk, PrefillWeights::kResident}) {
    CudaBackendOptions o;
    o.n_ctx = 256;
    o.prefill_rows = 64;
    o.prefill_gemm = PrefillGemm::kF16;
    o.prefill_weights = w;
    auto gpu = CudaBackend::create(c, model->weights(), o);
    ASSERT_TRUE(gpu.ok()) << gpu.error().describe();
    const int n = 69;  // two chunks: 64 + 5
    (*gpu)->reset();
    std::vector<float> last;
    for (int at = 0; at < n; at += 64) {
      const int len = std::min(64, n - at);
      auto r =
          (*gpu)->prefill(std::span<const int32_t>(tokens.data() + at, static_cast<size_t>(len)), at, {});
      ASSERT_TRUE(r.ok()) << r.error().describe();
      last.assign(r->logits.begin(), r->logits.end());
    }
    const std::vector<float> want(ref.logits.begin() + static_cast<std::ptrdiff_t>((n - 1) * V),
                                  ref.logits.begin() + static_cast<std::ptrdiff_t>(n * V));
    const double dl = rel_dist(last, want, 0, V);
    auto r = (*gpu)->forward(std::span<const int32_t>(tokens.data() + n, 1), n);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const std::vector<float> next(r->logits.begin(), r->logits.end());
    const std::vector<float> want_next(ref.logits.begin() + static_cast<std::ptrdiff_t>(n * V),
                                       ref.logits.begin() + static_cast<std::ptrdiff_t>((n + 1) * V));
    const double dn = rel_dist(next, want_next, 0, V);
    std::printf(
        "[ distance ] mixed K-quant model, prompt path (%s): last logits %.3e, next token %.3e (bound "
        "%.3e)\n",
        CudaProbe::prefill_weights(**gpu), dl, dn, bound);
    EXPECT_LT(dl, bound);
    EXPECT_LT(dn, bound);
  }
}

}  // namespace
}  // namespace qc::cuda::test
