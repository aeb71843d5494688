// The window-free part of picking a file or a folder (#14): listing a directory (folders first, natural
// order, a .gguf filter), names with bytes that are not UTF-8 made printable, typed paths made absolute,
// the desktop's own dialog (zenity, kdialog) as a command line and its output read back, and the choice
// among files dropped on the window. The ImGui browser (file_browser.h) and the model tab use it; the unit
// tests (tests/gui/test_gui_file_chooser.cpp) run it without a window.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qc::gui::files {

enum class ChooserMode { kOpenFile, kFolder };

struct Entry {
  std::string name;      // the raw bytes of the name (what the path is built from)
  std::string label;     // printable: UTF-8 as is, any other byte and control characters as \xNN
  bool is_dir = false;   // a folder, or a link to one
  bool is_link = false;  // a symbolic link (dangling ones included)
  bool size_known = false;
  uint64_t size = 0;  // bytes, for files
};

struct ListOptions {
  ChooserMode mode = ChooserMode::kOpenFile;
  bool show_all = false;     // every file, not only *.gguf (folders are always listed)
  bool show_hidden = false;  // names starting with '.'
};

struct Listing {
  std::string dir;  // absolute, normalised
  std::vector<Entry> entries;
  size_t filtered_out = 0;  // files the filter (or the hidden rule) left out
  std::string error;        // "cannot read /root: Permission denied"; entries then empty
};

// Lists `dir` (absolute) for the chooser: in folder mode only folders; sorted by sort_entries. Never
// throws; an unreadable folder gives an error, an entry whose type cannot be read is listed as a file.
Listing list_directory(const std::string& dir, const ListOptions& options);

// Folders first, then by name: ASCII letters without case, runs of digits by value ("part-2" before
// "part-10"), ties by the raw bytes.
void sort_entries(std::vector<Entry>& entries);
bool natural_less(std::string_view a, std::string_view b);

bool has_gguf_extension(std::string_view name);  // "*.gguf", any case

// Printable form of a file name: valid UTF-8 is kept; every other byte and every control character is
// written as \xNN (a backslash itself stays as it is).
std::string escape_name(std::string_view bytes);

// A path typed in the path bar (or dropped, or printed by a dialog) made absolute and normal: surrounding
// white space and a file:// prefix (percent-decoded) removed, ~ expanded to `home`, a relative path taken
// from `cwd`, "." and ".." resolved lexically, no trailing '/' except for "/".
std::string normalise_path(std::string_view typed, const std::string& cwd, const std::string& home);
std::string parent_dir(const std::string& dir);  // "/a/b" -> "/a"; "/" -> "/"
std::string join_path(const std::string& dir, const std::string& name);
std::string home_dir();  // $HOME, else the passwd entry, else "/"

// The folder a chooser opens in for a current value (a file's folder, a folder itself, else home).
std::string start_folder(const std::string& current, const std::string& home);

// The desktop's file dialogs. QWENCHAT_FILE_DIALOG picks one: "builtin", "zenity", "kdialog" or "auto"
// (the default: zenity, then kdialog, when on PATH; else the built-in browser).
enum class DialogTool { kBuiltin, kZenity, kKdialog };
const char* dialog_tool_name(DialogTool t);
// `on_path(name)`: whether a program of that name is on PATH (injected for the tests).
template <typename OnPath>
DialogTool pick_dialog_tool(const char* setting, OnPath on_path) {
  const std::string s = setting ? setting : "";
  if (s == "builtin") return DialogTool::kBuiltin;
  if (s == "zenity") return DialogTool::kZenity;
  if (s == "kdialog") return DialogTool::kKdialog;
  if (on_path("zenity")) return DialogTool::kZenity;
  if (on_path("kdialog")) return DialogTool::kKdialog;
  return DialogTool::kBuiltin;
}
bool program_on_path(const char* name);  // an executable file of that name in a PATH folder

// The command line for the tool (argv[0] is the program's name, looked up on PATH).
std::vector<std::string> dialog_command(DialogTool tool, ChooserMode mode, const std::string& start_dir,
                                        const std::string& title);

struct DialogOutcome {
  enum class Kind { kPicked, kCancelled, kFailed };
  Kind kind = Kind::kCancelled;
  std::string path;   // kPicked: absolute
  std::string error;  // kFailed: what went wrong, with the tool's own message
};
// The tool's exit status (-1: it could not be run or was killed) and output: status 0 and a path on the
// first line is a choice; status 1 is Cancel (both tools); anything else is a failure.
DialogOutcome parse_dialog_output(DialogTool tool, int exit_status, std::string_view out,
                                  std::string_view err);

// Files dropped on the window: the first whose name ends in .gguf; else the first whose first four bytes
// are "GGUF"; else an error naming what was dropped. `note` says what was left out when there were several.
struct DropChoice {
  std::string path;   // empty: nothing to load (error says why)
  std::string note;   // "3 files dropped: loading the first .gguf, b.gguf"
  std::string error;  // "notes.txt is not a GGUF model file (expected a .gguf file)"
};
DropChoice choose_dropped(const std::vector<std::string>& paths);

}  // namespace qc::gui::files
