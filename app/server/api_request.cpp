#include "server/api_request.h"

#include <cmath>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "server/json_limits.h"

namespace qc::server {
namespace {

using nlohmann::json;

// Parses the body as one JSON object, with the depth checked first (json_limits.h).
std::variant<json, ApiError> parse_object(std::string_view body) {
  if (body.empty()) return bad_request("the request body is empty: expected a JSON object");
  if (json_nesting_depth(body) > kMaxJsonDepth) {
    return bad_request("the request body nests deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels of arrays and objects");
  }
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad_request("the request body is not valid JSON (or not valid UTF-8)");
  if (!j.is_object()) return bad_request("the request body must be a JSON object");
  return j;
}

std::string type_name(const json& v) { return v.type_name(); }

// Typed field readers: each returns an error naming the field and the type it expected.
struct Fields {
  const json& j;

  const json* find(const char* name) const {
    auto it = j.find(name);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }

  std::optional<ApiError> number(const char* name, double lo, double hi, float* out) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_number()) return bad_request(std::string(name) + " must be a number, got " + type_name(*v), name);
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
      return bad_request(std::string(name) + " must be in [" + fmt(lo) + ", " + fmt(hi) + "], got " + v->dump(), name);
    }
    *out = static_cast<float>(d);
    return std::nullopt;
  }

  std::optional<ApiError> integer(const char* name, int64_t lo, int64_t hi, int64_t* out) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) {
      return bad_request(std::string(name) + " must be an integer, got " + v->dump(), name);
    }
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
      return bad_request(std::string(name) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                             "], got " + v->dump(), name);
    }
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi) {
      return bad_request(std::string(name) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                             "], got " + v->dump(), name);
    }
    *out = x;
    return std::nullopt;
  }

  std::optional<ApiError> boolean(const char* name, bool* out) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return bad_request(std::string(name) + " must be true or false, got " + v->dump(), name);
    *out = v->get<bool>();
    return std::nullopt;
  }

  static std::string fmt(double d) {
    std::string s = std::to_string(d);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

#define QC_API_TRY(expr)                       \
  do {                                         \
    if (auto qc_api_e_ = (expr)) return *qc_api_e_; \
  } while (0)

// Fields this server cannot honour: refused unless they hold the value that means "off".
std::optional<ApiError> refuse_unsupported(const json& j) {
  if (auto it = j.find("n"); it != j.end() && !it->is_null() && *it != 1) {
    return bad_request("n must be 1: this server returns one choice per request", "n");
  }
  if (auto it = j.find("logprobs"); it != j.end() && !it->is_null() && *it != false && *it != 0) {
    return bad_request("logprobs are not supported by this server", "logprobs");
  }
  if (auto it = j.find("top_logprobs"); it != j.end() && !it->is_null() && *it != 0) {
    return bad_request("top_logprobs is not supported by this server", "top_logprobs");
  }
  if (auto it = j.find("logit_bias"); it != j.end() && !it->is_null() && !(it->is_object() && it->empty())) {
    return bad_request("logit_bias is not supported by this server", "logit_bias");
  }
  if (auto it = j.find("tools"); it != j.end() && !it->is_null() && !(it->is_array() && it->empty())) {
    return bad_request("tools are not supported: the model is served without tool calling", "tools");
  }
  if (auto it = j.find("functions"); it != j.end() && !it->is_null()) {
    return bad_request("functions are not supported: the model is served without tool calling", "functions");
  }
  if (auto it = j.find("response_format"); it != j.end() && !it->is_null()) {
    const bool text = it->is_object() && it->value("type", json()) == "text";
    if (!text) return bad_request("response_format must be {\"type\": \"text\"}: structured output is not supported",
                                  "response_format");
  }
  for (const char* name : {"frequency_penalty"}) {
    if (auto it = j.find(name); it != j.end() && !it->is_null() && !(it->is_number() && it->get<double>() == 0.0)) {
      return bad_request(std::string(name) +
                             " is not supported (use presence_penalty or repetition_penalty); only 0 is accepted",
                         name);
    }
  }
  if (auto it = j.find("echo"); it != j.end() && !it->is_null() && *it != false) {
    return bad_request("echo is not supported by this server", "echo");
  }
  if (auto it = j.find("suffix"); it != j.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty())) {
    return bad_request("suffix (insertion) is not supported by this server", "suffix");
  }
  if (auto it = j.find("best_of"); it != j.end() && !it->is_null() && *it != 1) {
    return bad_request("best_of must be 1", "best_of");
  }
  return std::nullopt;
}

// Sampling, token limit, stop strings and streaming: the fields both endpoints share.
std::optional<ApiError> read_common(const json& j, bool thinking, uint64_t random_seed, const RequestLimits& limits,
                                    ApiRequest* r) {
  QC_API_TRY(refuse_unsupported(j));
  Fields f{j};
  r->sampler = thinking ? SamplerParams::qwen_thinking() : SamplerParams::qwen_instruct();
  QC_API_TRY(f.number("temperature", 0.0, 2.0, &r->sampler.temperature));
  QC_API_TRY(f.number("top_p", 0.0, 1.0, &r->sampler.top_p));
  if (r->sampler.top_p == 0.0f) r->sampler.top_p = 1e-6f;  // OpenAI accepts 0 (keep the best token only)
  QC_API_TRY(f.number("min_p", 0.0, 1.0, &r->sampler.min_p));
  QC_API_TRY(f.number("presence_penalty", -2.0, 2.0, &r->sampler.presence_penalty));
  QC_API_TRY(f.number("repetition_penalty", 0.01, 10.0, &r->sampler.repetition_penalty));
  int64_t top_k = r->sampler.top_k;
  QC_API_TRY(f.integer("top_k", -1, std::numeric_limits<int32_t>::max(), &top_k));
  r->sampler.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);  // vLLM: -1 = off; ours: 0 = off
  int64_t seed = 0;
  if (f.find("seed")) {
    QC_API_TRY(f.integer("seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &seed));
    r->sampler.seed = static_cast<uint64_t>(seed);
    r->seeded = true;
  } else {
    r->sampler.seed = random_seed;
  }
  // max_completion_tokens is the newer name; a request may carry either (or both, equal).
  int64_t max_tokens = 0, max_completion = 0;
  QC_API_TRY(f.integer("max_tokens", 1, std::numeric_limits<int32_t>::max(), &max_tokens));
  QC_API_TRY(f.integer("max_completion_tokens", 1, std::numeric_limits<int32_t>::max(), &max_completion));
  if (max_tokens && max_completion && max_tokens != max_completion) {
    return bad_request("max_tokens and max_completion_tokens differ; send one of them", "max_tokens");
  }
  r->max_tokens = static_cast<int>(max_tokens ? max_tokens : max_completion);

  if (const json* stop = f.find("stop")) {
    std::vector<std::string> stops;
    if (stop->is_string()) {
      stops.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const json& s : *stop) {
        if (!s.is_string()) return bad_request("stop must be a string or an array of strings", "stop");
        stops.push_back(s.get<std::string>());
      }
    } else {
      return bad_request("stop must be a string or an array of strings, got " + type_name(*stop), "stop");
    }
    if (static_cast<int>(stops.size()) > limits.max_stop_strings) {
      return bad_request("stop has " + std::to_string(stops.size()) + " strings; at most " +
                             std::to_string(limits.max_stop_strings) + " are accepted", "stop");
    }
    for (const std::string& s : stops) {
      if (s.empty()) return bad_request("stop strings must not be empty", "stop");
      if (s.size() > limits.max_stop_bytes) {
        return bad_request("a stop string is " + std::to_string(s.size()) + " bytes; at most " +
                               std::to_string(limits.max_stop_bytes) + " are accepted", "stop");
      }
    }
    r->stop = std::move(stops);
  }
  QC_API_TRY(f.boolean("stream", &r->stream));
  QC_API_TRY(f.boolean("ignore_eos", &r->ignore_eos));
  if (const json* so = f.find("stream_options")) {
    if (!so->is_object()) return bad_request("stream_options must be an object", "stream_options");
    Fields sof{*so};
    QC_API_TRY(sof.boolean("include_usage", &r->include_usage));
  }
  if (const json* model = f.find("model")) {
    if (!model->is_string()) return bad_request("model must be a string", "model");
    r->model = model->get<std::string>();
  }
  if (Status s = r->sampler.validate(); !s.ok()) return bad_request(s.error().describe());
  return std::nullopt;
}

// A message's content: a string, null, or an array of {"type": "text", "text": ...} parts (joined by
// newlines, as vLLM does).
std::optional<ApiError> read_content(const json& m, size_t index, std::string* out) {
  const std::string where = "messages[" + std::to_string(index) + "].content";
  auto it = m.find("content");
  if (it == m.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    *out = it->get<std::string>();
    return std::nullopt;
  }
  if (!it->is_array()) return bad_request(where + " must be a string or an array of content parts", where);
  std::string joined;
  for (const json& part : *it) {
    if (!part.is_object()) return bad_request(where + " parts must be objects", where);
    const std::string type = part.value("type", std::string());
    if (type != "text") {
      return bad_request(where + " has a part of type '" + type + "': only text parts are supported", where);
    }
    auto text = part.find("text");
    if (text == part.end() || !text->is_string()) return bad_request(where + " text parts need a string 'text'", where);
    if (!joined.empty()) joined += '\n';
    joined += text->get<std::string>();
  }
  *out = std::move(joined);
  return std::nullopt;
}

}  // namespace

ParsedRequest parse_chat_request(std::string_view body, uint64_t random_seed, const RequestLimits& limits) {
  auto parsed = parse_object(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const json& j = std::get<json>(parsed);
  ApiRequest r;
  r.chat = true;

  bool thinking = true;
  if (auto it = j.find("chat_template_kwargs"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return bad_request("chat_template_kwargs must be an object", "chat_template_kwargs");
    if (auto et = it->find("enable_thinking"); et != it->end() && !et->is_null()) {
      if (!et->is_boolean()) {
        return bad_request("chat_template_kwargs.enable_thinking must be true or false", "chat_template_kwargs");
      }
      thinking = et->get<bool>();
    }
  }
  r.render.thinking = thinking;

  auto msgs = j.find("messages");
  if (msgs == j.end() || !msgs->is_array()) return bad_request("messages must be an array of messages", "messages");
  if (msgs->empty()) return bad_request("messages is empty: nothing to answer", "messages");
  if (static_cast<int>(msgs->size()) > limits.max_messages) {
    return bad_request("messages has " + std::to_string(msgs->size()) + " entries; at most " +
                           std::to_string(limits.max_messages) + " are accepted", "messages");
  }
  for (size_t i = 0; i < msgs->size(); ++i) {
    const json& m = (*msgs)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return bad_request(where + " must be an object", "messages");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) return bad_request(where + ".role must be a string", "messages");
    ChatMessage cm;
    cm.role = role->get<std::string>();
    if (cm.role == "developer") cm.role = "system";  // OpenAI's newer name for the system role
    if (cm.role != "system" && cm.role != "user" && cm.role != "assistant") {
      return bad_request(where + ".role '" + cm.role + "' is not supported: expected system, developer, user or assistant",
                         "messages");
    }
    if (auto tc = m.find("tool_calls"); tc != m.end() && !tc->is_null() && !(tc->is_array() && tc->empty())) {
      return bad_request(where + " has tool_calls: the model is served without tool calling", "messages");
    }
    if (auto e = read_content(m, i, &cm.content)) return *e;
    if (auto rc = m.find("reasoning_content"); rc != m.end() && rc->is_string() && cm.role == "assistant") {
      cm.thinking = rc->get<std::string>();
    }
    r.messages.push_back(std::move(cm));
  }
  if (auto e = read_common(j, thinking, random_seed, limits, &r)) return *e;
  return r;
}

ParsedRequest parse_completion_request(std::string_view body, uint64_t random_seed, const RequestLimits& limits) {
  auto parsed = parse_object(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const json& j = std::get<json>(parsed);
  ApiRequest r;
  r.chat = false;
  auto prompt = j.find("prompt");
  if (prompt == j.end() || prompt->is_null()) return bad_request("prompt is required", "prompt");
  if (prompt->is_string()) {
    r.prompt = prompt->get<std::string>();
  } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
    r.prompt = (*prompt)[0].get<std::string>();
  } else {
    return bad_request("prompt must be a string (or an array holding one string): batches and token arrays are "
                       "not supported", "prompt");
  }
  if (r.prompt.empty()) return bad_request("prompt is empty: nothing to continue", "prompt");
  if (auto e = read_common(j, /*thinking=*/false, random_seed, limits, &r)) return *e;
  return r;
}

}  // namespace qc::server
