// One app per database: the GUI holds an advisory lock on "<database>.lock" for as long as it runs, and a
// second qwenchat on the same database is refused at start-up with a message naming the database and the
// process that holds it ("... is open in another qwenchat (pid 4242)").
//
// Why refuse rather than let two windows share the file: each window keeps its conversation's tree in
// memory and hands out message ids from it, so two windows on one conversation would give the same id
// twice (UNIQUE constraint failed), reply under a message the other deleted (FOREIGN KEY constraint
// failed), overwrite each other's branch selections, and never see each other's messages until reopened;
// the second window's start-up would also mark the first one's growing reply as "stopped". A clear
// refusal at open loses nothing; a second database (--db PATH) gives a second window.
//
// flock(2) on a file of its own: released by the kernel when the process ends however it ends (no stale
// lock after a crash), and independent of the fcntl locks SQLite takes on the database itself. The pid is
// written into the file for the refusal message. Readers (qwenchat-cli export) and the CLI's import do not
// take it: they are safe beside the app (reads see a consistent snapshot, an import adds a conversation
// with an id the database assigns). The import only probes it (held()): a store opened read-write marks
// replies still "streaming" as stopped, which is right after a crash and wrong while an app writes one.
#pragma once

#include <string>

#include "qwenchat/result.h"

namespace qc::store {

class InstanceLock {
 public:
  // Takes the lock for the database at db_path (creating "<db_path>.lock"). Errors: another process holds
  // it (the message names the database and that process), or the lock file cannot be created.
  static Result<InstanceLock> acquire(const std::string& db_path);

  // Whether some open of the lock holds it now: a running app (or this process's own InstanceLock). A
  // non-blocking probe: takes the lock shared and drops it at once; false only when that succeeded or
  // the lock file does not exist (no app ever ran on the database). A lock file that cannot be opened or
  // locked for another reason counts as held: the caller then leaves the database as it is. While the
  // probe holds the lock (microseconds) an app starting on the database is refused as a second instance.
  static bool held(const std::string& db_path);

  InstanceLock(InstanceLock&& other) noexcept;
  InstanceLock& operator=(InstanceLock&& other) noexcept;
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;
  ~InstanceLock();  // releases the lock (the file stays: removing it would race with a new holder)

  const std::string& path() const { return path_; }  // the lock file

 private:
  InstanceLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace qc::store
