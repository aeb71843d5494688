#include "model/row_parallel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace qc {

int default_writer_threads() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

Status for_row_chunks(int64_t rows, int n_threads,
                      const std::function<Status(int64_t first, int64_t end)>& fn) {
  if (rows <= 0) return {};
  const int64_t threads = std::clamp<int64_t>(n_threads, 1, rows);
  if (threads == 1) return fn(0, rows);
  // 32 ranges per thread. Every tensor ends in a tail where threads that took no last range wait for
  // those that did: about half a range per thread, so 1/64 of a tensor's time here (with 8 ranges per
  // thread it was 1/16, ~6% of qwenchat-mkmodel's run at 16 threads, where each of the 27b preset's ~800
  // tensors is a barrier). Still large enough that the counter is touched rarely: a range of a 27b
  // q4_k_m projection is ~34 rows of 5120 values, ~2.5 ms of encoding.
  const int64_t chunk = std::max<int64_t>(1, rows / (threads * 32));
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  int64_t failed_first = rows;  // requires mutex: the lowest range start that failed
  Status failed;                // requires mutex
  auto worker = [&] {
    for (;;) {
      const int64_t first = next.fetch_add(chunk);
      if (first >= rows) return;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (first > failed_first) return;  // every range below the failure has been handed out already
      }
      Status s = fn(first, std::min(rows, first + chunk));
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first < failed_first) {
          failed_first = first;
          failed = std::move(s);
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return failed;
}

Status encode_matrix(DType t, const float* x, uint8_t* out, int64_t rows, int64_t cols, int n_threads) {
  const uint64_t row_bytes = dtype_bytes(t, static_cast<uint64_t>(cols));
  return for_row_chunks(rows, n_threads, [&](int64_t first, int64_t end) -> Status {
    for (int64_t r = first; r < end; ++r) {
      const Status s = encode_values(t, x + r * cols, out + static_cast<uint64_t>(r) * row_bytes, cols);
      if (!s.ok()) return make_error("row " + std::to_string(r) + ": " + s.error().message, s.error().hint);
    }
    return Status{};
  });
}

}  // namespace qc
