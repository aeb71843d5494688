#include "settings_panel.h"

#include <imgui.h>

#include <cstdio>

#if __has_include("qwenchat/kernel_config.h")
#include "qwenchat/kernel_config.h"
#define QWENCHAT_GUI_HAS_KERNEL_CONFIG 1
#endif

namespace qc::gui {
namespace {

void section(UiContext& ctx, const char* title) {
  ImGui::Spacing();
  ImGui::PushFont(ctx.fonts.bold);
  ImGui::TextUnformatted(title);
  ImGui::PopFont();
  ImGui::Separator();
}

void help(UiContext& ctx, const char* text) {
  ImGui::SameLine();
  ImGui::TextColored(ctx.theme.text_muted, "(?)");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

}  // namespace

void SettingsPanel::draw(UiContext& ctx) {
  changed_ = false;
  ImGui::PushItemWidth(ctx.em() * 12);
  sampling(ctx);
  engine(ctx);
  mtp(ctx);
  kernels(ctx);
  appearance(ctx);
  ImGui::PopItemWidth();
  if (changed_) {
    ctx.config.settings.clamp();
    ctx.requests.save_config = true;
  }
}

void SettingsPanel::sampling(UiContext& ctx) {
  Settings& s = ctx.config.settings;
  section(ctx, "Sampling (applies to the next reply)");
  if (ImGui::SmallButton("Qwen thinking")) {
    apply_qwen_thinking_preset(s);
    changed_ = true;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Qwen instruct")) {
    apply_qwen_instruct_preset(s);
    changed_ = true;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Greedy")) {
    apply_greedy_preset(s);
    changed_ = true;
  }
  changed_ |= ImGui::SliderFloat("Temperature", &s.temperature, 0.0f, 2.0f, "%.2f");
  help(ctx, "0 = greedy (always the most likely token)");
  changed_ |= ImGui::SliderInt("Top-k", &s.top_k, 0, 200);
  help(ctx, "keep the k most likely tokens; 0 = off");
  changed_ |= ImGui::SliderFloat("Top-p", &s.top_p, 0.01f, 1.0f, "%.2f");
  help(ctx, "keep the smallest set of tokens holding this much probability; 1 = off");
  changed_ |= ImGui::SliderFloat("Min-p", &s.min_p, 0.0f, 1.0f, "%.2f");
  help(ctx, "drop tokens below min-p x the top token's probability; 0 = off");
  changed_ |= ImGui::SliderFloat("Presence penalty", &s.presence_penalty, -2.0f, 2.0f, "%.2f");
  changed_ |= ImGui::SliderFloat("Repetition penalty", &s.repetition_penalty, 0.5f, 2.0f, "%.2f");
  changed_ |= ImGui::Checkbox("Random seed per reply", &s.random_seed);
  help(ctx, "each reply stores its seed in its settings, so it can be replayed");
  if (!s.random_seed) {
    int seed = static_cast<int>(s.seed & 0x7fffffff);
    if (ImGui::InputInt("Seed", &seed)) {
      s.seed = static_cast<uint64_t>(seed < 0 ? 0 : seed);
      changed_ = true;
    }
  }
  changed_ |= ImGui::InputInt("Max tokens", &s.max_tokens, 64, 512);
  changed_ |= ImGui::Checkbox("Thinking", &s.thinking);
  help(ctx, "the reply opens a <think> block first; shown collapsed above the answer");
}

void SettingsPanel::engine(UiContext& ctx) {
  Settings& s = ctx.config.settings;
  section(ctx, "Engine (rebuilds the backend after the current reply)");
  bool engine_changed = false;
  ImGui::InputInt("Context length", &s.n_ctx, 256, 4096);
  engine_changed |= ImGui::IsItemDeactivatedAfterEdit();
  ImGui::InputInt("CPU threads", &s.n_threads);
  engine_changed |= ImGui::IsItemDeactivatedAfterEdit();
  help(ctx, "0 = every core");
  engine_changed |= ImGui::Checkbox("Probes (per-layer norms)", &s.probes);
  help(ctx, "one L2 norm of the hidden state per layer and token, for the Diagnostics tab");
  if (engine_changed) {
    changed_ = true;
    s.clamp();
    ctx.worker.post(UpdateSettingsCommand{s.engine()});
    ctx.notices.info(ctx.chat.streaming() ? "engine settings: applied when the current reply ends"
                                          : "engine settings: rebuilding the backend");
  }
  if (ctx.model.facts) {
    text_wrapped_colored(ctx.theme.text_muted, "In use: %s · %s · context %d",
                         ctx.model.facts->backend.name.c_str(), ctx.model.facts->backend.device.c_str(),
                         ctx.model.facts->n_ctx);
  }
}

void SettingsPanel::mtp(UiContext& ctx) {
  Settings& s = ctx.config.settings;
  section(ctx, "Speculative decoding (MTP)");
  const bool has_mtp = ctx.model.facts && ctx.model.facts->n_mtp > 0;
  changed_ |= ImGui::Checkbox("Use the MTP block", &s.mtp);
  help(ctx,
       "the model's multi-token-prediction head drafts tokens the main model verifies in one pass; "
       "greedy output is identical with and without it");
  ImGui::BeginDisabled(!s.mtp);
  changed_ |= ImGui::SliderInt("Draft length", &s.mtp_draft, 1, kMaxDraftLen);
  ImGui::EndDisabled();
  if (ctx.model.facts && !has_mtp)
    text_wrapped_colored(ctx.theme.warning, "The loaded model has no MTP block.");
}

void SettingsPanel::kernels(UiContext& ctx) {
  section(ctx, "Kernel variants (CUDA backend)");
#ifdef QWENCHAT_GUI_HAS_KERNEL_CONFIG
  // The fields of qwenchat/kernel_config.h. The worker has no command to apply them yet (the CUDA
  // backend is not merged into this build), so they are shown for reference only.
  KernelConfig k;
  text_wrapped_colored(ctx.theme.text_muted, "default GEMV variant: %s; variants available: %s",
                       gemv_variant_name(k.gemv), gemv_variant_list().c_str());
  text_wrapped_colored(ctx.theme.warning,
                       "Not applied: this build's worker has no kernel-config command yet.");
#else
  text_wrapped_colored(ctx.theme.text_muted,
                       "TO FILL when the CUDA backend lands: GEMV variant (h, hl, hu, hlu, hlu4, "
                       "h2, hl2, sk, deq, tile), split-K, fused norm+quantise, CUDA graph.");
#endif
  const bool cuda = ctx.model.facts && ctx.model.facts->backend_kind == BackendKind::kCuda;
  ImGui::Text("Variant in use: %s", cuda ? "(reported by the CUDA backend)"
                                         : "none: the CPU reference backend has no kernel variants");
}

void SettingsPanel::appearance(UiContext& ctx) {
  Settings& s = ctx.config.settings;
  section(ctx, "Appearance");
  int theme = s.dark_theme ? 0 : 1;
  ImGui::RadioButton("Dark", &theme, 0);
  ImGui::SameLine();
  ImGui::RadioButton("Light", &theme, 1);
  if ((theme == 0) != s.dark_theme) {
    s.dark_theme = theme == 0;
    changed_ = true;
    ctx.requests.apply_theme = true;
  }
  // Applied on release: rebuilding the font atlas on every frame of a drag is slow.
  if (!ImGui::IsAnyItemActive() || scale_edit_ <= 0) scale_edit_ = s.ui_scale;
  ImGui::SliderFloat("UI scale", &scale_edit_, 0.75f, 2.5f, "%.2f");
  if (ImGui::IsItemDeactivatedAfterEdit() && scale_edit_ != s.ui_scale) {
    s.ui_scale = scale_edit_;
    changed_ = true;
    ctx.requests.rebuild_fonts = true;
  }
  if (!ctx.fonts.cjk_file.empty())
    text_wrapped_colored(ctx.theme.text_muted, "CJK glyphs: %s", ctx.fonts.cjk_file.c_str());
}

}  // namespace qc::gui
