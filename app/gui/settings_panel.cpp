#include "settings_panel.h"

#include <imgui.h>

#include <cstdio>

#include "qwenchat/kernel_config.h"
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

void help(UiContext& ctx, const char* text) {
  help_marker(ctx.theme.text_muted, text);
}

}  // namespace

void SettingsPanel::draw(UiContext& ctx) {
  changed_ = false;
  ImGui::PushItemWidth(ctx.em() * 12);
  sampling(ctx);
  engine(ctx);
  mtp(ctx);
  kernels(ctx);
  api_server(ctx);
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
  ImGui::InputInt("Context length", &s.engine.n_ctx, 256, 4096);
  engine_changed |= ImGui::IsItemDeactivatedAfterEdit();
  ImGui::InputInt("CPU threads", &s.engine.n_threads);
  engine_changed |= ImGui::IsItemDeactivatedAfterEdit();
  help(ctx, "0 = every core");
  ImGui::InputInt("Kept states (MiB)", &s.engine.state_cache_mb, 256, 1024);
  engine_changed |= ImGui::IsItemDeactivatedAfterEdit();
  help(ctx, "conversation states kept so that a reply prefills only its new tokens; on the GPU this is device "
            "memory; 0 = only the last reply's state");
  ImGui::InputInt("GPU memory limit (MiB)", &s.engine.gpu_memory_mb, 1024, 8192);
  engine_changed |= ImGui::IsItemDeactivatedAfterEdit();
  help(ctx, "the CUDA load plans against at most this much device memory (0 = what is free): leave room for "
            "other programs; a model that does not fit says the largest context that does");
  if (engine_changed) {
    changed_ = true;
    s.clamp();
    ctx.engine.rebuild(s.engine);
    ctx.notices.info(ctx.chat.streaming() ? "engine settings: applied when the current reply ends"
                                          : "engine settings: rebuilding the backend");
  }
  // Probes are a kernel setting (KernelConfig::probes): switched at the next token, no rebuild, on any backend.
  if (ImGui::Checkbox("Probes (per-layer norms)", &s.engine.kernels.probes)) {
    changed_ = true;
    ctx.engine.set_kernels(s.engine.kernels);
  }
  help(ctx, "one L2 norm of the hidden state per layer and token, for the Diagnostics tab; switches at the "
            "next token");
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
  changed_ |= ImGui::Checkbox("Use the MTP block", &s.mtp.enabled);
  help(ctx,
       "the model's multi-token-prediction head drafts tokens the main model verifies in one pass; "
       "greedy output is identical with and without it");
  ImGui::BeginDisabled(!s.mtp.enabled);
  changed_ |= ImGui::SliderInt("Draft length", &s.mtp.draft_len, 1, kMaxDraftLen);
  ImGui::EndDisabled();
  if (ctx.model.facts && !has_mtp)
    text_wrapped_colored(ctx.theme.warning, "The loaded model has no MTP block.");
}

void SettingsPanel::kernels(UiContext& ctx) {
  Settings& s = ctx.config.settings;
  KernelConfig& k = s.engine.kernels;
  section(ctx, "Kernel variants (CUDA backend)");
  text_wrapped_colored(ctx.theme.text_muted,
                       "How the GPU does the model's arithmetic. They change speed, not what the model says "
                       "(variants of one class give bit-for-bit the same text).");
  const ModelFacts* f = ctx.model.facts ? &*ctx.model.facts : nullptr;
  const bool on_cuda = f && f->backend_kind == BackendKind::kCuda;
  if (!on_cuda) {
    text_wrapped_colored(ctx.theme.warning, "%s",
                         f ? "Disabled: the model runs on the CPU backend, which has no kernel variants. Choose "
                             "CUDA in the Model tab to use them."
                           : "Disabled: no model is loaded on the CUDA backend (choose CUDA in the Model tab).");
  }
  ImGui::BeginDisabled(!on_cuda);
  bool changed = false;
  const std::string current = gemv_variant_name(k.gemv);
  if (ImGui::BeginCombo("GEMV variant", current.c_str())) {
    for (int i = 0; i < kGemvVariantCount; ++i) {
      const auto v = static_cast<GemvVariant>(i);
      if (ImGui::Selectable(gemv_variant_name(v), v == k.gemv)) {
        k.gemv = v;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  help(ctx,
       "GEMV = matrix times vector, the step that reads every weight once per token; the variants differ in "
       "how GPU threads share that work (hlu4: two-word activations, unrolled by 4; tile: tiles of rows per "
       "warp). Variants of one class give identical bits: h = hu = h2 = tile_h and hl = hlu = hlu4 = hl2 = "
       "tile; sk, deq, mma and mma_h (tensor cores: 1 to 4 tokens at the cost of one) are judged by their "
       "distance from the f64 oracle.");
  const int cls = gemv_identity_class(k.gemv);
  text_wrapped_colored(ctx.theme.text_muted, "bit-identity class: %s",
                       cls == 0   ? "h (single int8 activation word)"
                       : cls == 1 ? "hl (two-word activation)"
                                  : "its own (accepted on its distance from the f64 oracle)");
  text_wrapped_colored(ctx.theme.text_muted,
                       "In plain words: switching to another variant of the same class changes the speed only, "
                       "never a single output bit.");
  if (k.gemv == GemvVariant::kSplitK) {
    changed |= ImGui::SliderInt("Split-K chunks", &k.split_k, 2, 16);
    help(ctx, "split-K: each row's sum is cut into this many pieces summed by separate thread groups (more "
              "parallel work for narrow matrices; the sum order changes, so the bits may too)");
  }
  if (gemv_streaming(k.gemv)) {
    const char* rows[] = {"auto", "1", "2"};
    changed |= ImGui::Combo("Rows per warp", &k.tile_rows_per_warp, rows, 3);
    int unroll = k.tile_unroll == 0 ? 0 : k.tile_unroll == 4 ? 1 : 2;
    const char* unrolls[] = {"auto", "4", "8"};
    if (ImGui::Combo("Segments in flight", &unroll, unrolls, 3)) {
      k.tile_unroll = unroll == 0 ? 0 : unroll == 1 ? 4 : 8;
      if (k.tile_unroll == 8 && k.tile_rows_per_warp == 2)
        k.tile_rows_per_warp = 1;  // 2 x 8 is not a variant
      changed = true;
    }
    if (k.tile_unroll == 8 && k.tile_rows_per_warp == 2) k.tile_unroll = 4;
    changed |= ImGui::SliderInt("Blocks per SM", &k.tile_blocks_per_sm, -1, 8,
                                k.tile_blocks_per_sm < 0 ? "auto" : "%d");
  }
  const std::string engine = block_engine_name(k.block_engine);
  if (ImGui::BeginCombo("K-quant GEMV engine", engine.c_str())) {
    for (int i = 0; i < kBlockEngineCount; ++i) {
      const auto e = static_cast<BlockEngine>(i);
      if (ImGui::Selectable(block_engine_name(e), e == k.block_engine)) {
        k.block_engine = e;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  help(ctx, "For llama.cpp's K-quant files (Q4_K_M and the like): how the GPU reads those matrices. registers "
            "and stream give the same bits; segments (Q4_K and Q5_K matrices; the rest stay on registers) sums "
            "in another order, so its text may differ from theirs in a late digit's choice of token. auto "
            "(the default) takes segments where it measured faster (the wide Q4_K / Q5_K matrices with hl "
            "activations) and registers elsewhere.");
  changed |= ImGui::Checkbox("Fused residual + RMSNorm + quantise", &k.fuse_residual_norm_quant);
  help(ctx, "fused: three small steps done in one GPU kernel, so the data is read once instead of three times");
  changed |= ImGui::Checkbox("Fused gate/up + SwiGLU", &k.fuse_gate_up);
  help(ctx, "the feed-forward block's two input matrices and its activation in one kernel");
  changed |= ImGui::Checkbox("CUDA graph", &k.cuda_graph);
  help(ctx, "records a token's hundreds of kernel launches once and replays them: less CPU time per token");
  changed |= ImGui::Checkbox("Programmatic launch (PDL)", &k.programmatic_launch);
  help(ctx, "PDL = programmatic dependent launch: the next kernel starts its preamble while the previous one "
            "finishes (Hopper GPUs and newer), hiding some launch gaps");
  ImGui::EndDisabled();
  if (changed) {
    changed_ = true;
    ctx.engine.set_kernels(k);  // the engine validates it (one place) and answers with a notice
  }
  if (on_cuda) {
    ImGui::Text("In use: %s on %s", f->kernel_variant().c_str(), f->backend.device.c_str());
    text_wrapped_colored(ctx.theme.text_muted, "A change switches at the next token of a reply in progress.");
  }
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

void SettingsPanel::api_server(UiContext& ctx) {
  Settings& s = ctx.config.settings;
  section(ctx, "API server");
  if (ImGui::Checkbox("Serve an OpenAI-compatible API", &s.api_server)) {
    changed_ = true;
    ctx.requests.apply_api_server = true;
  }
  if (!ImGui::IsAnyItemActive() || port_edit_ <= 0) port_edit_ = s.api_port;
  ImGui::InputInt("Port (0: any free)", &port_edit_, 0);
  if (ImGui::IsItemDeactivatedAfterEdit() && port_edit_ != s.api_port) {
    s.api_port = port_edit_;
    for (const std::string& n : s.clamp()) ctx.notices.info(n);
    port_edit_ = s.api_port;
    changed_ = true;
    ctx.requests.apply_api_server = s.api_server;
  }
  text_wrapped_colored(ctx.theme.text_muted, "%s", ctx.api_status.c_str());
  text_wrapped_colored(ctx.theme.text_muted,
                       "On this machine only (127.0.0.1), for editors and scripts, with the model loaded here: "
                       "POST /v1/chat/completions, GET /v1/models, /metrics. Set QWENCHAT_API_KEY before "
                       "starting the app to require a key.");
}

}  // namespace qc::gui
