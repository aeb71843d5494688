#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace qc::gui {
namespace {

constexpr size_t kMaxOutput = 64 * 1024;

}  // namespace

ChildProcess::~ChildProcess() {
  terminate();
  if (reader_.joinable()) reader_.join();
}

bool ChildProcess::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

std::optional<ChildProcess::Finished> ChildProcess::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<Finished> f = std::move(done_);
  done_.reset();
  return f;
}

void ChildProcess::terminate() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_ && pid_ > 0) kill(pid_, SIGTERM);
}

void ChildProcess::reap() {
  if (reader_.joinable()) reader_.join();
}

void ChildProcess::start(const std::vector<std::string>& argv, std::function<void()> on_done) {
  reap();  // the previous program's thread has ended (running() was false) or ends now
  auto fail = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = Finished{-1, "", why};
    if (on_done) on_done();
  };
  if (argv.empty()) return fail("no program given");
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    for (int fd : {out[0], out[1], err[0], err[1]})
      if (fd >= 0) close(fd);
    return fail("cannot create a pipe: " + why);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    return fail("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = true;
    pid_ = pid;
    done_.reset();
  }
  reader_ = std::thread([this, pid, fo = out[0], fe = err[0], on_done = std::move(on_done)] {
    Finished f;
    pollfd fds[2] = {{fo, POLLIN, 0}, {fe, POLLIN, 0}};
    int open = 2;
    char buf[4096];
    while (open > 0) {
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        const ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          if (n < 0 && errno == EINTR) continue;
          close(fds[i].fd);
          fds[i].fd = -1;
          --open;
          continue;
        }
        std::string& dst = i == 0 ? f.out : f.err;
        if (dst.size() < kMaxOutput)
          dst.append(buf, std::min(static_cast<size_t>(n), kMaxOutput - dst.size()));
      }
    }
    for (const pollfd& p : fds)
      if (p.fd >= 0) close(p.fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    f.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    // posix_spawnp reports a missing program through the child's exit status 127 (glibc): say so.
    if (f.exit_status == 127 && f.err.empty()) f.err = "program not found";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = false;
      pid_ = -1;
      done_ = std::move(f);
    }
    if (on_done) on_done();
  });
}

}  // namespace qc::gui
