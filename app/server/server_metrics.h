// What GET /metrics reports, in Prometheus' text format (version 0.0.4): request and token counters,
// prefill and decode time, the last reply's rates, MTP drafts and acceptances per draft position, and the
// queue. Counters only grow; gauges are set when the text is made. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

#include "qwenchat/stats.h"

namespace qc::server {

struct QueueGauges {
  int waiting = 0;  // requests posted to the engine that have not started
  int running = 0;
  bool model_loaded = false;
};

class ServerMetrics {
 public:
  void request(int http_status);  // every request answered, by status class
  void finished(const GenerationStats& stats, bool cancelled);
  void disconnected();            // a client went away before its reply ended
  std::string prometheus_text(const QueueGauges& gauges) const;

 private:
  mutable std::mutex mutex_;
  uint64_t requests_2xx_ = 0, requests_4xx_ = 0, requests_5xx_ = 0;
  uint64_t generations_ = 0, cancelled_ = 0, disconnects_ = 0;
  uint64_t prompt_tokens_ = 0, prompt_reused_ = 0, generated_tokens_ = 0;
  double prefill_seconds_ = 0, decode_seconds_ = 0;
  double last_prefill_tok_per_s_ = 0, last_decode_tok_per_s_ = 0, last_ttft_s_ = 0;
  std::array<uint64_t, kMaxDraftLen> mtp_drafted_{}, mtp_accepted_{};
};

}  // namespace qc::server
