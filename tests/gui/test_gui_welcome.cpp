// The welcome panel's text (#14, app/gui/welcome_text.h) and the engine's memory table it shows
// (qwenchat/model_sizes.h): the estimates come from the shapes (checked against a file the engine writes
// and loads), the bundled model is described, the prompts are ones it was trained on.
#include <filesystem>

#include <gtest/gtest.h>

#include "model/presets.h"
#include "qwenchat/engine.h"
#include "runtime/model_sizes.h"
#include "temp_dir.h"
#include "welcome_text.h"
#include "worker_test_model.h"

namespace qc::gui {
namespace {

const SizeEstimate& find(const std::vector<SizeEstimate>& v, const std::string& name) {
  for (const SizeEstimate& e : v)
    if (e.preset == name) return e;
  static const SizeEstimate none;
  ADD_FAILURE() << "no estimate for " << name;
  return none;
}

TEST(GuiWelcome, SizesAreTheRealPresetsInThreeFormats) {
  const auto est = qwen_size_estimates(8192);
  ASSERT_EQ(est.size(), 5u);  // 0.8b 2b 4b 9b 27b; the test shapes (tiny, small) are left out
  const auto& f = weight_formats();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_STREQ(f[0].name, "Q4_K_M");
  EXPECT_TRUE(f[0].loadable);  // K-quant files load (CPU backend; engine/model/loader.cpp)
  EXPECT_DOUBLE_EQ(f[1].bits_per_weight, 34.0 * 8 / 32);
  EXPECT_DOUBLE_EQ(f[2].bits_per_weight, 16.0);
  for (const SizeEstimate& e : est) {
    ASSERT_EQ(e.weight_bytes.size(), 3u);
    // Nearly every parameter is a 2-D weight: bytes ~ params x bits / 8 (the F32 vectors add < 1%).
    for (size_t i = 0; i < 3; ++i) {
      const double ideal = static_cast<double>(e.n_params) * f[i].bits_per_weight / 8;
      EXPECT_GE(static_cast<double>(e.weight_bytes[i]), ideal * 0.999) << e.preset << " " << f[i].name;
      EXPECT_LE(static_cast<double>(e.weight_bytes[i]), ideal * 1.01) << e.preset << " " << f[i].name;
    }
    EXPECT_LT(e.weight_bytes[0], e.weight_bytes[1]);
    EXPECT_LT(e.weight_bytes[1], e.weight_bytes[2]);
    EXPECT_EQ(e.n_ctx, 8192);
    EXPECT_GT(e.cache_bytes, 0u);
  }
  // The 27B shape in Q8_0 is 28 GB (model/synthetic.h, the generated file); 0.8b about 0.9 GB.
  const SizeEstimate& big = find(est, "27b");
  EXPECT_GT(big.weight_bytes[1], 27'000'000'000u);
  EXPECT_LT(big.weight_bytes[1], 30'000'000'000u);
  EXPECT_GT(big.n_params, 26'000'000'000u);
  EXPECT_LT(find(est, "0.8b").weight_bytes[1], 1'100'000'000u);
  // Caches grow with the context (the attention layers' K/V): four times the context, more bytes.
  const auto longer = qwen_size_estimates(32768);
  EXPECT_GT(find(longer, "27b").cache_bytes, big.cache_bytes);
  // The context is capped at the shape's training context.
  EXPECT_EQ(find(qwen_size_estimates(1 << 30), "9b").n_ctx, 262144);
}

TEST(GuiWelcome, EstimateMatchesAFileTheEngineWrites) {
  // The tiny test shape through the same code: the weights' bytes against the GGUF the generator writes
  // (its tensor data; the rest of the file is metadata and the vocabulary), the caches against
  // estimate_load, which reads the file's header.
  test::TempDir t;
  const std::string path = t.file("tiny.gguf");
  const ModelShape s = *preset_shape("tiny");
  ASSERT_TRUE(test::write_chat_model(path, s, 7).ok());
  EngineOptions o;
  o.model_path = path;
  o.n_ctx = 512;
  auto load = estimate_load(o);
  ASSERT_TRUE(load.ok()) << load.error().describe();
  const SizeEstimate e = estimate_for_shape(s, 512);
  EXPECT_EQ(e.cache_bytes, load->state_bytes);  // exact: the same allocation rule, from the same shape
  const uint64_t file = std::filesystem::file_size(path);
  const uint64_t q8 = e.weight_bytes[1];
  EXPECT_LE(q8, file);
  // The rest of the file: the header, metadata (a 512-token vocabulary, the chat template) and alignment.
  EXPECT_LT(file - q8, 64u * 1024) << "file " << file << " weights " << q8;
}

TEST(GuiWelcome, TheBundledModelIsDescribedWithPromptsItKnows) {
  ModelFacts f;
  f.name = "qwenchat default";
  f.n_params = 22'500'000;
  f.quantization = "Q8_0";
  f.n_ctx = 4096;
  f.n_ctx_train = 4096;
  WelcomeText w = welcome_text(&f, true);
  EXPECT_EQ(w.title, "Welcome: the bundled model is loaded");
  EXPECT_EQ(w.facts, (std::vector<std::string>{"Name: qwenchat default", "Parameters: 22.5 M, Q8_0",
                                               "Context: 4096 tokens in use (trained for 4096)"}));
  EXPECT_NE(w.about.find("trained for this app"), std::string::npos);
  EXPECT_NE(w.about.find("arithmetic"), std::string::npos);
  // The training exercises' own phrasings (assets/recipe/prepare_data.py).
  EXPECT_EQ(w.prompts.front(), "What is 27 + 45?");
  EXPECT_NE(std::find(w.prompts.begin(), w.prompts.end(), "Define: lantern"), w.prompts.end());

  f.name = "Qwen3.5-27B";
  f.n_params = 27'400'000'000;
  w = welcome_text(&f, false);
  EXPECT_EQ(w.title, "Model: Qwen3.5-27B");
  EXPECT_EQ(w.facts[1], "Parameters: 27.4 B, Q8_0");
  EXPECT_TRUE(w.about.empty());
  EXPECT_FALSE(w.prompts.empty());
  EXPECT_EQ(welcome_text(nullptr, false).title, "No model is loaded");
  EXPECT_EQ(format_params(800'000'000), "800.0 M");
}

}  // namespace
}  // namespace qc::gui
