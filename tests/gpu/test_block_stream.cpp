// gemv_block's stream engine (kernels/gemv_block_stream.cu) against its register engine: for every block
// type, both activation forms, M = 1..4 and every warps-per-row split, every stream schedule (rows per warp,
// whole rows or chunks per stage, ring depth, consumer warps) gives the register engine's bits, which
// test_backend_kquant.cpp holds to the exact dot product. The shapes make the engine's edge cases happen:
// activation words staged in shared memory or read from global memory; more stages than the ring holds
// (wrap-around of its barriers' phases), a last chunk shorter than the others, row groups cut short at a
// block's end, Q6_K rows at every even offset in 16 bytes with the matrix's end unaligned (its last bytes
// copied without the bulk engine), and Q4_0 / Q5_0 matrices that start 2 bytes past an aligned address.
// Skipped without a device or below compute capability 9.0.
#include <cuda_runtime_api.h>

#include <cstring>
#include <random>
#include <vector>

#include "../unit/kquant_model_file.h"
#include "block_quant.h"
#include "gemv_block.h"
#include "gpu_test_util.h"
#include "norm_quant.h"

namespace qc::gpu::test {
namespace {

struct StreamCase {
  BlockType type;
  gguf::TensorType file_type;
  int offset;  // bytes past a 256-byte aligned address where the matrix starts
};
const StreamCase kCases[] = {{BlockType::kQ4_0, gguf::TensorType::kQ4_0, 2},
                             {BlockType::kQ5_0, gguf::TensorType::kQ5_0, 2},
                             {BlockType::kQ4_K, gguf::TensorType::kQ4_K, 0},
                             {BlockType::kQ5_K, gguf::TensorType::kQ5_K, 0},
                             {BlockType::kQ6_K, gguf::TensorType::kQ6_K, 0}};

bool stream_device() {
  int dev = 0, major = 0;
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
}

TEST(BlockStreamEngine, GivesTheRegisterEngineBits) {
  QC_REQUIRE_DEVICE();
  if (!stream_device()) GTEST_SKIP() << "the stream engine needs compute capability 9.0 or later";
  // N odd and large enough that a block owns several row groups on any H100/H200 grid; K = 1280 is 40
  // pieces: with chunks of 32 x warps_per_row pieces the last chunk is shorter (or the row is one chunk).
  // Q6_K rows are 1050 bytes (every even offset in 16 occurs) and 3001 x 1050 is not a multiple of 16.
  const int N = 3001, K = 1280, ld_x = K + 4, ld_q = K + 16, ld_s = K / 32 + 3, ld_y = N + 5;
  std::mt19937 rng(31);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(4) * ld_x), res(static_cast<size_t>(4) * ld_y);
  for (float& v : x) v = nd(rng);
  for (float& v : res) v = nd(rng);
  DevBuf<float> dx(x), dres(res), dy(res.size()), dscale(static_cast<size_t>(4) * ld_s);
  DevBuf<int8_t> dhi(static_cast<size_t>(4) * ld_q), dlo(static_cast<size_t>(4) * ld_q);
  for (const StreamCase& tc : kCases) {
    const std::vector<uint8_t> bytes =
        qc::test::random_blocks(tc.file_type, static_cast<uint64_t>(N) * K, 1.0f / std::sqrt(float{K}), rng);
    std::vector<uint8_t> padded(static_cast<size_t>(tc.offset), 0);
    padded.insert(padded.end(), bytes.begin(), bytes.end());
    const DevBuf<uint8_t> dw(padded);
    const BlockWeights w{dw.get() + tc.offset, tc.type, N, K};
    for (const ActFormat f : {ActFormat::kH, ActFormat::kHL}) {
      const bool hl = f == ActFormat::kHL;
      QuantizeArgs qa;
      qa.x = dx.get();
      qa.ld_x = ld_x;
      qa.n = K;
      qa.m = 4;
      qa.out = QActOut{dhi.get(), hl ? dlo.get() : nullptr, dscale.get(), ld_q, ld_s};
      QC_ASSERT_OK(quantize_act(qa, nullptr));
      for (int M = 1; M <= 4; ++M)
        for (int wpr : {1, 2, 8}) {
          GemvBlockArgs a;
          a.w = w;
          a.format = f;
          a.xq = qa.out.in();
          a.y = dy.get();
          a.ld_y = ld_y;
          a.residual = M % 2 ? dres.get() : nullptr;  // with and without, and y aliasing it never
          a.ld_residual = ld_y;
          a.m = M;
          a.warps_per_row = wpr;
          a.engine = BlockEngine::kRegisters;
          QC_ASSERT_OK(gemv_block(a, nullptr));
          const std::vector<float> want = dy.download();
          a.engine = BlockEngine::kStream;
          for (int rows : {1, 2, 4})
            for (int chunk : {0, 32 * wpr})
              for (int stages : {0, 2})
                for (int warps : {0, wpr == 8 ? 8 : 12})
                  for (int acts : {0, 1}) {
                    a.rows_per_warp = rows;
                    a.stream_chunk = chunk;
                    a.stream_stages = stages;
                    a.stream_warps = warps;
                    a.stream_acts = acts;
                    a.stream_smem = acts ? 0 : 110 * 1024;  // all a block may take, or about half an SM's
                    cuda_or_throw(cudaMemset(dy.get(), 0xff, sizeof(float) * res.size()), "memset");
                    QC_ASSERT_OK(gemv_block(a, nullptr));
                    const std::vector<float> got = dy.download();
                    for (int t = 0; t < M; ++t)
                      ASSERT_EQ(std::memcmp(&got[static_cast<size_t>(t) * ld_y],
                                            &want[static_cast<size_t>(t) * ld_y], sizeof(float) * N),
                                0)
                          << block_type_name(tc.type) << (hl ? " hl" : " h") << " M=" << M << " wpr=" << wpr
                          << " rows/warp " << rows << " chunk " << chunk << " stages " << stages << " warps "
                          << warps << " staged activations " << acts << " token " << t;
                  }
        }
    }
  }
}

TEST(BlockStreamEngine, RefusesWhatItCannotRun) {
  QC_REQUIRE_DEVICE();
  if (!stream_device()) GTEST_SKIP() << "the stream engine needs compute capability 9.0 or later";
  std::mt19937 rng(32);
  const int N = 64, K = 512;
  const DevBuf<uint8_t> dw(qc::test::random_blocks(gguf::TensorType::kQ4_K, uint64_t{N} * K, 0.05f, rng));
  DevBuf<float> x(static_cast<size_t>(4) * K), y(static_cast<size_t>(4) * N), scale(64);
  DevBuf<int8_t> hi(static_cast<size_t>(4) * K);
  GemvBlockArgs a;
  a.w = BlockWeights{dw.get(), BlockType::kQ4_K, N, K};
  a.format = ActFormat::kH;
  a.xq = QActIn{hi.get(), nullptr, scale.get(), K, K / 32};
  a.y = y.get();
  a.ld_y = N;
  a.engine = BlockEngine::kStream;
  auto refused = [&](const GemvBlockArgs& b, const char* what) {
    const GpuStatus s = gemv_block(b, nullptr);
    EXPECT_FALSE(s.ok()) << what;
    if (!s.ok()) {
      EXPECT_NE(s.describe().find(what), std::string::npos) << s.describe();
    }
  };
  GemvBlockArgs b = a;
  b.stream_chunk = 48;  // not a multiple of 32 x warps_per_row
  refused(b, "stream_chunk must be a multiple");
  b = a;
  b.warps_per_row = 2;
  b.stream_warps = 5;  // not a multiple of warps_per_row
  refused(b, "stream_warps must be a multiple");
  b = a;
  b.stream_stages = 1;
  refused(b, "stream_stages must be");
  b = a;
  b.rows_per_warp = 3;
  refused(b, "rows_per_warp must be");
  b = a;
  b.format = ActFormat::kF32;
  b.x = x.get();
  b.ld_x = K;
  refused(b, "the stream engine runs the quantised");
  QC_ASSERT_OK(gemv_block(a, nullptr));  // and the arguments refused above were the only fault
}

}  // namespace
}  // namespace qc::gpu::test
