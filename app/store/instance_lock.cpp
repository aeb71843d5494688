// InstanceLock (see instance_lock.h).
#include "store/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

namespace qc::store {
namespace {

// "pid 4242, qwenchat" from the lock file and /proc; "another process" when the file holds no pid yet
// (its holder is between flock and write).
std::string describe_holder(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  long pid = 0;
  if (n > 0) pid = std::strtol(buf, nullptr, 10);
  if (pid <= 0) return "another process";
  std::string out = "pid " + std::to_string(pid);
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (comm && std::getline(comm, name) && !name.empty()) out += ", " + name;
  return out;
}

}  // namespace

Result<InstanceLock> InstanceLock::acquire(const std::string& db_path) {
  std::string path = db_path + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return make_error("store: open " + db_path + ": cannot create the lock file " + path + ": " +
                      std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string holder = describe_holder(fd);
      ::close(fd);
      return make_error("store: " + db_path + " is already open in another qwenchat (" + holder + ")",
                        "use that window, or quit it first; two windows on one database are refused because "
                        "they would overwrite each other's messages; another database works: --db PATH");
    }
    ::close(fd);
    return make_error("store: open " + db_path + ": cannot lock " + path + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(fd);
    return make_error("store: open " + db_path + ": cannot write the lock file " + path + ": " +
                      std::strerror(err));
  }
  return InstanceLock(std::move(path), fd);
}

bool InstanceLock::held(const std::string& db_path) {
  const std::string path = db_path + ".lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT;
  const bool free = ::flock(fd, LOCK_SH | LOCK_NB) == 0;
  ::close(fd);  // drops the probe's shared lock
  return !free;
}

InstanceLock::InstanceLock(InstanceLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

InstanceLock& InstanceLock::operator=(InstanceLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

InstanceLock::~InstanceLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace qc::store
