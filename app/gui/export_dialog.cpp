#include "export_dialog.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <cstdlib>
#include <filesystem>

#include "export/export.h"
#include "format.h"

namespace qc::gui {
namespace {

exporter::Format format_of(int i) {
  return i == 1 ? exporter::Format::kJson : i == 2 ? exporter::Format::kText : exporter::Format::kMarkdown;
}

}  // namespace

void ExportDialog::suggest_path(UiContext& ctx) {
  const char* home = std::getenv("HOME");
  const std::filesystem::path dir =
      home && *home ? std::filesystem::path(home) : std::filesystem::current_path();
  const chat::ChatTree* t = ctx.chat.tree();
  const std::string stem =
      all_ || t == nullptr ? "qwenchat-conversations" : file_stem_from_title(t->conversation.title);
  path_ = (dir / (stem + "." + exporter::format_extension(format_of(format_)))).string();
}

void ExportDialog::open(UiContext& ctx) {
  open_requested_ = true;
  all_ = ctx.chat.tree() == nullptr;
  result_.clear();
  suggest_path(ctx);
}

void ExportDialog::draw(UiContext& ctx) {
  if (open_requested_) {
    ImGui::OpenPopup("Export");
    open_requested_ = false;
  }
  ImGui::SetNextWindowSize(ImVec2(ctx.em() * 34, 0), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Export", nullptr)) return;
  const chat::ChatTree* t = ctx.chat.tree();
  bool changed = false;
  ImGui::TextUnformatted("What");
  ImGui::BeginDisabled(t == nullptr);
  if (ImGui::RadioButton("This conversation", !all_)) {
    all_ = false;
    changed = true;
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::RadioButton("All conversations", all_)) {
    all_ = true;
    changed = true;
  }
  if (t == nullptr) all_ = true;
  if (ImGui::RadioButton("Current branch", branches_ == 0)) branches_ = 0;
  ImGui::SameLine();
  if (ImGui::RadioButton("Every branch", branches_ == 1)) branches_ = 1;
  ImGui::TextUnformatted("Format");
  changed |= ImGui::RadioButton("Markdown", &format_, 0);
  ImGui::SameLine();
  changed |= ImGui::RadioButton("JSON", &format_, 1);
  ImGui::SameLine();
  changed |= ImGui::RadioButton("Plain text", &format_, 2);
  if (changed) suggest_path(ctx);
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##path", &path_);
  if (ImGui::Button("Export")) {
    exporter::ExportOptions o;
    o.format = format_of(format_);
    o.branches = branches_ == 0 ? exporter::Branches::kCurrent : exporter::Branches::kAll;
    std::vector<chat::ConversationId> ids;
    if (!all_ && t) ids.push_back(t->conversation.id);
    auto text = exporter::export_from_store(ctx.store, ids, o);
    Status s = text.ok() ? exporter::write_file_atomic(path_, *text) : Status(text.error());
    result_error_ = !s.ok();
    result_ = s.ok() ? "wrote " + path_ : s.error().describe();
    if (s.ok())
      ctx.notices.info(result_);
    else
      ctx.notices.error("export: " + result_);
  }
  ImGui::SameLine();
  if (ImGui::Button("Close") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    ImGui::CloseCurrentPopup();
  if (!result_.empty())
    ImGui::TextColored(result_error_ ? ctx.theme.error : ctx.theme.ok, "%s", result_.c_str());
  ImGui::EndPopup();
}

}  // namespace qc::gui
