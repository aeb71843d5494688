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

std::string ExportDialog::default_folder() {
  const char* home = std::getenv("HOME");
  std::error_code ec;
  return home && *home ? std::string(home) : std::filesystem::current_path(ec).string();
}

void ExportDialog::suggest_path(UiContext& ctx) {
  if (folder_.empty()) folder_ = default_folder();
  const chat::ChatTree* t = ctx.chat.tree();
  const std::string stem =
      all_ || t == nullptr ? "qwenchat-conversations" : file_stem_from_title(t->conversation.title);
  name_ = stem + "." + exporter::format_extension(format_of(format_));
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
  // The outcome first, where it is seen (it is also on the status line).
  if (!result_.empty()) {
    text_wrapped_colored(result_error_ ? ctx.theme.error : ctx.theme.ok, "%s", result_.c_str());
    ImGui::Separator();
  }
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
  ImGui::TextUnformatted("Folder");
  ImGui::SetNextItemWidth(-ctx.em() * 10);
  ImGui::InputText("##folder", &folder_);
  ImGui::SameLine();
  if (ImGui::Button("Browse…", ImVec2(ctx.em() * 5, 0)))
    folder_chooser_.open(files::ChooserMode::kFolder, folder_, "Choose the export folder");
  ImGui::SameLine();
  if (ImGui::Button("Home", ImVec2(-1, 0))) folder_ = default_folder();
  // The folder browser is a popup of this one (or the desktop's dialog, waited for here).
  if (const std::string w = folder_chooser_.waiting_text(); !w.empty())
    text_wrapped_colored(ctx.theme.text_muted, "%s", w.c_str());
  const bool choosing = folder_chooser_.is_open();  // its Esc is not this dialog's
  if (std::optional<std::string> picked = folder_chooser_.draw(ctx)) folder_ = *picked;
  const std::string problem = export_folder_problem(folder_);
  if (!problem.empty()) text_wrapped_colored(ctx.theme.error, "%s: %s", folder_.c_str(), problem.c_str());
  ImGui::TextUnformatted("File name");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##name", &name_);
  const bool bad_name = name_.empty() || name_.find('/') != std::string::npos || name_ == "." || name_ == "..";
  if (bad_name) text_wrapped_colored(ctx.theme.error, "a file name, without '/'");
  const std::string path = (std::filesystem::path(folder_) / name_).string();
  ImGui::BeginDisabled(!problem.empty() || bad_name);
  if (ImGui::Button("Export")) {
    exporter::ExportOptions o;
    o.format = format_of(format_);
    o.branches = branches_ == 0 ? exporter::Branches::kCurrent : exporter::Branches::kAll;
    std::vector<chat::ConversationId> ids;
    if (!all_ && t) ids.push_back(t->conversation.id);
    auto text = exporter::export_from_store(ctx.store, ids, o);
    Status s = text.ok() ? exporter::write_file_atomic(path, *text) : Status(text.error());
    result_error_ = !s.ok();
    result_ = s.ok() ? "Exported: wrote " + path : "Export failed: " + s.error().describe();
    if (s.ok())
      ctx.notices.info(result_);
    else
      ctx.notices.error(result_);
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Close") || (!choosing && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))))
    ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

}  // namespace qc::gui
