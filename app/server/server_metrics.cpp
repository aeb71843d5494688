#include "server/server_metrics.h"

#include <algorithm>
#include <cstdio>

namespace qc::server {
namespace {

void metric(std::string& out, const char* name, const char* type, const char* help, double value,
            const char* labels = "") {
  char line[256];
  std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s%s %.9g\n", name, help, name, type, name, labels,
                value);
  out += line;
}

}  // namespace

void ServerMetrics::request(int http_status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (http_status >= 500) {
    ++requests_5xx_;
  } else if (http_status >= 400) {
    ++requests_4xx_;
  } else {
    ++requests_2xx_;
  }
}

void ServerMetrics::finished(const GenerationStats& s, bool cancelled) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++generations_;
  if (cancelled) ++cancelled_;
  prompt_tokens_ += static_cast<uint64_t>(std::max(s.prompt_tokens - s.prompt_reused, 0));
  prompt_reused_ += static_cast<uint64_t>(std::max(s.prompt_reused, 0));
  generated_tokens_ += static_cast<uint64_t>(s.generated_tokens);
  prefill_seconds_ += s.prefill_seconds;
  decode_seconds_ += s.decode_seconds;
  if (s.generated_tokens > 0) {
    last_prefill_tok_per_s_ = s.prefill_tok_per_s;
    last_decode_tok_per_s_ = s.decode_tok_per_s;
    last_ttft_s_ = s.time_to_first_token_s;
  }
  for (size_t j = 0; j < kMaxDraftLen; ++j) {
    mtp_drafted_[j] += static_cast<uint64_t>(s.mtp_drafted[j]);
    mtp_accepted_[j] += static_cast<uint64_t>(s.mtp_accepted[j]);
  }
}

void ServerMetrics::disconnected() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++disconnects_;
}

std::string ServerMetrics::prometheus_text(const QueueGauges& g) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  out += "# HELP qwenchat_requests_total HTTP requests answered, by status class.\n"
         "# TYPE qwenchat_requests_total counter\n";
  out += "qwenchat_requests_total{code=\"2xx\"} " + std::to_string(requests_2xx_) + "\n";
  out += "qwenchat_requests_total{code=\"4xx\"} " + std::to_string(requests_4xx_) + "\n";
  out += "qwenchat_requests_total{code=\"5xx\"} " + std::to_string(requests_5xx_) + "\n";
  metric(out, "qwenchat_generations_total", "counter", "Generations finished (any reason).",
         static_cast<double>(generations_));
  metric(out, "qwenchat_generations_cancelled_total", "counter",
         "Generations cancelled (stop strings, clients that went away).", static_cast<double>(cancelled_));
  metric(out, "qwenchat_client_disconnects_total", "counter", "Clients that went away before their reply ended.",
         static_cast<double>(disconnects_));
  metric(out, "qwenchat_prompt_tokens_total", "counter", "Prompt tokens prefilled.",
         static_cast<double>(prompt_tokens_));
  metric(out, "qwenchat_prompt_tokens_reused_total", "counter",
         "Prompt tokens taken from a kept conversation state (not prefilled).", static_cast<double>(prompt_reused_));
  metric(out, "qwenchat_generated_tokens_total", "counter", "Tokens generated.",
         static_cast<double>(generated_tokens_));
  metric(out, "qwenchat_prefill_seconds_total", "counter", "Seconds spent prefilling prompts.", prefill_seconds_);
  metric(out, "qwenchat_decode_seconds_total", "counter", "Seconds spent decoding after the first token.",
         decode_seconds_);
  metric(out, "qwenchat_last_prefill_tokens_per_second", "gauge", "Prefill rate of the last reply.",
         last_prefill_tok_per_s_);
  metric(out, "qwenchat_last_decode_tokens_per_second", "gauge", "Decode rate of the last reply.",
         last_decode_tok_per_s_);
  metric(out, "qwenchat_last_time_to_first_token_seconds", "gauge", "Time to first token of the last reply.",
         last_ttft_s_);
  out += "# HELP qwenchat_mtp_drafted_total MTP draft tokens proposed, by draft position.\n"
         "# TYPE qwenchat_mtp_drafted_total counter\n";
  for (size_t j = 0; j < kMaxDraftLen; ++j) {
    out += "qwenchat_mtp_drafted_total{position=\"" + std::to_string(j + 1) + "\"} " +
           std::to_string(mtp_drafted_[j]) + "\n";
  }
  out += "# HELP qwenchat_mtp_accepted_total MTP draft tokens accepted, by draft position.\n"
         "# TYPE qwenchat_mtp_accepted_total counter\n";
  for (size_t j = 0; j < kMaxDraftLen; ++j) {
    out += "qwenchat_mtp_accepted_total{position=\"" + std::to_string(j + 1) + "\"} " +
           std::to_string(mtp_accepted_[j]) + "\n";
  }
  metric(out, "qwenchat_queue_length", "gauge", "Requests waiting for the engine.", g.waiting);
  metric(out, "qwenchat_requests_running", "gauge", "Requests the engine is generating for.", g.running);
  metric(out, "qwenchat_model_loaded", "gauge", "1 when a model is loaded.", g.model_loaded ? 1 : 0);
  return out;
}

}  // namespace qc::server
