// A program run off the UI thread with its output collected (the desktop's file dialog: zenity, kdialog).
// start() spawns it and returns at once; a thread of its own reads stdout and stderr until they close and
// reaps the process; the frame loop polls take() once per frame, so a dialog left open never blocks a frame.
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace qc::gui {

class ChildProcess {
 public:
  struct Finished {
    int exit_status = -1;  // -1: could not be started, or ended by a signal
    std::string out, err;  // stdout and stderr (each capped at 64 KiB)
  };

  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // A program still running is sent SIGTERM and reaped.
  ~ChildProcess();

  // Runs argv (argv[0] looked up on PATH), stdin from /dev/null. `on_done` (may be empty) is called on the
  // reader thread when the program has ended: the app wakes its frame loop there. A program that cannot be
  // started finishes at once with status -1 and the reason in err. One program at a time.
  void start(const std::vector<std::string>& argv, std::function<void()> on_done = {});
  bool running() const;
  // The result, once, after the program ended.
  std::optional<Finished> take();
  void terminate();  // SIGTERM to a running program (its result then arrives as usual)

 private:
  void reap();

  mutable std::mutex mutex_;
  std::optional<Finished> done_;  // requires mutex_
  bool running_ = false;          // requires mutex_
  pid_t pid_ = -1;                // requires mutex_
  std::thread reader_;
};

}  // namespace qc::gui
