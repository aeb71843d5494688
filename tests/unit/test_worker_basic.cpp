// Worker: load the tiny model, generate, check the events' order and content against a direct run of
// the engine (same tokens: the worker adds no state of its own to the decode).
#include <gtest/gtest.h>

#include "generate/generator.h"
#include "qwenchat/worker.h"
#include "runtime/worker_generate.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::test {
namespace {

class WorkerBasic : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("tiny.gguf");
    ASSERT_TRUE(write_tiny_chat_model(path_).ok());
  }
  LoadModelCommand load_command() const {
    LoadModelCommand c;
    c.path = path_;
    c.settings.n_ctx = 512;
    c.settings.n_threads = 1;
    return c;
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(WorkerBasic, LoadReportsModelFacts) {
  Worker w;
  w.post(load_command());
  const auto events = collect_load(w);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(std::holds_alternative<ModelLoading>(events.front()));
  const auto* loaded = find_event<ModelLoaded>(events);
  ASSERT_NE(loaded, nullptr);
  const ModelFacts& f = loaded->facts;
  EXPECT_EQ(f.path, path_);
  EXPECT_EQ(f.architecture, "qwen35");
  EXPECT_EQ(f.n_layer, 8);  // the tiny preset
  EXPECT_EQ(f.quantization, "Q8_0");
  EXPECT_EQ(f.n_mtp, 1);
  EXPECT_EQ(f.n_ctx, 512);
  EXPECT_EQ(f.layer_is_recurrent.size(), 8u);
  EXPECT_EQ(f.backend.name, "cpu-f32");
  EXPECT_GT(f.n_params, 0u);
  EXPECT_GT(f.bytes_per_token, 0u);
  EXPECT_LT(f.bytes_per_token, f.file_bytes);
}

TEST_F(WorkerBasic, GenerationEventsComeInOrderAndMatchADirectRun) {
  Worker w;
  w.post(load_command());
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  const GenerateCommand cmd = greedy_request(42, "Hello there, how are you?", 12);
  w.post(cmd);
  const auto events = collect_generation(w, 42);
  ASSERT_FALSE(events.empty());

  // Started first, Finished last, every delta followed by the snapshot of the same token.
  ASSERT_TRUE(std::holds_alternative<GenerationStarted>(events.front()));
  const auto& fin = std::get<GenerationFinished>(events.back());
  EXPECT_NE(fin.stop_reason, StopReason::error) << fin.error;
  StreamedReply streamed;
  int deltas = 0;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    if (const auto* d = std::get_if<TokenDelta>(&events[i])) {
      EXPECT_EQ(d->id, 42u);
      EXPECT_EQ(d->index, deltas);
      streamed.apply(*d);
      ASSERT_LT(i + 1, events.size());
      const auto* s = std::get_if<StatsSnapshot>(&events[i + 1]);
      ASSERT_NE(s, nullptr) << "event " << i + 1 << " should be the snapshot of token " << deltas;
      EXPECT_EQ(s->generated_tokens, deltas + 1);
      EXPECT_EQ(s->prompt_tokens, std::get<GenerationStarted>(events.front()).prompt_tokens);
      EXPECT_EQ(s->context_size, 512);
      ++deltas;
    } else {
      EXPECT_TRUE(std::holds_alternative<StatsSnapshot>(events[i]) ||
                  std::holds_alternative<TokenDelta>(events[i]))
          << "unexpected event at " << i;
    }
  }
  EXPECT_EQ(deltas, fin.stats.generated_tokens);
  EXPECT_EQ(streamed.content, fin.parts.content);
  EXPECT_EQ(streamed.thinking, fin.parts.thinking);
  EXPECT_EQ(fin.backend, "cpu-f32");

  // The same request straight through the engine gives the same tokens' text.
  EngineOptions eo;
  eo.model_path = path_;
  eo.n_ctx = 512;
  eo.n_threads = 1;
  auto engine = Engine::open(eo);
  ASSERT_TRUE(engine.ok());
  GenerateRequest req;
  auto prompt = encode_chat((*engine)->tokenizer(), cmd.history, cmd.render);
  ASSERT_TRUE(prompt.ok());
  req.prompt = *prompt;
  req.max_new_tokens = cmd.max_new_tokens;
  req.sampler = cmd.sampler;
  req.stop_tokens = (*engine)->tokenizer().special().stop;
  Generator gen((*engine)->backend(), (*engine)->tokenizer());
  auto direct = gen.generate(req);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(direct->text, fin.text);
  EXPECT_EQ(direct->stats.final_logits_hash, fin.stats.final_logits_hash);
}

// MTP acceptance is live: every snapshot carries the counters so far (never decreasing), and the last one
// equals the final figures (the counters are updated before the token they decide is emitted).
TEST_F(WorkerBasic, SnapshotsCarryMtpCountersLive) {
  Worker w;
  w.post(load_command());
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  GenerateCommand cmd = greedy_request(7, "Count with me: one two three", 16);
  cmd.mtp.enabled = true;
  cmd.mtp.draft_len = 2;
  w.post(cmd);
  const auto events = collect_generation(w, 7);
  const auto& fin = std::get<GenerationFinished>(events.back());
  ASSERT_NE(fin.stop_reason, StopReason::error) << fin.error;
  ASSERT_EQ(fin.stats.mtp_draft_len, 2);
  const StatsSnapshot* last = nullptr;
  for (const WorkerEvent& e : events) {
    const auto* s = std::get_if<StatsSnapshot>(&e);
    if (!s) continue;
    EXPECT_EQ(s->mtp_draft_len, 2);
    if (last) {
      for (size_t j = 0; j < s->mtp_drafted.size(); ++j) {
        EXPECT_GE(s->mtp_drafted[j], last->mtp_drafted[j]);
        EXPECT_GE(s->mtp_accepted[j], last->mtp_accepted[j]);
        EXPECT_LE(s->mtp_accepted[j], s->mtp_drafted[j]);
      }
    }
    last = s;
  }
  ASSERT_NE(last, nullptr);
  EXPECT_GT(last->mtp_drafted[0], 0);
  EXPECT_EQ(last->mtp_drafted, fin.stats.mtp_drafted);
  EXPECT_EQ(last->mtp_accepted, fin.stats.mtp_accepted);
}

TEST_F(WorkerBasic, ProbesSettingFillsLayerNorms) {
  Worker w;
  LoadModelCommand c = load_command();
  w.post(c);
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  w.post(greedy_request(1, "hi", 2));
  const auto off = collect_generation(w, 1);
  const auto* s_off = find_event<StatsSnapshot>(off);
  ASSERT_NE(s_off, nullptr);
  EXPECT_TRUE(s_off->layer_norms.empty());

  // Probes live in KernelConfig, their one home: switched between replies without a rebuild.
  KernelConfig k = c.settings.kernels;
  k.probes = true;
  w.post(SetKernelConfigCommand{k});
  const auto applied =
      collect_until(w, [](const WorkerEvent& e) { return std::holds_alternative<WorkerNotice>(e); });
  EXPECT_TRUE(std::get<WorkerNotice>(applied.back()).ok) << std::get<WorkerNotice>(applied.back()).message;
  EXPECT_EQ(std::get<WorkerNotice>(applied.back()).what, "kernels");
  w.post(greedy_request(2, "hi", 2));
  const auto gen_on = collect_generation(w, 2);
  const auto* s_on = find_event<StatsSnapshot>(gen_on);
  ASSERT_NE(s_on, nullptr);
  ASSERT_EQ(s_on->layer_norms.size(), 8u);
  for (float n : s_on->layer_norms) EXPECT_GT(n, 0.0f);  // a residual stream of O(1) entries is never 0
  EXPECT_EQ(std::get<GenerationFinished>(gen_on.back()).text, std::get<GenerationFinished>(off.back()).text);

  // And at load time, through the settings' kernels.
  EngineSettings rebuilt = c.settings;
  rebuilt.kernels.probes = true;
  w.post(UpdateSettingsCommand{rebuilt});
  const auto reloaded =
      collect_until(w, [](const WorkerEvent& e) { return std::holds_alternative<WorkerNotice>(e); });
  ASSERT_NE(find_event<ModelLoaded>(reloaded), nullptr);
  w.post(greedy_request(3, "hi", 2));
  const auto gen_load = collect_generation(w, 3);  // kept: find_event points into it
  const auto* s_load = find_event<StatsSnapshot>(gen_load);
  ASSERT_NE(s_load, nullptr);
  EXPECT_EQ(s_load->layer_norms.size(), 8u);
}

TEST_F(WorkerBasic, SwitchBackendToDoubleAndBack) {
  Worker w;
  w.post(load_command());
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  w.post(SwitchBackendCommand{BackendKind::kCpuF64});
  const auto ev =
      collect_until(w, [](const WorkerEvent& e) { return std::holds_alternative<WorkerNotice>(e); });
  const auto* loaded = find_event<ModelLoaded>(ev);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->facts.backend.name, "cpu-f64");
  w.post(greedy_request(3, "hello", 3));
  const auto gen = collect_generation(w, 3);
  EXPECT_EQ(std::get<GenerationFinished>(gen.back()).backend, "cpu-f64");
}

TEST(WorkerFit, DropsEarliestTurnsButKeepsSystemAndLast) {
  TempDir dir;
  ASSERT_TRUE(write_tiny_chat_model(dir.file("m.gguf")).ok());
  EngineOptions eo;
  eo.model_path = dir.file("m.gguf");
  auto engine = Engine::open(eo);
  ASSERT_TRUE(engine.ok());
  const Tokenizer& tok = (*engine)->tokenizer();
  std::vector<ChatMessage> h = {{"system", "Be brief.", ""}};
  for (int i = 0; i < 6; ++i) {
    h.push_back({"user", "question number " + std::to_string(i) + " about the weather today", ""});
    h.push_back({"assistant", "answer number " + std::to_string(i) + " says it is sunny", ""});
  }
  h.push_back({"user", "last one", ""});
  ChatRenderOptions ro;
  auto full = encode_chat(tok, h, ro);
  ASSERT_TRUE(full.ok());
  const int n_full = static_cast<int>(full->size());
  // Room for the whole conversation: nothing dropped.
  auto all = fit_prompt(tok, h, ro, n_full + 8, 8);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->dropped_messages, 0);
  // Half the room: some dropped, and the result is exactly the encoding of system + the kept tail.
  auto some = fit_prompt(tok, h, ro, n_full / 2, 8);
  ASSERT_TRUE(some.ok());
  ASSERT_GT(some->dropped_messages, 0);
  std::vector<ChatMessage> kept = {h.front()};
  kept.insert(kept.end(), h.begin() + 1 + some->dropped_messages, h.end());
  auto expect = encode_chat(tok, kept, ro);
  ASSERT_TRUE(expect.ok());
  EXPECT_EQ(some->tokens, *expect);
  EXPECT_LE(static_cast<int>(some->tokens.size()) + 8, n_full / 2);
  // No room even for system + last turn: an error that names both numbers.
  auto none = fit_prompt(tok, h, ro, 10, 8);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("context holds 10"), std::string::npos) << none.error().message;
}

// The drop is found from where each turn starts in one encoding, not by re-encoding once per dropped
// message (minutes for 20,000 messages): for every budget it must equal the one-at-a-time reference, with
// and without a system prompt from the render options.
TEST(WorkerFit, DropCountIsTheMinimalOneForEveryBudget) {
  TempDir dir;
  ASSERT_TRUE(write_tiny_chat_model(dir.file("m.gguf")).ok());
  EngineOptions eo;
  eo.model_path = dir.file("m.gguf");
  auto engine = Engine::open(eo);
  ASSERT_TRUE(engine.ok());
  const Tokenizer& tok = (*engine)->tokenizer();
  std::vector<ChatMessage> h;
  for (int i = 0; i < 9; ++i) {
    h.push_back({"user", "question " + std::to_string(i) + std::string(static_cast<size_t>(i * 7), 'x'), ""});
    h.push_back({"assistant", "answer " + std::to_string(i) + "\n\nwith a second paragraph", ""});
  }
  h.push_back({"user", "the last question", ""});
  for (const std::string& system : {std::string(), std::string("Be brief.")}) {
    ChatRenderOptions ro;
    ro.system_prompt = system;
    ro.thinking = false;
    const int full = static_cast<int>(encode_chat(tok, h, ro)->size());
    for (int budget = 8; budget <= full + 8; budget += 3) {
      int reference = 0;  // one message at a time, re-encoding every time
      std::vector<ChatMessage> r = h;
      while (r.size() > 1 && static_cast<int>(encode_chat(tok, r, ro)->size()) + 4 > budget) {
        r.erase(r.begin());
        ++reference;
      }
      const bool fits = static_cast<int>(encode_chat(tok, r, ro)->size()) + 4 <= budget;
      auto got = fit_prompt(tok, h, ro, budget, 4);
      ASSERT_EQ(got.ok(), fits) << "budget " << budget;
      if (!fits) continue;
      EXPECT_EQ(got->dropped_messages, reference) << "budget " << budget << " system '" << system << "'";
      EXPECT_EQ(got->tokens, *encode_chat(tok, r, ro)) << "budget " << budget;
    }
  }
}

TEST(WorkerDelta, AppendOrReplace) {
  std::string d;
  bool r = true;
  part_delta("abc", "abcdef", &d, &r);
  EXPECT_EQ(d, "def");
  EXPECT_FALSE(r);
  part_delta("abc\n", "abc", &d, &r);
  EXPECT_EQ(d, "abc");
  EXPECT_TRUE(r);
  part_delta("", "", &d, &r);
  EXPECT_EQ(d, "");
  EXPECT_FALSE(r);
}

}  // namespace
}  // namespace qc::test
