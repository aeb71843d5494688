// The worker thread: owns the Engine, runs commands (qwenchat/session.h) one at a time in the order they
// were posted, and reports through an event queue (qwenchat/events.h) that the UI drains once per frame.
//
// Threads: post(), stop() and drain() are called from the app's thread and never wait for the engine:
// they hold queue_mutex_/events_mutex_ only to move a command or the pending events. Everything in
// `WorkerState` (the engine) is touched by the worker thread alone.
//
// Stop: stop() cancels the generation in progress and every generation posted before the call, within
// one token (the generator consults the flag before every token and between prefill chunks). It does
// not affect commands posted after it.
//
// Settings: a generation's sampler/MTP/thinking options travel with its GenerateCommand; engine settings
// (context, threads, probes, backend) are commands of their own. Both take effect at the next generation:
// commands run in order, so one posted while a reply streams runs when that reply ends. Kernel configs
// (SetKernelConfigCommand) are the exception: a reply in progress switches at its next token boundary.
//
// Failures never end the process: engine errors, std::exception (bad_alloc) and broken files come back
// as ModelLoadFailed, GenerationFinished{error} or WorkerNotice{ok = false}.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "qwenchat/events.h"
#include "qwenchat/session.h"

namespace qc {

struct WorkerOptions {
  // Called on the worker thread after each event is queued (the UI: glfwPostEmptyEvent to wake its
  // loop). No lock is held during the call, so it may call post(), stop() or drain(); whatever it does
  // delays the engine, so it should be quick.
  std::function<void(const WorkerEvent&)> on_event;
};

class Worker {
 public:
  explicit Worker(WorkerOptions options = {});
  ~Worker();  // cancels the running generation, drops queued commands, joins the thread
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void post(WorkerCommand command);
  void stop();
  // Cancels one generation (GenerateCommand::id), queued or running, within one token; the others go
  // on. A queued one finishes without running (GenerationFinished, cancelled). Unknown or finished ids
  // are ignored. (The API server: a client that disconnects cancels only its own request.)
  void cancel(uint64_t generation_id);
  // Commands waiting in the queue, not counting the one running (a snapshot).
  size_t queued() const;

  // Every event queued since the last call, oldest first. Never waits for the worker.
  std::vector<WorkerEvent> drain();
  // Blocks until an event is available or `timeout` passes (tests and tools; the UI uses drain()).
  std::optional<WorkerEvent> wait_event(std::chrono::milliseconds timeout);

  // Commands queued or running (a snapshot: may change right after the call).
  bool busy() const;

 private:
  struct Queued {
    uint64_t seq = 0;
    WorkerCommand command;
  };
  struct State;  // the engine and what the worker knows about it (worker.cpp)

  void run();
  void execute(State& state, const Queued& q);
  // Applies the latest SetKernelConfigCommand if one is waiting (worker thread); `when` goes in the notice.
  void apply_pending_kernels(State& state, const std::string& when);
  EngineOptions engine_options(const std::string& path, BackendKind backend, const EngineSettings& s);
  void emit(WorkerEvent event);
  bool cancelled(uint64_t seq) const { return seq < stop_before_.load(std::memory_order_acquire); }
  bool generation_cancelled(uint64_t seq, uint64_t generation_id) const;

  WorkerOptions options_;

  mutable std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<Queued> queue_;      // requires queue_mutex_
  uint64_t next_seq_ = 0;         // requires queue_mutex_
  bool running_command_ = false;  // requires queue_mutex_
  bool quit_ = false;             // requires queue_mutex_
  // The generation running (valid while running_generation_ is set) and ids cancel() marked; an id
  // leaves the set when its generation ends, so the set holds only queued or running ones.
  std::optional<uint64_t> running_generation_;   // requires queue_mutex_
  std::unordered_set<uint64_t> cancelled_ids_;   // requires queue_mutex_

  std::mutex events_mutex_;
  std::condition_variable events_cv_;
  std::deque<WorkerEvent> events_;  // requires events_mutex_

  // Generations with a sequence number below this are cancelled (set by stop() and the destructor).
  std::atomic<uint64_t> stop_before_{0};

  std::mutex kernels_mutex_;
  KernelConfig pending_kernels_;              // requires kernels_mutex_
  std::atomic<bool> kernels_pending_{false};  // set with pending_kernels_, cleared when it is taken

  std::thread thread_;  // last: starts after every member above is constructed
};

}  // namespace qc
