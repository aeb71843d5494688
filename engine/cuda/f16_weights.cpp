#include "cuda/f16_weights.h"

#include <string>

#include "gemm_f16.h"

namespace qc::cuda {

Result<std::unique_ptr<F16Weights>> F16Weights::create(const DeviceModel& m, uint16_t* buf0, uint16_t* buf1,
                                                       size_t elems, int (*slice_rows)(int n, int k)) {
  std::unique_ptr<F16Weights> w(new F16Weights());
  w->buf_[0] = buf0;
  w->buf_[1] = buf1;
  w->elems_ = elems;
  auto add = [&](const Site& site) {
    for (const Linear& lin : site.parts) {
      if (!lin.q8) continue;
      const int step = slice_rows(lin.w.rows, lin.w.cols);
      for (int r0 = 0; r0 < lin.w.rows; r0 += step) {
        w->index_[{&lin, r0}] = w->order_.size();
        w->order_.push_back({&lin, r0, std::min(step, lin.w.rows - r0)});
      }
    }
  };
  for (const DevLayer& L : m.layers) {
    add(L.in_proj);
    add(L.out_proj);
    add(L.gate_up);
    add(L.down);
  }
  QC_CU(cudaStreamCreateWithFlags(&w->stream_, cudaStreamNonBlocking));
  for (int i = 0; i < 2; ++i) {
    QC_TRY(w->ready_[i].create(cudaEventDisableTiming));
    QC_TRY(w->free_[i].create(cudaEventDisableTiming));
  }
  return w;
}

F16Weights::~F16Weights() {
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

Status F16Weights::dequant(const Slice& sl, int buf, cudaStream_t s, PrefillProfile* profile) {
  if (static_cast<size_t>(sl.rows) * static_cast<size_t>(sl.lin->w.cols) > elems_)
    return make_error("prefill: internal: an f16 weight slice of " + std::to_string(sl.rows) + " x " +
                      std::to_string(sl.lin->w.cols) + " does not fit its buffer");
  const PhaseScope phase(profile, "f16: weight dequantisation", s);
  QC_GPU(gpu::dequant_q8_f16(sl.lin->w, sl.r0, sl.rows, buf_[buf], sl.lin->w.cols, s));
  return Status::success();
}

Status F16Weights::prefetch(size_t index, int buf, PrefillProfile* profile) {
  QC_CU(cudaStreamWaitEvent(stream_, free_[buf].get(), 0));
  QC_TRY(dequant(order_[index], buf, stream_, profile));
  QC_CU(cudaEventRecord(ready_[buf].get(), stream_));
  pending_buf_ = buf;
  pending_ = index;
  return Status::success();
}

Status F16Weights::begin(cudaStream_t s, PrefillProfile* profile) {
  if (pending_buf_ >= 0) QC_CU(cudaStreamWaitEvent(s, ready_[pending_buf_].get(), 0));
  pending_buf_ = -1;
  if (order_.empty()) return Status::success();
  // Buffer 0 may still be read by the last chunk's work on s: prefetch waits for its `free`.
  return prefetch(0, 0, profile);
}

Result<const uint16_t*> F16Weights::acquire(const Linear& lin, int r0, int rows, cudaStream_t s,
                                            PrefillProfile* profile) {
  const auto it = index_.find({&lin, r0});
  if (pending_buf_ >= 0 && it != index_.end() && it->second == pending_) {
    QC_CU(cudaStreamWaitEvent(s, ready_[pending_buf_].get(), 0));
    last_buf_ = pending_buf_;
    pending_buf_ = -1;
    return static_cast<const uint16_t*>(buf_[last_buf_]);
  }
  // Not the prefetched slice: let the prefetch finish (it writes a buffer), then dequantise in stream order.
  if (pending_buf_ >= 0) QC_CU(cudaStreamWaitEvent(s, ready_[pending_buf_].get(), 0));
  pending_buf_ = -1;
  last_buf_ = 0;
  QC_TRY(dequant(Slice{&lin, r0, rows}, last_buf_, s, profile));
  return static_cast<const uint16_t*>(buf_[last_buf_]);
}

Status F16Weights::release(const Linear& lin, int r0, cudaStream_t s, PrefillProfile* profile) {
  QC_CU(cudaEventRecord(free_[last_buf_].get(), s));
  const auto it = index_.find({&lin, r0});
  if (it == index_.end() || it->second + 1 >= order_.size()) return Status::success();
  return prefetch(it->second + 1, 1 - last_buf_, profile);
}

}  // namespace qc::cuda
