// The state-reuse checks shared by the CPU (tests/unit/test_prefix_reuse.cpp) and CUDA
// (tests/gpu/test_prefix_reuse.cpp) suites. Two engines on the same file and backend: `kept` answers
// with a PrefixCache, `fresh` prefills every prompt from a reset backend; a reply must be the same bits
// either way (text, hash of the last logits row, MTP counters), and `kept` must have reused what a kept
// state held. Each check is a conversation a user would have: next message, regenerate, an edit in the
// middle, thinking replies, MTP, sampling, a cancelled reply, a memory budget.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "qwenchat/events.h"
#include "runtime/engine.h"
#include "runtime/prefix_cache.h"
#include "runtime/worker_generate.h"

namespace qc::test {

struct EnginePair {
  std::unique_ptr<Engine> kept;
  std::unique_ptr<Engine> fresh;
};

struct ReuseReply {
  StopReason stop = StopReason::error;
  std::string error, text, content, hash;
  int prompt = 0, reused = 0, generated = 0;
  std::array<int64_t, kMaxDraftLen> drafted{}, accepted{};
};

// One reply through run_generation (the worker's own path), with `cache` or from a reset backend.
inline ReuseReply reuse_run(Engine& engine, PrefixCache* cache, const GenerateCommand& cmd,
                            std::function<bool()> cancel = {}) {
  ReuseReply r;
  GenerationContext ctx;
  ctx.engine = &engine;
  ctx.cache = cache;
  int tokens = 0;
  ctx.cancelled = [&] { return cancel ? cancel() : false; };
  ctx.emit = [&](WorkerEvent e) {
    if (const auto* s = std::get_if<GenerationStarted>(&e)) {
      r.prompt = s->prompt_tokens;
      r.reused = s->prompt_reused;
    } else if (std::holds_alternative<TokenDelta>(e)) {
      ++tokens;
    } else if (auto* f = std::get_if<GenerationFinished>(&e)) {
      r.stop = f->stop_reason;
      r.error = f->error;
      r.text = f->text;
      r.content = f->parts.content;
      r.hash = f->stats.final_logits_hash;
      r.generated = f->stats.generated_tokens;
      r.drafted = f->stats.mtp_drafted;
      r.accepted = f->stats.mtp_accepted;
      EXPECT_EQ(f->stats.prompt_reused, r.reused);
      EXPECT_EQ(f->stats.prompt_tokens, r.prompt);
    }
  };
  run_generation(cmd, ctx);
  return r;
}

inline GenerateCommand reuse_command(std::vector<ChatMessage> history, int max_tokens = 10) {
  GenerateCommand g;
  g.history = std::move(history);
  g.render.thinking = false;
  g.render.system_prompt = "You are a concise assistant.";
  g.sampler = SamplerParams::greedy();
  g.max_new_tokens = max_tokens;
  g.reserve_tokens = 16;
  return g;
}

// The kept engine's reply must be the fresh engine's, bit for bit. Returns the kept one.
inline ReuseReply expect_same_reply(EnginePair& p, PrefixCache& cache, const GenerateCommand& cmd,
                                    const std::string& what) {
  const ReuseReply kept = reuse_run(*p.kept, &cache, cmd);
  const ReuseReply fresh = reuse_run(*p.fresh, nullptr, cmd);
  EXPECT_NE(kept.stop, StopReason::error) << what << ": " << kept.error;
  EXPECT_EQ(fresh.reused, 0) << what;
  EXPECT_EQ(kept.prompt, fresh.prompt) << what;
  EXPECT_EQ(kept.text, fresh.text) << what;
  EXPECT_EQ(kept.hash, fresh.hash) << what << ": the last logits row differs in its bits";
  EXPECT_EQ(kept.generated, fresh.generated) << what;
  EXPECT_EQ(kept.drafted, fresh.drafted) << what;
  EXPECT_EQ(kept.accepted, fresh.accepted) << what;
  return kept;
}

// Tokens of the reply's turn boundary, on the backend's prompt grid (what a regenerated reply and the next
// message reuse).
inline int turn_boundary(Engine& e, const GenerateCommand& cmd) {
  auto f = fit_prompt(e.tokenizer(), cmd.history, cmd.render, e.backend().n_ctx(), cmd.reserve_tokens);
  EXPECT_TRUE(f.ok());
  return f.ok() ? e.backend().prefill_grid_floor(f->turn_boundary) : -1;  // where the kept state sits
}

constexpr uint64_t kReuseBudget = 256ull << 20;

inline void next_message_continues(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  std::vector<ChatMessage> h = {{"user", "Hello there, how are you?", ""}};
  const ReuseReply r1 = expect_same_reply(p, cache, reuse_command(h), "first message");
  EXPECT_EQ(r1.reused, 0);
  h.push_back({"assistant", r1.content, ""});
  h.push_back({"user", "Tell me more about it.", ""});
  const GenerateCommand c2 = reuse_command(h);
  const ReuseReply r2 = expect_same_reply(p, cache, c2, "second message");
  // Turn 1's boundary at least (the reply re-rendered without its think markup follows it).
  EXPECT_GE(r2.reused, turn_boundary(*p.kept, reuse_command({h[0]})));
  EXPECT_LT(r2.reused, r2.prompt);
  h.push_back({"assistant", r2.content, ""});
  h.push_back({"user", "Thanks.", ""});
  const ReuseReply r3 = expect_same_reply(p, cache, reuse_command(h), "third message");
  EXPECT_GE(r3.reused, turn_boundary(*p.kept, c2));
}

inline void regenerate_restarts(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  const GenerateCommand c = reuse_command({{"user", "Name three colours.", ""}});
  expect_same_reply(p, cache, c, "first reply");
  const ReuseReply again = expect_same_reply(p, cache, c, "regenerated reply");
  EXPECT_EQ(again.reused, turn_boundary(*p.kept, c));
  const ReuseReply third = expect_same_reply(p, cache, c, "regenerated twice");
  EXPECT_EQ(third.reused, again.reused);
  EXPECT_EQ(cache.stats().snapshots, 1) << "a regenerated reply replaces its snapshot, it does not add one";
}

inline void edit_falls_back(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  std::vector<ChatMessage> h = {{"user", "First question here.", ""}};
  const GenerateCommand c1 = reuse_command(h);
  const ReuseReply r1 = expect_same_reply(p, cache, c1, "turn 1");
  h.push_back({"assistant", r1.content, ""});
  h.push_back({"user", "Second question here.", ""});
  const GenerateCommand c2 = reuse_command(h);
  const ReuseReply r2 = expect_same_reply(p, cache, c2, "turn 2");
  h.push_back({"assistant", r2.content, ""});
  h.push_back({"user", "Third question here.", ""});
  expect_same_reply(p, cache, reuse_command(h), "turn 3");
  // Edit the second user message: the nearest kept state is turn 1's boundary.
  std::vector<ChatMessage> edited(h.begin(), h.begin() + 2);
  edited.push_back({"user", "An edited second question.", ""});
  const ReuseReply e = expect_same_reply(p, cache, reuse_command(edited), "edited turn 2");
  EXPECT_EQ(e.reused, turn_boundary(*p.kept, c1));
  // Back to the original branch's third turn: turn 2's snapshot lies past the edited branch's shared
  // prefix with the live state, so it cannot be used; turn 1's can.
  const ReuseReply back = expect_same_reply(p, cache, reuse_command(h), "original branch again");
  EXPECT_EQ(back.reused, turn_boundary(*p.kept, c1));
  // An edit of the very first message shares only the system turn: from scratch.
  const ReuseReply first = expect_same_reply(p, cache, reuse_command({{"user", "Something else.", ""}}),
                                             "edited first message");
  EXPECT_EQ(first.reused, 0);
}

inline void thinking_history(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  std::vector<ChatMessage> h = {{"user", "Think about two plus two.", ""}};
  GenerateCommand c1 = reuse_command(h, 14);
  c1.render.thinking = true;
  const ReuseReply r1 = expect_same_reply(p, cache, c1, "thinking turn 1");
  h.push_back({"assistant", r1.content.empty() ? "Four." : r1.content, "some reasoning"});
  h.push_back({"user", "And three plus three?", ""});
  GenerateCommand c2 = reuse_command(h, 14);
  c2.render.thinking = true;
  const ReuseReply r2 = expect_same_reply(p, cache, c2, "thinking turn 2");
  EXPECT_EQ(r2.reused, turn_boundary(*p.kept, c1));
}

inline GenerateCommand with_mtp(GenerateCommand c, int draft_len) {
  c.mtp.enabled = true;
  c.mtp.draft_len = draft_len;
  return c;
}

inline void mtp_reuse(EnginePair& p) {
  ASSERT_TRUE(p.kept->backend().has_mtp());
  PrefixCache cache(kReuseBudget);
  std::vector<ChatMessage> h = {{"user", "Count from one to five.", ""}};
  const GenerateCommand c1 = with_mtp(reuse_command(h, 16), 2);
  const ReuseReply r1 = expect_same_reply(p, cache, c1, "MTP turn 1");
  EXPECT_GT(r1.drafted[0], 0);
  h.push_back({"assistant", r1.content, ""});
  h.push_back({"user", "Now backwards.", ""});
  const ReuseReply r2 = expect_same_reply(p, cache, with_mtp(reuse_command(h, 16), 2), "MTP turn 2");
  EXPECT_GE(r2.reused, turn_boundary(*p.kept, c1));
  const GenerateCommand c2 = with_mtp(reuse_command(h, 16), 2);
  const ReuseReply again = expect_same_reply(p, cache, c2, "MTP regenerate");
  EXPECT_EQ(again.reused, turn_boundary(*p.kept, c2));
  // A reply without MTP may start from a state that has MTP entries.
  const ReuseReply plain = expect_same_reply(p, cache, reuse_command(h, 16), "plain after MTP");
  EXPECT_GT(plain.reused, 0);
}

inline void mtp_after_plain(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  const GenerateCommand c = reuse_command({{"user", "Say something.", ""}}, 12);
  expect_same_reply(p, cache, c, "plain reply");
  // The MTP block's cache was never written for these positions: no reuse, and the same bits as fresh.
  const ReuseReply m = expect_same_reply(p, cache, with_mtp(c, 1), "MTP regenerate of a plain reply");
  EXPECT_EQ(m.reused, 0);
  const ReuseReply again = expect_same_reply(p, cache, with_mtp(c, 1), "MTP regenerate again");
  EXPECT_EQ(again.reused, turn_boundary(*p.kept, c));
}

inline void sampled_reuse(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  std::vector<ChatMessage> h = {{"user", "Write a short line.", ""}};
  GenerateCommand c1 = reuse_command(h, 12);
  c1.sampler = SamplerParams{};
  c1.sampler.temperature = 0.9f;
  c1.sampler.seed = 1234;
  const ReuseReply r1 = expect_same_reply(p, cache, c1, "sampled turn 1");
  h.push_back({"assistant", r1.content, ""});
  h.push_back({"user", "Another one.", ""});
  GenerateCommand c2 = reuse_command(h, 12);
  c2.sampler = c1.sampler;
  c2.sampler.seed = 99;
  const ReuseReply r2 = expect_same_reply(p, cache, c2, "sampled turn 2");
  EXPECT_GT(r2.reused, 0);
}

inline void cancelled_then_continue(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  std::vector<ChatMessage> h = {{"user", "Tell a long story.", ""}};
  const GenerateCommand c1 = reuse_command(h, 40);
  int calls = 0;  // cancelled a few tokens into the reply (the generator asks before every token)
  const ReuseReply cut = reuse_run(*p.kept, &cache, c1, [&] { return ++calls > 6; });
  ASSERT_EQ(cut.stop, StopReason::cancelled) << cut.error;
  h.push_back({"assistant", cut.content, ""});
  h.push_back({"user", "Go on.", ""});
  const ReuseReply next = expect_same_reply(p, cache, reuse_command(h, 10), "after a cancelled reply");
  EXPECT_GE(next.reused, turn_boundary(*p.kept, c1));
  // And the cancelled reply regenerated in full.
  const ReuseReply whole = expect_same_reply(p, cache, c1, "the cancelled reply regenerated");
  EXPECT_EQ(whole.reused, turn_boundary(*p.kept, c1));
}

inline void budget_respected(EnginePair& p) {
  // Measure one snapshot, then allow exactly two.
  PrefixCache probe(kReuseBudget);
  const GenerateCommand c0 = reuse_command({{"user", "One.", ""}});
  reuse_run(*p.kept, &probe, c0);
  ASSERT_EQ(probe.stats().snapshots, 1);
  const uint64_t one = probe.stats().snapshot_bytes;
  ASSERT_GT(one, 0u);
  probe.clear();

  PrefixCache cache(2 * one + one / 2);
  std::vector<ChatMessage> h = {{"user", "One.", ""}};
  std::vector<GenerateCommand> turns;
  for (int t = 0; t < 4; ++t) {
    turns.push_back(reuse_command(h));
    const ReuseReply r = expect_same_reply(p, cache, turns.back(), "turn " + std::to_string(t + 1));
    EXPECT_LE(cache.stats().snapshot_bytes, cache.budget_bytes());
    EXPECT_LE(cache.stats().snapshots, 2);
    h.push_back({"assistant", r.content, ""});
    h.push_back({"user", "Next " + std::to_string(t) + ".", ""});
  }
  // Turn 1's snapshot was evicted (oldest first): editing turn 2 finds nothing kept before it...
  std::vector<ChatMessage> edit(h.begin(), h.begin() + 2);
  edit.push_back({"user", "Edited.", ""});
  const ReuseReply e = expect_same_reply(p, cache, reuse_command(edit), "edit after eviction");
  EXPECT_EQ(e.reused, 0);
}

inline GenerateCommand in_conversation(GenerateCommand c, uint64_t conversation) {
  c.conversation = conversation;
  return c;
}

// A, then B, then A again, then B again: each return restores the parked turn-boundary state with its KV
// entries (snapshot_context), so only the new turn is prefilled, with the bits of a fresh prefill.
inline void switch_conversations(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  std::vector<ChatMessage> a = {{"user", "Tell me about rivers.", ""}};
  const GenerateCommand a1 = in_conversation(reuse_command(a), 1);
  const ReuseReply ra1 = expect_same_reply(p, cache, a1, "A turn 1");
  a.push_back({"assistant", ra1.content, ""});
  a.push_back({"user", "And lakes?", ""});
  const GenerateCommand a2 = in_conversation(reuse_command(a), 1);
  const ReuseReply ra2 = expect_same_reply(p, cache, a2, "A turn 2");
  std::vector<ChatMessage> b = {{"user", "Something completely different.", ""}};
  const GenerateCommand b1 = in_conversation(reuse_command(b), 2);
  const ReuseReply rb1 = expect_same_reply(p, cache, b1, "B turn 1");
  EXPECT_EQ(rb1.reused, 0);
  EXPECT_EQ(cache.stats().parked, 1);
  a.push_back({"assistant", ra2.content, ""});
  a.push_back({"user", "And seas?", ""});
  const ReuseReply ra3 = expect_same_reply(p, cache, in_conversation(reuse_command(a), 1), "A turn 3 after B");
  EXPECT_EQ(ra3.reused, turn_boundary(*p.kept, a2));
  b.push_back({"assistant", rb1.content, ""});
  b.push_back({"user", "More, please.", ""});
  const ReuseReply rb2 = expect_same_reply(p, cache, in_conversation(reuse_command(b), 2), "B turn 2 after A");
  EXPECT_EQ(rb2.reused, turn_boundary(*p.kept, b1));
  EXPECT_EQ(cache.stats().parked, 2);
  EXPECT_LE(cache.stats().snapshot_bytes, cache.budget_bytes());
}

inline void zero_budget(EnginePair& p) {
  PrefixCache cache(0);
  const GenerateCommand c = reuse_command({{"user", "Hello.", ""}});
  expect_same_reply(p, cache, c, "reply");
  EXPECT_EQ(cache.stats().snapshots, 0);
  const ReuseReply again = expect_same_reply(p, cache, c, "regenerated without snapshots");
  EXPECT_EQ(again.reused, 0);
}

inline void clear_forgets(EnginePair& p) {
  PrefixCache cache(kReuseBudget);
  const GenerateCommand c = reuse_command({{"user", "Hello.", ""}});
  expect_same_reply(p, cache, c, "reply");
  cache.clear();
  EXPECT_EQ(cache.stats().snapshots, 0);
  EXPECT_EQ(cache.stats().live_tokens, 0);
  const ReuseReply again = expect_same_reply(p, cache, c, "after clear");
  EXPECT_EQ(again.reused, 0);
}

}  // namespace qc::test
