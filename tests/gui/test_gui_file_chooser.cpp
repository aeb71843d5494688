// The window-free part of the model file chooser and of drag and drop (#14, app/gui/file_chooser.h): the
// listing (folders first, natural order, the .gguf filter, hidden names, folder mode), unreadable folders,
// names that are not UTF-8, typed paths, the desktop dialogs' command lines and answers, the child process
// that runs them, and the choice among dropped files (the drop callback's handler: synthesising an XDND
// drop under Xvfb needs a drag source client, which xdotool is not).
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "child_process.h"
#include "file_chooser.h"
#include "temp_dir.h"

namespace qc::gui::files {
namespace {

void touch(const std::string& path, const std::string& content = "") {
  std::ofstream(path, std::ios::binary) << content;
}

std::vector<std::string> labels(const Listing& l) {
  std::vector<std::string> out;
  for (const Entry& e : l.entries) out.push_back(e.is_dir ? e.label + "/" : e.label);
  return out;
}

TEST(FileChooser, FoldersFirstNaturalOrderAndTheGgufFilter) {
  test::TempDir t;
  const std::string d = t.path().string();
  std::filesystem::create_directories(d + "/zeta");
  std::filesystem::create_directories(d + "/Alpha");
  std::filesystem::create_directories(d + "/.cache");
  touch(d + "/model-10.gguf", "GGUF1234567");
  touch(d + "/model-2.gguf", "GGUF");
  touch(d + "/Big.GGUF");
  touch(d + "/notes.txt");
  touch(d + "/.hidden.gguf");
  touch(d + "/.gguf");  // no name before the extension: not a model file name
  ASSERT_EQ(symlink((d + "/zeta").c_str(), (d + "/link-to-zeta").c_str()), 0);
  ASSERT_EQ(symlink((d + "/gone").c_str(), (d + "/dangling.gguf").c_str()), 0);

  Listing l = list_directory(d, {});
  EXPECT_TRUE(l.error.empty()) << l.error;
  EXPECT_EQ(labels(l), (std::vector<std::string>{"Alpha/", "link-to-zeta/", "zeta/", "Big.GGUF",
                                                 "dangling.gguf", "model-2.gguf", "model-10.gguf"}));
  EXPECT_EQ(l.filtered_out, 4u);  // notes.txt, .hidden.gguf, .gguf, .cache
  EXPECT_EQ(l.entries[6].size, 11u);
  EXPECT_TRUE(l.entries[6].size_known);
  EXPECT_TRUE(l.entries[1].is_link);
  EXPECT_FALSE(l.entries[4].size_known);  // a dangling link: listed, its size unknown

  ListOptions all;
  all.show_all = true;
  all.show_hidden = true;
  l = list_directory(d, all);
  EXPECT_EQ(labels(l), (std::vector<std::string>{".cache/", "Alpha/", "link-to-zeta/", "zeta/", ".gguf",
                                                 ".hidden.gguf", "Big.GGUF", "dangling.gguf", "model-2.gguf",
                                                 "model-10.gguf", "notes.txt"}));
  EXPECT_EQ(l.filtered_out, 0u);

  ListOptions folders;
  folders.mode = ChooserMode::kFolder;
  l = list_directory(d, folders);
  EXPECT_EQ(labels(l), (std::vector<std::string>{"Alpha/", "link-to-zeta/", "zeta/"}));
}

TEST(FileChooser, NaturalOrder) {
  EXPECT_TRUE(natural_less("part-2", "part-10"));
  EXPECT_FALSE(natural_less("part-10", "part-2"));
  EXPECT_TRUE(natural_less("a", "B"));  // without case
  EXPECT_TRUE(natural_less("x-00001-of-00003", "x-00002-of-00003"));
  EXPECT_TRUE(natural_less("a01", "a1") != natural_less("a1", "a01"));  // a total order: bytes decide ties
  EXPECT_TRUE(natural_less("B", "b") != natural_less("b", "B"));
  EXPECT_FALSE(natural_less("same", "same"));
}

TEST(FileChooser, UnreadableAndMissingFoldersAreErrorsNotCrashes) {
  test::TempDir t;
  const std::string d = t.path().string();
  Listing l = list_directory(d + "/missing", {});
  EXPECT_NE(l.error.find("cannot read " + d + "/missing: No such file or directory"), std::string::npos)
      << l.error;
  EXPECT_TRUE(l.entries.empty());
  touch(d + "/file");
  l = list_directory(d + "/file", {});
  EXPECT_NE(l.error.find("Not a directory"), std::string::npos) << l.error;
  std::filesystem::create_directories(d + "/locked");
  touch(d + "/locked/a.gguf");
  chmod((d + "/locked").c_str(), 0);
  l = list_directory(d + "/locked", {});
  if (geteuid() != 0) {  // root reads it anyway
    EXPECT_NE(l.error.find("Permission denied"), std::string::npos) << l.error;
    EXPECT_TRUE(l.entries.empty());
  }
  chmod((d + "/locked").c_str(), 0755);
}

TEST(FileChooser, NamesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(escape_name("plain.gguf"), "plain.gguf");
  EXPECT_EQ(escape_name("caf\xC3\xA9 \xE6\xA8\xA1\xE5\x9E\x8B.gguf"),
            "caf\xC3\xA9 \xE6\xA8\xA1\xE5\x9E\x8B.gguf");
  EXPECT_EQ(escape_name("bad\xFF\xFEname"), "bad\\xFF\\xFEname");
  EXPECT_EQ(escape_name("latin1-caf\xE9.gguf"), "latin1-caf\\xE9.gguf");          // a lone lead byte
  EXPECT_EQ(escape_name("\xC0\xAF overlong"), "\\xC0\\xAF overlong");             // overlong '/'
  EXPECT_EQ(escape_name("\xED\xA0\x80 surrogate"), "\\xED\\xA0\\x80 surrogate");  // U+D800
  EXPECT_EQ(escape_name("tab\there\nnl"), "tab\\x09here\\x0Anl");
  EXPECT_EQ(escape_name("trunc\xE6\xA8"), "trunc\\xE6\\xA8");

  test::TempDir t;
  const std::string odd = "model-\xFF\xFE.gguf";
  touch(t.file(odd), "GGUF");
  const Listing l = list_directory(t.path().string(), {});
  ASSERT_EQ(l.entries.size(), 1u);
  EXPECT_EQ(l.entries[0].name, odd);  // the raw bytes open the file
  EXPECT_EQ(l.entries[0].label, "model-\\xFF\\xFE.gguf");
  EXPECT_TRUE(std::ifstream(join_path(t.path().string(), l.entries[0].name)).good());
}

TEST(FileChooser, TypedPathsAreMadeAbsoluteAndNormal) {
  EXPECT_EQ(normalise_path("  /a/b/../c/./ \n", "/cwd", "/home/u"), "/a/c");
  EXPECT_EQ(normalise_path("~", "/cwd", "/home/u"), "/home/u");
  EXPECT_EQ(normalise_path("~/models/", "/cwd", "/home/u"), "/home/u/models");
  EXPECT_EQ(normalise_path("sub/m.gguf", "/cwd", "/home/u"), "/cwd/sub/m.gguf");
  EXPECT_EQ(normalise_path("..", "/cwd", "/home/u"), "/");
  EXPECT_EQ(normalise_path("/../..", "/cwd", "/home/u"), "/");
  EXPECT_EQ(normalise_path("", "/cwd", "/home/u"), "/cwd");
  EXPECT_EQ(normalise_path("file:///tmp/My%20Models/a.gguf", "/cwd", "/h"), "/tmp/My Models/a.gguf");
  EXPECT_EQ(normalise_path("file://localhost/tmp/x", "/cwd", "/h"), "/tmp/x");
  EXPECT_EQ(normalise_path("~user", "/cwd", "/h"), "/cwd/~user");  // another user's home is not expanded
  EXPECT_EQ(parent_dir("/a/b"), "/a");
  EXPECT_EQ(parent_dir("/a"), "/");
  EXPECT_EQ(parent_dir("/"), "/");
  EXPECT_EQ(join_path("/", "x"), "/x");
  EXPECT_EQ(join_path("/a", "x"), "/a/x");

  test::TempDir t;
  const std::string d = t.path().string();
  touch(d + "/m.gguf");
  EXPECT_EQ(start_folder(d + "/m.gguf", "/home/u"), d);  // a file: its folder
  EXPECT_EQ(start_folder(d, "/home/u"), d);
  EXPECT_EQ(start_folder(d + "/gone/x.gguf", "/home/u"), "/home/u");
  EXPECT_EQ(start_folder("", "/home/u"), "/home/u");
}

TEST(FileChooser, DesktopDialogCommandLines) {
  auto none = [](const char*) { return false; };
  auto only_kdialog = [](const char* n) { return std::string(n) == "kdialog"; };
  auto both = [](const char*) { return true; };
  EXPECT_EQ(pick_dialog_tool(nullptr, none), DialogTool::kBuiltin);
  EXPECT_EQ(pick_dialog_tool("auto", only_kdialog), DialogTool::kKdialog);
  EXPECT_EQ(pick_dialog_tool(nullptr, both), DialogTool::kZenity);
  EXPECT_EQ(pick_dialog_tool("builtin", both), DialogTool::kBuiltin);  // forced (the gui test does)
  EXPECT_EQ(pick_dialog_tool("kdialog", none), DialogTool::kKdialog);

  const auto z = dialog_command(DialogTool::kZenity, ChooserMode::kOpenFile, "/m", "Open");
  EXPECT_EQ(z, (std::vector<std::string>{"zenity", "--file-selection", "--title=Open", "--filename=/m/",
                                         "--file-filter=GGUF models (*.gguf) | *.gguf *.GGUF",
                                         "--file-filter=All files | *"}));
  const auto zf = dialog_command(DialogTool::kZenity, ChooserMode::kFolder, "/", "Folder");
  EXPECT_EQ(zf.back(), "--directory");
  EXPECT_EQ(zf[3], "--filename=/");
  const auto k = dialog_command(DialogTool::kKdialog, ChooserMode::kOpenFile, "/m", "Open");
  EXPECT_EQ(k[3], "--getopenfilename");
  EXPECT_EQ(k[4], "/m");
  EXPECT_EQ(dialog_command(DialogTool::kKdialog, ChooserMode::kFolder, "/m", "F")[3],
            "--getexistingdirectory");
  EXPECT_TRUE(dialog_command(DialogTool::kBuiltin, ChooserMode::kFolder, "/m", "F").empty());
}

TEST(FileChooser, DesktopDialogAnswers) {
  using K = DialogOutcome::Kind;
  DialogOutcome o = parse_dialog_output(DialogTool::kZenity, 0, "/home/u/My Models/q.gguf\n", "");
  EXPECT_EQ(o.kind, K::kPicked);
  EXPECT_EQ(o.path, "/home/u/My Models/q.gguf");
  // GTK warnings on stderr do not matter; a second line (never asked for) is ignored.
  o = parse_dialog_output(DialogTool::kKdialog, 0, "/a.gguf\n/b.gguf\n", "Gtk-WARNING: no theme");
  EXPECT_EQ(o.path, "/a.gguf");
  EXPECT_EQ(parse_dialog_output(DialogTool::kZenity, 1, "", "").kind, K::kCancelled);
  EXPECT_EQ(parse_dialog_output(DialogTool::kKdialog, 1, "", "").kind, K::kCancelled);
  o = parse_dialog_output(DialogTool::kZenity, 0, "\n", "");
  EXPECT_EQ(o.kind, K::kFailed);
  EXPECT_EQ(o.error, "zenity returned no path");
  o = parse_dialog_output(DialogTool::kZenity, 255, "", "cannot open display: :99\nmore\n");
  EXPECT_EQ(o.kind, K::kFailed);
  EXPECT_EQ(o.error, "zenity failed (exit status 255): cannot open display: :99");
  o = parse_dialog_output(DialogTool::kKdialog, -1, "", "cannot run kdialog: No such file or directory");
  EXPECT_EQ(o.error, "kdialog could not be run: cannot run kdialog: No such file or directory");
  // A relative answer is not trusted as a path.
  EXPECT_EQ(parse_dialog_output(DialogTool::kZenity, 0, "q.gguf\n", "").kind, K::kFailed);
}

ChildProcess::Finished wait_done(ChildProcess& p) {
  for (int i = 0; i < 500; ++i) {  // 5 s: a hang guard, the programs below end at once
    if (auto f = p.take()) return *f;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the program did not end";
  return {};
}

TEST(FileChooser, ChildProcessRunsOffTheCallersThread) {
  ChildProcess p;
  std::atomic<int> woken{0};
  // A program that takes its time: start() returns at once, running() says so.
  const auto t0 = std::chrono::steady_clock::now();
  p.start({"sh", "-c", "sleep 0.3; echo /picked/model.gguf; echo warning >&2; exit 0"}, [&] { ++woken; });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  EXPECT_TRUE(p.running());
  ChildProcess::Finished f = wait_done(p);
  EXPECT_EQ(f.exit_status, 0);
  EXPECT_EQ(f.out, "/picked/model.gguf\n");
  EXPECT_EQ(f.err, "warning\n");
  EXPECT_EQ(woken.load(), 1);
  EXPECT_FALSE(p.take().has_value());  // once
  // Cancel is status 1; a missing program is a failure with the reason.
  p.start({"sh", "-c", "exit 1"});
  EXPECT_EQ(parse_dialog_output(DialogTool::kZenity, wait_done(p).exit_status, "", "").kind,
            DialogOutcome::Kind::kCancelled);
  p.start({"qwenchat-no-such-dialog-program"});
  f = wait_done(p);
  EXPECT_EQ(f.exit_status, -1);
  EXPECT_NE(f.err.find("No such file or directory"), std::string::npos) << f.err;
  // A dialog still open when the app quits is ended, not waited for.
  const auto t1 = std::chrono::steady_clock::now();
  {
    ChildProcess q;
    q.start({"sleep", "30"});
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(5));
}

TEST(FileChooser, DroppedFilesTheFirstGgufIsLoaded) {
  test::TempDir t;
  const std::string d = t.path().string();
  touch(d + "/notes.txt", "hello");
  touch(d + "/a.gguf", "GGUF");
  touch(d + "/b.GGUF", "GGUF");
  touch(d + "/renamed.bin", std::string("GGUF\x03\x00\x00\x00", 8));
  std::filesystem::create_directories(d + "/folder.gguf");

  DropChoice c = choose_dropped({d + "/a.gguf"});
  EXPECT_EQ(c.path, d + "/a.gguf");
  EXPECT_TRUE(c.note.empty());
  c = choose_dropped({d + "/notes.txt", d + "/folder.gguf", d + "/b.GGUF", d + "/a.gguf"});
  EXPECT_EQ(c.path, d + "/b.GGUF");
  EXPECT_EQ(c.note, "4 files dropped: loading the first .gguf, b.GGUF");
  // No .gguf name: a file that starts with the GGUF magic still is one.
  c = choose_dropped({d + "/notes.txt", d + "/renamed.bin"});
  EXPECT_EQ(c.path, d + "/renamed.bin");
  EXPECT_EQ(c.note, "2 files dropped: loading the first GGUF file, renamed.bin");
  c = choose_dropped({d + "/notes.txt"});
  EXPECT_TRUE(c.path.empty());
  EXPECT_EQ(c.error,
            "notes.txt is not a GGUF model file (expected a .gguf file, such as a Qwen3.5 model "
            "converted to GGUF)");
  c = choose_dropped({d + "/notes.txt", d + "/folder.gguf", d + "/x\xFF", d + "/y", d + "/z"});
  EXPECT_EQ(c.error.substr(0, 52), "notes.txt, folder.gguf, x\\xFF and 2 more are not a G");
  EXPECT_EQ(choose_dropped({}).error, "nothing was dropped");
}

}  // namespace
}  // namespace qc::gui::files
