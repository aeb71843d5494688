#include "welcome.h"

#include <imgui.h>

#include <filesystem>

#include "common/default_model.h"
#include "format.h"
#include "widgets.h"

namespace qc::gui {

bool WelcomePanel::is_default(const ModelFacts& f) {
  if (f.path != default_for_) {
    default_for_ = f.path;
    auto def = app::default_model_path();
    std::error_code ec;
    is_default_ = !f.remote && def.ok() && std::filesystem::equivalent(f.path, *def, ec) && !ec;
  }
  return is_default_;
}

bool WelcomePanel::draw(UiContext& ctx, std::string& composer, float width) {
  const float em = ctx.em();
  const ModelFacts* facts = ctx.model.facts ? &*ctx.model.facts : nullptr;
  const WelcomeText w = welcome_text(facts, facts && is_default(*facts));
  bool chosen = false;
  const float right_edge = ImGui::GetCursorScreenPos().x + width;
  ImGui::Dummy(ImVec2(0, em));
  ImGui::PushFont(ctx.fonts.h2);
  ImGui::TextWrapped("%s", ctx.model.loading && !facts ? "Loading the model…" : w.title.c_str());
  ImGui::PopFont();
  for (const std::string& f : w.facts) ImGui::BulletText("%s", f.c_str());
  if (!w.about.empty()) {
    ImGui::Spacing();
    ImGui::TextWrapped("%s", w.about.c_str());
  }
  if (facts) {
    ImGui::Spacing();
    ImGui::TextColored(ctx.theme.text_muted, "Try one (it fills the message box; Enter sends):");
    for (size_t i = 0; i < w.prompts.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      // Side by side while they fit in the line.
      const float button_w =
          ImGui::CalcTextSize(w.prompts[i].c_str()).x + ImGui::GetStyle().FramePadding.x * 2;
      if (i > 0) {
        const float right = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + button_w;
        if (right < right_edge) ImGui::SameLine();
      }
      if (ImGui::Button(w.prompts[i].c_str())) {
        composer = w.prompts[i];
        chosen = true;
      }
      ImGui::PopID();
    }
  }
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::PushFont(ctx.fonts.bold);
  ImGui::TextUnformatted("Load a real Qwen3.5 model");
  ImGui::PopFont();
  ImGui::TextWrapped(
      "Open a GGUF file in llama.cpp's qwen35 layout (F16, BF16, Q8_0 or K-quant weights such as Q4_K_M), "
      "or drop one on the window. qwenchat-convert makes one from a Hugging Face qwen3_5 checkpoint.");
  ImGui::BeginDisabled(ctx.model.loading);
  if (ImGui::Button("Open a model file…")) ctx.requests.open_model_chooser = true;
  ImGui::EndDisabled();
  item_tooltip("Ctrl+O; the Model tab has the path, the recent models and the memory estimate of a file");
  ImGui::Spacing();
  size_table(ctx, width);
  return chosen;
}

void WelcomePanel::size_table(UiContext& ctx, float width) {
  const int n_ctx = ctx.config.settings.engine.n_ctx;
  if (n_ctx != estimates_ctx_) {  // the layouts of five shapes: once per context setting, not per frame
    estimates_ctx_ = n_ctx;
    estimates_ = qwen_size_estimates(n_ctx);
  }
  const std::vector<WeightFormat>& formats = weight_formats();
  const int cols = 2 + static_cast<int>(formats.size());  // the caches are in each cell's tooltip
  ImGui::TextColored(ctx.theme.text_muted,
                     "Memory it takes (estimates from the shapes: weights + caches for a "
                     "%d-token context, Settings > Engine):",
                     estimates_.empty() ? n_ctx : estimates_[0].n_ctx);
  // Stretched over the reading column, not the window: at 1280x720 fixed-fit columns squeezed the last to one
  // letter, and a table as wide as the window put its last column past the reading column's wrap position
  // (the chat panel's PushTextWrapPos), which wrapped that column's text after every character.
  if (ImGui::BeginTable(
          "sizes", cols,
          ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp,
          ImVec2(width, 0.0f))) {
    ImGui::PushTextWrapPos(0.0f);        // a cell's text wraps at its own column's edge
    ImGui::TableSetupColumn("Qwen3.5");  // the family in the header: a narrow column keeps the size whole
    ImGui::TableSetupColumn("Parameters");
    for (const WeightFormat& f : formats)
      ImGui::TableSetupColumn(f.loadable ? f.name : (std::string(f.name) + "*").c_str());
    ImGui::TableHeadersRow();
    for (const SizeEstimate& e : estimates_) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(e.preset.c_str());
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(format_params(e.n_params).c_str());
      for (size_t i = 0; i < formats.size(); ++i) {
        ImGui::TableSetColumnIndex(static_cast<int>(2 + i));
        const std::string total = "~" + format_bytes(e.weight_bytes[i] + e.cache_bytes);
        if (formats[i].loadable) {
          ImGui::TextUnformatted(total.c_str());
        } else {
          ImGui::TextColored(ctx.theme.text_muted, "%s", total.c_str());
        }
        item_tooltip("%s weights %s + caches %s", formats[i].name, format_bytes(e.weight_bytes[i]).c_str(),
                     format_bytes(e.cache_bytes).c_str());
      }
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTable();
  }
  text_wrapped_colored(ctx.theme.text_muted,
                       "Weights at %.2f bits (Q8_0: 34 bytes per 32), 16 (F16) and %.2f (Q4_K_M, llama.cpp's "
                       "average); norms stay F32. "
                       "The CUDA backend needs about the total in GPU memory.",
                       formats[1].bits_per_weight, formats[0].bits_per_weight);
}

}  // namespace qc::gui
