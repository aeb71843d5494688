// Worker: kernel configs apply without waiting for the reply in progress (at its next token boundary),
// invalid ones are refused with the field named, and the facts report the config in use.
#include <gtest/gtest.h>

#include "qwenchat/worker.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::test {
namespace {

LoadModelCommand load(const std::string& path) {
  LoadModelCommand c;
  c.path = path;
  c.settings.n_ctx = 256;
  c.settings.n_threads = 1;
  return c;
}

bool is_kernel_notice(const WorkerEvent& e) {
  const auto* n = std::get_if<WorkerNotice>(&e);
  return n != nullptr && n->what == "kernels";
}

TEST(WorkerKernels, IdleConfigAppliesAndShowsInTheFacts) {
  TempDir dir;
  ASSERT_TRUE(write_tiny_chat_model(dir.file("m.gguf")).ok());
  Worker w;
  w.post(load(dir.file("m.gguf")));
  const auto loaded = collect_load(w);
  ASSERT_NE(find_event<ModelLoaded>(loaded), nullptr);
  EXPECT_EQ(find_event<ModelLoaded>(loaded)->facts.kernels.gemv, KernelConfig{}.gemv);
  EXPECT_EQ(find_event<ModelLoaded>(loaded)->facts.kernel_variant(), "");  // the CPU has no variants

  KernelConfig k;
  k.gemv = GemvVariant::kHLU4;
  k.cuda_graph = false;
  w.post(SetKernelConfigCommand{k});
  const auto ev =
      collect_until(w, [](const WorkerEvent& e) { return std::holds_alternative<ModelLoaded>(e); });
  ASSERT_GE(ev.size(), 2u);
  const auto& n = std::get<WorkerNotice>(ev[ev.size() - 2]);
  EXPECT_TRUE(n.ok) << n.message;
  EXPECT_EQ(n.message, "GEMV hlu4 applied before the next command");
  EXPECT_EQ(std::get<ModelLoaded>(ev.back()).facts.kernels.gemv, GemvVariant::kHLU4);
  EXPECT_FALSE(std::get<ModelLoaded>(ev.back()).facts.kernels.cuda_graph);

  KernelConfig bad;
  bad.split_k = 1;
  w.post(SetKernelConfigCommand{bad});
  const auto refused = collect_until(w, is_kernel_notice);
  const auto& r = std::get<WorkerNotice>(refused.back());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "kernel config: split_k must be in [2, 16], got 1");
}

TEST(WorkerKernels, AReplyInProgressSwitchesAtTheNextToken) {
  TempDir dir;
  ASSERT_TRUE(write_tiny_chat_model(dir.file("m.gguf")).ok());
  // The hook posts a config while token 1's events are being emitted; the worker applies it right after
  // that token, before the next one is computed.
  Worker* self = nullptr;
  WorkerOptions o;
  o.on_event = [&self](const WorkerEvent& e) {
    if (const auto* d = std::get_if<TokenDelta>(&e); d && d->index == 1) {
      KernelConfig k;
      k.gemv = GemvVariant::kSplitK;
      self->post(SetKernelConfigCommand{k});
    }
  };
  Worker w(o);
  self = &w;
  w.post(load(dir.file("m.gguf")));
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  GenerateCommand g = greedy_request(1, "hello", 6);
  g.sampler.temperature = 1.0f;  // sampled, so the seeded reply runs past token 2 (checked below)
  g.sampler.top_k = 0;
  g.sampler.top_p = 1.0f;
  g.sampler.seed = 11;
  w.post(g);
  const auto ev = collect_generation(w, 1);
  const auto& fin = std::get<GenerationFinished>(ev.back());
  ASSERT_GE(fin.stats.generated_tokens, 3) << "the seeded reply must outlast the switch";
  // Order: delta 1, snapshot 1, the notice, the new facts, then delta 2.
  size_t notice_at = 0, delta2_at = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (is_kernel_notice(ev[i])) notice_at = i;
    if (const auto* d = std::get_if<TokenDelta>(&ev[i]); d && d->index == 2) delta2_at = i;
  }
  ASSERT_GT(notice_at, 0u);
  EXPECT_EQ(std::get<WorkerNotice>(ev[notice_at]).message, "GEMV sk applied at token 2 of the reply");
  EXPECT_TRUE(std::holds_alternative<StatsSnapshot>(ev[notice_at - 1]));
  EXPECT_TRUE(std::holds_alternative<ModelLoaded>(ev[notice_at + 1]));
  EXPECT_EQ(delta2_at, notice_at + 2);
  EXPECT_EQ(fin.kernel, "");  // CPU backend: no kernel variant to report
}

}  // namespace
}  // namespace qc::test
