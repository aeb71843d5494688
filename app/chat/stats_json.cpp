#include "chat/stats_json.h"

namespace qc::chat {

nlohmann::json stats_to_json(const GenerationStats& s, const StatsExtras& extras) {
  nlohmann::json j = nlohmann::json::object();
  j["prompt_tokens"] = s.prompt_tokens;
  j["prompt_reused"] = s.prompt_reused;
  j["generated_tokens"] = s.generated_tokens;
  j["tok_per_s"] = s.decode_tok_per_s;
  j["prefill_tok_per_s"] = s.prefill_tok_per_s;
  j["ttft_ms"] = s.time_to_first_token_s * 1000.0;
  j["mtp_draft_len"] = s.mtp_draft_len;
  if (s.mtp_draft_len > 0) {
    int64_t drafted = 0, accepted = 0;
    for (int k = 0; k < kMaxDraftLen; ++k) {
      drafted += s.mtp_drafted[static_cast<size_t>(k)];
      accepted += s.mtp_accepted[static_cast<size_t>(k)];
    }
    j["mtp_acceptance"] = drafted == 0 ? 0.0 : static_cast<double>(accepted) / static_cast<double>(drafted);
  }
  if (!s.final_logits_hash.empty()) j["logits_hash"] = s.final_logits_hash;
  if (!extras.backend.empty()) j["backend"] = extras.backend;
  if (!extras.kernel.empty()) j["kernel"] = extras.kernel;
  if (!extras.stop_reason.empty()) j["stop_reason"] = extras.stop_reason;
  return j;
}

}  // namespace qc::chat
