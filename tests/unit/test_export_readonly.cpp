// Export to a place that cannot be written: the error names the destination and the reason, an existing
// file there keeps its content, and nothing else appears in the folder (the export writes nowhere but
// its destination's folder, and removes its temporary file). Tests may run as root, whom mode 0555 does
// not stop: then the folder is made read-only for real, by a read-only bind mount in a child process's
// own user and mount namespaces (EROFS, what a read-only file system says).
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "export/export.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::exporter {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs f() in a forked child and returns what it wrote to the pipe, or nullopt with `why` set when the
// child could not set up (exit 2).
template <class F>
std::optional<std::string> in_child(F f, std::string* why) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    _exit(f(fds[1]));
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *why = out;
    return std::nullopt;
  }
  return out;
}

// In the child: makes `dir` a read-only mount (own user + mount namespace), then runs then(fd), which
// writes its outcome to fd. Exit 2 with the reason when namespaces are not available.
template <class F>
int in_readonly_mount(const std::string& dir, int fd, F then) {
  auto fail = [&](const std::string& why) {
    const std::string msg = why + ": " + std::strerror(errno);
    (void)!write(fd, msg.data(), msg.size());
    return 2;
  };
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return fail("unshare(CLONE_NEWUSER | CLONE_NEWNS)");
  auto put = [](const char* file, const std::string& text) {
    const int f = ::open(file, O_WRONLY | O_CLOEXEC);
    if (f < 0) return false;
    const bool ok = ::write(f, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(f);
    return ok;
  };
  put("/proc/self/setgroups", "deny");
  if (!put("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n")) return fail("uid_map");
  if (!put("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")) return fail("gid_map");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("make / private");
  if (mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) return fail("bind mount");
  if (mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
    return fail("remount read-only");
  then(fd);
  return 0;
}

void send_result(int fd, const Status& s) {
  const std::string msg = s.ok() ? "ok" : s.error().describe();
  (void)!write(fd, msg.data(), msg.size());
}

TEST(ExportReadOnly, AReadOnlyFolderIsAClearErrorAndTheOldFileStays) {
  test::TempDir tmp;
  const fs::path dir = tmp.path() / "readonly";
  fs::create_directories(dir);
  const std::string dest = (dir / "chat.md").string();
  { std::ofstream(dest) << "the previous export"; }
  ASSERT_EQ(0, chmod(dir.c_str(), 0555));
  // Can this process still create files there (root)? Then mode bits prove nothing.
  const std::string probe = (dir / "probe").string();
  const int pfd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  std::string message, reason;
  if (pfd < 0) {
    const Status s = write_file_atomic(dest, "the new export");
    ASSERT_FALSE(s.ok()) << "the export wrote into a folder of mode 0555";
    message = s.error().describe();
    reason = "Permission denied";
  } else {
    ::close(pfd);
    ::unlink(probe.c_str());
    std::string why;
    auto got = in_child(
        [&](int fd) {
          return in_readonly_mount(dir.string(), fd, [&](int out) {
            send_result(out, write_file_atomic(dest, "the new export"));
          });
        },
        &why);
    if (!got) {
      chmod(dir.c_str(), 0755);
      GTEST_SKIP() << "running as root (mode 0555 does not stop root) and no read-only mount could be made "
                      "in a user namespace ("
                   << why << "); ADestinationUnderAFileIsAClearError still runs";
    }
    message = *got;
    reason = "Read-only file system";
    ASSERT_NE(message, "ok") << "the export wrote into a read-only mount";
  }
  chmod(dir.c_str(), 0755);
  std::printf("error reported: %s\n", message.c_str());
  EXPECT_NE(message.find("export to " + dest + " failed"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot create a file in the folder " + dir.string()), std::string::npos) << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
  EXPECT_EQ(read_file(dest), "the previous export");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"chat.md"});
}

// A path whose folder is a file: refused for root too (ENOTDIR), with the path in the message.
TEST(ExportReadOnly, ADestinationUnderAFileIsAClearError) {
  test::TempDir tmp;
  const std::string file = tmp.file("notes.txt");
  { std::ofstream(file) << "a file, not a folder"; }
  const std::string dest = file + "/chat.md";
  const Status s = write_file_atomic(dest, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("export to " + dest + " failed"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("Not a directory"), std::string::npos) << s.error().message;
  EXPECT_EQ(read_file(file), "a file, not a folder");
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"notes.txt"});
}

// The disk fills up in the middle of the write (a file size limit gives EFBIG, as ENOSPC would): the
// destination keeps its old content whole, never a truncated new one, and no temporary file is left.
TEST(ExportReadOnly, AWriteThatFailsMidwayLeavesTheOldFileWhole) {
  test::TempDir tmp;
  const std::string dest = tmp.file("all.json");
  { std::ofstream(dest) << "the previous export"; }
  std::string why;
  auto got = in_child(
      [&](int fd) {
        signal(SIGXFSZ, SIG_IGN);
        const rlimit lim{64 * 1024, RLIM_INFINITY};  // soft limit: 64 KB per file
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0) return 2;
        send_result(fd, write_file_atomic(dest, std::string(1 << 20, 'x')));  // 1 MB
        return 0;
      },
      &why);
  ASSERT_TRUE(got.has_value()) << why;
  ASSERT_NE(*got, "ok") << "a 1 MB export passed a 64 KB file size limit";
  EXPECT_NE(got->find("export to " + dest + " failed"), std::string::npos) << *got;
  EXPECT_NE(got->find("File too large"), std::string::npos) << *got;
  EXPECT_NE(got->find("was left as it was"), std::string::npos) << *got;
  EXPECT_EQ(read_file(dest), "the previous export");
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"all.json"});
}

// The database itself on a read-only file system (a mounted backup): the export reads it and writes
// nothing but its destination; SQLite would otherwise need to create a -shm file beside the database,
// and opening failed with "unable to open database file".
TEST(ExportReadOnly, ADatabaseOnAReadOnlyFileSystemExportsWritingNothingBesideIt) {
  test::TempDir tmp;
  const fs::path dbdir = tmp.path() / "backup";
  fs::create_directories(dbdir);
  const std::string db = (dbdir / "chat.db").string();
  chat::ConversationId id = 0;
  {
    store::Store st = test::must(store::Store::open(db));
    chat::ChatTree t;
    ASSERT_TRUE(chat::append_user(t, {.content = "kept in the backup", .now_ms = 1}).ok());
    id = test::store_tree(st, t).conversation.id;
  }  // closed: SQLite checkpoints and removes the -wal and -shm files
  const std::vector<std::string> before = names_in(dbdir);
  ASSERT_EQ(before, std::vector<std::string>{"chat.db"});
  const std::string dest = tmp.file("export.md");
  std::string why;
  auto got = in_child(
      [&](int fd) {
        return in_readonly_mount(dbdir.string(), fd, [&](int out) {
          auto st = store::Store::open(db, {.read_only = true});
          if (!st.ok()) return send_result(out, st.error());
          auto text = export_from_store(*st, {id}, {Format::kMarkdown, Branches::kAll});
          send_result(out, text.ok() ? write_file_atomic(dest, *text) : Status(text.error()));
        });
      },
      &why);
  if (!got) GTEST_SKIP() << "no read-only mount could be made in a user namespace (" << why << ")";
  EXPECT_EQ(*got, "ok");
  EXPECT_NE(read_file(dest).find("kept in the backup"), std::string::npos);
  EXPECT_EQ(names_in(dbdir), before);
}

}  // namespace
}  // namespace qc::exporter
