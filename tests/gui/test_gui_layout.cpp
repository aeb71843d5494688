// The GUI-as-a-product items of #14 that are plain logic (no window): column layout, the reading column,
// buttons that never run into a label, the sidebar order under the pointer, search highlights, reply
// placeholders, stored stats for the diagnostics, window geometry in the config, the load estimate and
// load errors a GUI user can act on.
#include <fstream>

#include <gtest/gtest.h>

#include "app_config.h"
#include "diagnostics_state.h"
#include "format.h"
#include "layout.h"
#include "model_status.h"
#include "runtime/engine.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::gui {
namespace {

TEST(GuiLayout, ColumnsFollowWidthsAndVisibility) {
  AppConfig c;
  const float em = 16;
  ColumnLayout l = column_layout(1600, em, c);
  EXPECT_EQ(l.sidebar_w, 17 * em);
  EXPECT_EQ(l.inspector_w, 30 * em);
  EXPECT_EQ(l.chat_x, l.sidebar_w + l.gap);
  EXPECT_FLOAT_EQ(l.chat_x + l.chat_w + l.gap + l.inspector_w, 1600);
  c.show_sidebar = false;
  l = column_layout(1600, em, c);
  EXPECT_EQ(l.sidebar_w, 0);
  EXPECT_EQ(l.chat_x, 0);
  c.show_inspector = false;
  l = column_layout(1600, em, c);
  EXPECT_EQ(l.chat_w, 1600);
  // The minimum window: the side panels give way, the chat keeps kMinChatEm.
  c = AppConfig{};
  l = column_layout(AppConfig::kMinWindowW, em, c);
  EXPECT_GE(l.chat_w, kMinChatEm * em - 1);
  EXPECT_GT(l.sidebar_w, 0);
  EXPECT_LE(l.chat_x + l.chat_w + l.gap + l.inspector_w, AppConfig::kMinWindowW + 0.5f);
}

TEST(GuiLayout, ReadingColumnIsCappedAndCentred) {
  ReadingColumn r = reading_column(600, 1.0f);
  EXPECT_EQ(r.width, 600);
  EXPECT_EQ(r.offset, 0);
  r = reading_column(1000, 1.0f);
  EXPECT_EQ(r.width, 768);
  EXPECT_EQ(r.offset, 116);
  r = reading_column(2000, 1.76f);  // scales with the UI
  EXPECT_EQ(r.width, std::round(768 * 1.76f));
}

TEST(GuiLayout, ButtonsNeverOverlapTheLabel) {
  // Room: right-aligned.
  EXPECT_EQ(buttons_x(100, 700, 200, 8), 500);
  EXPECT_EQ(buttons_x(492, 700, 200, 8), 500);  // just fits
  // A wide label (UI scale 1.76): never on it; a line of their own.
  EXPECT_EQ(buttons_x(493, 700, 200, 8), -1);
  EXPECT_EQ(buttons_x(600, 700, 200, 8), -1);
}

TEST(GuiLayout, ListOrderFrozenUnderThePointer) {
  // Shown 3,2,1; conversation 1 got a message (now first) and 4 is new; 2 was deleted.
  const std::vector<int64_t> shown = {3, 2, 1};
  const std::vector<int64_t> fresh = {4, 1, 3};
  const std::vector<size_t> order = frozen_order(shown, fresh);
  std::vector<int64_t> ids;
  for (size_t i : order) ids.push_back(fresh[i]);
  EXPECT_EQ(ids, (std::vector<int64_t>{3, 1, 4}));  // rows in place, the new one last
}

TEST(GuiFormat, MatchRangesAreCaseInsensitive) {
  using R = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(match_ranges("Hello hello HELLO", "hello"), (R{{0, 5}, {6, 5}, {12, 5}}));
  EXPECT_EQ(match_ranges("aaaa", "aa"), (R{{0, 2}, {2, 2}}));
  EXPECT_TRUE(match_ranges("abc", "").empty());
  EXPECT_TRUE(match_ranges("ab", "abc").empty());
}

TEST(GuiFormat, ReplyPlaceholders) {
  const nlohmann::json none = nlohmann::json::object();
  EXPECT_EQ(reply_placeholder("streaming", "", "", none).text, "waiting for the first token…");
  // A white-space token is a token: "waiting" is gone.
  EXPECT_EQ(reply_placeholder("streaming", "\n\n", "", none).text, "writing… (2 characters of white space so far)");
  EXPECT_EQ(reply_placeholder("streaming", "", "hmm", none).text, "thinking…");
  EXPECT_TRUE(reply_placeholder("streaming", "Hi", "", none).text.empty());
  // Ended inside the thinking on the token limit.
  const ReplyPlaceholder p = reply_placeholder("complete", "", "let me think", {{"stop_reason", "max_tokens"}});
  EXPECT_EQ(p.text, "no answer: ran out of tokens while thinking");
  EXPECT_NE(p.advice.find("Max tokens"), std::string::npos);
  EXPECT_TRUE(p.warning);
  EXPECT_EQ(reply_placeholder("stopped", "", "x", none).text, "no answer: stopped while thinking");
  EXPECT_EQ(reply_placeholder("complete", "  ", "", none).text, "(2 characters of white space only)");
  EXPECT_EQ(reply_placeholder("complete", "", "", none).text, "(empty reply)");
}

TEST(GuiFormat, ExportFolderIsValidated) {
  test::TempDir dir;
  EXPECT_EQ(export_folder_problem(dir.path().string()), "");
  EXPECT_EQ(export_folder_problem(dir.file("absent")), "no such folder");
  const std::string file = dir.file("f.txt");
  std::ofstream(file) << "x";
  EXPECT_EQ(export_folder_problem(file), "not a folder");
  EXPECT_EQ(export_folder_problem(""), "choose a folder");
}

TEST(GuiDiagnostics, StoredStatsAfterARestart) {
  EXPECT_FALSE(stored_reply_stats(nlohmann::json::object()).has_value());
  const nlohmann::json j = {{"prompt_tokens", 40}, {"prompt_reused", 30}, {"generated_tokens", 12},
                            {"tok_per_s", 55.5},   {"ttft_ms", 80.0},     {"mtp_draft_len", 2},
                            {"mtp_acceptance_per_position", {0.75, 0.5}}, {"context_used", 52},
                            {"context_size", 2048}, {"stop_reason", "stop_token"}, {"backend", "cpu-f32"}};
  const auto s = stored_reply_stats(j);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->generated_tokens, 12);
  EXPECT_EQ(s->prompt_reused, 30);
  EXPECT_DOUBLE_EQ(s->decode_tok_per_s, 55.5);
  EXPECT_EQ(s->mtp_acceptance_per_position, (std::vector<double>{0.75, 0.5}));
  EXPECT_EQ(s->context_size, 2048);
  EXPECT_EQ(s->stop_reason, "stop_token");
}

TEST(GuiConfig, WindowAndPanelsRoundTripAndClamp) {
  test::TempDir dir;
  const std::string path = dir.file("config.json");
  AppConfig c;
  c.window_x = 40;
  c.window_y = 30;
  c.window_w = 1200;
  c.window_h = 800;
  c.show_sidebar = false;
  c.sidebar_em = 22;
  ASSERT_TRUE(c.save(path).ok());
  const AppConfig back = AppConfig::load(path, nullptr);
  EXPECT_EQ(back.window_x, 40);
  EXPECT_EQ(back.window_y, 30);
  EXPECT_EQ(back.window_w, 1200);
  EXPECT_EQ(back.window_h, 800);
  EXPECT_FALSE(back.show_sidebar);
  EXPECT_TRUE(back.show_inspector);
  EXPECT_EQ(back.sidebar_em, 22);
  // Below the minimum, or nonsense: the defaults.
  std::ofstream(path) << R"({"window": {"x": 5, "w": 100, "h": "tall"}, "sidebar_em": 2})";
  const AppConfig bad = AppConfig::load(path, nullptr);
  EXPECT_EQ(bad.window_w, 1600);
  EXPECT_EQ(bad.window_h, 1000);
  EXPECT_EQ(bad.window_x, -1);  // x without y: not placed
  EXPECT_EQ(bad.sidebar_em, AppConfig::kMinSidebarEm);
}

TEST(GuiConfig, FailedLoadWithNothingLoadedFallsBackToCpu) {
  AppConfig c;
  c.backend = "cuda";  // picked, then the load failed with no model loaded
  EXPECT_TRUE(c.on_model_failure(nullptr));
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_TRUE(c.recent_models.empty());
}

TEST(GuiModel, EstimateFromTheHeaderMatchesTheLoad) {
  test::TempDir dir;
  const std::string model = dir.file("tiny.gguf");
  ASSERT_TRUE(test::write_tiny_chat_model(model).ok());
  EngineOptions o;
  o.model_path = model;
  o.n_ctx = 256;
  auto e = estimate_load(o);
  ASSERT_TRUE(e.ok()) << e.error().describe();
  auto engine = Engine::open(o);
  ASSERT_TRUE(engine.ok()) << engine.error().describe();
  EXPECT_EQ(e->state_bytes, (*engine)->backend().info().memory_bytes);  // exact on the CPU backend
  EXPECT_EQ(e->file_bytes, std::filesystem::file_size(model));
  EXPECT_EQ(e->n_ctx, std::min(256, e->n_ctx_train > 0 ? e->n_ctx_train : 256));
  o.model_path = dir.path().string();
  EXPECT_FALSE(estimate_load(o).ok());
}

TEST(GuiModel, LoadErrorsSpeakToAGuiUser) {
  test::TempDir dir;
  Worker w;
  LoadModelCommand c;
  c.path = dir.path().string();  // a folder
  w.post(c);
  ModelStatus status;
  for (const auto& e : test::collect_load(w)) status.on_event(e, 1.0);
  ASSERT_TRUE(status.error.has_value());
  EXPECT_NE(status.error->message.find("is a directory, expected a .gguf file"), std::string::npos)
      << status.error->message;
  // No hint names a command-line flag: the GUI has none.
  EXPECT_EQ(status.error->hint.find("--"), std::string::npos) << status.error->hint;
  c.backend = BackendKind::kCuda;
  c.path = dir.file("tiny.gguf");
  ASSERT_TRUE(test::write_tiny_chat_model(c.path).ok());
  w.post(c);
  for (const auto& e : test::collect_load(w)) status.on_event(e, 2.0);
  if (status.error) {
    EXPECT_EQ(status.error->hint.find("--"), std::string::npos) << status.error->hint;
  }
}

}  // namespace
}  // namespace qc::gui
