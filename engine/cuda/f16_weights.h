// The f16 prompt path's weights (prefill_program.h, kernels/gemm_f16.h): every Q8_0 slice a chunk
// multiplies is dequantised to f16 into one of two buffers. The slice that follows in the program order
// (layer by layer: input projection, output projection, gate|up, down) is dequantised on a stream of its
// own while the current GEMM runs on the chunk's stream: the dequantisation streams HBM (a third of the
// path's GEMM time on its own, measured at 2048 tokens) while the GEMM computes, so they overlap.
//
// Ordering, with two events per buffer: `ready` after a dequantisation into it, `free` after the last
// GEMM that read it. The pipeline stream waits for `free` before writing a buffer; the chunk's stream
// waits for `ready` before reading it. A slice that was not the predicted one (the MTP block's, after an
// error) is dequantised on the chunk's stream in stream order, after the pending prefetch has finished.
// The bits are the same either way: dequant_q8_f16 is elementwise.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "cuda/cuda_util.h"
#include "cuda/device_model.h"
#include "cuda/prefill_profile.h"

namespace qc::cuda {

class F16Weights {
 public:
  // buf0, buf1: device buffers of `elems` f16 each (PrefillBuffers::w16); slice_rows(n, k): the rows per
  // slice of an n x k matrix (f16_slice_rows).
  static Result<std::unique_ptr<F16Weights>> create(const DeviceModel& m, uint16_t* buf0, uint16_t* buf1,
                                                    size_t elems, int (*slice_rows)(int n, int k));
  ~F16Weights();
  F16Weights(const F16Weights&) = delete;
  F16Weights& operator=(const F16Weights&) = delete;

  // Before a chunk's first slice: waits for a prefetch the last chunk left unused and prefetches the first
  // slice of the program.
  Status begin(cudaStream_t s, PrefillProfile* profile);
  // The f16 rows [r0, r0 + rows) of lin as a [rows][K] matrix, ready for work enqueued on s after the call.
  Result<const uint16_t*> acquire(const Linear& lin, int r0, int rows, cudaStream_t s, PrefillProfile* profile);
  // After the work on s that reads the slice acquire() gave is enqueued: its buffer is free once that work
  // is done, and the next slice of the program starts dequantising into the other buffer.
  Status release(const Linear& lin, int r0, cudaStream_t s, PrefillProfile* profile);

 private:
  struct Slice {
    const Linear* lin;
    int r0, rows;
  };
  F16Weights() = default;
  Status dequant(const Slice& sl, int buf, cudaStream_t s, PrefillProfile* profile);
  Status prefetch(size_t index, int buf, PrefillProfile* profile);

  std::vector<Slice> order_;                        // every slice of the main layers, in program order
  std::map<std::pair<const Linear*, int>, size_t> index_;  // (lin, r0) -> position in order_
  uint16_t* buf_[2] = {nullptr, nullptr};
  size_t elems_ = 0;
  cudaStream_t stream_ = nullptr;
  Event ready_[2], free_[2];
  int pending_buf_ = -1;  // buffer of the prefetch not yet acquired (-1: none)
  size_t pending_ = 0;    // its position in order_
  int last_buf_ = 1;      // buffer of the slice acquired last
};

}  // namespace qc::cuda
