#include "remote/openai_remote.h"

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "qwenchat/json_depth.h"

namespace qc {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Splits "http://host:port/v1" into origin and base path ("/v1" when there is none).
Result<std::pair<std::string, std::string>> split_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return make_error("endpoint URL '" + url + "': expected http://host:port/v1 or https://...");
  }
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return make_error("endpoint URL '" + url + "': the scheme must be http or https, got " + scheme);
  }
  const size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.empty()) path = "/v1";
  if (origin.size() <= scheme_end + 3) return make_error("endpoint URL '" + url + "' has no host");
  return std::make_pair(origin, path);
}

std::unique_ptr<httplib::Client> make_client(const RemoteModel& m) {
  auto c = std::make_unique<httplib::Client>(m.origin);
  c->set_connection_timeout(10, 0);
  // A long prompt on a busy remote may keep the first byte back for minutes; silence beyond that is a
  // dead server.
  c->set_read_timeout(600, 0);
  c->set_write_timeout(60, 0);
  if (!m.endpoint.api_key.empty()) c->set_bearer_token_auth(m.endpoint.api_key);
  return c;
}

std::string transport_error(const RemoteModel& m, httplib::Error e) {
  std::string why;
  switch (e) {
    case httplib::Error::Connection: why = "connection refused or host unreachable"; break;
    case httplib::Error::ConnectionTimeout: why = "the connection timed out"; break;
    case httplib::Error::Read: why = "the connection broke or timed out while reading"; break;
    case httplib::Error::Write: why = "the connection broke while sending"; break;
    case httplib::Error::SSLConnection: why = "TLS connection failed"; break;
    case httplib::Error::SSLServerVerification: why = "the server's TLS certificate is not trusted"; break;
    default: why = httplib::to_string(e);
  }
  return "cannot reach " + m.origin + m.base_path + ": " + why;
}

// The message of an OpenAI error object, or the start of the body.
std::string error_text(int status, const std::string& body) {
  std::string message = body.substr(0, 200);
  if (check_json_depth(body, "").ok()) {
    const json j = json::parse(body, nullptr, false);
    if (j.is_object() && j.contains("error")) {
      const json& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string()) message = e["message"];
      else if (e.is_string()) message = e.get<std::string>();
    }
  }
  std::string prefix = "HTTP " + std::to_string(status);
  if (status == 401 || status == 403) prefix += " (the endpoint refused the API key)";
  return prefix + ": " + message;
}

GenerationFinished finished_with_error(uint64_t id, std::string message, std::string kind = {}) {
  GenerationFinished f;
  f.id = id;
  f.stop_reason = StopReason::error;
  f.error = std::move(message);
  f.error_kind = std::move(kind);
  return f;
}

json request_body(const GenerateCommand& cmd, const RemoteModel& m) {
  json messages = json::array();
  if (!cmd.render.system_prompt.empty() && (cmd.history.empty() || cmd.history.front().role != "system")) {
    messages.push_back({{"role", "system"}, {"content", cmd.render.system_prompt}});
  }
  for (const ChatMessage& msg : cmd.history) messages.push_back({{"role", msg.role}, {"content", msg.content}});
  const SamplerParams& s = cmd.sampler;
  json body = {{"model", m.model_id},
               {"messages", messages},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"max_tokens", cmd.max_new_tokens},
               {"temperature", s.temperature},
               {"top_p", s.top_p},
               {"presence_penalty", s.presence_penalty},
               {"seed", static_cast<int64_t>(s.seed)},
               {"chat_template_kwargs", {{"enable_thinking", cmd.render.thinking}}}};
  // Extensions that vLLM, SGLang, llama-server and qwenchat-server take; sent only when they change
  // something, so a strict server that knows only OpenAI's fields still accepts the common case.
  if (s.top_k > 0) body["top_k"] = s.top_k;
  if (s.min_p > 0) body["min_p"] = s.min_p;
  if (s.repetition_penalty != 1.0f) body["repetition_penalty"] = s.repetition_penalty;
  return body;
}

}  // namespace

bool remote_endpoints_compiled() { return true; }

Result<RemoteModel> connect_remote(const RemoteEndpoint& endpoint) {
  RemoteModel m;
  m.endpoint = endpoint;
  QC_ASSIGN(auto parts, split_url(endpoint.url));
  m.origin = parts.first;
  m.base_path = parts.second;
  auto client = make_client(m);
  client->set_read_timeout(30, 0);
  auto res = client->Get(m.base_path + "/models");
  if (!res) return make_error(transport_error(m, res.error()));
  if (res->status != 200) {
    return make_error(m.origin + m.base_path + "/models: " + error_text(res->status, res->body),
                      res->status == 401 || res->status == 403 ? "check the API key" : "");
  }
  QC_TRY(check_json_depth(res->body, m.origin + m.base_path + "/models"));
  const json j = json::parse(res->body, nullptr, false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) {
    return make_error(m.origin + m.base_path + "/models: not an OpenAI model list (no 'data' array)",
                      "is this an OpenAI-compatible server? vLLM and SGLang serve under /v1");
  }
  std::vector<std::string> ids;
  for (const json& e : j["data"]) {
    if (!e.is_object() || !e.contains("id") || !e["id"].is_string()) continue;
    ids.push_back(e["id"]);
    if ((endpoint.model.empty() && ids.size() == 1) || e["id"] == endpoint.model) {
      m.model_id = e["id"];
      if (e.contains("max_model_len") && e["max_model_len"].is_number_integer()) m.n_ctx = e["max_model_len"];
    }
  }
  if (m.model_id.empty()) {
    std::string listed;
    for (const std::string& id : ids) listed += (listed.empty() ? "" : ", ") + id;
    return make_error(endpoint.model.empty() ? m.origin + m.base_path + " serves no model"
                                             : m.origin + m.base_path + " does not serve '" + endpoint.model + "'",
                      listed.empty() ? "" : "it serves: " + listed);
  }
  return m;
}

ModelFacts describe_remote(const RemoteModel& m) {
  ModelFacts f;
  f.remote = true;
  f.path = m.origin + m.base_path;
  f.name = m.model_id;
  f.architecture = "remote";
  f.summary = m.model_id + " at " + m.origin + m.base_path;
  f.n_ctx = m.n_ctx;
  f.n_ctx_train = m.n_ctx;
  f.backend.name = "remote";
  f.backend.device = m.origin;
  return f;
}

void run_remote_generation(const GenerateCommand& cmd, const RemoteModel& m, const GenerationContext& ctx) {
  if (cmd.raw_prompt) {
    ctx.emit(finished_with_error(cmd.id, "a raw prompt cannot be sent to a remote chat endpoint", "invalid_request"));
    return;
  }
  auto client = make_client(m);
  httplib::Request req;
  req.method = "POST";
  req.path = m.base_path + "/chat/completions";
  req.body = request_body(cmd, m).dump(-1, ' ', false, json::error_handler_t::replace);
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  if (!m.endpoint.api_key.empty()) req.set_header("Authorization", "Bearer " + m.endpoint.api_key);

  const Clock::time_point t0 = Clock::now();
  Clock::time_point t_first{};
  int status = 0;
  bool started = false, cancelled = false, done = false;
  std::string pending, error_body, stream_error, finish_reason;
  std::string thinking, content;
  int chunks = 0, prompt_tokens = 0, completion_tokens = -1;

  req.response_handler = [&](const httplib::Response& r) {
    status = r.status;
    if (status == 200) {
      GenerationStarted s;
      s.id = cmd.id;
      s.n_ctx = m.n_ctx;
      s.backend = "remote";
      ctx.emit(s);
      started = true;
    }
    return true;
  };
  // One event: "data: {...}". Returns false to stop reading.
  auto handle_event = [&](const std::string& data) {
    if (data == "[DONE]") {
      done = true;
      return;
    }
    if (!check_json_depth(data, "", 64).ok()) return;
    const json j = json::parse(data, nullptr, false);
    if (!j.is_object()) return;
    if (j.contains("error")) {
      stream_error = j["error"].is_object() ? j["error"].value("message", std::string("error")) : j["error"].dump();
      return;
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      prompt_tokens = j["usage"].value("prompt_tokens", prompt_tokens);
      completion_tokens = j["usage"].value("completion_tokens", completion_tokens);
    }
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return;
    const json& c = j["choices"][0];
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) finish_reason = c["finish_reason"];
    if (!c.contains("delta") || !c["delta"].is_object()) return;
    const json& d = c["delta"];
    std::string r, t;
    for (const char* key : {"reasoning_content", "reasoning"}) {
      if (d.contains(key) && d[key].is_string()) r += d[key].get<std::string>();
    }
    if (d.contains("content") && d["content"].is_string()) t = d["content"];
    if (r.empty() && t.empty()) return;
    if (chunks == 0) t_first = Clock::now();
    thinking += r;
    content += t;
    TokenDelta delta;
    delta.id = cmd.id;
    delta.index = chunks;
    delta.thinking_delta = r;
    delta.content_delta = t;
    delta.in_thinking = content.empty() && !thinking.empty();
    ctx.emit(delta);
    ++chunks;
    StatsSnapshot s;
    s.id = cmd.id;
    s.generated_tokens = chunks;
    s.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    s.ttft_s = std::chrono::duration<double>(t_first - t0).count();
    const double decode_s = std::chrono::duration<double>(Clock::now() - t_first).count();
    if (chunks > 1 && decode_s > 0) s.decode_tok_per_s = (chunks - 1) / decode_s;
    s.context_size = m.n_ctx;
    ctx.emit(s);
    if (ctx.at_token) ctx.at_token(chunks - 1);
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (ctx.cancelled && ctx.cancelled()) {
      cancelled = true;
      return false;  // closes the connection: the server stops generating
    }
    if (status != 200) {
      if (error_body.size() < 4096) error_body.append(data, n);
      return true;
    }
    pending.append(data, n);
    size_t end;
    while ((end = pending.find("\n\n")) != std::string::npos) {
      std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      for (size_t p = 0; p < event.size();) {  // an event may have several lines; data lines matter
        size_t nl = event.find('\n', p);
        if (nl == std::string::npos) nl = event.size();
        std::string line = event.substr(p, nl - p);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("data:", 0) == 0) handle_event(line.substr(line.size() > 5 && line[5] == ' ' ? 6 : 5));
        p = nl + 1;
      }
      if (ctx.cancelled && ctx.cancelled()) {
        cancelled = true;
        return false;
      }
    }
    return true;
  };

  auto result = client->send(req);
  const double total_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!started) {
    if (cancelled) {
      GenerationFinished f;
      f.id = cmd.id;
      f.stop_reason = StopReason::cancelled;
      ctx.emit(std::move(f));
      return;
    }
    if (!result && status == 0) {
      ctx.emit(finished_with_error(cmd.id, transport_error(m, result.error())));
      return;
    }
    const int st = result ? result->status : status;
    const std::string body = result && !result->body.empty() ? result->body : error_body;
    const bool too_long = body.find("context_length_exceeded") != std::string::npos;
    ctx.emit(finished_with_error(cmd.id, m.origin + m.base_path + "/chat/completions: " + error_text(st, body),
                                 too_long ? "context_length_exceeded" : ""));
    return;
  }
  GenerationFinished f;
  f.id = cmd.id;
  f.backend = "remote";
  f.parts.thinking = thinking;
  f.parts.content = content;
  f.text = thinking.empty() ? content : "<think>\n" + thinking + "\n</think>\n\n" + content;
  f.stats.prompt_tokens = prompt_tokens;
  f.stats.generated_tokens = completion_tokens >= 0 ? completion_tokens : chunks;
  if (chunks > 0) {
    f.stats.time_to_first_token_s = std::chrono::duration<double>(t_first - t0).count();
    f.stats.prefill_seconds = f.stats.time_to_first_token_s;
    if (f.stats.prefill_seconds > 0) f.stats.prefill_tok_per_s = prompt_tokens / f.stats.prefill_seconds;
    f.stats.decode_seconds = total_s - f.stats.time_to_first_token_s;
    if (f.stats.decode_seconds > 0 && f.stats.generated_tokens > 1) {
      f.stats.decode_tok_per_s = (f.stats.generated_tokens - 1) / f.stats.decode_seconds;
    }
  }
  f.context_size = m.n_ctx;
  if (cancelled) {
    f.stop_reason = StopReason::cancelled;
  } else if (!stream_error.empty()) {
    f.stop_reason = StopReason::error;
    f.error = "the endpoint reported: " + stream_error;
  } else if (!done && !result) {
    f.stop_reason = StopReason::error;
    f.error = transport_error(m, result.error()) + " (the reply so far is kept)";
  } else {
    f.stop_reason = finish_reason == "length" ? StopReason::max_tokens : StopReason::stop_token;
  }
  ctx.emit(std::move(f));
}

}  // namespace qc
