#include "reference/thread_pool.h"

#include <algorithm>

namespace qc::ref {

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n_threads_ = n_threads;
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::range(int64_t n, int used, int t, int64_t* begin, int64_t* end) {
  const int64_t base = n / used;
  const int64_t extra = n % used;
  *begin = t * base + std::min<int64_t>(t, extra);
  *end = *begin + base + (t < extra ? 1 : 0);
}

void ThreadPool::run(int64_t n, int used, Thunk thunk, void* ctx) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_n_ = n;
    job_used_ = used;
    job_thunk_ = thunk;
    job_ctx_ = ctx;
    pending_ = used - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  int64_t b = 0;
  int64_t e = 0;
  range(n, used, 0, &b, &e);
  thunk(ctx, b, e, 0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
}

void ThreadPool::worker(int index) {
  uint64_t seen = 0;
  for (;;) {
    int64_t n = 0;
    int used = 0;
    Thunk thunk = nullptr;
    void* ctx = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      n = job_n_;
      used = job_used_;
      thunk = job_thunk_;
      ctx = job_ctx_;
    }
    // Threads beyond the ones this job uses sit it out; pending_ only counts the used ones.
    if (index >= used) continue;
    int64_t b = 0;
    int64_t e = 0;
    range(n, used, index, &b, &e);
    thunk(ctx, b, e, index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --pending_;
      if (pending_ == 0) done_cv_.notify_one();
    }
  }
}

}  // namespace qc::ref
