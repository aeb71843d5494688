// Conversation state reuse (runtime/prefix_cache.h) on the CPU reference backend: every reply that starts
// from a kept state must be the bit-identical reply of a fresh prefill (same text, same hash of the last
// logits row, same MTP acceptance), and must really have reused what it could. The same checks run on
// the CUDA backend in tests/gpu/test_prefix_reuse.cpp (prefix_reuse_cases.h holds them).
#include <gtest/gtest.h>

#include "prefix_reuse_cases.h"
#include "temp_dir.h"
#include "worker_test_model.h"

namespace qc::test {
namespace {

class PrefixReuse : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("tiny.gguf");
    ASSERT_TRUE(write_tiny_chat_model(path_).ok());
    EngineOptions o;
    o.model_path = path_;
    o.n_ctx = 1024;
    o.n_threads = 2;
    auto kept = Engine::open(o);
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

TEST_F(PrefixReuse, NextMessageContinuesTheLiveState) { next_message_continues(pair_); }
TEST_F(PrefixReuse, RegenerateRestartsAtTheTurnBoundary) { regenerate_restarts(pair_); }
TEST_F(PrefixReuse, EditInTheMiddleFallsBackToTheNearestSnapshot) { edit_falls_back(pair_); }
TEST_F(PrefixReuse, ThinkingDroppedByTheTemplateUsesTheTurnSnapshot) { thinking_history(pair_); }
TEST_F(PrefixReuse, MtpRepliesReuseAndKeepTheirAcceptance) { mtp_reuse(pair_); }
TEST_F(PrefixReuse, StateWithoutMtpEntriesIsNotReusedWithMtp) { mtp_after_plain(pair_); }
TEST_F(PrefixReuse, SampledRepliesStayBitIdentical) { sampled_reuse(pair_); }
TEST_F(PrefixReuse, CancelledReplyLeavesAUsableState) { cancelled_then_continue(pair_); }
TEST_F(PrefixReuse, MemoryBudgetIsRespected) { budget_respected(pair_); }
TEST_F(PrefixReuse, SwitchingConversationsRestoresTheParkedState) { switch_conversations(pair_); }
TEST_F(PrefixReuse, ZeroBudgetKeepsTheLiveStateOnly) { zero_budget(pair_); }
TEST_F(PrefixReuse, ClearForgetsEverything) { clear_forgets(pair_); }

}  // namespace
}  // namespace qc::test
