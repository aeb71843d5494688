// A small fork-join pool owned by one reference backend (no globals). parallel_for splits [0, n) into
// size() contiguous ranges, one per thread, the caller running the first. Every index is handled by
// exactly one thread with the same code, so results do not depend on the thread count: this is what
// makes the reference bit-identical across 1, 2 or 16 threads.
//
// Cost: one dispatch wakes the workers through a condition variable (a few microseconds), so callers pass
// a minimum amount of work per thread and small loops run inline on the caller.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace qc::ref {

class ThreadPool {
 public:
  // n_threads counts the caller; 0 = std::thread::hardware_concurrency().
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(begin, end, thread_index) over contiguous ranges covering [0, n). Ranges get at least
  // `min_per_thread` indices, so a small n uses fewer threads (or only the caller). Blocks until done.
  template <class F>
  void parallel_for(int64_t n, int64_t min_per_thread, F&& fn) {
    if (n <= 0) return;
    const int64_t by_work = min_per_thread > 0 ? n / min_per_thread : n;
    const int used = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(n_threads_, by_work)));
    if (used == 1) {
      fn(int64_t{0}, n, 0);
      return;
    }
    auto thunk = [](void* ctx, int64_t b, int64_t e, int t) { (*static_cast<F*>(ctx))(b, e, t); };
    run(n, used, thunk, &fn);
  }

 private:
  using Thunk = void (*)(void*, int64_t, int64_t, int);
  void run(int64_t n, int used, Thunk thunk, void* ctx);
  void worker(int index);
  // Range of thread t when n indices are split over `used` threads: the first n % used get one more.
  static void range(int64_t n, int used, int t, int64_t* begin, int64_t* end);

  int n_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_;  // workers wait here for a new job (generation_ changes)
  std::condition_variable done_cv_;   // the caller waits here until pending_ reaches 0
  // The current job; requires mutex_ to change.
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  int64_t job_n_ = 0;
  int job_used_ = 0;
  Thunk job_thunk_ = nullptr;
  void* job_ctx_ = nullptr;
};

}  // namespace qc::ref
