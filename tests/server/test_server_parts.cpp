// The API server's parts without a socket: request parsing and refusals, stop strings, the JSON depth
// scan, the key comparison, event routing and the metrics text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/api_request.h"
#include "server/api_response.h"
#include "server/api_server.h"
#include "server/event_router.h"
#include "server/json_limits.h"
#include "server/server_metrics.h"
#include "server/stop_strings.h"

namespace qc::server {
namespace {

// A copy: the parsed result is a temporary of the caller's full expression.
ApiRequest ok(const ParsedRequest& p) {
  if (const auto* e = std::get_if<ApiError>(&p)) {
    ADD_FAILURE() << "refused: " << e->message;
    return {};
  }
  return std::get<ApiRequest>(p);
}

ApiError refused(const ParsedRequest& p) {
  if (const auto* e = std::get_if<ApiError>(&p)) return *e;
  ADD_FAILURE() << "accepted a request that should be refused";
  return {};
}

TEST(ApiRequest, ChatWithEveryField) {
  const auto& r = ok(parse_chat_request(R"({
    "model": "m", "messages": [
      {"role": "developer", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null, "reasoning_content": "hm"},
      {"role": "user", "content": "go"}],
    "temperature": 0, "top_p": 0.5, "top_k": 7, "min_p": 0.1, "presence_penalty": 1.5,
    "repetition_penalty": 1.1, "seed": -1, "max_completion_tokens": 9, "stop": ["x", "yy"],
    "stream": true, "stream_options": {"include_usage": true},
    "chat_template_kwargs": {"enable_thinking": false}, "n": 1, "logprobs": false, "tools": [],
    "frequency_penalty": 0, "user": "ignored", "response_format": {"type": "text"}})",
                                        5));
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "a\nb");
  EXPECT_EQ(r.messages[2].content, "");
  EXPECT_EQ(r.messages[2].thinking, "hm");
  EXPECT_FALSE(r.render.thinking);
  EXPECT_EQ(r.sampler.temperature, 0.0f);
  EXPECT_EQ(r.sampler.top_p, 0.5f);
  EXPECT_EQ(r.sampler.top_k, 7);
  EXPECT_FLOAT_EQ(r.sampler.min_p, 0.1f);
  EXPECT_FLOAT_EQ(r.sampler.presence_penalty, 1.5f);
  EXPECT_FLOAT_EQ(r.sampler.repetition_penalty, 1.1f);
  EXPECT_TRUE(r.seeded);
  EXPECT_EQ(r.sampler.seed, ~uint64_t{0});  // -1 as the 64-bit pattern
  EXPECT_EQ(r.max_tokens, 9);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"x", "yy"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.model, "m");
}

TEST(ApiRequest, DefaultsAreTheQwenPresetsAndTheCallersSeed) {
  const auto& think = ok(parse_chat_request(R"({"messages": [{"role": "user", "content": "hi"}]})", 77));
  EXPECT_TRUE(think.render.thinking);
  EXPECT_EQ(think.sampler.temperature, SamplerParams::qwen_thinking().temperature);
  EXPECT_EQ(think.sampler.top_p, SamplerParams::qwen_thinking().top_p);
  EXPECT_FALSE(think.seeded);
  EXPECT_EQ(think.sampler.seed, 77u);
  EXPECT_EQ(think.max_tokens, 0);
  const auto& text = ok(parse_completion_request(R"({"prompt": ["once"], "stop": "\n"})", 1));
  EXPECT_FALSE(text.chat);
  EXPECT_EQ(text.prompt, "once");
  EXPECT_EQ(text.sampler.temperature, SamplerParams::qwen_instruct().temperature);
  EXPECT_EQ(text.stop, std::vector<std::string>{"\n"});
}

TEST(ApiRequest, RefusalsNameTheField) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {R"({"messages": [{"role": "user", "content": "hi"}], "n": 2})", "n"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "logprobs": true})", "logprobs"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]})", "tools"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "logit_bias": {"1": 5}})", "logit_bias"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_object"}})",
       "response_format"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "frequency_penalty": 0.5})", "frequency_penalty"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "temperature": 3})", "temperature"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"})", "temperature"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "top_p": 1.5})", "top_p"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1.5})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 18446744073709551615})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "max_completion_tokens": 6})",
       "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "stop": ["a", "b", "c", "d", "e"]})", "stop"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "stop": [""]})", "stop"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "stop": 5})", "stop"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "stream": "yes"})", "stream"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "seed": 1.5})", "seed"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": "hi"})", "messages"},
      {R"({})", "messages"},
      {R"({"messages": [{"role": "tool", "content": "42"}]})", "messages"},
      {R"({"messages": [{"content": "hi"}]})", "messages"},
      {R"({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "1"}]}]})", "messages"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})",
       "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": {"enable_thinking": 1}})",
       "chat_template_kwargs"},
  };
  for (const Case& c : cases) {
    const ApiError e = refused(parse_chat_request(c.body, 1));
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << " -> " << e.message;
    EXPECT_FALSE(e.message.empty());
  }
  EXPECT_EQ(refused(parse_completion_request(R"({"prompt": [1, 2]})", 1)).param, "prompt");
  EXPECT_EQ(refused(parse_completion_request(R"({"prompt": ""})", 1)).param, "prompt");
  EXPECT_EQ(refused(parse_completion_request(R"({"prompt": "a", "echo": true})", 1)).param, "echo");
  EXPECT_EQ(refused(parse_completion_request(R"({"prompt": "a", "suffix": "b"})", 1)).param, "suffix");
}

TEST(ApiRequest, BodiesThatAreNotAnObject) {
  for (const char* body : {"", "{", "[]", "42", "\"x\"", "{\"messages\": [}", "null"}) {
    const ApiError e = refused(parse_chat_request(body, 1));
    EXPECT_EQ(e.status, 400) << body;
  }
  // Invalid UTF-8 inside a string.
  EXPECT_EQ(refused(parse_chat_request("{\"messages\": [{\"role\": \"user\", \"content\": \"\xff\"}]}", 1)).status, 400);
}

TEST(ApiRequest, DeepNestingIsRefusedBeforeTheParser) {
  // 200,000 levels: the recursive parser would overflow the stack; the scan refuses it first.
  const std::string deep = "{\"messages\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  const ApiError e = refused(parse_chat_request(deep, 1));
  EXPECT_NE(e.message.find("deeper than 64"), std::string::npos) << e.message;
  // Brackets inside strings do not count.
  const std::string in_string = R"({"messages": [{"role": "user", "content": ")" + std::string(1000, '[') + "\"}]}";
  EXPECT_EQ(ok(parse_chat_request(in_string, 1)).messages.at(0).content, std::string(1000, '['));
}

TEST(JsonLimits, DepthCountsOnlyStructure) {
  EXPECT_EQ(json_nesting_depth(""), 0);
  EXPECT_EQ(json_nesting_depth("{}"), 1);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": []}]})"), 4);
  EXPECT_EQ(json_nesting_depth(R"({"a": "[[[[\"[["})"), 1);
  EXPECT_EQ(json_nesting_depth(R"(["\\", [[]]])"), 3);
  EXPECT_EQ(json_nesting_depth("]]]]{"), 1);
}

TEST(StopStrings, CutBeforeTheFirstMatchAcrossPieces) {
  StopMatcher m({"END", "##"});
  std::string out;
  for (const char* piece : {"hello E", "N", "x wor", "ld #", "# more"}) out += m.push(piece);
  EXPECT_TRUE(m.matched());
  EXPECT_EQ(out, "hello ENx world ");
  EXPECT_EQ(m.push("again"), "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStrings, HoldsBackOnlyWhatCouldStartAStopString) {
  StopMatcher m({"</s>"});
  EXPECT_EQ(m.push("abc<"), "abc");
  EXPECT_EQ(m.push("/"), "");
  EXPECT_EQ(m.push("x"), "</x");  // not a stop string after all
  EXPECT_EQ(m.push("é<"), "é");
  EXPECT_EQ(m.flush(), "<");  // the end of the reply: what was held is sent
  EXPECT_FALSE(m.matched());
}

TEST(StopStrings, EarliestOfSeveralAndMultiByteStops) {
  StopMatcher m({"bb", "ab", "→"});
  EXPECT_EQ(m.push("xxabb"), "xx");
  StopMatcher u({"→"});
  EXPECT_EQ(u.push("a\xE2\x86"), "a");  // the first two bytes of the arrow are held back
  EXPECT_EQ(u.push("\x92 b"), "");
  EXPECT_TRUE(u.matched());
  StopMatcher none({});
  EXPECT_EQ(none.push("anything"), "anything");
}

TEST(ApiKey, ComparesWholeKeys) {
  EXPECT_TRUE(keys_equal("secret", "secret"));
  EXPECT_FALSE(keys_equal("secre", "secret"));
  EXPECT_FALSE(keys_equal("secretx", "secret"));
  EXPECT_FALSE(keys_equal("", "secret"));
  EXPECT_FALSE(keys_equal("sebret", "secret"));
  EXPECT_TRUE(keys_equal("", ""));
}

TEST(EventRouter, DeliversByIdAndForgetsFinishedOnes) {
  EventRouter router;
  auto a = router.open(1);
  auto b = router.open(2);
  EXPECT_EQ(router.waiting(), 2);
  EXPECT_TRUE(router.deliver(GenerationStarted{1}));
  EXPECT_EQ(router.waiting(), 1);
  EXPECT_EQ(router.running(), 1);
  EXPECT_FALSE(router.deliver(GenerationStarted{3}));  // not ours
  EXPECT_FALSE(router.deliver(ModelLoaded{}));
  router.close(2);
  EXPECT_TRUE(router.deliver(TokenDelta{2}));  // still ours, dropped
  auto e = a->next(std::chrono::milliseconds(0));
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(std::holds_alternative<GenerationStarted>(*e));
  EXPECT_FALSE(b->next(std::chrono::milliseconds(0)).has_value());
  GenerationFinished f;
  f.id = 2;
  EXPECT_TRUE(router.deliver(f));
  EXPECT_FALSE(router.deliver(f));  // forgotten after its end
  EXPECT_EQ(router.waiting(), 0);
}

TEST(Metrics, PrometheusTextHasEveryFamilyOnce) {
  ServerMetrics m;
  m.request(200);
  m.request(404);
  GenerationStats s;
  s.prompt_tokens = 10;
  s.generated_tokens = 5;
  s.mtp_draft_len = 1;
  s.mtp_drafted[0] = 4;
  s.mtp_accepted[0] = 3;
  m.finished(s, false);
  m.disconnected();
  const std::string text = m.prometheus_text(QueueGauges{2, 1, true});
  EXPECT_NE(text.find("qwenchat_requests_total{code=\"2xx\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("qwenchat_requests_total{code=\"4xx\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("qwenchat_prompt_tokens_total 10\n"), std::string::npos);
  EXPECT_NE(text.find("qwenchat_generated_tokens_total 5\n"), std::string::npos);
  EXPECT_NE(text.find("qwenchat_mtp_accepted_total{position=\"1\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("qwenchat_client_disconnects_total 1\n"), std::string::npos);
  EXPECT_NE(text.find("qwenchat_queue_length 2\n"), std::string::npos);
  EXPECT_NE(text.find("qwenchat_model_loaded 1\n"), std::string::npos);
  // Each family has exactly one TYPE line (Prometheus rejects duplicates).
  size_t types = 0;
  for (size_t p = text.find("# TYPE"); p != std::string::npos; p = text.find("# TYPE", p + 1)) ++types;
  size_t helps = 0;
  for (size_t p = text.find("# HELP"); p != std::string::npos; p = text.find("# HELP", p + 1)) ++helps;
  EXPECT_EQ(types, helps);
  EXPECT_GE(types, 15u);
}

TEST(ApiResponse, ErrorAndChunkShapes) {
  const auto e = nlohmann::json::parse(error_json(bad_request("bad", "temperature", "c")));
  EXPECT_EQ(e["error"]["message"], "bad");
  EXPECT_EQ(e["error"]["param"], "temperature");
  EXPECT_EQ(e["error"]["code"], "c");
  const std::string chunk = chat_chunk_event(ResponseIds{"chatcmpl-1", 5, "m"}, true, "", "hi", nullptr);
  ASSERT_EQ(chunk.rfind("data: ", 0), 0u);
  ASSERT_EQ(chunk.substr(chunk.size() - 2), "\n\n");
  const auto j = nlohmann::json::parse(chunk.substr(6));
  EXPECT_EQ(j["object"], "chat.completion.chunk");
  EXPECT_EQ(j["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["delta"]["content"], "hi");
  EXPECT_TRUE(j["choices"][0]["finish_reason"].is_null());
  // Invalid UTF-8 never reaches a client as raw bytes (the JSON stays parseable).
  const std::string bad = chat_completion_json(ResponseIds{"x", 1, "m"}, "", "a\xff", Finish{"stop", {}, {}});
  EXPECT_EQ(nlohmann::json::parse(bad)["choices"][0]["message"]["content"], "a\xEF\xBF\xBD");
}

}  // namespace
}  // namespace qc::server
