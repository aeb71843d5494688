#include "diagnostics_state.h"

namespace qc::gui {

void DiagnosticsState::on_event(const WorkerEvent& event) {
  if (const auto* s = std::get_if<GenerationStarted>(&event)) {
    generation = s->id;
    running = true;
    decode_tok_per_s.clear();
    recent_.clear();
    finished.reset();
    return;
  }
  if (const auto* s = std::get_if<StatsSnapshot>(&event)) {
    if (s->id != generation) return;
    recent_.emplace_back(s->elapsed_s, s->generated_tokens);
    if (recent_.size() > kWindow + 1) recent_.erase(recent_.begin());
    const double dt = recent_.back().first - recent_.front().first;
    const int dn = recent_.back().second - recent_.front().second;
    if (dn > 0 && dt > 0) {
      if (decode_tok_per_s.size() >= kMaxPoints) decode_tok_per_s.erase(decode_tok_per_s.begin());
      decode_tok_per_s.push_back(static_cast<float>(dn / dt));
    }
    last = *s;
    return;
  }
  if (const auto* f = std::get_if<GenerationFinished>(&event)) {
    if (f->id != generation && running) return;
    generation = f->id;
    running = false;
    finished = *f;
    finished->text.clear();  // the chat holds the text; the panel needs the figures only
    finished->parts = {};
    if (last && last->id == f->id) last->context_used = f->context_used;
  }
}

std::optional<StoredReplyStats> stored_reply_stats(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("generated_tokens")) return std::nullopt;
  auto num = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  auto str = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  StoredReplyStats s;
  s.decode_tok_per_s = num("tok_per_s");
  s.prefill_tok_per_s = num("prefill_tok_per_s");
  s.ttft_ms = num("ttft_ms");
  s.prompt_tokens = static_cast<int>(num("prompt_tokens"));
  s.prompt_reused = static_cast<int>(num("prompt_reused"));
  s.generated_tokens = static_cast<int>(num("generated_tokens"));
  s.mtp_draft_len = static_cast<int>(num("mtp_draft_len"));
  if (const auto it = j.find("mtp_acceptance"); it != j.end() && it->is_number()) s.mtp_acceptance = it->get<double>();
  if (const auto it = j.find("mtp_acceptance_per_position"); it != j.end() && it->is_array()) {
    for (const auto& v : *it)
      if (v.is_number()) s.mtp_acceptance_per_position.push_back(v.get<double>());
  }
  s.context_used = static_cast<int>(num("context_used"));
  s.context_size = static_cast<int>(num("context_size"));
  s.stop_reason = str("stop_reason");
  s.backend = str("backend");
  s.kernel = str("kernel");
  s.logits_hash = str("logits_hash");
  return s;
}

double DiagnosticsState::decode_tok_per_s_now() const {
  if (finished && finished->id == generation && finished->stats.decode_tok_per_s > 0)
    return finished->stats.decode_tok_per_s;
  return last ? last->decode_tok_per_s : 0.0;
}

double DiagnosticsState::effective_gb_per_s() const {
  if (!last) return 0.0;
  return static_cast<double>(last->bytes_per_token) * decode_tok_per_s_now() / 1e9;
}

}  // namespace qc::gui
