// Settings, configuration file, formatting helpers: what the panels rely on, without a window.
#include <fstream>

#include <gtest/gtest.h>

#include "app_config.h"
#include "chat_controller.h"
#include "format.h"
#include "settings.h"
#include "temp_dir.h"

namespace qc::gui {
namespace {

TEST(GuiSettings, ClampNamesTheFieldAndKeepsDefaults) {
  Settings s;
  EXPECT_TRUE(s.clamp().empty());
  s.top_p = 1.5f;
  s.mtp.draft_len = 9;
  s.engine.n_ctx = 3;
  const auto notes = s.clamp();
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0], "top_p 1.5 is outside [0.01, 1]: using 1");
  EXPECT_EQ(s.top_p, 1.0f);
  EXPECT_EQ(s.mtp.draft_len, kMaxDraftLen);
  EXPECT_EQ(s.engine.n_ctx, EngineSettings::kMinCtx);
  EXPECT_TRUE(s.sampler(1).validate().ok());
  EXPECT_TRUE(s.engine.validate().ok());
}

TEST(GuiSettings, JsonRoundTripAndWrongTypes) {
  Settings s;
  s.temperature = 0.25f;
  s.thinking = true;
  s.seed = 99;
  s.dark_theme = false;
  std::vector<std::string> w;
  EXPECT_EQ(Settings::from_json(s.to_json(), &w), s);
  EXPECT_TRUE(w.empty());
  nlohmann::json j = s.to_json();
  j["top_k"] = "many";
  j["top_p"] = 7.0;
  const Settings t = Settings::from_json(j, &w);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "settings.top_k: expected a number, got \"many\"");
  EXPECT_EQ(t.top_k, Settings{}.top_k);
  EXPECT_EQ(t.top_p, 1.0f);
}

// The JSON form keeps the flat keys of earlier versions while each value has one home in memory: the
// engine's own EngineSettings (probes in its KernelConfig) and MtpOptions.
TEST(GuiSettings, FlatKeysLandInTheEngineTypes) {
  const nlohmann::json j = {{"n_ctx", 2048}, {"probes", false}, {"mtp", false}, {"mtp_draft", 2},
                            {"kernels", {{"gemv", "hu"}, {"cuda_graph", false}}}};
  std::vector<std::string> w;
  const Settings s = Settings::from_json(j, &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(s.engine.n_ctx, 2048);
  EXPECT_FALSE(s.engine.kernels.probes);
  EXPECT_FALSE(s.mtp.enabled);
  EXPECT_EQ(s.mtp.draft_len, 2);
  EXPECT_EQ(s.engine.kernels.gemv, GemvVariant::kHU);
  EXPECT_FALSE(s.engine.kernels.cuda_graph);
  const nlohmann::json back = s.to_json();
  EXPECT_EQ(back["probes"], false);
  EXPECT_EQ(back["mtp_draft"], 2);
  EXPECT_FALSE(back["kernels"].contains("probes"));  // one key per setting in the file too
  EXPECT_TRUE(Settings{}.engine.kernels.probes);      // the app's default: the diagnostics panel shows them
}

// The K-quant GEMV engine is saved by name and read back; an unknown name warns and keeps the default.
TEST(GuiSettings, BlockEngineRoundTripsByName) {
  Settings s;
  s.engine.kernels.block_engine = BlockEngine::kSegments;
  nlohmann::json j = s.to_json();
  EXPECT_EQ(j["kernels"]["block_engine"], "segments");
  std::vector<std::string> w;
  EXPECT_EQ(Settings::from_json(j, &w).engine.kernels.block_engine, BlockEngine::kSegments);
  EXPECT_TRUE(w.empty());
  j["kernels"]["block_engine"] = "fast";
  EXPECT_EQ(Settings::from_json(j, &w).engine.kernels.block_engine, BlockEngine::kAuto);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "settings.kernels.block_engine: expected one of auto, registers, stream, segments, got \"fast\"");
}

TEST(GuiSettings, PresetsMatchTheSampler) {
  Settings s;
  apply_qwen_thinking_preset(s);
  EXPECT_TRUE(s.thinking);
  const SamplerParams q = SamplerParams::qwen_thinking();
  EXPECT_EQ(s.sampler(0).temperature, q.temperature);
  EXPECT_EQ(s.sampler(0).presence_penalty, q.presence_penalty);
  apply_greedy_preset(s);
  EXPECT_TRUE(s.sampler(0).is_greedy());
}

TEST(GuiConfig, SaveLoadRecentAndBrokenFile) {
  test::TempDir dir;
  const std::string path = dir.file("config.json");
  AppConfig c;
  for (int i = 0; i < 14; ++i) c.add_recent("/m/" + std::to_string(i) + ".gguf");
  c.add_recent("/m/3.gguf");  // moves to the front, no duplicate
  c.settings.ui_scale = 1.5f;
  ASSERT_TRUE(c.save(path).ok());
  std::vector<std::string> w;
  const AppConfig back = AppConfig::load(path, &w);
  EXPECT_TRUE(w.empty());
  ASSERT_EQ(back.recent_models.size(), AppConfig::kMaxRecent);
  EXPECT_EQ(back.recent_models[0], "/m/3.gguf");
  EXPECT_EQ(back.recent_models[1], "/m/13.gguf");
  EXPECT_EQ(back.settings.ui_scale, 1.5f);
  std::ofstream(path) << "{ not json";
  const AppConfig broken = AppConfig::load(path, &w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("not a JSON object"), std::string::npos);
  EXPECT_EQ(broken.settings, Settings{});
  EXPECT_TRUE(AppConfig::load(dir.file("absent.json"), &w).recent_models.empty());
}

// The recent list holds models that loaded, and the backend setting one that worked: a failed CUDA
// switch used to stay selected and be saved, and the next start had no model.
TEST(GuiConfig, RecentAndBackendFollowLoadsThatWorked) {
  AppConfig c;
  ModelFacts cpu;
  cpu.path = "/m/a.gguf";
  cpu.backend.name = "cpu-f32";
  EXPECT_TRUE(c.on_model_loaded(cpu));
  EXPECT_EQ(c.recent_models, std::vector<std::string>{"/m/a.gguf"});
  EXPECT_EQ(c.backend, "cpu");
  c.backend = "cuda";  // the user picks CUDA; the switch fails
  EXPECT_TRUE(c.on_model_failure(&cpu));
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_FALSE(c.on_model_failure(&cpu));  // nothing left to change
  EXPECT_FALSE(c.on_model_failure(nullptr));
  EXPECT_EQ(c.recent_models.size(), 1u);  // a failed load added nothing
  ModelFacts f64 = cpu;
  f64.path = "/m/b.gguf";
  f64.backend.name = "cpu-f64";
  EXPECT_TRUE(c.on_model_loaded(f64));
  EXPECT_EQ(c.backend, "cpu-f64");
  EXPECT_EQ(c.recent_models.front(), "/m/b.gguf");
  ModelFacts gpu = cpu;
  gpu.backend.name = "cuda";
  c.on_model_loaded(gpu);
  EXPECT_EQ(c.backend, "cuda");
  ModelFacts remote;
  remote.remote = true;
  remote.path = "http://localhost:8000/v1";
  EXPECT_FALSE(c.on_model_loaded(remote));  // an endpoint is not a file to remember
  EXPECT_EQ(c.recent_models.front(), "/m/a.gguf");
  // A file that is gone leaves the list; one that exists stays whatever failed.
  test::TempDir dir;
  const std::string real = dir.file("real.gguf");
  std::ofstream(real) << "x";
  c.add_recent(real);
  EXPECT_FALSE(c.forget_if_missing(real));
  EXPECT_TRUE(c.forget_if_missing("/m/a.gguf"));
  EXPECT_EQ(c.recent_models, (std::vector<std::string>{real, "/m/b.gguf"}));
}

TEST(GuiConfig, ConfigDirFollowsXdg) {
  test::TempDir dir;
  const char* old = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CONFIG_HOME", dir.path().c_str(), 1);
  auto d = config_dir();
  if (old) {
    setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_CONFIG_HOME");
  }
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, (dir.path() / "qwenchat").string());
  EXPECT_TRUE(std::filesystem::is_directory(*d));
}

TEST(GuiFormat, BytesStatsTitlesFileNames) {
  EXPECT_EQ(format_bytes(17), "17 B");
  EXPECT_EQ(format_bytes(1234567), "1.23 MB");
  const nlohmann::json s = {{"generated_tokens", 42},
                            {"tok_per_s", 12.34},
                            {"ttft_ms", 85.2},
                            {"mtp_acceptance", 0.5},
                            {"mtp_acceptance_per_position", {0.75, 0.25}},
                            {"backend", "cuda"},
                            {"kernel", "hlu4"},
                            {"stop_reason", "max_tokens"}};
  EXPECT_EQ(format_stats_line(s),
            "42 tokens · 12.3 tok/s · TTFT 85 ms · MTP 0.50 (0.75/0.25) · cuda/hlu4 · stop: max_tokens");
  EXPECT_EQ(format_stats_line(nlohmann::json::object()), "");
  EXPECT_EQ(title_from_message("  Hello,\tworld  \nsecond line"), "Hello, world");
  EXPECT_EQ(title_from_message(" \n "), "New chat");
  // Cut at a character boundary: "é" is two bytes; 3 bytes of "aéé" keep "aé".
  EXPECT_EQ(title_from_message("aéé", 3), "aé…");
  EXPECT_EQ(file_stem_from_title("Hybrid decoding (demo)!"), "Hybrid-decoding-demo");
  EXPECT_EQ(file_stem_from_title("???"), "conversation");
}

}  // namespace
}  // namespace qc::gui

namespace qc::gui {
namespace {

TEST(GuiConfig, A300kDeepConfigFileFallsBackToTheDefaults) {
  // Issue 13: such a config.json crashed the app at start (stack overflow in the JSON library).
  test::TempDir dir;
  const std::string path = dir.file("config.json");
  std::ofstream(path) << "{\"settings\": " << std::string(300000, '[') << std::string(300000, ']') << "}";
  std::vector<std::string> w;
  const AppConfig c = AppConfig::load(path, &w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("deeper than 256 levels"), std::string::npos) << w[0];
  EXPECT_EQ(c.settings, Settings{});
}

}  // namespace
}  // namespace qc::gui
