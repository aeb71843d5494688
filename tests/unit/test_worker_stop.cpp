// Worker: stop() ends the running generation within one token and cancels generations queued before it,
// but not those posted after it. The stop is issued from the worker's event hook at a known token, so the
// expectation is exact without any timing.
#include <atomic>
#include <future>

#include <gtest/gtest.h>

#include "qwenchat/worker.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::test {
namespace {

class WorkerStop : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("tiny.gguf");
    ASSERT_TRUE(write_tiny_chat_model(path_).ok());
  }
  void load(Worker& w) {
    LoadModelCommand c;
    c.path = path_;
    c.settings.n_ctx = 512;
    c.settings.n_threads = 1;
    w.post(c);
    ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  }
  // A sampled request (temperature 1, no filters): the random model's stop tokens are a small share of
  // the vocabulary, and the fixed seed makes the run the same every time.
  static GenerateCommand long_request(uint64_t id) {
    GenerateCommand g = greedy_request(id, "Tell me a long story about the sea.", 200);
    g.sampler.temperature = 1.0f;
    g.sampler.top_k = 0;
    g.sampler.top_p = 1.0f;
    g.sampler.seed = 11;
    return g;
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(WorkerStop, StopTakesEffectWithinOneToken) {
  // The reference run: how many tokens the request makes when left alone.
  int natural = 0;
  {
    Worker w;
    load(w);
    w.post(long_request(1));
    const auto ev = collect_generation(w, 1);
    natural = std::get<GenerationFinished>(ev.back()).stats.generated_tokens;
    EXPECT_NE(std::get<GenerationFinished>(ev.back()).stop_reason, StopReason::error)
        << std::get<GenerationFinished>(ev.back()).error;
  }
  ASSERT_GT(natural, 4) << "the seeded request should run past the token the stop is issued at";

  constexpr int kStopAt = 2;  // stop while handling the delta of token index 2
  Worker* self = nullptr;
  WorkerOptions o;
  o.on_event = [&self](const WorkerEvent& e) {
    if (const auto* d = std::get_if<TokenDelta>(&e); d != nullptr && d->index == kStopAt) self->stop();
  };
  Worker w(o);
  self = &w;
  load(w);
  w.post(long_request(1));
  const auto ev = collect_generation(w, 1);
  const auto& f = std::get<GenerationFinished>(ev.back());
  EXPECT_EQ(f.stop_reason, StopReason::cancelled);
  // The generator checks the flag before every token, so nothing after token kStopAt is produced.
  EXPECT_EQ(f.stats.generated_tokens, kStopAt + 1);
  EXPECT_EQ(count_events<TokenDelta>(ev), kStopAt + 1);
}

TEST_F(WorkerStop, StopCancelsQueuedGenerationsButNotLaterOnes) {
  // The hook holds the worker inside the load until every command below is posted, so generations 1 and
  // 2 are certainly still queued when stop() is called.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  WorkerOptions o;
  o.on_event = [released](const WorkerEvent& e) {
    if (std::holds_alternative<ModelLoading>(e)) released.wait();
  };
  Worker w(o);
  LoadModelCommand c;
  c.path = path_;
  c.settings.n_ctx = 512;
  c.settings.n_threads = 1;
  w.post(c);
  w.post(long_request(1));
  w.post(long_request(2));
  w.stop();  // cancels 1 and 2 (posted before the call), not the load (not a generation)
  w.post(greedy_request(3, "hello", 3));
  release.set_value();
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  const auto e1 = collect_generation(w, 1);
  const auto e2 = collect_generation(w, 2);
  const auto e3 = collect_generation(w, 3);
  EXPECT_EQ(std::get<GenerationFinished>(e1.back()).stop_reason, StopReason::cancelled);
  EXPECT_EQ(std::get<GenerationFinished>(e1.back()).stats.generated_tokens, 0);
  EXPECT_EQ(std::get<GenerationFinished>(e2.back()).stop_reason, StopReason::cancelled);
  const auto& f3 = std::get<GenerationFinished>(e3.back());
  EXPECT_NE(f3.stop_reason, StopReason::cancelled);
  EXPECT_NE(f3.stop_reason, StopReason::error) << f3.error;
  EXPECT_GT(f3.stats.generated_tokens, 0);
}

TEST_F(WorkerStop, CancelEndsOnlyThatGenerationWithinOneToken) {
  // Generation 1 is cancelled from the hook at token kStopAt; generation 2 (queued behind it) and the
  // reference run give the same tokens, so the cancel touched nothing else.
  constexpr int kStopAt = 2;
  Worker* self = nullptr;
  WorkerOptions o;
  o.on_event = [&self](const WorkerEvent& e) {
    if (const auto* d = std::get_if<TokenDelta>(&e); d != nullptr && d->id == 1 && d->index == kStopAt) {
      self->cancel(1);
    }
  };
  Worker w(o);
  self = &w;
  load(w);
  w.post(long_request(1));
  w.post(long_request(2));
  const auto e1 = collect_generation(w, 1);
  const auto e2 = collect_generation(w, 2);
  const auto& f1 = std::get<GenerationFinished>(e1.back());
  EXPECT_EQ(f1.stop_reason, StopReason::cancelled);
  EXPECT_EQ(f1.stats.generated_tokens, kStopAt + 1);
  const auto& f2 = std::get<GenerationFinished>(e2.back());
  EXPECT_NE(f2.stop_reason, StopReason::cancelled);
  EXPECT_NE(f2.stop_reason, StopReason::error) << f2.error;

  Worker ref;
  load(ref);
  ref.post(long_request(2));
  const auto r2 = collect_generation(ref, 2);
  EXPECT_EQ(std::get<GenerationFinished>(r2.back()).text, f2.text);
  EXPECT_EQ(w.queued(), 0u);
}

TEST_F(WorkerStop, CancelOfAQueuedGenerationFinishesItWithoutStarting) {
  // The hook tells when the load runs and holds it there until both generations are posted and one
  // is cancelled, so both certainly wait in the queue.
  std::promise<void> release, entered;
  std::shared_future<void> released = release.get_future().share();
  auto once = std::make_shared<std::atomic<bool>>(false);
  WorkerOptions o;
  o.on_event = [released, &entered, once](const WorkerEvent& e) {
    if (!std::holds_alternative<ModelLoading>(e)) return;
    if (!once->exchange(true)) entered.set_value();
    released.wait();
  };
  Worker w(o);
  LoadModelCommand c;
  c.path = path_;
  c.settings.n_ctx = 512;
  c.settings.n_threads = 1;
  w.post(c);
  entered.get_future().wait();
  w.post(long_request(1));
  w.post(greedy_request(2, "hello", 3));
  EXPECT_EQ(w.queued(), 2u);  // the load runs (held in the hook); both generations wait
  w.cancel(1);
  w.cancel(99);  // unknown: ignored
  release.set_value();
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  const auto e1 = collect_generation(w, 1);
  const auto e2 = collect_generation(w, 2);
  EXPECT_EQ(find_event<GenerationStarted>(e1), nullptr);
  EXPECT_EQ(std::get<GenerationFinished>(e1.back()).stop_reason, StopReason::cancelled);
  EXPECT_EQ(std::get<GenerationFinished>(e1.back()).stats.generated_tokens, 0);
  const auto& f2 = std::get<GenerationFinished>(e2.back());
  EXPECT_NE(f2.stop_reason, StopReason::error) << f2.error;
  EXPECT_NE(f2.stop_reason, StopReason::cancelled);
}

TEST_F(WorkerStop, DestructorCancelsARunningGeneration) {
  // The destructor must return (cancel + join) while a long generation runs; the test passing at all is
  // the check, and the hook proves a generation was running when the worker was destroyed.
  std::atomic<int> deltas{0};
  WorkerOptions o;
  o.on_event = [&deltas](const WorkerEvent& e) { deltas += std::holds_alternative<TokenDelta>(e) ? 1 : 0; };
  auto w = std::make_unique<Worker>(o);
  load(*w);
  GenerateCommand g = long_request(1);
  g.max_new_tokens = 100000;
  g.reserve_tokens = 1;
  w->post(g);
  auto first = collect_until(*w, [](const WorkerEvent& e) { return std::holds_alternative<TokenDelta>(e); });
  ASSERT_NE(find_event<TokenDelta>(first), nullptr);
  w.reset();
  EXPECT_GE(deltas.load(), 1);
}

}  // namespace
}  // namespace qc::test
