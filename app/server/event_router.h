// Hands the worker's events to the HTTP request that owns each generation. The worker has one event
// stream; the server's requests (and, in the GUI, the chat view) each own some generation ids. A request
// opens a channel for its id before posting the command and reads its events from there; a request that
// ends early (the client went away) closes the channel, and the rest of that generation's events are
// dropped. Thread-safe: deliver() runs on the thread feeding worker events, next() on HTTP threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "qwenchat/events.h"

namespace qc::server {

class EventChannel {
 public:
  // The next event, or nothing after `timeout`.
  std::optional<WorkerEvent> next(std::chrono::milliseconds timeout);
  void push(WorkerEvent event);

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<WorkerEvent> events_;  // requires mutex_
};

// The generation id an event belongs to; nothing for model and notice events.
std::optional<uint64_t> generation_of(const WorkerEvent& event);

class EventRouter {
 public:
  std::shared_ptr<EventChannel> open(uint64_t id);
  // Stops delivering to the channel; the id stays known until its GenerationFinished passes.
  void close(uint64_t id);
  // True when the event belongs to a generation opened here (delivered, or dropped after close()).
  bool deliver(const WorkerEvent& event);
  // True when `id` was opened here and its GenerationFinished has not passed yet.
  bool knows(uint64_t id) const;
  // Generations opened here that have not started / that run (GenerationStarted seen, not finished).
  int waiting() const;
  int running() const;
  std::vector<uint64_t> ids() const;  // every generation opened here and not finished

 private:
  struct Entry {
    std::shared_ptr<EventChannel> channel;  // null after close()
    bool started = false;
  };
  mutable std::mutex mutex_;
  std::map<uint64_t, Entry> entries_;  // requires mutex_
};

}  // namespace qc::server
