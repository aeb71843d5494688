// A full disk is an error, never a crash: a child process limits its file size (RLIMIT_FSIZE, with
// SIGXFSZ ignored, so writes past the limit fail with EFBIG the way they fail with ENOSPC on a full
// disk), fills the store until a write fails, and reports the error text. The database stays intact.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::store {
namespace {

using test::must;

[[noreturn]] void child_main(const std::string& path, int fd) {
  signal(SIGXFSZ, SIG_IGN);
  const rlimit lim{512 * 1024, 512 * 1024};  // 512 KB per file: the -wal file hits it first
  if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(3);
  auto st = Store::open(path);
  if (!st.ok()) _exit(3);
  chat::ChatTree t;
  auto c = st->create_conversation({.title = "fill"});
  if (!c.ok()) _exit(3);
  t.conversation = *c;
  const std::string big(16 * 1024, 'x');
  for (int i = 0; i < 200; ++i) {  // 3.2 MB of text: far past the limit
    auto ch = chat::append_user(t, {.content = big, .now_ms = i});
    if (!ch.ok()) _exit(3);
    const Status s = st->apply(t, *ch);
    if (!s.ok()) {
      const std::string msg = s.error().describe();
      if (write(fd, msg.data(), msg.size()) < 0) _exit(3);
      // The store is still usable for reading after the failed write.
      _exit(st->list_conversations().ok() ? 0 : 5);
    }
  }
  _exit(4);  // never failed
}

TEST(StoreFullDisk, WriteFailureIsAnError) {
  test::TempDir dir;
  const std::string path = dir.file("full.db");
  { Store st = must(Store::open(path)); }
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    child_main(path, fds[1]);
  }
  close(fds[1]);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died by signal " << WTERMSIG(status);
  EXPECT_EQ(0, WEXITSTATUS(status)) << "3 = setup failed, 4 = no write ever failed, 5 = unusable after";
  std::printf("error reported: %s\n", msg.c_str());
  EXPECT_NE(std::string::npos, msg.find("store: save changes to conversation")) << msg;
  EXPECT_NE(std::string::npos, msg.find(path)) << msg;
  // Reopened without the limit: intact, and holding what was committed before the failure.
  EXPECT_EQ("ok", test::sql_text(path, "PRAGMA integrity_check"));
  Store st = must(Store::open(path));
  const std::vector<ConversationSummary> list = must(st.list_conversations());
  ASSERT_EQ(1u, list.size());
  EXPECT_GT(list[0].message_count, 0);
  EXPECT_LT(list[0].message_count, 200);
}

}  // namespace
}  // namespace qc::store
