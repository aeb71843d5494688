// Data layouts shared by the kernels and their callers (host side, plain C++ plus the CUDA runtime types).
//
// Q8_0 "split layout": GGUF stores Q8_0 as 34-byte blocks (f16 scale, then 32 int8), which puts a 2-byte
// scale between every 32 weights and breaks 16-byte alignment. The GPU copy splits them:
//   q: int8 [rows][row_stride], row_stride = round_up(cols, 16) (padding zero), 16-byte aligned rows
//   d: f16  [rows][cols / 32] block scales (IEEE binary16 bits)
// Weight (r, k) = f16(d[r][k / 32]) * q[r][k]. Bytes read per weight are the GGUF's 34/32.
//
// Quantised activations (what norm_quant, swiglu and the GDN/attention epilogues write, what the Q8_0
// GEMVs read), for M <= 4 token rows, per 32-element block b of token m:
//   format h : a = scale[m][b] * hi[m][k]                                  hi in [-127, 127]
//   format hl: a = scale[m][b] * (hi[m][k] + lo[m][k] * kInv127)           lo in [-64, 64]
// with scale = max|a| / 127 over the block, hi = rint(a / scale), lo = rint((a / scale - hi) * 127)
// (rint = round half to even) and kInv127 = the f32 nearest 1/127. The h error is <= scale / 2, the hl
// error <= scale / 254 (plus the f32 rounding of kInv127).
#pragma once

#include <cstddef>
#include <cstdint>

#include "status.h"

namespace qc::gpu {

inline constexpr int kMaxTokens = 4;  // M: rows of activations a token-path kernel handles at once
// Rows the row-parallel kernels (RMSNorm, quantiser, SwiGLU, embedding, MTP concat) take: one block or warp
// per row or block of a row, so M only sizes the grid. The prefill path runs prompt chunks of up to this.
inline constexpr int kMaxRows = 2048;
inline constexpr int kQBlock = 32;    // elements per quantisation block (weights and activations)

inline constexpr int q8_row_stride(int cols) {
  return (cols + 15) / 16 * 16;
}

// Q8_0 weights, split layout (device pointers).
struct Q8Weights {
  const int8_t* q = nullptr;    // [rows][row_stride]
  const uint16_t* d = nullptr;  // [rows][cols / 32] f16 bits
  int rows = 0;                 // N, outputs
  int cols = 0;                 // K, inputs; multiple of 32
  int row_stride = 0;           // bytes between rows of q; multiple of 16, >= cols
};

// Quantised activations of M token rows (device pointers). `lo` is null for format h.
struct QActIn {
  const int8_t* hi = nullptr;    // [M][ld]
  const int8_t* lo = nullptr;    // [M][ld] or null
  const float* scale = nullptr;  // [M][ld_scale]
  int ld = 0;                    // elements between token rows of hi/lo; multiple of 16
  int ld_scale = 0;              // floats between token rows of scale; >= K / 32
};
// The largest finite f16. The f16 prompt path saturates its rounded activations to it (gemm_f16.h).
inline constexpr float kF16Max = 65504.0f;

struct QActOut {
  int8_t* hi = nullptr;
  int8_t* lo = nullptr;  // null: write format h only
  float* scale = nullptr;
  int ld = 0;
  int ld_scale = 0;
  QActIn in() const { return QActIn{hi, lo, scale, ld, ld_scale}; }
};

// Weight element types for the dense (non-Q8_0) paths.
enum class DenseType : uint8_t { kF32, kF16, kBF16 };

// Repack a GGUF Q8_0 matrix ([rows][cols] row-major, each row cols/32 blocks of 34 bytes) into the split
// layout on the host. `q_out` holds rows * q8_row_stride(cols) bytes (padding written as 0), `d_out`
// rows * cols / 32 values. CPU only; the caller uploads.
GpuStatus repack_q8_0(const uint8_t* gguf, int64_t rows, int64_t cols, int8_t* q_out, uint16_t* d_out);
// Bytes of the two split arrays.
inline size_t q8_split_q_bytes(int64_t rows, int64_t cols) {
  return static_cast<size_t>(rows) * static_cast<size_t>(q8_row_stride(static_cast<int>(cols)));
}
inline size_t q8_split_d_count(int64_t rows, int64_t cols) {
  return static_cast<size_t>(rows) * static_cast<size_t>(cols / kQBlock);
}

}  // namespace qc::gpu
