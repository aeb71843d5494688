// The figures the diagnostics panel plots, collected from worker events: the live tok/s curve of the
// current (or last) generation, its last snapshot (layer norms, context, memory) and the finished
// generation's exact stats (MTP acceptance per draft position). No ImGui.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <string>

#include "qwenchat/events.h"

namespace qc::gui {

// A reply's figures as the store keeps them with the message (its stats object, chat_state.h keys): what
// the diagnostics show after a restart, before any new reply. nullopt when the object holds no figures.
struct StoredReplyStats {
  double decode_tok_per_s = 0, prefill_tok_per_s = 0, ttft_ms = 0;
  int prompt_tokens = 0, prompt_reused = 0, generated_tokens = 0;
  int mtp_draft_len = 0;
  double mtp_acceptance = -1;                  // overall; -1 = not stored
  std::vector<double> mtp_acceptance_per_position;
  int context_used = 0, context_size = 0;
  std::string stop_reason, backend, kernel, logits_hash;
};
std::optional<StoredReplyStats> stored_reply_stats(const nlohmann::json& stats);

struct DiagnosticsState {
  uint64_t generation = 0;  // id of the generation the figures belong to
  bool running = false;
  // Decode tok/s over the last kWindow tokens, one point per token from the second on: shows the rate
  // falling as the context grows, which a running average would smooth away.
  std::vector<float> decode_tok_per_s;
  static constexpr size_t kWindow = 16;
  std::optional<StatsSnapshot> last;           // latest live snapshot
  std::optional<GenerationFinished> finished;  // the generation's final figures (text cleared)
  static constexpr size_t kMaxPoints = 4096;   // the curve keeps the most recent points

  void on_event(const WorkerEvent& event);

  // Effective weight bandwidth of the decode: bytes every token reads x tokens per second.
  double effective_gb_per_s() const;
  double decode_tok_per_s_now() const;

 private:
  std::vector<std::pair<double, int>>
      recent_;  // (elapsed_s, generated_tokens) of the last kWindow + 1 snapshots
};

}  // namespace qc::gui
