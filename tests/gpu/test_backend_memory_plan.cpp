// The CUDA load's memory plan (cuda/memory_plan.h) on the 27B shapes, with no device: it is host code, so
// the design case of issue #16 (a Q4_K_M of the 27B with a 32k context on a 24 GB card) and the context
// suggestion of the "does not fit" error are checked on any machine with the CUDA backend compiled.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "block_quant.h"
#include "cuda/device_model.h"
#include "cuda/memory_plan.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/presets.h"
#include "model/quant_mix.h"
#include "model/qwen35_layout.h"

namespace qc::cuda::test {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// The config reader applied to the metadata the preset's file would carry (a tensor-less GGUF).
ModelConfig preset_config(const std::string& name) {
  auto shape = preset_shape(name);
  if (!shape.ok()) throw std::runtime_error(shape.error().describe());
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("qwenchat-plan-" + std::to_string(::getpid()) + ".gguf"))
                               .string();
  gguf::Writer w;
  for (gguf::KeyValue& kv : qwen35_metadata(*shape, DType::kQ8_0)) w.set(std::move(kv.key), std::move(kv.value));
  if (!w.begin(path).ok() || !w.finish().ok()) throw std::runtime_error("cannot write " + path);
  auto file = gguf::File::open(path);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!file.ok()) throw std::runtime_error(file.error().describe());
  auto c = read_config(**file);
  if (!c.ok()) throw std::runtime_error(c.error().describe());
  c->n_vocab = shape->n_vocab;
  return *c;
}

// The 27B as llama.cpp's quantizer writes a Q4_K_M (model/quant_mix.h: Q4_K, with Q6_K for the output and
// the use-more-bits layers' attn_v/attn_qkv/ffn_down).
ModelWeights q4_k_m(const ModelConfig& c) {
  auto shape = preset_shape("27b");
  if (!shape.ok()) throw std::runtime_error(shape.error().describe());
  const std::vector<Qwen35Tensor> layout = qwen35_tensor_layout(*shape);
  auto types = qwen35_tensor_types(*shape, layout, QuantMix::kQ4_K_M);
  if (!types.ok()) throw std::runtime_error(types.error().describe());
  std::map<std::string, DType> per_tensor;
  for (size_t i = 0; i < layout.size(); ++i) per_tensor[layout[i].name] = (*types)[i];
  return describe_generated_weights(c, DType::kQ4_K, /*tied=*/false, &per_tensor);
}

MemoryPlanRequest request(const ModelConfig& c, const ModelWeights& w, int n_ctx, uint64_t card) {
  MemoryPlanRequest r;
  r.config = &c;
  r.weights = &w;
  r.have_data = false;
  r.n_ctx = n_ctx;
  r.sm_count = 128;  // an RTX 4090's 128 SMs (the split-K scratch scales with it)
  r.cublaslt = true;
  r.avail = card;
  r.card = card;
  return r;
}

// The weights' device bytes are the file's bytes of each matrix (block formats are uploaded as stored),
// plus the f32 vectors, plus at most one alignment of padding per device tensor.
TEST(CudaMemoryPlan, BlockWeightsTakeTheirFileBytes) {
  const ModelConfig c = preset_config("27b");
  const ModelWeights w = q4_k_m(c);
  Carver dry;
  auto m = layout_model(c, w, /*have_data=*/false, dry);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  uint64_t file_bytes = 0;
  int q6 = 0;
  for (const TensorSlot& s : m->slots) {
    q6 += s.type == DType::kQ6_K ? 1 : 0;
    const uint64_t n = static_cast<uint64_t>(s.rows) * static_cast<uint64_t>(s.cols);
    switch (s.type) {
      case DType::kQ4_K:
        file_bytes += n / 256 * 144;
        break;
      case DType::kQ6_K:
        file_bytes += n / 256 * 210;
        break;
      case DType::kQ5_0:
        file_bytes += n / 32 * 22;
        break;
      case DType::kQ8_0:  // the split layout: rows padded to 16 bytes (multiples of 32 here: no padding)
        file_bytes += n / 32 * 34;
        break;
      default:
        file_bytes += n * 4;  // vectors, decoded to f32
        break;
    }
  }
  EXPECT_GT(q6, 2) << "the mix upgrades the output and some layers' attn_qkv/ffn_down to Q6_K";
  EXPECT_GE(dry.bytes(), file_bytes);
  EXPECT_LE(dry.bytes(), file_bytes + m->slots.size() * kAlign);
  std::printf("[ memory   ] 27B as Q4_K_M on the device: %.2f GiB of weights\n",
              static_cast<double>(dry.bytes()) / kGiB);
}

// The design case: a 27B Q4_K_M with a 32k context loads on a 24 GB card, with the prompt path on the f16
// GEMM (weights dequantised per chunk: the resident copy would not leave a quarter of the card free).
TEST(CudaMemoryPlan, Q4KM27BWith32kContextFitsA24GBCard) {
  const ModelConfig c = preset_config("27b");
  const ModelWeights w = q4_k_m(c);
  auto p = plan_memory(request(c, w, 32768, 24 * kGiB));
  ASSERT_TRUE(p.ok()) << p.error().describe();
  std::printf("[ memory   ] 27B Q4_K_M, 32k context, 24 GiB card: %s%s%s\n", p->mem.describe().c_str(),
              p->note.empty() ? "" : "; ", p->note.c_str());
  EXPECT_TRUE(p->fits);
  EXPECT_EQ(p->prefill_rows, 2048);
  EXPECT_TRUE(p->prefill_f16);
  EXPECT_FALSE(p->f16_resident);
  EXPECT_LE(p->mem.total() + kMemoryReserve, 24 * kGiB);
}

// The Q8_0 27B (28.6 GB of weights) cannot load on 24 GiB at any context; on 32 GiB the plan names the
// largest context that fits, and that context is the boundary.
TEST(CudaMemoryPlan, LargestFittingContextIsTheBoundary) {
  const ModelConfig c = preset_config("27b");
  const ModelWeights w = describe_generated_weights(c, DType::kQ8_0, /*tied=*/false);
  const int asked = c.n_ctx_train > 0 ? c.n_ctx_train : 262144;
  auto none = largest_fitting_context(request(c, w, asked, 24 * kGiB));
  ASSERT_TRUE(none.ok()) << none.error().describe();
  EXPECT_EQ(*none, 0);

  auto n = largest_fitting_context(request(c, w, asked, 32 * kGiB));
  ASSERT_TRUE(n.ok()) << n.error().describe();
  std::printf("[ memory   ] 27B Q8_0 on 32 GiB: contexts up to %d fit (asked %d)\n", *n, asked);
  ASSERT_GT(*n, 0);
  ASSERT_LT(*n, asked);
  auto at = plan_memory(request(c, w, *n, 32 * kGiB));
  ASSERT_TRUE(at.ok()) << at.error().describe();
  EXPECT_TRUE(at->fits);
  auto above = plan_memory(request(c, w, *n + 1, 32 * kGiB));
  ASSERT_TRUE(above.ok()) << above.error().describe();
  EXPECT_FALSE(above->fits);
  // A context that fits as asked is returned as is.
  auto small = largest_fitting_context(request(c, w, 4096, 32 * kGiB));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(*small, 4096);
}

// The fallbacks in their order: on a card just too small for everything, 2048-row prompt chunks become 1024
// rows first (the same bits, one more weight pass per 2048 tokens); on a card smaller by the MTP state
// history's half more, the history goes next.
TEST(CudaMemoryPlan, ChunkRowsThenHistoryAreTheFirstFallbacks) {
  const ModelConfig c = preset_config("27b");
  const ModelWeights w = q4_k_m(c);
  auto full = plan_memory(request(c, w, 8192, 80 * kGiB));
  ASSERT_TRUE(full.ok() && full->fits);
  ASSERT_GT(full->mem.history, 0u);
  EXPECT_TRUE(full->with_history);
  EXPECT_EQ(full->prefill_rows, 2048);
  MemoryPlanRequest halved_req = request(c, w, 8192, 80 * kGiB);
  halved_req.prefill_rows = kFallbackPrefillRows;
  auto halved = plan_memory(halved_req);
  ASSERT_TRUE(halved.ok() && halved->fits);
  const uint64_t saved = full->mem.prefill - halved->mem.prefill;  // what 1024-row chunks give back
  ASSERT_GT(saved, 0u);

  const uint64_t card = full->mem.total() - full->mem.prefill_weights + kMemoryReserve - saved / 2;
  MemoryPlanRequest r = request(c, w, 8192, card);
  r.prefill_weights = PrefillWeights::kPerChunk;
  auto rows = plan_memory(r);
  ASSERT_TRUE(rows.ok()) << rows.error().describe();
  EXPECT_TRUE(rows->fits);
  EXPECT_EQ(rows->prefill_rows, kFallbackPrefillRows);
  EXPECT_TRUE(rows->with_history);
  EXPECT_NE(rows->note.find("prompt chunks of 1024 tokens (2048 do not fit)"), std::string::npos) << rows->note;

  r.avail = card - saved / 2 - full->mem.history / 2;
  auto tight = plan_memory(r);
  ASSERT_TRUE(tight.ok()) << tight.error().describe();
  EXPECT_TRUE(tight->fits);
  EXPECT_EQ(tight->prefill_rows, kFallbackPrefillRows);
  EXPECT_FALSE(tight->with_history);
  EXPECT_EQ(tight->mem.history, 0u);
  EXPECT_NE(tight->note.find("MTP state history"), std::string::npos) << tight->note;
}

}  // namespace
}  // namespace qc::cuda::test
