// prefill_weights.h: placing and filling the resident f16 copies.
#include "cuda/prefill_weights.h"

#include <algorithm>

#include "cuda/prefill_program.h"
#include "dequant_block.h"
#include "gemm_f16.h"

namespace qc::cuda {

gpu::GpuStatus dequant_linear_f16(const Linear& lin, int row0, int rows, uint16_t* out, int ld_out,
                                  cudaStream_t stream) {
  if (lin.format == Linear::Format::kBlock) return gpu::dequant_block_f16(lin.blocks, row0, rows, out, ld_out, stream);
  return gpu::dequant_q8_f16(lin.w, row0, rows, out, ld_out, stream);
}

uint64_t prefill_f16_weight_bytes(const DeviceModel& m) {
  Carver dry;
  for_each_prefill_f16_linear(
      m, [&](const Linear& lin) { (void)dry.take<uint16_t>(static_cast<size_t>(lin.rows) * lin.cols); });
  return dry.bytes();
}

void place_prefill_f16_weights(DeviceModel& m, Carver& carver) {
  for_each_prefill_f16_linear(
      m, [&](Linear& lin) { lin.w16 = carver.take<uint16_t>(static_cast<size_t>(lin.rows) * lin.cols); });
}

Status fill_prefill_f16_weights(const DeviceModel& m, cudaStream_t stream) {
  Status st = Status::success();
  for_each_prefill_f16_linear(m, [&](const Linear& lin) {
    if (!st.ok() || !lin.w16) return;
    const int K = lin.cols, slice = f16_slice_rows(lin.rows, K);
    for (int r0 = 0; r0 < lin.rows && st.ok(); r0 += slice) {
      const int rows = std::min(slice, lin.rows - r0);
      uint16_t* out = lin.w16 + static_cast<size_t>(r0) * K;
      const gpu::GpuStatus g = dequant_linear_f16(lin, r0, rows, out, K, stream);
      if (!g.ok()) st = make_error("the prompt path's f16 weights: " + g.describe());
    }
  });
  return st;
}

}  // namespace qc::cuda
