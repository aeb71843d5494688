#include "file_browser.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "format.h"
#include "widgets.h"

namespace qc::gui {
namespace fs = std::filesystem;

void FileChooser::open(files::ChooserMode mode, const std::string& current, const std::string& title) {
  if (is_open()) return;
  mode_ = mode;
  title_ = title;
  start_ = files::start_folder(current, files::home_dir());
  dialog_note_.clear();
  tool_ = files::pick_dialog_tool(std::getenv("QWENCHAT_FILE_DIALOG"), files::program_on_path);
  if (tool_ == files::DialogTool::kBuiltin || dialog_failed_) {
    open_builtin();
    return;
  }
  // The desktop's dialog: a process of its own; its end wakes the frame loop (glfwPostEmptyEvent is
  // thread-safe), and poll_dialog() reads its answer.
  dialog_.start(files::dialog_command(tool_, mode_, start_, title_), [] { glfwPostEmptyEvent(); });
}

void FileChooser::open_builtin() {
  open_requested_ = true;
  focus_path_ = true;
  message_.clear();
  options_.mode = mode_;
  navigate(start_);
}

void FileChooser::navigate(const std::string& dir, const std::string& select_name) {
  dir_ = dir;
  path_edit_ = dir;
  ++path_generation_;
  refresh();
  selected_ = -1;
  for (size_t i = 0; i < listing_.entries.size(); ++i)
    if (!select_name.empty() && listing_.entries[i].name == select_name) selected_ = static_cast<int>(i);
  scroll_to_selected_ = selected_ >= 0;
}

void FileChooser::refresh() {
  std::string keep = selected_ >= 0 && selected_ < static_cast<int>(listing_.entries.size())
                         ? listing_.entries[static_cast<size_t>(selected_)].name
                         : "";
  listing_ = files::list_directory(dir_, options_);
  selected_ = -1;
  for (size_t i = 0; i < listing_.entries.size(); ++i)
    if (!keep.empty() && listing_.entries[i].name == keep) selected_ = static_cast<int>(i);
}

std::optional<std::string> FileChooser::activate(int i) {
  if (i < 0 || i >= static_cast<int>(listing_.entries.size())) return std::nullopt;
  const files::Entry& e = listing_.entries[static_cast<size_t>(i)];
  const std::string path = files::join_path(dir_, e.name);
  message_.clear();
  if (e.is_dir) {
    navigate(path);
    return std::nullopt;
  }
  if (mode_ == files::ChooserMode::kFolder) return std::nullopt;
  return path;
}

std::string FileChooser::waiting_text() const {
  if (!dialog_.running()) return "";
  return std::string("Waiting for the file dialog (") + files::dialog_tool_name(tool_) + ")…";
}

std::optional<std::string> FileChooser::draw(UiContext& ctx) {
  if (dialog_.running()) return std::nullopt;  // the caller shows waiting_text()
  if (auto picked = poll_dialog(ctx)) return picked;
  return draw_browser(ctx);
}

std::optional<std::string> FileChooser::poll_dialog(UiContext& ctx) {
  std::optional<ChildProcess::Finished> f = dialog_.take();
  if (!f) return std::nullopt;
  const files::DialogOutcome o = files::parse_dialog_output(tool_, f->exit_status, f->out, f->err);
  if (o.kind == files::DialogOutcome::Kind::kPicked) return o.path;
  if (o.kind == files::DialogOutcome::Kind::kFailed) {
    // The desktop's dialog did not work (not installed after all, no display for it): the built-in one.
    dialog_note_ = o.error + "; the built-in browser is used instead (until the app restarts)";
    dialog_failed_ = true;
    ctx.notices.error("file dialog: " + dialog_note_);
    open_builtin();
  }
  return std::nullopt;
}

bool FileChooser::keys(UiContext& ctx, bool path_active, std::optional<std::string>* picked) {
  const int n = static_cast<int>(listing_.entries.size());
  const int page = 10;
  auto move = [&](int to) {
    if (n == 0) return;
    selected_ = std::clamp(to, 0, n - 1);
    scroll_to_selected_ = true;
  };
  const bool moved = ctx.pressed(GLFW_KEY_DOWN) || ctx.pressed(GLFW_KEY_UP) ||
                     ctx.pressed(GLFW_KEY_PAGE_DOWN) || ctx.pressed(GLFW_KEY_PAGE_UP);
  if (ctx.pressed(GLFW_KEY_DOWN)) move(selected_ + 1);
  if (ctx.pressed(GLFW_KEY_UP)) move(selected_ < 0 ? 0 : selected_ - 1);
  if (ctx.pressed(GLFW_KEY_PAGE_DOWN)) move(selected_ + page);
  if (ctx.pressed(GLFW_KEY_PAGE_UP)) move(selected_ - page);
  // Moving in the list with the path bar focused and unchanged (as it opens) hands the keyboard to the
  // list: Backspace then goes up instead of erasing the path. A new id drops the bar's edit state.
  if (moved && path_active && files::normalise_path(path_edit_, dir_, files::home_dir()) == dir_)
    ++path_generation_;
  if (!path_active) {
    if (ctx.pressed(GLFW_KEY_HOME)) move(0);
    if (ctx.pressed(GLFW_KEY_END)) move(n - 1);
    if (ctx.pressed(GLFW_KEY_BACKSPACE) && dir_ != "/")
      navigate(files::parent_dir(dir_), fs::path(dir_).filename());
    if (ctx.pressed(GLFW_KEY_ENTER) || ctx.pressed(GLFW_KEY_KP_ENTER)) *picked = activate(selected_);
  }
  return ctx.pressed(GLFW_KEY_ESCAPE);
}

std::optional<std::string> FileChooser::draw_browser(UiContext& ctx) {
  const std::string popup = title_ + "###" + id_;
  if (open_requested_) {
    ImGui::OpenPopup(popup.c_str());
    open_requested_ = false;
    browser_open_ = true;
    glfwPostEmptyEvent();  // a popup's first frame is hidden (it is measured): draw the next one at once
  }
  const float em = ctx.em();
  ImGui::SetNextWindowSize(ImVec2(em * 44, em * 30), ImGuiCond_Appearing);
  // Keyboard navigation of the list is ours (keys() reads the key callback's presses, which ImGui 1.86
  // would miss for a press and release within one frame); ImGui's own would move between the buttons.
  if (!ImGui::BeginPopupModal(popup.c_str(), nullptr, ImGuiWindowFlags_NoNavInputs)) {
    browser_open_ = false;
    return std::nullopt;
  }
  std::optional<std::string> picked;
  bool close = false;
  if (!dialog_note_.empty()) text_wrapped_colored(ctx.theme.warning, "%s", dialog_note_.c_str());
  // The path bar: Up, Home, the editable path (Enter opens a folder or picks a file).
  if (ImGui::Button("Up") && dir_ != "/") navigate(files::parent_dir(dir_), fs::path(dir_).filename());
  item_tooltip("the parent folder (Backspace)");
  ImGui::SameLine();
  if (ImGui::Button("Home")) navigate(files::home_dir());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  ImGui::PushID(path_generation_);
  if (focus_path_) {
    ImGui::SetKeyboardFocusHere();
    focus_path_ = false;
    // The path bar is active from the next frame: draw it now, not at the next input event, or the first
    // characters typed right after Ctrl+O would arrive before it takes them (they were lost).
    glfwPostEmptyEvent();
  }
  const bool entered = ImGui::InputText(
      "##path", &path_edit_, ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  const bool path_active = ImGui::IsItemActive();
  ImGui::PopID();
  item_tooltip("type or paste a folder or file (~ for home) and press Enter");
  if (entered || (path_active && (ctx.pressed(GLFW_KEY_ENTER) || ctx.pressed(GLFW_KEY_KP_ENTER)))) {
    std::error_code ec;
    const std::string p = files::normalise_path(path_edit_, dir_, files::home_dir());
    if (p == dir_ && selected_ >= 0) {  // the path as it was: Enter opens the selected entry
      picked = activate(selected_);
    } else if (fs::is_directory(p, ec)) {
      message_.clear();
      navigate(p);
    } else if (fs::exists(p, ec) && mode_ == files::ChooserMode::kOpenFile) {
      picked = p;
    } else {
      message_ = (fs::exists(p, ec) ? "not a folder: " : "no such file or folder: ") + files::escape_name(p);
    }
  }
  if (mode_ == files::ChooserMode::kOpenFile) {
    if (ImGui::Checkbox("All files", &options_.show_all)) refresh();
    item_tooltip("off: only folders and *.gguf files");
    ImGui::SameLine();
  }
  if (ImGui::Checkbox("Hidden", &options_.show_hidden)) refresh();
  item_tooltip("names starting with a dot (~/.cache holds downloaded models)");
  if (!message_.empty()) text_wrapped_colored(ctx.theme.warning, "%s", message_.c_str());
  if (!listing_.error.empty()) text_wrapped_colored(ctx.theme.error, "%s", listing_.error.c_str());

  const float footer = ImGui::GetFrameHeightWithSpacing() * 2 + ImGui::GetTextLineHeightWithSpacing();
  ImGui::BeginChild("entries", ImVec2(0, -footer), true, ImGuiWindowFlags_NoNavInputs);
  const int generation = path_generation_;
  if (ImGui::BeginTable("list", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("size", ImGuiTableColumnFlags_WidthFixed, em * 6);
    for (size_t i = 0; i < listing_.entries.size(); ++i) {
      const files::Entry e = listing_.entries[i];  // a copy: a double-click replaces the listing
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::PushID(static_cast<int>(i));
      const std::string label = (e.is_dir ? "[" + e.label + "]" : e.label) + (e.is_link ? " →" : "");
      if (e.is_dir) ImGui::PushStyleColor(ImGuiCol_Text, ctx.theme.link);
      if (ImGui::Selectable(label.c_str(), selected_ == static_cast<int>(i),
                            ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
        selected_ = static_cast<int>(i);
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) picked = activate(selected_);
      }
      if (e.is_dir) ImGui::PopStyleColor();
      if (scroll_to_selected_ && selected_ == static_cast<int>(i)) {
        ImGui::SetScrollHereY(0.5f);
        scroll_to_selected_ = false;
      }
      ImGui::PopID();
      ImGui::TableSetColumnIndex(1);
      if (e.is_dir) {
        ImGui::TextColored(ctx.theme.text_muted, "folder");
      } else if (e.size_known) {
        ImGui::TextUnformatted(format_bytes(e.size).c_str());
      } else {
        ImGui::TextColored(ctx.theme.text_muted, "?");
      }
      if (picked || path_generation_ != generation) break;  // a folder was opened: the old list is gone
    }
    ImGui::EndTable();
  }
  if (listing_.entries.empty() && listing_.error.empty())
    ImGui::TextColored(ctx.theme.text_muted, mode_ == files::ChooserMode::kFolder
                                                 ? "no folders here"
                                                 : "no folders or .gguf files here");
  ImGui::EndChild();

  const size_t n_dirs = static_cast<size_t>(std::count_if(listing_.entries.begin(), listing_.entries.end(),
                                                          [](const files::Entry& e) { return e.is_dir; }));
  const size_t n_files = listing_.entries.size() - n_dirs;
  ImGui::TextColored(ctx.theme.text_muted, "%zu folder%s, %zu file%s%s", n_dirs, n_dirs == 1 ? "" : "s",
                     n_files, n_files == 1 ? "" : "s",
                     listing_.filtered_out
                         ? (" (" + std::to_string(listing_.filtered_out) + " hidden by the filter)").c_str()
                         : "");
  const bool have_sel = selected_ >= 0 && selected_ < static_cast<int>(listing_.entries.size());
  const bool sel_dir = have_sel && listing_.entries[static_cast<size_t>(selected_)].is_dir;
  if (mode_ == files::ChooserMode::kOpenFile) {
    ImGui::BeginDisabled(!have_sel);
    if (ImGui::Button(sel_dir ? "Open folder" : "Open")) picked = activate(selected_);
    ImGui::EndDisabled();
  } else {
    if (ImGui::Button("Choose this folder")) picked = dir_;
    item_tooltip("%s", files::escape_name(dir_).c_str());
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) close = true;
  if (!picked && keys(ctx, path_active, &picked)) close = true;
  if (picked || close) {
    browser_open_ = false;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
  return picked;
}

}  // namespace qc::gui
