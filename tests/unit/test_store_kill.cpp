// Streaming durability: a child process writes a growing reply through the store (a chunk every 10 ms,
// Store::update_streaming every 50 ms through FlushThrottle) and is killed with SIGKILL at a random
// moment. The parent reopens the database: it passes integrity_check, the stored text is a prefix of
// what the child produced, and it is at most 250 ms behind the kill (the bound; the flush
// interval here is 50 ms, so the margin covers 200 ms of scheduling delay on a loaded machine).
//
// Progress crosses a pipe as {bytes produced, CLOCK_MONOTONIC ns} records written right after each
// chunk is appended and BEFORE it can be flushed, so every stored length has a record with its time.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::store {
namespace {

using test::must;

struct Progress {
  int64_t bytes;
  int64_t t_ns;
};

int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The text the child produces, chunk by chunk: deterministic, mixed ASCII and multi-byte UTF-8.
std::string chunk(int i) {
  static const char* const kWords[] = {"prime ", "Primzahl ", "素数 ", "простое ", "número primo ", "\n"};
  return std::to_string(i) + ":" + kWords[i % 6];
}

constexpr int64_t kChunkMs = 10;
constexpr int64_t kFlushMs = 50;
constexpr int64_t kMaxBehindMs = 250;

// Child: never returns; exits 3 on any error so the parent sees it did not die by the signal.
[[noreturn]] void child_main(const std::string& path, chat::ConversationId cid, chat::MessageId mid, int fd) {
  auto st = Store::open(path);
  if (!st.ok()) _exit(3);
  FlushThrottle throttle(kFlushMs);
  std::string text;
  auto report = [&] {
    const Progress p{static_cast<int64_t>(text.size()), mono_ns()};
    if (write(fd, &p, sizeof p) != static_cast<ssize_t>(sizeof p)) _exit(3);
  };
  report();                         // length 0 at the start
  for (int i = 0; i < 1000; ++i) {  // 10 s at most; the parent kills it long before
    text += chunk(i);
    report();
    if (throttle.due(mono_ns() / 1000000)) {
      if (!st->update_streaming(cid, mid, text, "", i).ok()) _exit(3);
    }
    usleep(kChunkMs * 1000);
  }
  _exit(4);
}

TEST(StoreKill, KilledMidReplyLosesAtMost250Ms) {
  test::TempDir dir;
  std::mt19937 rng(20240501);
  std::uniform_int_distribution<int> kill_after_ms(60, 700);
  int64_t worst_behind_ms = 0;
  for (int round = 0; round < 6; ++round) {
    const std::string path = dir.file("kill" + std::to_string(round) + ".db");
    chat::ConversationId cid = 0;
    chat::MessageId mid = 0;
    {
      Store st = must(Store::open(path));
      chat::ChatTree t;
      t.conversation = must(st.create_conversation({.title = "kill test"}));
      auto u = chat::append_user(t, {.content = "count"});
      ASSERT_TRUE(u.ok());
      ASSERT_TRUE(st.apply(t, *u).ok());
      auto r = chat::start_reply(t, {});
      ASSERT_TRUE(r.ok());
      ASSERT_TRUE(st.apply(t, *r).ok());
      cid = t.conversation.id;
      mid = r->message;
    }  // closed before fork: the child opens its own connection
    int fds[2];
    ASSERT_EQ(0, pipe(fds));
    std::fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      child_main(path, cid, mid, fds[1]);
    }
    close(fds[1]);
    const int wait_ms = kill_after_ms(rng);
    usleep(static_cast<useconds_t>(wait_ms) * 1000);
    const int64_t kill_ns = mono_ns();
    ASSERT_EQ(0, kill(pid, SIGKILL));
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the child ended on its own (status " << status << ") instead of being killed";
    std::vector<Progress> progress;
    Progress p{};
    while (read(fds[0], &p, sizeof p) == static_cast<ssize_t>(sizeof p)) progress.push_back(p);
    close(fds[0]);
    ASSERT_FALSE(progress.empty());

    EXPECT_EQ("ok", test::sql_text(path, "PRAGMA integrity_check"));
    Store st = must(Store::open(path));
    const chat::ChatTree t = must(st.load_conversation(cid));
    const chat::Message* m = chat::find(t, mid);
    ASSERT_NE(nullptr, m);
    EXPECT_EQ(chat::MessageState::kStopped, m->state);  // recovered on open
    // Prefix of what was produced.
    std::string produced;
    for (int i = 0; produced.size() < static_cast<size_t>(progress.back().bytes); ++i) produced += chunk(i);
    ASSERT_LE(m->content.size(), produced.size());
    EXPECT_EQ(produced.substr(0, m->content.size()), m->content);
    // How far behind: from the moment the stored length was produced to the kill.
    const auto at = std::find_if(progress.begin(), progress.end(), [&](const Progress& q) {
      return q.bytes == static_cast<int64_t>(m->content.size());
    });
    ASSERT_NE(progress.end(), at) << "the stored length " << m->content.size()
                                  << " was never a chunk boundary";
    const int64_t behind_ms = (kill_ns - at->t_ns) / 1000000;
    EXPECT_LE(behind_ms, kMaxBehindMs) << "round " << round << ": killed after " << wait_ms << " ms, stored "
                                       << m->content.size() << " of " << progress.back().bytes << " bytes";
    worst_behind_ms = std::max(worst_behind_ms, behind_ms);
  }
  std::printf("worst lag over 6 kills: %lld ms (flush interval %lld ms, bound %lld ms)\n",
              static_cast<long long>(worst_behind_ms), static_cast<long long>(kFlushMs),
              static_cast<long long>(kMaxBehindMs));
}

}  // namespace
}  // namespace qc::store
