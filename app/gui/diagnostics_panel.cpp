#include "diagnostics_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>

#include "format.h"
#include "widgets.h"

namespace qc::gui {
namespace {

void section(UiContext& ctx, const char* title) {
  ImGui::Spacing();
  ImGui::PushFont(ctx.fonts.bold);
  ImGui::TextUnformatted(title);
  ImGui::PopFont();
  ImGui::Separator();
}


// Labels on a plot's frame (the last item): the value axis's top and bottom on the left, the last value
// on the right, so the curve can be read without hovering.
void plot_labels(const ImVec4& muted, float bottom, float top, float last, const char* unit) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 col = ImGui::GetColorU32(muted);
  const float pad = ImGui::GetStyle().FramePadding.x;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %s", static_cast<double>(top), unit);
  dl->AddText(ImVec2(a.x + pad, a.y + 1), col, buf);
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(bottom));
  dl->AddText(ImVec2(a.x + pad, b.y - ImGui::GetTextLineHeight() - 1), col, buf);
  std::snprintf(buf, sizeof buf, "last %.1f", static_cast<double>(last));
  const float w = ImGui::CalcTextSize(buf).x;
  dl->AddText(ImVec2(b.x - w - pad, b.y - ImGui::GetTextLineHeight() - 1), ImGui::GetColorU32(ImGuiCol_Text), buf);
}

}  // namespace

// After a restart (no reply yet in this session): the figures stored with the newest reply of the open
// branch, read from the chat tree the controller holds (the store's copy; nothing is written).
bool DiagnosticsPanel::stored(UiContext& ctx) {
  const chat::ChatTree* tree = ctx.chat.tree();
  if (tree == nullptr) return false;
  const chat::BranchView& view = branch_.get(*tree);
  const chat::Message* m = nullptr;
  std::optional<StoredReplyStats> s;
  for (size_t i = view.branch.size(); i-- > 0 && !s;) {
    m = chat::find(*tree, view.branch[i]);
    if (m && m->role == chat::Role::kAssistant) s = stored_reply_stats(m->stats);
  }
  if (!s) return false;
  section(ctx, "Last stored reply");
  text_wrapped_colored(ctx.theme.text_muted,
                       "From the database (%s): no reply has run since the app started; the live figures "
                       "(curve, layer norms) come with the next one.",
                       format_date(m->updated_ms).c_str());
  if (ImGui::BeginTable("stored", 4, ImGuiTableFlags_SizingStretchSame)) {
    auto cell = [&](const char* label, const char* value) {
      ImGui::TableNextColumn();
      text_wrapped_colored(ctx.theme.text_muted, "%s", label);
      ImGui::PushFont(ctx.fonts.h3);
      ImGui::TextUnformatted(value);
      ImGui::PopFont();
    };
    char a[32], b[32], c[32], e[32];
    std::snprintf(a, sizeof a, "%.1f tok/s", s->decode_tok_per_s);
    std::snprintf(b, sizeof b, "%.0f tok/s", s->prefill_tok_per_s);
    std::snprintf(c, sizeof c, "%.0f ms", s->ttft_ms);
    std::snprintf(e, sizeof e, "%d / %d", s->prompt_tokens, s->generated_tokens);
    cell("Decode", a);
    cell("Prefill", b);
    cell("TTFT", c);
    cell("Prompt / reply", e);
    ImGui::EndTable();
  }
  if (s->prompt_tokens > 0)
    text_wrapped_colored(ctx.theme.text_muted, "prompt: %d reused from the kept state + %d prefilled",
                         s->prompt_reused, s->prompt_tokens - s->prompt_reused);
  text_wrapped_colored(ctx.theme.text_muted, "stop: %s · backend %s%s%s · logits hash %s",
                       s->stop_reason.empty() ? "?" : s->stop_reason.c_str(), s->backend.c_str(),
                       s->kernel.empty() ? "" : "/", s->kernel.c_str(),
                       s->logits_hash.empty() ? "-" : s->logits_hash.c_str());
  section(ctx, "MTP acceptance per draft position");
  if (s->mtp_acceptance_per_position.empty()) {
    text_wrapped_colored(ctx.theme.text_muted, "MTP was off for this reply");
  } else {
    for (size_t j = 0; j < s->mtp_acceptance_per_position.size(); ++j) {
      const double frac = s->mtp_acceptance_per_position[j];
      char label[64];
      std::snprintf(label, sizeof label, "position %zu: %.0f%%", j + 1, frac * 100.0);
      ImGui::ProgressBar(static_cast<float>(frac), ImVec2(-1, 0), label);
    }
  }
  if (s->context_size > 0) {
    section(ctx, "Context");
    const float frac = static_cast<float>(s->context_used) / static_cast<float>(s->context_size);
    char label[64];
    std::snprintf(label, sizeof label, "%d / %d tokens (%.0f%%)", s->context_used, s->context_size, frac * 100.0f);
    ImGui::ProgressBar(frac, ImVec2(-1, 0), label);
  }
  return true;
}

void DiagnosticsPanel::draw(UiContext& ctx) {
  const DiagnosticsState& d = ctx.diag;
  if (!d.last && !d.finished) {
    if (stored(ctx)) {
      bandwidth_and_memory(ctx);
      return;
    }
    text_wrapped_colored(ctx.theme.text_muted, "No generation yet: the figures appear with the first reply.");
    context_meter(ctx);
    bandwidth_and_memory(ctx);
    return;
  }
  rates(ctx);
  mtp(ctx);
  layer_norms(ctx);
  bandwidth_and_memory(ctx);
  context_meter(ctx);
}

void DiagnosticsPanel::rates(UiContext& ctx) {
  const DiagnosticsState& d = ctx.diag;
  section(ctx, d.running ? "Generation (live)" : "Last generation");
  const std::vector<float>& curve = d.decode_tok_per_s;
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, "decode %.1f tok/s", d.decode_tok_per_s_now());
  const float top = curve.empty() ? 1.0f : *std::max_element(curve.begin(), curve.end()) * 1.15f;
  ImGui::PlotLines("##toks", curve.empty() ? nullptr : curve.data(), static_cast<int>(curve.size()), 0,
                   overlay, 0.0f, std::max(top, 1e-3f),
                   ImVec2(ImGui::GetContentRegionAvail().x, ctx.em() * 4));  // 1.86's plots take no -1
  // The value axis runs from 0 to `top`; the last point is the rate now.
  plot_labels(ctx.theme.text_muted, 0.0f, std::max(top, 1e-3f), curve.empty() ? 0.0f : curve.back(), "tok/s");
  if (!curve.empty()) {
    const auto [lo, hi] = std::minmax_element(curve.begin(), curve.end());
    text_wrapped_colored(ctx.theme.text_muted,
                         "decode tok/s over the last 16 tokens, one point per token (x: tokens 2 to %zu); "
                         "min %.1f, max %.1f",
                         curve.size() + 1, static_cast<double>(*lo), static_cast<double>(*hi));
  } else {
    text_wrapped_colored(ctx.theme.text_muted, "decode tok/s over the last 16 tokens, one point per token");
  }
  double prefill = 0, ttft = 0;
  int prompt = 0, reused = 0, generated = 0;
  if (d.finished && d.finished->id == d.generation) {
    const GenerationStats& s = d.finished->stats;
    prefill = s.prefill_tok_per_s;
    ttft = s.time_to_first_token_s;
    prompt = s.prompt_tokens;
    reused = s.prompt_reused;
    generated = s.generated_tokens;
  } else if (d.last) {
    prefill = d.last->prefill_tok_per_s;
    ttft = d.last->ttft_s;
    prompt = d.last->prompt_tokens;
    reused = d.last->prompt_reused;
    generated = d.last->generated_tokens;
  }
  if (ImGui::BeginTable("rates", 4, ImGuiTableFlags_SizingStretchSame)) {
    auto cell = [&](const char* label, const char* value) {
      ImGui::TableNextColumn();
      text_wrapped_colored(ctx.theme.text_muted, "%s", label);
      ImGui::PushFont(ctx.fonts.h3);
      ImGui::TextUnformatted(value);
      ImGui::PopFont();
    };
    char a[32], b[32], c[32], e[32];
    std::snprintf(a, sizeof a, "%.1f tok/s", d.decode_tok_per_s_now());
    std::snprintf(b, sizeof b, "%.0f tok/s", prefill);
    std::snprintf(c, sizeof c, "%.0f ms", ttft * 1e3);
    std::snprintf(e, sizeof e, "%d / %d", prompt, generated);
    cell("Decode", a);
    cell("Prefill", b);
    cell("TTFT", c);
    cell("Prompt / reply", e);
    ImGui::EndTable();
  }
  // Conversation state reuse (engine/runtime/prefix_cache.h): what this reply did not run again.
  if (prompt > 0)
    text_wrapped_colored(ctx.theme.text_muted, "prompt: %d reused from the kept state + %d prefilled", reused,
                         prompt - reused);
  if (d.finished && d.finished->id == d.generation) {
    text_wrapped_colored(ctx.theme.text_muted, "stop: %s · backend %s · logits hash %s",
                         to_string(d.finished->stop_reason), d.finished->backend.c_str(),
                         d.finished->stats.final_logits_hash.c_str());
  }
}

void DiagnosticsPanel::mtp(UiContext& ctx) {
  const DiagnosticsState& d = ctx.diag;
  section(ctx, "MTP acceptance per draft position");
  // Live from the token snapshots while the reply runs, then the final figures.
  int len = 0;
  const int64_t* drafted = nullptr;
  const int64_t* accepted = nullptr;
  if (d.running && d.last && d.last->mtp_draft_len > 0) {
    len = d.last->mtp_draft_len;
    drafted = d.last->mtp_drafted.data();
    accepted = d.last->mtp_accepted.data();
  } else if (!d.running && d.finished && d.finished->stats.mtp_draft_len > 0) {
    len = d.finished->stats.mtp_draft_len;
    drafted = d.finished->stats.mtp_drafted.data();
    accepted = d.finished->stats.mtp_accepted.data();
  }
  if (len == 0) {
    if (!d.running && d.finished && !d.finished->note.empty()) {
      text_wrapped_colored(ctx.theme.warning, "%s", d.finished->note.c_str());
    } else {
      text_wrapped_colored(ctx.theme.text_muted, d.running ? "MTP is off for this reply" : "MTP was off for this reply");
    }
    return;
  }
  int64_t all_accepted = 0;
  for (int j = 0; j < len; ++j) {
    const int64_t n = drafted[j], a = accepted[j];
    all_accepted += a;
    const double frac = n > 0 ? static_cast<double>(a) / static_cast<double>(n) : 0.0;
    char label[96];
    std::snprintf(label, sizeof label, "position %d: %.0f%% (%lld/%lld)", j + 1, frac * 100.0,
                  static_cast<long long>(a), static_cast<long long>(n));
    ImGui::ProgressBar(static_cast<float>(frac), ImVec2(-1, 0), label);
  }
  // Tokens per verification step: each step emits its accepted drafts plus one token of its own.
  const int64_t passes = drafted[0];
  if (passes > 0) {
    text_wrapped_colored(ctx.theme.text_muted, "%.2f tokens per verification step (%s)",
                         1.0 + static_cast<double>(all_accepted) / static_cast<double>(passes),
                         d.running ? "so far" : "this reply");
  }
}

void DiagnosticsPanel::layer_norms(UiContext& ctx) {
  const DiagnosticsState& d = ctx.diag;
  section(ctx, "Hidden-state L2 norm per layer (last token)");
  if (!d.last || d.last->layer_norms.empty()) {
    text_wrapped_colored(ctx.theme.text_muted, "Probes are off: turn them on in Settings > Engine.");
    return;
  }
  const std::vector<float>& norms = d.last->layer_norms;
  const std::vector<bool>* kinds = ctx.model.facts ? &ctx.model.facts->layer_is_recurrent : nullptr;
  const float top = std::max(*std::max_element(norms.begin(), norms.end()), 1e-6f);
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ctx.em() * 6;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), ImGui::GetColorU32(ImGuiCol_FrameBg), 3.0f);
  const float slot = w / static_cast<float>(norms.size());
  const float gap = std::min(slot * 0.2f, 3.0f);
  for (size_t i = 0; i < norms.size(); ++i) {
    const bool gdn = kinds && i < kinds->size() ? (*kinds)[i] : true;
    const float bh = (h - 4) * std::clamp(norms[i] / top, 0.0f, 1.0f);
    const ImVec2 a(p.x + i * slot + gap * 0.5f, p.y + h - 2 - bh);
    const ImVec2 b(p.x + (i + 1) * slot - gap * 0.5f, p.y + h - 2);
    dl->AddRectFilled(a, b, ImGui::GetColorU32(gdn ? ctx.theme.gdn : ctx.theme.attention));
    if (ImGui::IsMouseHoveringRect(ImVec2(a.x, p.y), b)) {
      tooltip("layer %zu (%s): %.3f", i, gdn ? "Gated DeltaNet" : "attention",
                        static_cast<double>(norms[i]));
    }
  }
  // The value axis (0 to the largest norm) and the layer axis at both ends.
  const ImU32 muted = ImGui::GetColorU32(ctx.theme.text_muted);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(top));
  dl->AddText(ImVec2(p.x + 3, p.y + 1), muted, buf);
  ImGui::Dummy(ImVec2(w, h));
  std::snprintf(buf, sizeof buf, "layer %zu", norms.size() - 1);
  const float x0 = ImGui::GetCursorPosX();
  ImGui::TextColored(ctx.theme.text_muted, "layer 0");
  ImGui::SameLine(std::max(x0 + ImGui::CalcTextSize("layer 0").x + ImGui::GetStyle().ItemSpacing.x,
                           x0 + w - ImGui::CalcTextSize(buf).x));
  ImGui::TextColored(ctx.theme.text_muted, "%s", buf);
  ImGui::ColorButton("##gdn", ctx.theme.gdn, ImGuiColorEditFlags_NoTooltip,
                     ImVec2(ctx.em() * 0.8f, ctx.em() * 0.8f));
  ImGui::SameLine();
  ImGui::TextUnformatted("Gated DeltaNet");
  ImGui::SameLine();
  ImGui::ColorButton("##attn", ctx.theme.attention, ImGuiColorEditFlags_NoTooltip,
                     ImVec2(ctx.em() * 0.8f, ctx.em() * 0.8f));
  ImGui::SameLine();
  ImGui::TextUnformatted("attention");
  ImGui::SameLine();
  text_wrapped_colored(ctx.theme.text_muted, "· max %.2f", static_cast<double>(top));
}

void DiagnosticsPanel::bandwidth_and_memory(UiContext& ctx) {
  section(ctx, "Bandwidth and memory");
  const ModelFacts* f = ctx.model.facts ? &*ctx.model.facts : nullptr;
  if (f == nullptr) {
    text_wrapped_colored(ctx.theme.text_muted, "no model loaded");
    return;
  }
  const double gbs = static_cast<double>(f->bytes_per_token) * ctx.diag.decode_tok_per_s_now() / 1e9;
  ImGui::Text("Effective weight bandwidth: %.2f GB/s", gbs);
  text_wrapped_colored(ctx.theme.text_muted, "= %s per token x %.1f tok/s",
                       format_bytes(f->bytes_per_token).c_str(), ctx.diag.decode_tok_per_s_now());
  // The CUDA backend measures the card's read-only ceiling at load (engine/cuda/read_ceiling.h); the CPU
  // backend measures none. With MTP a pass reads the weights once for several tokens, so the effective
  // rate can pass the ceiling: it is what a plain decode would have to read at for the same speed.
  if (const double ceiling = f->backend.read_ceiling_gbs; ceiling > 0) {
    const float frac = static_cast<float>(gbs / ceiling);
    char label[96];
    std::snprintf(label, sizeof label, "%.0f%% of the %.0f GB/s read ceiling", 100.0 * gbs / ceiling, ceiling);
    ImGui::ProgressBar(std::clamp(frac, 0.0f, 1.0f), ImVec2(-1, 0), label);
    text_wrapped_colored(ctx.theme.text_muted, "ceiling measured at load on %s (read-only stream)",
                         f->backend.device.c_str());
  } else {
    text_wrapped_colored(ctx.theme.text_muted, "no ceiling measured (%s backend)", f->backend.name.c_str());
  }
  if (f->backend_kind == BackendKind::kCuda) {
    ImGui::Text("GPU memory: %s", format_bytes(f->backend.memory_bytes).c_str());
    text_wrapped_colored(ctx.theme.text_muted,
                         "weights, caches and scratch on %s; %s file mapping on the host",
                         f->backend.device.c_str(), format_bytes(f->file_bytes).c_str());
  } else {
    ImGui::Text("Memory: %s", format_bytes(f->memory_bytes()).c_str());
    text_wrapped_colored(ctx.theme.text_muted, "%s weights (mapped) + %s backend state",
                         format_bytes(f->file_bytes).c_str(), format_bytes(f->backend.memory_bytes).c_str());
  }
}

void DiagnosticsPanel::context_meter(UiContext& ctx) {
  section(ctx, "Context");
  int used = 0, size = ctx.model.facts ? ctx.model.facts->n_ctx : 0;
  if (ctx.diag.last) {
    used = ctx.diag.last->context_used;
    size = ctx.diag.last->context_size;
  }
  if (size <= 0) {
    text_wrapped_colored(ctx.theme.text_muted, "no model loaded");
    return;
  }
  const float frac = static_cast<float>(used) / static_cast<float>(size);
  const ImVec4 col = frac >= 0.8f ? ctx.theme.error : frac >= 0.5f ? ctx.theme.warning : ctx.theme.ok;
  char label[64];
  std::snprintf(label, sizeof label, "%d / %d tokens (%.0f%%)", used, size, frac * 100.0f);
  ImGui::PushStyleColor(ImGuiCol_PlotHistogram, col);
  ImGui::ProgressBar(frac, ImVec2(-1, 0), label);
  ImGui::PopStyleColor();
  text_wrapped_colored(ctx.theme.text_muted, "of the last reply: its prompt and its tokens (only the prompt tokens no kept state held were processed again)");
}

}  // namespace qc::gui
