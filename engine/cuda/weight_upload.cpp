#include "cuda/weight_upload.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace qc::cuda {

Status UploadSource::init(size_t staging_bytes) {
  cap_ = staging_bytes;
  for (int i = 0; i < 2; ++i) {
    QC_TRY(buf_[i].allocate(cap_, "weight upload staging buffer"));
    QC_TRY(done_[i].create(cudaEventDisableTiming));
  }
  return Status::success();
}

Result<uint8_t*> UploadSource::acquire() {
  if (used_[cur_]) QC_CU(cudaEventSynchronize(done_[cur_].get()));
  return static_cast<uint8_t*>(buf_[cur_].get());
}

Status UploadSource::release(cudaStream_t s) {
  QC_CU(cudaEventRecord(done_[cur_].get(), s));
  used_[cur_] = true;
  cur_ ^= 1;
  return Status::success();
}

Status UploadSource::fill(const TensorSlot& t, cudaStream_t s) {
  if (!t.src || !t.src->present())
    return make_error("CUDA upload: " + t.name + " has no data in the file view");
  const TensorView& v = *t.src;
  if (v.rows != t.rows || v.cols != t.cols)
    return make_error("CUDA upload: " + t.name + ": expected [" + std::to_string(t.rows) + "][" +
                      std::to_string(t.cols) + "], got [" + std::to_string(v.rows) + "][" +
                      std::to_string(v.cols) + "]");
  const int64_t rows = v.rows, cols = v.cols;
  switch (t.kind) {
    case TensorSlot::Kind::kQ8: {
      if (v.type != DType::kQ8_0) return make_error("CUDA upload: " + t.name + ": expected Q8_0 data");
      const size_t q_row = static_cast<size_t>(t.row_stride), d_row = static_cast<size_t>(cols / 32) * 2;
      const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(cap_ / (q_row + d_row)));
      if (q_row + d_row > cap_)
        return make_error("CUDA upload: " + t.name + ": a row exceeds the staging buffer");
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t n = std::min(chunk, rows - r0);
        QC_ASSIGN(uint8_t * buf, acquire());
        auto* q = reinterpret_cast<int8_t*>(buf);
        auto* d = reinterpret_cast<uint16_t*>(buf + static_cast<size_t>(n) * q_row);
        const gpu::GpuStatus st = gpu::repack_q8_0(v.row(r0), n, cols, q, d);
        if (!st.ok()) return make_error("CUDA upload: " + t.name + ": " + st.describe());
        QC_CU(cudaMemcpyAsync(t.q + static_cast<size_t>(r0) * q_row, q, static_cast<size_t>(n) * q_row,
                              cudaMemcpyHostToDevice, s));
        QC_CU(cudaMemcpyAsync(t.d + static_cast<size_t>(r0) * (cols / 32), d, static_cast<size_t>(n) * d_row,
                              cudaMemcpyHostToDevice, s));
        QC_TRY(release(s));
      }
      return Status::success();
    }
    case TensorSlot::Kind::kDense:
    case TensorSlot::Kind::kBlock: {  // both as the file stores them, row after row
      if (v.type != t.type) return make_error("CUDA upload: " + t.name + ": storage type mismatch");
      const size_t row = v.row_bytes();
      const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(cap_ / row));
      if (row > cap_) return make_error("CUDA upload: " + t.name + ": a row exceeds the staging buffer");
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t n = std::min(chunk, rows - r0);
        QC_ASSIGN(uint8_t * buf, acquire());
        std::memcpy(buf, v.row(r0), static_cast<size_t>(n) * row);
        QC_CU(cudaMemcpyAsync(static_cast<uint8_t*>(t.data) + static_cast<size_t>(r0) * row, buf,
                              static_cast<size_t>(n) * row, cudaMemcpyHostToDevice, s));
        QC_TRY(release(s));
      }
      return Status::success();
    }
    case TensorSlot::Kind::kF32Vector: {
      const size_t row = static_cast<size_t>(cols) * sizeof(float);
      const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(cap_ / row));
      if (row > cap_) return make_error("CUDA upload: " + t.name + ": a row exceeds the staging buffer");
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t n = std::min(chunk, rows - r0);
        QC_ASSIGN(uint8_t * buf, acquire());
        auto* f = reinterpret_cast<float*>(buf);
        for (int64_t r = 0; r < n; ++r) v.decode(r0 + r, f + r * cols);
        QC_CU(cudaMemcpyAsync(static_cast<float*>(t.data) + static_cast<size_t>(r0) * cols, f,
                              static_cast<size_t>(n) * row, cudaMemcpyHostToDevice, s));
        QC_TRY(release(s));
      }
      return Status::success();
    }
  }
  return make_error("CUDA upload: " + t.name + ": unknown slot kind");
}

}  // namespace qc::cuda
