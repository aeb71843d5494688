// Generator without speculation: stop rules, cancellation, context limits, request errors, UTF-8
// streaming, statistics. The fake backend (test_generator_fakes.h) is a hash chain, so its greedy token
// stream can be computed independently of the generator.
#include <gtest/gtest.h>

#include <atomic>

#include "test_generator_fakes.h"

namespace qc {
namespace {

using testing::FakeBackend;
using testing::FakeOptions;

std::vector<int32_t> make_prompt(int n, int n_vocab) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(static_cast<int32_t>((i * 7 + 3) % n_vocab));
  return p;
}

GenerateRequest greedy_request(std::vector<int32_t> prompt, int max_new) {
  GenerateRequest r;
  r.prompt = std::move(prompt);
  r.max_new_tokens = max_new;
  r.sampler = SamplerParams::greedy();
  return r;
}

// The greedy continuation computed straight from the fake model.
std::vector<int32_t> simulate_greedy(const FakeBackend& b, std::vector<int32_t> x, int n_new) {
  std::vector<int32_t> out;
  for (int i = 0; i < n_new; ++i) {
    const auto h = testing::true_states(x);
    const int32_t t = b.greedy(h.back(), static_cast<int>(x.size()) - 1);
    out.push_back(t);
    x.push_back(t);
  }
  return out;
}

TEST(GeneratorBasic, GreedyMatchesTheModelAndStopsAtMaxTokens) {
  FakeBackend b({});
  Generator g(b, testing::fake_text(), GeneratorOptions{3});
  const auto prompt = make_prompt(7, 48);
  auto r = g.generate(greedy_request(prompt, 40));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tokens, simulate_greedy(b, prompt, 40));
  EXPECT_EQ(r->stop_reason, StopReason::max_tokens);
  EXPECT_FALSE(r->mtp_used);
  // Backend contract: prompt + generated - 1 tokens run, and the state is exactly theirs.
  std::vector<int32_t> context = prompt;
  context.insert(context.end(), r->tokens.begin(), r->tokens.end() - 1);
  EXPECT_EQ(b.position(), static_cast<int>(context.size()));
  EXPECT_EQ(b.state(), testing::true_states(context).back());

  const GenerationStats& st = r->stats;
  EXPECT_EQ(st.prompt_tokens, 7);
  EXPECT_EQ(st.generated_tokens, 40);
  EXPECT_EQ(st.decode_steps, 39);
  EXPECT_EQ(st.forward_passes, 3 + 39);  // ceil(7 / 3) prefill chunks
  EXPECT_EQ(st.rerun_passes, 0);
  EXPECT_EQ(st.mtp_passes, 0);
  EXPECT_GE(st.time_to_first_token_s, st.prefill_seconds);
  EXPECT_GE(st.decode_seconds, 0.0);
  // The hash is of the row the last token came from: logits at the last run position.
  std::vector<float> row(48);
  b.row(testing::true_states(context).back(), b.position() - 1, row.data());
  EXPECT_EQ(st.final_logits_hash, logits_hash(row));
  EXPECT_EQ(st.final_logits_hash.size(), 16u);
}

TEST(GeneratorBasic, LogitsHashIsFnv1aOverLittleEndianFloatBits) {
  // FNV-1a 64 of no bytes is the offset basis; of the bytes 00 00 80 3f (1.0f) computed by hand with
  // the published constants (offset 0xcbf29ce484222325, prime 0x100000001b3).
  EXPECT_EQ(logits_hash({}), "cbf29ce484222325");
  uint64_t h = 0xcbf29ce484222325ull;
  for (const uint8_t byte : {0x00, 0x00, 0x80, 0x3f}) h = (h ^ byte) * 0x100000001b3ull;
  char want[17];
  std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(h));
  EXPECT_EQ(logits_hash(std::vector<float>{1.0f}), want);
  EXPECT_NE(logits_hash(std::vector<float>{1.0f}), logits_hash(std::vector<float>{-1.0f}));
}

TEST(GeneratorBasic, MaxTokensZeroAndOne) {
  FakeBackend b({});
  Generator g(b, testing::fake_text());
  const auto prompt = make_prompt(5, 48);
  auto zero = g.generate(greedy_request(prompt, 0));
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->tokens.empty());
  EXPECT_EQ(zero->stop_reason, StopReason::max_tokens);
  EXPECT_EQ(b.position(), 5);  // prefill only
  EXPECT_TRUE(zero->stats.final_logits_hash.empty());
  b.reset();
  auto one = g.generate(greedy_request(prompt, 1));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->tokens, simulate_greedy(b, prompt, 1));
  EXPECT_EQ(b.position(), 5);
}

TEST(GeneratorBasic, StopsOnStopTokenWithoutItsText) {
  FakeOptions o;
  o.script = [](int pos) { return static_cast<int32_t>(pos % 10); };  // token predicted after pos
  FakeBackend b(o);
  Generator g(b, testing::fake_text({}, {}));
  GenerateRequest rq = greedy_request(make_prompt(4, 48), 100);
  rq.stop_tokens = {40, 7};  // generated from positions 3, 4, ...: 3 4 5 6 7 -> stops on 7
  auto r = g.generate(rq);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tokens, (std::vector<int32_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(r->stop_reason, StopReason::stop_token);
  EXPECT_EQ(r->stop_token, 7);
  EXPECT_EQ(r->text, "<3><4><5><6>");
  EXPECT_EQ(b.position(), 4 + 5 - 1);
}

TEST(GeneratorBasic, CancellationStopsWithinOneToken) {
  const auto prompt = make_prompt(6, 48);
  for (const bool use_function : {false, true}) {
    FakeBackend b({});
    Generator g(b, testing::fake_text());
    std::atomic<bool> cancel{false};
    GenerateObserver obs;
    obs.on_token = [&](const TokenEvent& ev) {
      if (ev.index == 3) cancel = true;
    };
    if (use_function) {
      obs.should_cancel = [&] { return cancel.load(); };
    } else {
      obs.cancel = &cancel;
    }
    auto r = g.generate(greedy_request(prompt, 50), obs);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->stop_reason, StopReason::cancelled);
    EXPECT_EQ(r->tokens.size(), 4u);  // the token that raised the flag, nothing after it
    EXPECT_EQ(b.position(), 6 + 4 - 1);
  }
}

TEST(GeneratorBasic, CancellationBeforeStartStopsBetweenPrefillChunks) {
  FakeBackend b({});
  Generator g(b, testing::fake_text(), GeneratorOptions{2});
  std::atomic<bool> cancel{true};
  GenerateObserver obs;
  obs.cancel = &cancel;
  auto r = g.generate(greedy_request(make_prompt(7, 48), 50), obs);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, StopReason::cancelled);
  EXPECT_TRUE(r->tokens.empty());
  EXPECT_EQ(b.forward_calls, 1);  // the first chunk runs, the flag is seen before the second
}

TEST(GeneratorBasic, ContextFullStopsWithoutError) {
  FakeOptions o;
  o.n_ctx = 16;
  FakeBackend b(o);
  Generator g(b, testing::fake_text());
  const auto prompt = make_prompt(10, 48);
  auto r = g.generate(greedy_request(prompt, 100));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, StopReason::context_full);
  // Positions 10..15 run the first six generated tokens; the seventh is sampled from position 15.
  EXPECT_EQ(r->tokens.size(), 7u);
  EXPECT_EQ(r->tokens, simulate_greedy(b, prompt, 7));
  EXPECT_EQ(b.position(), 16);

  // A prompt that exactly fills the context still yields its one token.
  b.reset();
  auto full = g.generate(greedy_request(make_prompt(16, 48), 100));
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->stop_reason, StopReason::context_full);
  EXPECT_EQ(full->tokens.size(), 1u);
}

TEST(GeneratorBasic, PromptTooLongIsAnErrorBeforeAnyWork) {
  FakeOptions o;
  o.n_ctx = 16;
  FakeBackend b(o);
  Generator g(b, testing::fake_text());
  auto r = g.generate(greedy_request(make_prompt(17, 48), 10));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("prompt of 17 tokens does not fit the context: n_ctx 16, 0 already used"),
            std::string::npos)
      << r.error().message;
  EXPECT_FALSE(r.error().hint.empty());
  EXPECT_EQ(b.forward_calls, 0);

  // Counting what the context already holds.
  ASSERT_TRUE(b.forward(make_prompt(10, 48), 0).ok());
  auto r2 = g.generate(greedy_request(make_prompt(7, 48), 10));
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().message.find("10 already used, room for 6"), std::string::npos) << r2.error().message;
  EXPECT_EQ(b.forward_calls, 1);
}

TEST(GeneratorBasic, InvalidRequestsAreErrorsBeforeAnyWork) {
  FakeBackend b({});
  const auto expect_error = [&](GenerateRequest rq, const std::string& needle, GeneratorOptions opt = {}) {
    Generator g(b, testing::fake_text(), opt);
    auto r = g.generate(rq);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
    EXPECT_EQ(b.forward_calls, 0);
    EXPECT_EQ(b.mtp_calls, 0);
  };
  const auto ok = greedy_request(make_prompt(5, 48), 10);
  expect_error(greedy_request({}, 10), "prompt is empty");
  expect_error(greedy_request({1, 48}, 10), "prompt token 1 is 48, expected an id in [0, 48)");
  expect_error(greedy_request({-1}, 10), "prompt token 0 is -1");
  expect_error(greedy_request(make_prompt(5, 48), -1), "max_new_tokens must be >= 0, got -1");
  GenerateRequest rq = ok;
  rq.mtp = {true, 0};
  expect_error(rq, "draft_len must be in [1, 3], got 0");
  rq.mtp = {true, 4};
  expect_error(rq, "draft_len must be in [1, 3], got 4");
  rq = ok;
  rq.sampler.top_p = 2.0f;
  expect_error(rq, "top_p");
  expect_error(ok, "prefill_chunk must be >= 1, got 0", GeneratorOptions{0});
}

TEST(GeneratorBasic, Utf8DeltasAreWholeCharactersAndConcatenateToTheText) {
  // Tokens: 1 "h", 2 "\xE2", 3 "\x82", 4 "\xAC" (the euro sign split over three tokens), 5 " ",
  // 6 "\xF0\x9F", 7 "\x98\x80" (U+1F600 split in two), 8 = control, 9 "\xFF" (never valid), 10 "\xE2"
  // (a character the stream ends inside).
  std::vector<std::string> bytes(48);
  bytes[1] = "h", bytes[2] = "\xE2", bytes[3] = "\x82", bytes[4] = "\xAC", bytes[5] = " ";
  bytes[6] = "\xF0\x9F", bytes[7] = "\x98\x80", bytes[8] = "<|ctl|>", bytes[9] = "\xFF", bytes[10] = "\xE2";
  const std::vector<int32_t> script = {1, 2, 3, 4, 5, 6, 8, 7, 9, 10};
  FakeOptions o;
  const int n_prompt = 3;
  o.script = [&](int pos) {  // the row at position p predicts the token after it
    const int i = pos - (n_prompt - 1);
    return i >= 0 && i < static_cast<int>(script.size()) ? script[static_cast<size_t>(i)] : 0;
  };
  FakeBackend b(o);
  Generator g(b, testing::fake_text(bytes, {8}));
  std::vector<std::string> deltas;
  std::string tail;
  GenerateObserver obs;
  obs.on_token = [&](const TokenEvent& ev) { deltas.emplace_back(ev.text); };
  obs.on_text_tail = [&](std::string_view t) { tail = t; };
  auto r = g.generate(greedy_request(make_prompt(n_prompt, 48), static_cast<int>(script.size())), obs);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tokens, script);
  const std::vector<std::string> want = {
      "h", "", "", "\xE2\x82\xAC", " ", "", "", "\xF0\x9F\x98\x80", "\xEF\xBF\xBD", ""};
  EXPECT_EQ(deltas, want);
  EXPECT_EQ(tail, "\xEF\xBF\xBD");  // the dangling \xE2 at the end
  std::string joined;
  for (const auto& d : deltas) joined += d;
  joined += tail;
  EXPECT_EQ(joined, r->text);
  EXPECT_EQ(r->text, "h\xE2\x82\xAC \xF0\x9F\x98\x80\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(GeneratorBasic, PresencePenaltyCoversGeneratedTokensAndOptionallyThePrompt) {
  const auto prompt = make_prompt(8, 48);
  for (const bool with_prompt : {false, true}) {
    FakeBackend b({});
    Generator g(b, testing::fake_text());
    GenerateRequest rq = greedy_request(prompt, 30);
    rq.sampler.presence_penalty = 100.0f;  // logits lie in [-4, 4): any seen token loses to any unseen one
    rq.sampler.penalty_last_n = -1;
    rq.penalize_prompt = with_prompt;
    auto r = g.generate(rq);
    ASSERT_TRUE(r.ok());
    std::vector<int> count(48, 0);
    for (const int32_t t : r->tokens) EXPECT_EQ(++count[static_cast<size_t>(t)], 1) << "repeated " << t;
    bool any_prompt_token = false;
    for (const int32_t t : r->tokens)
      any_prompt_token |= std::find(prompt.begin(), prompt.end(), t) != prompt.end();
    // Penalised prompt: no prompt token may appear. Unpenalised: 30 distinct tokens of 48 that avoid all
    // 8 prompt tokens would be a 1e-4 coincidence for a random stream (C(40,30)/C(48,30)), so the
    // fixed stream does contain some, which shows the prompt is outside the window by default.
    EXPECT_EQ(any_prompt_token, !with_prompt);
  }
}

TEST(GeneratorBasic, BackendErrorsEndTheResultWithAnError) {
  FakeOptions o;
  o.fail_on_forward_call = 4;  // prefill 1 chunk, then decode steps 2, 3 succeed, 4 fails
  FakeBackend b(o);
  Generator g(b, testing::fake_text());
  auto r = g.generate(greedy_request(make_prompt(5, 48), 20));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, StopReason::error);
  EXPECT_NE(r->error.find("injected failure"), std::string::npos) << r->error;
  EXPECT_EQ(r->tokens.size(), 3u);

  FakeOptions nan;
  nan.nan_logits = true;
  FakeBackend bn(nan);
  Generator gn(bn, testing::fake_text());
  auto rn = gn.generate(greedy_request(make_prompt(5, 48), 20));
  ASSERT_TRUE(rn.ok());
  EXPECT_EQ(rn->stop_reason, StopReason::error);
  EXPECT_NE(rn->error.find("all NaN or -inf"), std::string::npos) << rn->error;
  EXPECT_TRUE(rn->tokens.empty());
}

TEST(GeneratorBasic, SampledRunsAreDeterministicPerSeed) {
  const auto run = [](uint64_t seed) {
    FakeBackend b({});
    Generator g(b, testing::fake_text());
    GenerateRequest rq = greedy_request(make_prompt(6, 48), 40);
    rq.sampler = SamplerParams::qwen_thinking();
    rq.sampler.seed = seed;
    auto r = g.generate(rq);
    EXPECT_TRUE(r.ok());
    return std::make_pair(r->tokens, r->stats.final_logits_hash);
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11).first, run(12).first);
}

}  // namespace
}  // namespace qc

namespace qc {
namespace {

// A prompt longer than the backend takes in one call is fed in chunks of backend.max_batch(), whatever
// the generator's own chunk option says (the reference backend takes 32 tokens per call).
TEST(GeneratorBasic, PromptIsChunkedToTheBackendsMaxBatch) {
  testing::FakeOptions o;
  o.max_batch = 4;
  FakeBackend b(o);
  Generator g(b, testing::fake_text(), GeneratorOptions{64});
  const auto prompt = make_prompt(10, 48);
  auto r = g.generate(greedy_request(prompt, 5));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, StopReason::max_tokens);
  EXPECT_EQ(r->tokens, simulate_greedy(b, prompt, 5));
  EXPECT_EQ(r->stats.forward_passes, 3 + 4);  // ceil(10 / 4) prefill chunks + 4 decode steps
}

}  // namespace
}  // namespace qc

namespace qc::testing {
namespace {

// GenerateRequest::checkpoint: a chunk ends there, the callback sees the backend holding exactly the
// tokens before it and the hidden row of its last position; the reply is the one without a checkpoint.
TEST(GeneratorBasic, CheckpointSplitsTheChunkAndReportsTheState) {
  const std::vector<int32_t> prompt = make_prompt(9, 48);
  FakeBackend plain({});
  Generator g0(plain, fake_text(), GeneratorOptions{4});
  auto want = g0.generate(greedy_request(prompt, 6));
  ASSERT_TRUE(want.ok());

  FakeBackend b({});
  Generator g(b, fake_text(), GeneratorOptions{4});
  GenerateRequest rq = greedy_request(prompt, 6);
  rq.checkpoint = 6;  // chunks [0,4) [4,6) [6,9)
  int calls = 0, held = -1;
  size_t hidden = 0;
  GenerateObserver obs;
  obs.on_checkpoint = [&](std::span<const float> h) {
    ++calls;
    held = b.position();
    hidden = h.size();
  };
  auto got = g.generate(rq, obs);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(held, 6);
  EXPECT_EQ(hidden, static_cast<size_t>(FakeBackend::kEmbd));
  EXPECT_EQ(got->tokens, want->tokens);
  EXPECT_EQ(got->stats.final_logits_hash, want->stats.final_logits_hash);
  // [0,4) [4,6) [6,9) instead of [0,4) [4,8) [8,9): as many passes here.
  EXPECT_EQ(got->stats.forward_passes, want->stats.forward_passes);
  EXPECT_EQ(g.context_hidden_pos(), b.position() - 1);

  // Out of range: refused before any backend call.
  for (int bad : {-1, 9, 10}) {
    FakeBackend c({});
    Generator gc(c, fake_text());
    GenerateRequest r = greedy_request(prompt, 2);
    r.checkpoint = bad;
    auto res = gc.generate(r);
    ASSERT_FALSE(res.ok()) << bad;
    EXPECT_NE(res.error().message.find("checkpoint must be 0 or in [1, 9)"), std::string::npos) << res.error().message;
    EXPECT_EQ(c.forward_calls, 0);
  }
}

}  // namespace
}  // namespace qc::testing
