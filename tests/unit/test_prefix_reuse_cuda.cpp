// Conversation state reuse on the CUDA backend (skipped without the backend or a device): the checks of
// prefix_reuse_cases.h, which need per-position results that do not depend on how positions are grouped
// into forward() calls (kernels/attention.h: the split length depends on the context, not on M).
#include <gtest/gtest.h>

#include "prefix_reuse_cases.h"
#include "temp_dir.h"
#include "worker_test_model.h"

namespace qc::test {
namespace {

class PrefixReuseCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_backend_compiled()) GTEST_SKIP() << "this build has no CUDA backend";
    path_ = dir_.file("m.gguf");
    ASSERT_TRUE(write_chat_model(path_, cuda_test_shape(), 3).ok());
    EngineOptions o;
    o.model_path = path_;
    o.backend = BackendKind::kCuda;
    o.n_ctx = 1024;
    auto kept = Engine::open(o);
    if (!kept.ok() && kept.error().describe().find("no CUDA device") != std::string::npos)
      GTEST_SKIP() << kept.error().describe();
    ASSERT_TRUE(kept.ok()) << kept.error().describe();
    auto fresh = Engine::open(o);
    ASSERT_TRUE(fresh.ok()) << fresh.error().describe();
    pair_.kept = std::move(*kept);
    pair_.fresh = std::move(*fresh);
  }
  TempDir dir_;
  std::string path_;
  EnginePair pair_;
};

TEST_F(PrefixReuseCuda, NextMessageContinuesTheLiveState) { next_message_continues(pair_); }
TEST_F(PrefixReuseCuda, RegenerateRestartsAtTheTurnBoundary) { regenerate_restarts(pair_); }
TEST_F(PrefixReuseCuda, EditInTheMiddleFallsBackToTheNearestSnapshot) { edit_falls_back(pair_); }
TEST_F(PrefixReuseCuda, ThinkingDroppedByTheTemplateUsesTheTurnSnapshot) { thinking_history(pair_); }
TEST_F(PrefixReuseCuda, MtpRepliesReuseAndKeepTheirAcceptance) { mtp_reuse(pair_); }
TEST_F(PrefixReuseCuda, StateWithoutMtpEntriesIsNotReusedWithMtp) { mtp_after_plain(pair_); }
TEST_F(PrefixReuseCuda, SampledRepliesStayBitIdentical) { sampled_reuse(pair_); }
TEST_F(PrefixReuseCuda, CancelledReplyLeavesAUsableState) { cancelled_then_continue(pair_); }
TEST_F(PrefixReuseCuda, MemoryBudgetIsRespected) { budget_respected(pair_); }
TEST_F(PrefixReuseCuda, SwitchingConversationsRestoresTheParkedState) { switch_conversations(pair_); }

}  // namespace
}  // namespace qc::test
