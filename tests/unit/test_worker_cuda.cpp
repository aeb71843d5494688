// Worker on the CUDA backend (skipped without the backend or a device): the load reports the weight
// upload, generation works, and a kernel switch in the middle of a reply between two variants of one
// bit-identity class (tile -> hlu4, both "hl") leaves the greedy tokens exactly as without the switch.
#include <gtest/gtest.h>

#include "qwenchat/worker.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::test {
namespace {

TEST(WorkerCuda, UploadProgressGenerationAndAKernelSwitchMidReply) {
  if (!cuda_backend_compiled()) GTEST_SKIP() << "this build has no CUDA backend";
  TempDir dir;
  ASSERT_TRUE(write_chat_model(dir.file("m.gguf"), cuda_test_shape(), 3).ok());
  constexpr int kSwitchAt = 3;
  bool switch_armed = false;
  Worker* self = nullptr;
  WorkerOptions o;
  o.on_event = [&](const WorkerEvent& e) {
    if (const auto* d = std::get_if<TokenDelta>(&e); d && switch_armed && d->index == kSwitchAt) {
      KernelConfig k;
      k.gemv = GemvVariant::kHLU4;
      self->post(SetKernelConfigCommand{k});
    }
  };
  Worker w(o);
  self = &w;
  LoadModelCommand c;
  c.path = dir.file("m.gguf");
  c.backend = BackendKind::kCuda;
  c.settings.n_ctx = 512;
  w.post(c);
  const auto load = collect_load(w);
  if (const auto* f = find_event<ModelLoadFailed>(load)) {
    if (f->error.describe().find("no CUDA device") != std::string::npos) GTEST_SKIP() << f->error.describe();
    FAIL() << f->error.describe();
  }
  const auto* loaded = find_event<ModelLoaded>(load);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->facts.backend.name, "cuda");
  EXPECT_EQ(loaded->facts.kernel_variant(), "tile");
  int progress = 0;
  for (const auto& e : load) {
    if (const auto* l = std::get_if<ModelLoading>(&e); l && l->fraction >= 0) ++progress;
  }
  EXPECT_GT(progress, 0) << "the CUDA backend's upload progress should reach the worker's events";
  std::printf("[ worker   ] %s on %s: %d progress events, %s\n", loaded->facts.kernel_variant().c_str(),
              loaded->facts.backend.device.c_str(), progress, loaded->facts.summary.c_str());

  // Reference: greedy, no switch.
  w.post(greedy_request(1, "The GPU says hello", 24));
  const auto plain = collect_generation(w, 1);
  const auto& ref = std::get<GenerationFinished>(plain.back());
  ASSERT_NE(ref.stop_reason, StopReason::error) << ref.error;
  ASSERT_GT(ref.stats.generated_tokens, kSwitchAt + 1) << "the reply must outlast the switch";
  EXPECT_EQ(ref.kernel, "tile");

  // The same request, switching to hlu4 after token kSwitchAt.
  switch_armed = true;
  w.post(greedy_request(2, "The GPU says hello", 24));
  const auto switched = collect_generation(w, 2);
  const auto& fin = std::get<GenerationFinished>(switched.back());
  ASSERT_NE(fin.stop_reason, StopReason::error) << fin.error;
  bool noticed = false;
  for (const auto& e : switched) {
    if (const auto* n = std::get_if<WorkerNotice>(&e); n && n->what == "kernels") {
      EXPECT_TRUE(n->ok) << n->message;
      EXPECT_EQ(n->message, "GEMV hlu4 applied at token " + std::to_string(kSwitchAt + 1) + " of the reply");
      noticed = true;
    }
  }
  EXPECT_TRUE(noticed);
  EXPECT_EQ(fin.kernel, "hlu4");
  EXPECT_EQ(fin.text, ref.text);  // same bit-identity class: the same greedy tokens
  EXPECT_EQ(fin.stats.final_logits_hash, ref.stats.final_logits_hash);
  std::printf("[ worker   ] switch tile->hlu4 at token %d: %d tokens, hash %s (reference %s), %.1f tok/s\n",
              kSwitchAt + 1, fin.stats.generated_tokens, fin.stats.final_logits_hash.c_str(),
              ref.stats.final_logits_hash.c_str(), fin.stats.decode_tok_per_s);
}

}  // namespace
}  // namespace qc::test
