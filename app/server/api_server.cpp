#include "server/api_server.h"

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "qwenchat/worker.h"
#include "server/api_response.h"
#include "server/stop_strings.h"

namespace qc::server {
namespace {

using namespace std::chrono_literals;

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t random_u64() {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex);
  return rng();
}

std::string hex_id(const char* prefix, uint64_t a, uint64_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%016llx%08llx", prefix, static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b & 0xffffffffu));
  return buf;
}

// A streaming or whole reply in progress: the events of one generation turned into what the client gets.
struct Reply {
  uint64_t id = 0;
  bool chat = true;
  bool stream = false;
  bool include_usage = false;
  ResponseIds ids;
  std::shared_ptr<EventChannel> channel;
  StopMatcher stop;
  int prompt_tokens = 0;

  std::string thinking, content;       // the reply's parts so far (TokenDelta applied)
  size_t thinking_sent = 0;            // bytes of `thinking` already passed on
  size_t content_fed = 0;              // bytes of `content` given to the stop matcher
  std::string all_thinking, all_content;  // what the client got (whole replies are built from these)
  bool first = true;
  bool stop_hit = false;
  bool done = false;  // GenerationFinished seen
  std::optional<GenerationFinished> finished;

  explicit Reply(std::vector<std::string> stops) : stop(std::move(stops)) {}

  // New text to pass on after a TokenDelta: (reasoning, content).
  std::pair<std::string, std::string> apply(const TokenDelta& d) {
    if (d.thinking_replace) thinking = d.thinking_delta; else thinking += d.thinking_delta;
    if (d.content_replace) content = d.content_delta; else content += d.content_delta;
    return take_new();
  }

  // A part that shrank (the "</think>" marker trims the thinking's trailing newlines) cannot be taken
  // back from a client; only growth past what was passed on is sent.
  std::pair<std::string, std::string> take_new() {
    std::string r, c;
    if (thinking.size() > thinking_sent) {
      r = thinking.substr(thinking_sent);
      thinking_sent = thinking.size();
    }
    if (!stop_hit && content.size() > content_fed) {
      c = stop.push(std::string_view(content).substr(content_fed));
      content_fed = content.size();
      stop_hit = stop.matched();
    }
    all_thinking += r;
    all_content += c;
    return {std::move(r), std::move(c)};
  }

  // At the end: the parts as the generator finished them (covers a tail the deltas did not carry), and
  // whatever the stop matcher still holds.
  std::pair<std::string, std::string> take_final(const GenerationFinished& f) {
    if (f.parts.thinking.size() > thinking.size() && f.parts.thinking.compare(0, thinking.size(), thinking) == 0) {
      thinking = f.parts.thinking;
    }
    if (f.parts.content.size() > content.size() && f.parts.content.compare(0, content.size(), content) == 0) {
      content = f.parts.content;
    }
    auto [r, c] = take_new();
    if (!stop_hit) {
      std::string tail = stop.flush();
      all_content += tail;
      c += tail;
    }
    return {std::move(r), std::move(c)};
  }

  Finish finish() const {
    Finish out;
    const StopReason why = finished->stop_reason;
    out.reason = (why == StopReason::max_tokens || why == StopReason::context_full) && !stop_hit ? "length" : "stop";
    out.usage.prompt_tokens = prompt_tokens;
    out.usage.cached_tokens = finished->stats.prompt_reused;
    out.usage.completion_tokens = finished->stats.generated_tokens;
    out.stats = finished->stats;
    return out;
  }
};

ApiError from_generation_error(const GenerationFinished& f) {
  if (f.error_kind == "context_length_exceeded") {
    return ApiError{400, f.error, "invalid_request_error", "messages", "context_length_exceeded"};
  }
  if (f.error_kind == "invalid_request") return bad_request(f.error);
  if (f.error_kind == "no_model") return ApiError{503, "no model is loaded", "server_error", "", "model_not_loaded"};
  if (f.stop_reason == StopReason::cancelled) {
    return ApiError{503, "the request was cancelled before it started", "server_error", "", "cancelled"};
  }
  return ApiError{500, f.error.empty() ? "the generation failed" : f.error, "server_error", "", ""};
}

}  // namespace

bool keys_equal(const std::string& presented, const std::string& expected) {
  // Every byte of the expected key is compared against something (the presented key's byte or a
  // stand-in), and the length difference is folded into the result, so the loop runs the same way
  // for every presented key.
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char p = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    diff |= static_cast<unsigned char>(p ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

ApiServer::ApiServer(Worker& worker, ServerOptions options)
    : worker_(worker), options_(std::move(options)), http_(std::make_unique<httplib::Server>()),
      started_at_(unix_now()) {
  // Each waiting request holds an HTTP thread while it waits for the engine; a few more answer
  // /health, /metrics and the queue-full errors while the queue is full.
  const size_t threads = static_cast<size_t>(options_.max_queue) + 6;
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_read_timeout(options_.read_timeout_s, 0);
  http_->set_keep_alive_timeout(5);
  routes();
}

ApiServer::~ApiServer() { stop(); }

Status ApiServer::bind() {
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
    if (port_ <= 0) return make_error("cannot listen on " + options_.host + ": no free port");
    return {};
  }
  if (!http_->bind_to_port(options_.host, options_.port)) {
    return make_error("cannot listen on " + options_.host + ":" + std::to_string(options_.port),
                      "is another server using the port? choose another with --port");
  }
  port_ = options_.port;
  return {};
}

void ApiServer::run() { http_->listen_after_bind(); }

void ApiServer::stop() {
  // Requests in progress end with their generations cancelled (their handlers then finish, so the
  // HTTP threads can be joined).
  for (uint64_t id : router_.ids()) worker_.cancel(id);
  if (http_) http_->stop();
}

ApiServer::ModelState ApiServer::model() const {
  std::lock_guard<std::mutex> lock(model_mutex_);
  return model_;
}

void ApiServer::on_worker_event(const WorkerEvent& event) {
  if (const auto* loaded = std::get_if<ModelLoaded>(&event)) {
    std::lock_guard<std::mutex> lock(model_mutex_);
    model_.loaded = true;
    model_.id = !options_.model_id.empty() ? options_.model_id
                : loaded->facts.remote       ? loaded->facts.name  // the app in front of a remote endpoint
                                             : std::filesystem::path(loaded->facts.path).stem().string();
    model_.n_ctx = loaded->facts.n_ctx;
    model_.has_mtp = loaded->facts.n_mtp > 0;
    return;
  }
  if (const auto* notice = std::get_if<WorkerNotice>(&event); notice && notice->what == "unload") {
    std::lock_guard<std::mutex> lock(model_mutex_);
    model_.loaded = false;
    return;
  }
  // A finished generation is counted before its request sees the event: the reply can reach the client
  // the moment it is delivered, and a client reading /metrics after its reply must find it counted.
  if (const auto* f = std::get_if<GenerationFinished>(&event);
      f && f->stop_reason != StopReason::error && router_.knows(f->id)) {
    metrics_.finished(f->stats, f->stop_reason == StopReason::cancelled);
  }
  router_.deliver(event);
}

void ApiServer::answer_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_json(e), "application/json");
}

bool ApiServer::authorized(const httplib::Request& req, httplib::Response& res) {
  if (options_.api_key.empty()) return true;
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  const std::string presented = auth.compare(0, prefix.size(), prefix) == 0 ? auth.substr(prefix.size()) : "";
  if (keys_equal(presented, options_.api_key)) return true;
  answer_error(res, ApiError{401,
                             auth.empty() ? "an API key is required: send it as 'Authorization: Bearer KEY'"
                                          : "the API key is not valid",
                             "authentication_error", "", "invalid_api_key"});
  return false;
}

void ApiServer::routes() {
  httplib::Server& s = *http_;
  s.set_logger([this](const httplib::Request&, const httplib::Response& res) { metrics_.request(res.status); });
  // Every error status gets an OpenAI error object, also those httplib makes itself (404 for an unknown
  // path, 413 for a body over the limit, 400 for a malformed request line).
  s.set_error_handler([limit = options_.max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    ApiError e{res.status, "", "invalid_request_error", "", ""};
    switch (res.status) {
      case 404: e.message = "no route " + req.method + " " + req.path; e.type = "not_found_error"; break;
      case 413:
        // httplib caps form-encoded bodies at 8 KiB whatever the limit: say so, it is curl's -d default.
        e.message = req.get_header_value("Content-Type").find("application/x-www-form-urlencoded") == 0
                        ? "the request body is form-encoded: send it with 'Content-Type: application/json'"
                        : "the request body is larger than " + std::to_string(limit) + " bytes";
        break;
      case 405: e.message = "method " + req.method + " is not allowed on " + req.path; break;
      default: e.message = "the request could not be handled (HTTP " + std::to_string(res.status) + ")";
    }
    if (res.status >= 500) e.type = "server_error";
    res.set_content(error_json(e), "application/json");
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    res.status = 500;
    res.set_content(error_json(ApiError{500, "internal error: " + what, "server_error", "", ""}), "application/json");
  });

  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const ModelState m = model();
    res.status = m.loaded ? 200 : 503;
    res.set_content(m.loaded ? R"({"status":"ok"})" : R"({"status":"no model loaded"})", "application/json");
  });
  s.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    QueueGauges g;
    g.waiting = router_.waiting();
    g.running = router_.running();
    g.model_loaded = model().loaded;
    res.set_content(metrics_.prometheus_text(g), "text/plain; version=0.0.4");
  });
  auto models = [this](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    const ModelState m = model();
    if (!m.loaded) return answer_error(res, ApiError{503, "no model is loaded", "server_error", "", "model_not_loaded"});
    res.set_content(models_json(m.id, started_at_, m.n_ctx), "application/json");
  };
  s.Get("/v1/models", models);
  s.Get("/models", models);
  s.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    handle_generate(req, res, true);
  });
  s.Post("/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    handle_generate(req, res, true);
  });
  s.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    handle_generate(req, res, false);
  });
  s.Post("/completions", [this](const httplib::Request& req, httplib::Response& res) {
    handle_generate(req, res, false);
  });
}

void ApiServer::handle_generate(const httplib::Request& req, httplib::Response& res, bool chat) {
  if (!authorized(req, res)) return;
  ParsedRequest parsed = chat ? parse_chat_request(req.body, random_u64(), options_.limits)
                              : parse_completion_request(req.body, random_u64(), options_.limits);
  if (const auto* e = std::get_if<ApiError>(&parsed)) return answer_error(res, *e);
  ApiRequest& r = std::get<ApiRequest>(parsed);
  const ModelState m = model();
  if (!m.loaded) return answer_error(res, ApiError{503, "no model is loaded", "server_error", "", "model_not_loaded"});
  if (router_.waiting() >= options_.max_queue) {
    return answer_error(res, ApiError{503,
                                      "the server is busy: " + std::to_string(options_.max_queue) +
                                          " requests are waiting for the engine; retry later",
                                      "server_error", "", "queue_full"});
  }

  const uint64_t id = next_id_.fetch_add(1);
  GenerateCommand cmd;
  cmd.id = id;
  if (chat) {
    cmd.history = std::move(r.messages);
    cmd.render = r.render;
  } else {
    cmd.raw_prompt = std::move(r.prompt);
  }
  cmd.sampler = r.sampler;
  cmd.ignore_stop_tokens = r.ignore_eos;
  // No max_tokens: until a stop token or the end of the context (the generator stops there).
  cmd.max_new_tokens = r.max_tokens > 0 ? r.max_tokens : std::max(1, m.n_ctx);
  cmd.reserve_tokens = 1;           // the prompt may use all but one position of the context
  cmd.drop_oldest_turns = false;    // an API client hears that its messages do not fit
  cmd.mtp = options_.mtp;
  cmd.mtp.enabled = options_.mtp.enabled && m.has_mtp;

  auto reply = std::make_shared<Reply>(std::move(r.stop));
  reply->id = id;
  reply->chat = chat;
  reply->stream = r.stream;
  reply->include_usage = r.include_usage;
  reply->ids = ResponseIds{hex_id(chat ? "chatcmpl-" : "cmpl-", random_u64(), id), unix_now(), m.id};
  reply->channel = router_.open(id);
  worker_.post(std::move(cmd));

  // Wait for the start (or a failure before it) so that the status line says whether the request was
  // accepted: a prompt longer than the context is a 400 also for a streaming request.
  while (true) {
    std::optional<WorkerEvent> e = reply->channel->next(1000ms);
    if (!e) continue;  // queued behind other requests: the worker answers every command eventually
    if (const auto* started = std::get_if<GenerationStarted>(&*e)) {
      reply->prompt_tokens = started->prompt_tokens;
      break;
    }
    if (const auto* f = std::get_if<GenerationFinished>(&*e)) {
      router_.close(id);
      return answer_error(res, from_generation_error(*f));
    }
  }

  // Writes `data` to the client; false (and the generation cancelled) when the client went away.
  auto write = [this, reply](httplib::DataSink& sink, const std::string& data) {
    if (sink.write(data.data(), data.size())) return true;
    worker_.cancel(reply->id);
    metrics_.disconnected();
    return false;
  };

  auto provider = [this, reply, write](size_t, httplib::DataSink& sink) -> bool {
    std::optional<WorkerEvent> e = reply->channel->next(1000ms);
    if (!e) {
      // Nothing for a second: a keep-alive byte, which is also how a client that went away is noticed
      // (an SSE comment line; leading whitespace is valid JSON for a whole reply).
      return write(sink, reply->stream ? ": keep-alive\n\n" : " ");
    }
    if (const auto* d = std::get_if<TokenDelta>(&*e)) {
      const bool was_hit = reply->stop_hit;
      auto [reasoning, content] = reply->apply(*d);
      if (reply->stop_hit && !was_hit) worker_.cancel(reply->id);  // a stop string: no more tokens needed
      if (!reply->stream || (reasoning.empty() && content.empty())) return true;
      std::string event = reply->chat ? chat_chunk_event(reply->ids, reply->first, reasoning, content, nullptr)
                                      : text_chunk_event(reply->ids, content, nullptr);
      reply->first = false;
      return write(sink, event);
    }
    const auto* f = std::get_if<GenerationFinished>(&*e);
    if (!f) return true;  // stats snapshots: the final figures come with the end
    reply->finished = *f;
    reply->done = true;
    auto [reasoning, content] = reply->take_final(*f);
    std::string out;
    if (f->stop_reason == StopReason::error) {
      out = reply->stream ? error_event(f->error) + done_event()
                          : error_json(ApiError{500, f->error, "server_error", "", ""});
    } else if (reply->stream) {
      const Finish fin = reply->finish();
      if (!reasoning.empty() || !content.empty()) {
        out += reply->chat ? chat_chunk_event(reply->ids, reply->first, reasoning, content, nullptr)
                           : text_chunk_event(reply->ids, content, nullptr);
        reply->first = false;
      }
      out += reply->chat ? chat_chunk_event(reply->ids, reply->first, "", "", &fin)
                         : text_chunk_event(reply->ids, "", &fin);
      if (reply->include_usage) out += usage_event(reply->ids, reply->chat, fin);
      out += done_event();
    } else {
      const Finish fin = reply->finish();
      out = reply->chat ? chat_completion_json(reply->ids, reply->all_thinking, reply->all_content, fin)
                        : text_completion_json(reply->ids, reply->all_content, fin);
    }
    if (!write(sink, out)) return false;
    sink.done();
    return true;
  };
  auto release = [this, reply](bool) {
    if (!reply->done) worker_.cancel(reply->id);
    router_.close(reply->id);
  };
  if (reply->stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", provider, release);
  } else {
    res.set_chunked_content_provider("application/json", provider, release);
  }
}

}  // namespace qc::server
