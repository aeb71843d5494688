#include "server/api_response.h"

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace qc::server {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json usage_json(const Usage& u) {
  // OpenAI's prompt_tokens_details.cached_tokens: the prompt tokens a kept state already held.
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json timings_json(const Finish& f) {
  const GenerationStats& s = f.stats;
  // llama-server's names: prompt_n = tokens prefilled, cache_n = tokens taken from the cache.
  json t = {{"prompt_n", s.prompt_tokens - s.prompt_reused},
            {"cache_n", s.prompt_reused},
            {"prompt_ms", s.prefill_seconds * 1e3},
            {"prompt_per_second", s.prefill_tok_per_s},
            {"predicted_n", s.generated_tokens},
            {"predicted_ms", s.decode_seconds * 1e3},
            {"predicted_per_second", s.decode_tok_per_s},
            {"ttft_ms", s.time_to_first_token_s * 1e3}};
  if (s.mtp_draft_len > 0) {
    json acc = json::array();
    for (int j = 0; j < s.mtp_draft_len; ++j) acc.push_back(s.mtp_acceptance(j));
    t["mtp_draft_len"] = s.mtp_draft_len;
    t["mtp_acceptance"] = acc;
  }
  return t;
}

json head(const ResponseIds& ids, const char* object) {
  return {{"id", ids.id}, {"object", object}, {"created", ids.created}, {"model", ids.model},
          {"system_fingerprint", "qwenchat"}};
}

}  // namespace

std::string error_json(const ApiError& e) {
  json err = {{"message", e.message}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (!e.param.empty()) err["param"] = e.param;
  if (!e.code.empty()) err["code"] = e.code;
  return dump(json{{"error", err}});
}

std::string chat_completion_json(const ResponseIds& ids, const std::string& reasoning, const std::string& content,
                                 const Finish& finish) {
  json j = head(ids, "chat.completion");
  json message = {{"role", "assistant"}, {"content", content}};
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  j["choices"] = json::array({{{"index", 0}, {"message", message}, {"finish_reason", finish.reason},
                               {"logprobs", nullptr}}});
  j["usage"] = usage_json(finish.usage);
  j["timings"] = timings_json(finish);
  return dump(j);
}

std::string text_completion_json(const ResponseIds& ids, const std::string& text, const Finish& finish) {
  json j = head(ids, "text_completion");
  j["choices"] = json::array({{{"index", 0}, {"text", text}, {"finish_reason", finish.reason}, {"logprobs", nullptr}}});
  j["usage"] = usage_json(finish.usage);
  j["timings"] = timings_json(finish);
  return dump(j);
}

std::string chat_chunk_event(const ResponseIds& ids, bool first, const std::string& reasoning,
                             const std::string& content, const Finish* finish) {
  json j = head(ids, "chat.completion.chunk");
  json delta = json::object();
  if (first) delta["role"] = "assistant";
  if (!reasoning.empty()) delta["reasoning_content"] = reasoning;
  if (!content.empty() || (first && reasoning.empty())) delta["content"] = content;
  json choice = {{"index", 0}, {"delta", delta}, {"finish_reason", nullptr}, {"logprobs", nullptr}};
  if (finish) {
    choice["finish_reason"] = finish->reason;
    j["timings"] = timings_json(*finish);
  }
  j["choices"] = json::array({choice});
  return "data: " + dump(j) + "\n\n";
}

std::string text_chunk_event(const ResponseIds& ids, const std::string& text, const Finish* finish) {
  json j = head(ids, "text_completion");
  json choice = {{"index", 0}, {"text", text}, {"finish_reason", nullptr}, {"logprobs", nullptr}};
  if (finish) {
    choice["finish_reason"] = finish->reason;
    j["timings"] = timings_json(*finish);
  }
  j["choices"] = json::array({choice});
  return "data: " + dump(j) + "\n\n";
}

std::string usage_event(const ResponseIds& ids, bool chat, const Finish& finish) {
  json j = head(ids, chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array();
  j["usage"] = usage_json(finish.usage);
  return "data: " + dump(j) + "\n\n";
}

std::string error_event(const std::string& message) {
  return "data: " + dump(json{{"error", {{"message", message}, {"type", "server_error"}, {"param", nullptr},
                                         {"code", nullptr}}}}) + "\n\n";
}

std::string models_json(const std::string& model, int64_t created, int n_ctx) {
  json m = {{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "qwenchat"}};
  if (n_ctx > 0) m["max_model_len"] = n_ctx;
  return dump(json{{"object", "list"}, {"data", json::array({m})}});
}

}  // namespace qc::server
