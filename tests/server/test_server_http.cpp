// The API server over real HTTP on localhost (cpp-httplib's client), in front of a real Worker on the
// tiny generated chat model: replies equal the engine's own, streaming equals whole, a client that goes
// away cancels only its generation, the queue limit, the API key, and errors as OpenAI error objects.
// No sleeps decide an outcome: waits poll a condition under a hang guard.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "qwenchat/worker.h"
#include "server/api_server.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::test {
namespace {

using nlohmann::json;
using server::ApiServer;
using server::ServerOptions;

// A server with its worker, dispatcher and HTTP thread; the model is loaded before it listens.
class LiveServer {
 public:
  LiveServer(const std::string& model, ServerOptions options, WorkerOptions worker_options = {})
      : key_(options.api_key), worker_(std::move(worker_options)), api_(worker_, withport0(std::move(options))) {
    LoadModelCommand load;
    load.path = model;
    load.settings.n_ctx = 512;
    load.settings.n_threads = 1;
    worker_.post(load);
    dispatcher_ = std::thread([this] {
      while (!quit_) {
        if (auto e = worker_.wait_event(std::chrono::milliseconds(50))) {
          if (std::holds_alternative<ModelLoaded>(*e)) loaded_ = true;
          api_.on_worker_event(*e);
        }
      }
    });
    EXPECT_TRUE(api_.bind().ok());
    http_ = std::thread([this] { api_.run(); });
    wait_until([this] { return loaded_.load(); });
  }
  ~LiveServer() {
    api_.stop();
    http_.join();
    worker_.stop();
    quit_ = true;
    dispatcher_.join();
  }
  Worker& worker() { return worker_; }
  int port() const { return api_.port(); }
  // A client with the server's key (when it has one).
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", api_.port());
    c.set_read_timeout(120, 0);
    if (!key_.empty()) c.set_bearer_token_auth(key_);
    return c;
  }
  httplib::Client client_without_key() const { return httplib::Client("127.0.0.1", api_.port()); }
  // Polls `done` (a hang guard, not a timing expectation).
  template <class F>
  static void wait_until(F done) {
    const auto deadline = std::chrono::steady_clock::now() + kWorkerHangGuard;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "condition not reached within the hang guard";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  double metric(const std::string& name) {
    auto r = client().Get("/metrics");
    if (!r || r->status != 200) return -1;
    const size_t p = r->body.find("\n" + name + " ");
    if (p == std::string::npos) return -1;
    return std::stod(r->body.substr(p + name.size() + 2));
  }

 private:
  static ServerOptions withport0(ServerOptions o) {
    o.port = 0;
    return o;
  }
  std::string key_;
  Worker worker_;
  ApiServer api_;
  std::atomic<bool> quit_{false}, loaded_{false};
  std::thread dispatcher_, http_;
};

class ServerHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("tiny.gguf");
    ASSERT_TRUE(write_tiny_chat_model(path_).ok());
  }
  static std::string chat_body(const std::string& user, int max_tokens, bool stream, const std::string& extra = "") {
    json j = {{"messages", json::array({{{"role", "user"}, {"content", user}}})},
              {"temperature", 0},
              {"presence_penalty", 0},  // the Qwen preset's 1.5 otherwise; greedy_request has none
              {"max_tokens", max_tokens},
              {"stream", stream},
              {"chat_template_kwargs", {{"enable_thinking", false}}}};
    std::string s = j.dump();
    if (!extra.empty()) s = s.substr(0, s.size() - 1) + "," + extra + "}";
    return s;
  }
  // The content of every chunk of an SSE body, the finish reason, and whether it ended with [DONE].
  struct Streamed {
    std::string content;
    std::string finish_reason;
    bool done = false;
    int chunks = 0;
    json usage;
  };
  static Streamed parse_sse(const std::string& body) {
    Streamed s;
    size_t pos = 0;
    while ((pos = body.find("data: ", pos)) != std::string::npos) {
      const size_t end = body.find("\n\n", pos);
      const std::string data = body.substr(pos + 6, end - pos - 6);
      pos = end;
      if (data == "[DONE]") {
        s.done = true;
        continue;
      }
      const json j = json::parse(data);
      ++s.chunks;
      if (j.contains("usage") && !j["usage"].is_null()) s.usage = j["usage"];
      if (j["choices"].empty()) continue;
      const json& c = j["choices"][0];
      if (c.contains("delta") && c["delta"].contains("content")) s.content += c["delta"]["content"].get<std::string>();
      if (c.contains("text")) s.content += c["text"].get<std::string>();
      if (!c["finish_reason"].is_null()) s.finish_reason = c["finish_reason"];
    }
    return s;
  }
  // Over 512 tokens in any vocabulary of the tiny model: 1,000 words.
  static std::string long_text() {
    std::string t;
    for (int i = 0; i < 1000; ++i) t += "word" + std::to_string(i) + " ";
    return t;
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(ServerHttp, RepliesEqualTheEngineWholeAndStreamed) {
  // The engine's own reply to the same conversation, through a worker of its own.
  std::string expected;
  int expected_tokens = 0;
  {
    Worker w;
    LoadModelCommand load;
    load.path = path_;
    load.settings.n_ctx = 512;
    load.settings.n_threads = 1;
    w.post(load);
    ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
    GenerateCommand g = greedy_request(1, "Tell me about the sea.", 24);
    g.reserve_tokens = 1;
    w.post(g);
    const auto ev = collect_generation(w, 1);
    const auto& f = std::get<GenerationFinished>(ev.back());
    ASSERT_NE(f.stop_reason, StopReason::error) << f.error;
    expected = f.parts.content;
    expected_tokens = f.stats.generated_tokens;
  }
  LiveServer s(path_, ServerOptions{});
  auto cli = s.client();
  auto whole = cli.Post("/v1/chat/completions", chat_body("Tell me about the sea.", 24, false), "application/json");
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->status, 200) << whole->body;
  const json j = json::parse(whole->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], expected);
  EXPECT_EQ(j["usage"]["completion_tokens"], expected_tokens);
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 0);
  EXPECT_EQ(j["usage"]["total_tokens"], j["usage"]["prompt_tokens"].get<int>() + expected_tokens);

  auto streamed = cli.Post("/v1/chat/completions",
                           chat_body("Tell me about the sea.", 24, true, R"("stream_options": {"include_usage": true})"),
                           "application/json");
  ASSERT_TRUE(streamed);
  ASSERT_EQ(streamed->status, 200);
  EXPECT_EQ(streamed->get_header_value("Content-Type"), "text/event-stream");
  const Streamed sse = parse_sse(streamed->body);
  EXPECT_TRUE(sse.done);
  EXPECT_EQ(sse.content, expected);
  EXPECT_EQ(sse.finish_reason, j["choices"][0]["finish_reason"]);
  EXPECT_EQ(sse.usage["completion_tokens"], expected_tokens);

  // Raw completion of the same rendered prompt gives the same text.
  const std::string prompt = "<|im_start|>user\nTell me about the sea.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  auto text = cli.Post("/v1/completions", json{{"prompt", prompt}, {"temperature", 0}, {"presence_penalty", 0}, {"max_tokens", 24}}.dump(),
                       "application/json");
  ASSERT_TRUE(text);
  ASSERT_EQ(text->status, 200) << text->body;
  EXPECT_EQ(json::parse(text->body)["choices"][0]["text"], expected);
}

TEST_F(ServerHttp, ParallelClientsAllGetTheSameReply) {
  LiveServer s(path_, ServerOptions{});
  constexpr int kClients = 6;
  std::vector<std::future<std::string>> replies;
  for (int i = 0; i < kClients; ++i) {
    replies.push_back(std::async(std::launch::async, [&s, i] {
      auto cli = s.client();
      auto r = cli.Post("/v1/chat/completions", chat_body("Tell me a story.", 16, i % 2 == 0), "application/json");
      if (!r || r->status != 200) return std::string("failed");
      return i % 2 == 0 ? parse_sse(r->body).content
                        : json::parse(r->body)["choices"][0]["message"]["content"].get<std::string>();
    }));
  }
  std::vector<std::string> got;
  for (auto& f : replies) got.push_back(f.get());
  for (const std::string& g : got) EXPECT_EQ(g, got[0]);
  EXPECT_NE(got[0], "failed");
  EXPECT_EQ(s.metric("qwenchat_generations_total"), kClients);
  EXPECT_EQ(s.metric("qwenchat_queue_length"), 0);
}

TEST_F(ServerHttp, AClientThatGoesAwayCancelsItsGenerationOnly) {
  LiveServer s(path_, ServerOptions{});
  // ignore_eos and no max_tokens: left alone it would run to the end of the 512-token context.
  const std::string body = chat_body("Tell me a long story.", 100000, true, R"("ignore_eos": true)");
  {
    auto full = s.client().Post("/v1/chat/completions", body, "application/json");
    ASSERT_TRUE(full);
    const Streamed sse = parse_sse(full->body);
    EXPECT_EQ(sse.finish_reason, "length");
    EXPECT_TRUE(sse.done);
  }
  // The full run above went to the end of the context, uncancelled.
  LiveServer::wait_until([&] { return s.metric("qwenchat_generations_total") >= 1; });
  EXPECT_EQ(s.metric("qwenchat_generations_cancelled_total"), 0);

  std::atomic<int> seen{0};
  {
    httplib::Client cli = s.client();
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = body;
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&seen](const char*, size_t, uint64_t, uint64_t) { return ++seen < 3; };
    auto r = cli.send(req);
    EXPECT_FALSE(r);  // the receiver ended the transfer
  }
  LiveServer::wait_until([&] { return s.metric("qwenchat_generations_total") >= 2; });
  EXPECT_EQ(s.metric("qwenchat_generations_cancelled_total"), 1);
  EXPECT_EQ(s.metric("qwenchat_client_disconnects_total"), 1);
  // The server goes on serving.
  auto after = s.client().Post("/v1/chat/completions", chat_body("hello", 4, false), "application/json");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

TEST_F(ServerHttp, QueueLimitApiKeyAndErrorObjects) {
  // The hook holds the worker inside a second load (after the first model is up) until released, so
  // the first request certainly waits in the queue while the second arrives.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> loads{0};
  WorkerOptions wo;
  wo.on_event = [&loads, released](const WorkerEvent& e) {
    if (std::holds_alternative<ModelLoading>(e) && loads.fetch_add(1) == 1) released.wait();
  };
  ServerOptions so;
  so.max_queue = 1;
  so.api_key = "k3y";
  LiveServer s(path_, so, wo);
  auto cli = s.client();

  // API key: /health is open, the rest needs it.
  EXPECT_EQ(s.client_without_key().Get("/health")->status, 200);
  auto no_key = s.client_without_key().Get("/v1/models");
  ASSERT_TRUE(no_key);
  EXPECT_EQ(no_key->status, 401);
  EXPECT_EQ(json::parse(no_key->body)["error"]["type"], "authentication_error");
  auto wrong = s.client_without_key();
  wrong.set_bearer_token_auth("k3x");
  EXPECT_EQ(wrong.Get("/v1/models")->status, 401);
  auto models = cli.Get("/v1/models");
  ASSERT_EQ(models->status, 200);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "tiny");

  LoadModelCommand again;
  again.path = path_;
  again.settings.n_ctx = 512;
  again.settings.n_threads = 1;
  s.worker().post(again);
  LiveServer::wait_until([&] { return loads.load() >= 2; });
  auto first = std::async(std::launch::async, [&s] {
    auto r = s.client().Post("/v1/chat/completions", chat_body("hi", 4, false), "application/json");
    return r ? r->status : -1;
  });
  LiveServer::wait_until([&] { return s.metric("qwenchat_queue_length") == 1; });
  auto busy = cli.Post("/v1/chat/completions", chat_body("hi", 4, false), "application/json");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503);
  EXPECT_EQ(json::parse(busy->body)["error"]["code"], "queue_full");
  release.set_value();
  EXPECT_EQ(first.get(), 200);

  // Errors are OpenAI error objects, also those the HTTP layer makes.
  for (const auto& [path, body, status] : std::vector<std::tuple<std::string, std::string, int>>{
           {"/v1/chat/completions", "{not json", 400},
           {"/v1/chat/completions", chat_body(long_text(), 4, true), 400},
           {"/v1/nothing", "{}", 404},
           {"/v1/chat/completions", std::string(9u << 20, ' '), 413}}) {
    auto r = cli.Post(path, body, "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, status) << path << ": " << r->body;
    const json e = json::parse(r->body);
    EXPECT_TRUE(e["error"]["message"].is_string()) << r->body;
  }
  auto too_long = cli.Post("/v1/chat/completions", chat_body(long_text(), 4, true), "application/json");
  EXPECT_EQ(json::parse(too_long->body)["error"]["code"], "context_length_exceeded");
}

}  // namespace
}  // namespace qc::test

namespace qc::test {
namespace {

// The app's remote endpoint (a Worker whose model is an OpenAI-compatible server) against our own server
// over real HTTP: the same reply as the server's engine, the same events a local model sends, and clear
// errors for a refused connection, a wrong key and an unknown model.
class RemoteEndpointTest : public ServerHttp {};

LoadModelCommand remote_load(const std::string& url, const std::string& key, const std::string& model = "") {
  LoadModelCommand c;
  c.remote = RemoteEndpoint{url, key, model};
  return c;
}

TEST_F(RemoteEndpointTest, RepliesLikeTheLocalEngineAndEndsCleanly) {
  // A local worker on the same model file answers (the reference), then a worker whose model is the
  // server.
  server::ServerOptions so;
  so.api_key = "k";
  LiveServer s(path_, so);
  const std::string url = "http://127.0.0.1:" + std::to_string(s.port()) + "/v1";

  GenerateCommand g = greedy_request(7, "Tell me about the sea.", 24);
  g.reserve_tokens = 1;
  Worker local;
  LoadModelCommand load;
  load.path = path_;
  load.settings.n_ctx = 512;
  load.settings.n_threads = 1;
  local.post(load);
  ASSERT_NE(find_event<ModelLoaded>(collect_load(local)), nullptr);
  local.post(g);
  const auto ref = collect_generation(local, 7);
  const auto& want = std::get<GenerationFinished>(ref.back());

  Worker remote;
  remote.post(remote_load(url, "k"));
  const auto loaded = collect_load(remote);
  const auto* facts = find_event<ModelLoaded>(loaded);
  ASSERT_NE(facts, nullptr) << (find_event<ModelLoadFailed>(loaded) ? find_event<ModelLoadFailed>(loaded)->error.describe() : "");
  EXPECT_TRUE(facts->facts.remote);
  EXPECT_EQ(facts->facts.name, "tiny");
  EXPECT_EQ(facts->facts.n_ctx, 512);
  remote.post(g);
  const auto ev = collect_generation(remote, 7);
  ASSERT_NE(find_event<GenerationStarted>(ev), nullptr);
  StreamedReply streamed;
  for (const WorkerEvent& e : ev) {
    if (const auto* d = std::get_if<TokenDelta>(&e)) streamed.apply(*d);
  }
  const auto& got = std::get<GenerationFinished>(ev.back());
  EXPECT_NE(got.stop_reason, StopReason::error) << got.error;
  EXPECT_EQ(got.stop_reason, want.stop_reason);
  EXPECT_EQ(got.parts.content, want.parts.content);
  EXPECT_EQ(streamed.content, want.parts.content);
  EXPECT_EQ(got.stats.generated_tokens, want.stats.generated_tokens);
  EXPECT_EQ(got.stats.prompt_tokens, want.stats.prompt_tokens);
  EXPECT_GT(count_events<StatsSnapshot>(ev), 0);

  // Cancelled from the event hook's side: stop() ends the remote generation too.
  GenerateCommand longer = g;
  longer.id = 8;
  longer.max_new_tokens = 400;
  longer.ignore_stop_tokens = true;
  remote.post(longer);
  while (true) {
    auto e = remote.wait_event(std::chrono::milliseconds(200));
    if (!e) continue;
    if (std::holds_alternative<TokenDelta>(*e)) {
      remote.cancel(8);
      break;
    }
    ASSERT_FALSE(std::holds_alternative<GenerationFinished>(*e)) << std::get<GenerationFinished>(*e).error;
  }
  const auto rest = collect_generation(remote, 8);
  const auto& f8 = std::get<GenerationFinished>(rest.back());
  EXPECT_EQ(f8.stop_reason, StopReason::cancelled);
  EXPECT_LT(f8.stats.generated_tokens, 400);
}

TEST_F(RemoteEndpointTest, ClearErrorsForRefusedConnectionsKeysAndModels) {
  server::ServerOptions so;
  so.api_key = "k";
  LiveServer s(path_, so);
  const std::string url = "http://127.0.0.1:" + std::to_string(s.port());  // no /v1: added
  auto fail_message = [](Worker& w) {
    const auto ev = collect_load(w);
    const auto* f = find_event<ModelLoadFailed>(ev);
    return f ? f->error.describe() : std::string("(loaded)");
  };
  Worker w;
  w.post(remote_load(url, "wrong"));
  const std::string wrong_key = fail_message(w);
  EXPECT_NE(wrong_key.find("refused the API key"), std::string::npos) << wrong_key;
  w.post(remote_load(url, "k", "no-such-model"));
  const std::string unknown = fail_message(w);
  EXPECT_NE(unknown.find("does not serve 'no-such-model'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("it serves: tiny"), std::string::npos) << unknown;
  w.post(remote_load("ftp://x", ""));
  const std::string scheme = fail_message(w);
  EXPECT_NE(scheme.find("scheme must be http or https"), std::string::npos) << scheme;
  // A port nobody listens on: bind a socket to a free port, note it, close it (never listened on).
  int closed_port = 0;
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    closed_port = ntohs(addr.sin_port);
    ::close(fd);
  }
  w.post(remote_load("http://127.0.0.1:" + std::to_string(closed_port) + "/v1", ""));
  const std::string refused = fail_message(w);
  EXPECT_NE(refused.find("cannot reach"), std::string::npos) << refused;
  // And a generation without a model still finishes with an error, not a hang.
  w.post(greedy_request(3, "hi", 2));
  const auto ev = collect_generation(w, 3);
  EXPECT_EQ(std::get<GenerationFinished>(ev.back()).stop_reason, StopReason::error);
}

}  // namespace
}  // namespace qc::test
