// GGUF Q8_0 -> split layout (layout.h). Runs on the host once per weight at load time: a copy with a
// stride change, so its cost is one pass over the file's bytes.
#include <cstring>
#include <string>

#include "layout.h"

namespace qc::gpu {

GpuStatus repack_q8_0(const uint8_t* gguf, int64_t rows, int64_t cols, int8_t* q_out, uint16_t* d_out) {
  QC_GPU_REQUIRE(gguf && q_out && d_out, "repack_q8_0: null pointer argument");
  QC_GPU_REQUIRE(rows > 0 && cols > 0, "repack_q8_0: expected a non-empty matrix, got " +
                                           std::to_string(rows) + " x " + std::to_string(cols));
  QC_GPU_REQUIRE(cols % kQBlock == 0,
                 "repack_q8_0: cols must be a multiple of 32, got " + std::to_string(cols));
  QC_GPU_REQUIRE(cols <= (int64_t{1} << 30), "repack_q8_0: cols too large: " + std::to_string(cols));
  const int64_t blocks = cols / kQBlock;
  const int64_t stride = q8_row_stride(static_cast<int>(cols));
  constexpr int64_t kBlockBytes = 2 + kQBlock;  // f16 scale first, then 32 int8
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = gguf + r * blocks * kBlockBytes;
    int8_t* q = q_out + r * stride;
    uint16_t* d = d_out + r * blocks;
    for (int64_t b = 0; b < blocks; ++b) {
      std::memcpy(&d[b], src + b * kBlockBytes, 2);
      std::memcpy(q + b * kQBlock, src + b * kBlockBytes + 2, kQBlock);
    }
    if (stride > cols) std::memset(q + cols, 0, static_cast<size_t>(stride - cols));
  }
  return GpuStatus::success();
}

}  // namespace qc::gpu
