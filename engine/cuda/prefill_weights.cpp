// prefill_weights.h: placing and filling the resident f16 copies.
#include "cuda/prefill_weights.h"

#include <algorithm>

#include "cuda/prefill_program.h"
#include "gemm_f16.h"

namespace qc::cuda {

uint64_t prefill_f16_weight_bytes(const DeviceModel& m) {
  Carver dry;
  for_each_prefill_f16_linear(
      m, [&](const Linear& lin) { (void)dry.take<uint16_t>(static_cast<size_t>(lin.w.rows) * lin.w.cols); });
  return dry.bytes();
}

void place_prefill_f16_weights(DeviceModel& m, Carver& carver) {
  for_each_prefill_f16_linear(
      m, [&](Linear& lin) { lin.w16 = carver.take<uint16_t>(static_cast<size_t>(lin.w.rows) * lin.w.cols); });
}

Status fill_prefill_f16_weights(const DeviceModel& m, cudaStream_t stream) {
  Status st = Status::success();
  for_each_prefill_f16_linear(m, [&](const Linear& lin) {
    if (!st.ok() || !lin.w16) return;
    const int K = lin.w.cols, slice = f16_slice_rows(lin.w.rows, K);
    for (int r0 = 0; r0 < lin.w.rows && st.ok(); r0 += slice) {
      const int rows = std::min(slice, lin.w.rows - r0);
      uint16_t* out = lin.w16 + static_cast<size_t>(r0) * K;
      const gpu::GpuStatus g = gpu::dequant_q8_f16(lin.w, r0, rows, out, K, stream);
      if (!g.ok()) st = make_error("the prompt path's f16 weights: " + g.describe());
    }
  });
  return st;
}

}  // namespace qc::cuda
