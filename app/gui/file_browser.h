// Choosing a model file or a folder (#14): the desktop's own dialog (zenity or kdialog, run as a child
// process so a frame never waits for it) when one is installed, else a built-in ImGui browser: folders
// first in natural order, a .gguf filter with "All files" and "Hidden" toggles, an editable path bar,
// Up and Home, file sizes, the keyboard (Up/Down/PageUp/PageDown/Home/End move, Enter opens or picks,
// Backspace goes up, Esc cancels) and unreadable folders or odd names shown, never fatal. The listing logic
// lives in file_chooser.h (tested without a window). QWENCHAT_FILE_DIALOG=builtin|zenity|kdialog forces one.
#pragma once

#include <optional>
#include <string>

#include "child_process.h"
#include "file_chooser.h"
#include "ui_context.h"

namespace qc::gui {

class FileChooser {
 public:
  explicit FileChooser(std::string id) : id_(std::move(id)) {}
  // Opens the chooser in the folder of `current` (a file or folder; empty: home).
  void open(files::ChooserMode mode, const std::string& current, const std::string& title);
  // Every frame, inside the popup that opened it when there is one: draws the built-in browser or waits
  // for the desktop's dialog. Returns the chosen path (absolute) once.
  std::optional<std::string> draw(UiContext& ctx);
  bool is_open() const { return browser_open_ || open_requested_ || dialog_.running(); }
  // "Waiting for the file dialog (zenity)…" while the desktop's dialog is open, else empty: shown by the
  // caller where the user looks (draw() may run outside any window).
  std::string waiting_text() const;

 private:
  std::optional<std::string> poll_dialog(UiContext& ctx);
  std::optional<std::string> draw_browser(UiContext& ctx);
  void navigate(const std::string& dir, const std::string& select_name = "");
  void refresh();
  // Enter or double-click on entry i: a folder opens, a file is the choice.
  std::optional<std::string> activate(int i);
  void open_builtin();
  bool keys(UiContext& ctx, bool path_active, std::optional<std::string>* picked);

  std::string id_;
  files::ChooserMode mode_ = files::ChooserMode::kOpenFile;
  std::string title_;
  std::string start_;
  bool open_requested_ = false;
  bool browser_open_ = false;
  ChildProcess dialog_;
  files::DialogTool tool_ = files::DialogTool::kBuiltin;
  std::string dialog_note_;     // "zenity failed: ...; the built-in browser is used"
  bool dialog_failed_ = false;  // the desktop's dialog failed once: the built-in browser from then on

  std::string dir_;
  std::string path_edit_;
  int path_generation_ = 0;  // a new id for the path bar after each navigation (drops its edit state)
  bool focus_path_ = false;
  files::Listing listing_;
  files::ListOptions options_;
  int selected_ = -1;
  bool scroll_to_selected_ = false;
  std::string message_;  // "no such file or folder: /x"
};

}  // namespace qc::gui
