// A fixed conversation with branches, built only through the chat-state operations with fixed
// timestamps, shared by the store and export tests (the export golden files are made from it).
//
//   1 user "Is 91 prime?"
//   └ 2 assistant (thinking, stats)
//     ├ 3 user "And 97?"
//     │ ├ 4 assistant, stopped mid-sentence
//     │ └ 5 assistant (regenerated)
//     └ 6 user "And 101?"  (edit of 3; the current branch)
//       ├ 7 assistant (multi-line, stats)   <- selected again after 8 failed
//       └ 8 assistant, error
// Current branch: 1 2 6 7.
#pragma once

#include <gtest/gtest.h>

#include "chat/chat_state.h"

namespace qc::test {

inline constexpr int64_t kFixtureT0 = 1714564800000;  // 2024-05-01 12:00:00 UTC

inline chat::ChatTree branchy_conversation() {
  using namespace chat;
  ChatTree t;
  t.conversation.id = 7;
  t.conversation.title = "Prime numbers";
  t.conversation.system_prompt = "You are a concise assistant.";
  t.conversation.model_path = "models/qwen3.5-tiny-q8.gguf";
  t.conversation.settings = {{"temperature", 0.7}, {"top_p", 0.9}, {"seed", 42}, {"max_tokens", 512}};
  t.conversation.created_ms = kFixtureT0;
  t.conversation.updated_ms = kFixtureT0;
  const nlohmann::json reply_settings = {{"temperature", 0.7}, {"seed", 42}};
  const std::string model = t.conversation.model_path;
  auto ok = [](auto r) {
    EXPECT_TRUE(r.ok()) << r.error().describe();
    return *r;
  };
  auto reply = [&](MessageId parent, int64_t at, const std::string& thinking, const std::string& content,
                   MessageState state, const nlohmann::json& stats, const std::string& error = "") {
    const TreeChange c =
        ok(start_reply(t, {.parent_id = parent, .model = model, .settings = reply_settings, .now_ms = at}));
    EXPECT_TRUE(
        append_stream(t, c.message, {.content = content, .thinking = thinking, .now_ms = at + 500}).ok());
    ok(finish_reply(t, c.message, {.state = state, .stats = stats, .error = error, .now_ms = at + 900}));
    return c.message;
  };
  const MessageId m1 = ok(append_user(t, {.content = "Is 91 prime?", .now_ms = kFixtureT0 + 1000})).message;
  const MessageId m2 =
      reply(m1, kFixtureT0 + 2000, "91 = 7 × 13, so it has divisors other than 1 and itself.",
            "No: 91 = 7 × 13.", MessageState::kComplete,
            {{"prompt_tokens", 31},
             {"generated_tokens", 12},
             {"tok_per_s", 41.25},
             {"ttft_ms", 118.4},
             {"mtp_acceptance", 0.8125},
             {"kernel", "hlu4"},
             {"backend", "cuda"}});
  const MessageId m3 = ok(append_user(t, {.content = "And 97?", .now_ms = kFixtureT0 + 10000})).message;
  const MessageId m4 = reply(m3, kFixtureT0 + 11000, "", "Yes, 97 is", MessageState::kStopped,
                             {{"generated_tokens", 4}, {"tok_per_s", 40.0}, {"backend", "cpu"}});
  ok(regenerate(t, m4, {.model = model, .settings = reply_settings, .now_ms = kFixtureT0 + 20000}));
  const MessageId m5 = current_leaf(t);
  EXPECT_TRUE(
      append_stream(
          t, m5, {.content = "Yes, 97 is prime: no prime up to 9 divides it.", .now_ms = kFixtureT0 + 20500})
          .ok());
  ok(finish_reply(
      t, m5,
      {.state = MessageState::kComplete, .stats = {{"generated_tokens", 14}}, .now_ms = kFixtureT0 + 20900}));
  const MessageId m6 = ok(edit_user(t, m3, "And 101?", kFixtureT0 + 30000)).message;
  const MessageId m7 = reply(m6, kFixtureT0 + 31000, "Check 2, 3, 5, 7 (11² > 101).",
                             "Yes, 101 is prime.\n\nChecked divisors: 2, 3, 5, 7 — none divides 101.\n",
                             MessageState::kComplete,
                             {{"prompt_tokens", 58},
                              {"generated_tokens", 21},
                              {"tok_per_s", 39.5},
                              {"ttft_ms", 97.0},
                              {"mtp_acceptance", 0.75},
                              {"kernel", "hlu4"},
                              {"backend", "cuda"},
                              {"logits_hash", "0123456789abcdef"}});
  ok(regenerate(t, m7, {.model = "models/other.gguf", .now_ms = kFixtureT0 + 40000}));
  const MessageId m8 = current_leaf(t);
  ok(finish_reply(t, m8,
                  {.state = MessageState::kError,
                   .error = "CUDA out of memory while allocating the KV cache",
                   .now_ms = kFixtureT0 + 40100}));
  ok(select_sibling(t, m8, -1));
  EXPECT_EQ((std::vector<MessageId>{m1, m2, m6, m7}), current_branch(t));
  EXPECT_EQ(8, m8);
  (void)m5;
  return t;
}

}  // namespace qc::test
