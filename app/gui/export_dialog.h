// Ctrl+E: export the open conversation (or all of them) to Markdown, JSON or plain text through the
// store helper's export API, written atomically to a folder (validated; default $HOME) and file name the
// user picks. The outcome shows at the top of the dialog and on the status line.
#pragma once

#include <string>

#include "file_browser.h"
#include "ui_context.h"

namespace qc::gui {

class ExportDialog {
 public:
  void open(UiContext& ctx);
  void draw(UiContext& ctx);

 private:
  void suggest_path(UiContext& ctx);

  bool open_requested_ = false;
  int format_ = 0;    // 0 Markdown, 1 JSON, 2 text
  int branches_ = 0;  // 0 current branch, 1 whole tree
  bool all_ = false;  // every conversation
  static std::string default_folder();  // $HOME, else the working directory
  std::string folder_;  // kept for the session (empty: the default)
  std::string name_;
  std::string result_;
  bool result_error_ = false;
  FileChooser folder_chooser_{"export_folder"};  // Browse…: folder mode
};

}  // namespace qc::gui
