// One app per database (store/instance_lock.h): a second qwenchat on the same database is refused at
// open with a message naming the database and the process that holds it; the lock goes with its holder.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "store/instance_lock.h"
#include "temp_dir.h"

namespace qc::store {
namespace {

TEST(StoreInstanceLock, ASecondProcessIsRefusedNamingTheDatabaseAndTheHolder) {
  test::TempDir dir;
  const std::string db = dir.file("chat.db");
  int ready[2], release[2];
  ASSERT_EQ(0, pipe(ready));
  ASSERT_EQ(0, pipe(release));
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the first app: takes the lock, says so, holds it until told
    close(ready[0]);
    close(release[1]);
    auto lock = InstanceLock::acquire(db);
    const char c = lock.ok() ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(3);
    char x;
    (void)!read(release[0], &x, 1);
    _exit(lock.ok() ? 0 : 4);
  }
  close(ready[1]);
  close(release[0]);
  char c = 0;
  ASSERT_EQ(1, read(ready[0], &c, 1));
  ASSERT_EQ('y', c) << "the first process could not take the lock";

  auto second = InstanceLock::acquire(db);
  ASSERT_FALSE(second.ok()) << "a second app on " << db << " was let in";
  const std::string msg = second.error().message;
  std::printf("refusal: %s\n", second.error().describe().c_str());
  EXPECT_NE(msg.find(db + " is already open in another qwenchat"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pid " + std::to_string(pid)), std::string::npos) << msg;
  EXPECT_NE(second.error().hint.find("--db PATH"), std::string::npos) << second.error().hint;

  // The holder ends (however it ends, the kernel drops its lock): the database can be opened again.
  close(release[1]);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto third = InstanceLock::acquire(db);
  ASSERT_TRUE(third.ok()) << third.error().describe();
  close(ready[0]);
}

// Two windows of one process (two opens of the lock) are refused the same way; each database has its
// own lock, and releasing it (the app quitting) lets the next one in.
TEST(StoreInstanceLock, OneHolderPerDatabaseWithinAProcessToo) {
  test::TempDir dir;
  std::optional<InstanceLock> first;
  {
    auto a = InstanceLock::acquire(dir.file("a.db"));
    ASSERT_TRUE(a.ok()) << a.error().describe();
    first.emplace(std::move(*a));
  }
  auto again = InstanceLock::acquire(dir.file("a.db"));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("pid " + std::to_string(getpid())), std::string::npos)
      << again.error().message;
  EXPECT_TRUE(InstanceLock::acquire(dir.file("b.db")).ok());  // another database: fine
  first.reset();
  EXPECT_TRUE(InstanceLock::acquire(dir.file("a.db")).ok());
}

TEST(StoreInstanceLock, AnUncreatableLockFileIsAClearError) {
  test::TempDir dir;
  const std::string db = dir.file("not-a-folder") + "/chat.db";
  {
    std::FILE* f = std::fopen(dir.file("not-a-folder").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  auto lock = InstanceLock::acquire(db);
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.error().message.find("cannot create the lock file " + db + ".lock"), std::string::npos)
      << lock.error().message;
}

}  // namespace
}  // namespace qc::store
