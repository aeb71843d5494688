// Upload of a file's weights into the device layout: Q8_0 repacked into the split layout (repack_q8_0),
// dense and block-quantised (Q4_0 ... Q6_K) matrices copied as stored, vectors decoded to f32. Two pinned
// staging buffers alternate, so the host repacks one chunk while the copy engine moves the previous one;
// the cost is one pass over the file's bytes (page cache or disk) plus the PCIe copy.
#pragma once

#include "cuda/cuda_backend.h"

namespace qc::cuda {

class UploadSource final : public WeightSource {
 public:
  // `staging_bytes` per buffer (two of them).
  Status init(size_t staging_bytes = size_t{64} << 20);
  Status fill(const TensorSlot& slot, cudaStream_t s) override;

 private:
  Result<uint8_t*> acquire();      // the current buffer, once its previous copy has finished
  Status release(cudaStream_t s);  // marks the current buffer in use by the copies just enqueued
  PinnedBlock buf_[2];
  Event done_[2];
  bool used_[2] = {false, false};
  int cur_ = 0;
  size_t cap_ = 0;
};

}  // namespace qc::cuda
