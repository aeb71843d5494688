#include "server/event_router.h"

#include <type_traits>

namespace qc::server {

std::optional<WorkerEvent> EventChannel::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [this] { return !events_.empty(); })) return std::nullopt;
  WorkerEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

void EventChannel::push(WorkerEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  cv_.notify_one();
}

std::optional<uint64_t> generation_of(const WorkerEvent& event) {
  return std::visit(
      [](const auto& e) -> std::optional<uint64_t> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, GenerationStarted> || std::is_same_v<T, TokenDelta> ||
                      std::is_same_v<T, StatsSnapshot> || std::is_same_v<T, GenerationFinished>) {
          return e.id;
        } else {
          return std::nullopt;
        }
      },
      event);
}

std::shared_ptr<EventChannel> EventRouter::open(uint64_t id) {
  auto channel = std::make_shared<EventChannel>();
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[id] = Entry{channel, false};
  return channel;
}

void EventRouter::close(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(id); it != entries_.end()) it->second.channel.reset();
}

bool EventRouter::deliver(const WorkerEvent& event) {
  const std::optional<uint64_t> id = generation_of(event);
  if (!id) return false;
  std::shared_ptr<EventChannel> channel;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(*id);
    if (it == entries_.end()) return false;
    channel = it->second.channel;
    if (std::holds_alternative<GenerationStarted>(event)) it->second.started = true;
    if (std::holds_alternative<GenerationFinished>(event)) entries_.erase(it);
  }
  if (channel) channel->push(event);
  return true;
}

bool EventRouter::knows(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.count(id) != 0;
}

int EventRouter::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int n = 0;
  for (const auto& [id, e] : entries_) n += e.started ? 0 : 1;
  return n;
}

int EventRouter::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int n = 0;
  for (const auto& [id, e] : entries_) n += e.started ? 1 : 0;
  return n;
}

}  // namespace qc::server

namespace qc::server {

std::vector<uint64_t> EventRouter::ids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<uint64_t> out;
  for (const auto& [id, e] : entries_) out.push_back(id);
  return out;
}

}  // namespace qc::server
