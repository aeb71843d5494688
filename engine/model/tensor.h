// A typed, shape-checked view of one weight inside the mapped GGUF. Weights are row-major [rows][cols]
// (GGUF shape {cols, rows}): a projection from `in` to `out` has rows = out, cols = in.
#pragma once

#include <cstdint>
#include <string>

#include "model/quant.h"

namespace qc {

struct TensorView {
  std::string name;
  DType type = DType::kF32;
  int64_t rows = 0;   // 1 for vectors
  int64_t cols = 0;   // elements per row
  const uint8_t* data = nullptr;

  bool present() const { return data != nullptr; }
  uint64_t row_bytes() const { return dtype_bytes(type, static_cast<uint64_t>(cols)); }
  uint64_t nbytes() const { return row_bytes() * static_cast<uint64_t>(rows); }
  const uint8_t* row(int64_t r) const { return data + static_cast<uint64_t>(r) * row_bytes(); }
  // Decodes row r (cols values) into f32.
  void decode(int64_t r, float* out) const { decode_row(type, row(r), out, cols); }
};

}  // namespace qc
