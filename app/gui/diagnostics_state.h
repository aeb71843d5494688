// The figures the diagnostics panel plots, collected from worker events: the live tok/s curve of the
// current (or last) generation, its last snapshot (layer norms, context, memory) and the finished
// generation's exact stats (MTP acceptance per draft position). No ImGui.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "qwenchat/events.h"

namespace qc::gui {

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
