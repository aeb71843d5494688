// The engine's GenerationStats as the stats object a reply stores (keys listed in chat_state.h), so the
// GUI, the store and the export agree on the names.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "qwenchat/stats.h"

namespace qc::chat {

struct StatsExtras {
  std::string backend;      // "cpu", "cuda"
  std::string kernel;       // GEMV variant, e.g. "hlu4"; empty = not recorded
  std::string stop_reason;  // e.g. "eos", "length", "stopped"; empty = not recorded
};

// prompt_tokens, prompt_reused (of those, taken from a kept state), generated_tokens, tok_per_s
// (decode), prefill_tok_per_s, ttft_ms, mtp_draft_len and, with MTP on, mtp_acceptance (all positions: accepted / drafted); logits_hash when set; the extras
// when non-empty.
nlohmann::json stats_to_json(const GenerationStats& stats, const StatsExtras& extras = {});

}  // namespace qc::chat
