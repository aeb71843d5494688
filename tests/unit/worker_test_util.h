// Test helpers for the worker: collect events until a generation or load ends, read deltas back into
// text. The wait bound is a hang guard (a stuck worker fails the test instead of blocking ctest), not a
// timing threshold: every expectation is on the events' content.
#pragma once

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "qwenchat/worker.h"

namespace qc::test {

inline constexpr std::chrono::seconds kWorkerHangGuard{120};

// Events until (and including) the first one for which `last(event)` is true; empty on a hang.
template <class Pred>
std::vector<WorkerEvent> collect_until(Worker& w, Pred last) {
  std::vector<WorkerEvent> out;
  const auto deadline = std::chrono::steady_clock::now() + kWorkerHangGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    auto e = w.wait_event(std::chrono::milliseconds(200));
    if (!e) continue;
    out.push_back(std::move(*e));
    if (last(out.back())) return out;
  }
  ADD_FAILURE() << "the worker sent no final event within the hang guard";
  return out;
}

inline std::vector<WorkerEvent> collect_load(Worker& w) {
  return collect_until(w, [](const WorkerEvent& e) {
    return std::holds_alternative<ModelLoaded>(e) || std::holds_alternative<ModelLoadFailed>(e);
  });
}

inline std::vector<WorkerEvent> collect_generation(Worker& w, uint64_t id) {
  return collect_until(w, [id](const WorkerEvent& e) {
    const auto* f = std::get_if<GenerationFinished>(&e);
    return f != nullptr && f->id == id;
  });
}

template <class T>
const T* find_event(const std::vector<WorkerEvent>& events) {
  for (const WorkerEvent& e : events) {
    if (const T* t = std::get_if<T>(&e)) return t;
  }
  return nullptr;
}

template <class T>
int count_events(const std::vector<WorkerEvent>& events) {
  int n = 0;
  for (const WorkerEvent& e : events) n += std::holds_alternative<T>(e) ? 1 : 0;
  return n;
}

// Applies TokenDeltas the way the chat view does.
struct StreamedReply {
  std::string thinking;
  std::string content;
  void apply(const TokenDelta& d) {
    thinking = d.thinking_replace ? d.thinking_delta : thinking + d.thinking_delta;
    content = d.content_replace ? d.content_delta : content + d.content_delta;
  }
};

inline GenerateCommand greedy_request(uint64_t id, const std::string& user, int max_tokens) {
  GenerateCommand g;
  g.id = id;
  g.history = {{"user", user, ""}};
  g.render.thinking = false;
  g.sampler = SamplerParams::greedy();
  g.max_new_tokens = max_tokens;
  g.reserve_tokens = 16;
  return g;
}

}  // namespace qc::test
