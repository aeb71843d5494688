// llama.cpp's 4/5/6-bit block formats as the CUDA kernels read them: the file's own bytes, uploaded as
// stored (no repacking: a 27B Q4_K_M keeps its 4.9 bits per weight on the card, and the decode GEMV reads
// exactly the bytes the file holds). The value layouts are those of engine/model/kquant.h (checked against
// ggml-common.h / ggml-quants.c there); block_quant.cuh decodes them on the device with the same float
// operations in the same order, so a dequantised value is the CPU reference's bit for bit.
//
// Matrix layout: [rows][row_bytes], row_bytes = cols / block_elems * block_bytes; rows are contiguous and
// start where the previous ends (the GGUF tensor's bytes). cols must be a multiple of the type's block.
#pragma once

#include <cstddef>
#include <cstdint>

// Callable from device code too (the kernels index blocks with these).
#if defined(__CUDACC__)
#define QC_BLOCK_HD __host__ __device__
#else
#define QC_BLOCK_HD
#endif

namespace qc::gpu {

enum class BlockType : uint8_t { kQ4_0, kQ5_0, kQ4_K, kQ5_K, kQ6_K };

QC_BLOCK_HD inline constexpr int block_elems(BlockType t) {
  return t == BlockType::kQ4_0 || t == BlockType::kQ5_0 ? 32 : 256;
}
QC_BLOCK_HD inline constexpr int block_bytes(BlockType t) {
  switch (t) {
    case BlockType::kQ4_0:
      return 18;
    case BlockType::kQ5_0:
      return 22;
    case BlockType::kQ4_K:
      return 144;
    case BlockType::kQ5_K:
      return 176;
    case BlockType::kQ6_K:
      return 210;
  }
  return 0;
}
inline constexpr const char* block_type_name(BlockType t) {
  switch (t) {
    case BlockType::kQ4_0:
      return "Q4_0";
    case BlockType::kQ5_0:
      return "Q5_0";
    case BlockType::kQ4_K:
      return "Q4_K";
    case BlockType::kQ5_K:
      return "Q5_K";
    case BlockType::kQ6_K:
      return "Q6_K";
  }
  return "?";
}
// Byte offsets of a block's f16 scale fields: d, and dmin (-1 where the format has none). Writers of
// synthetic blocks (the benchmarks' random weights) set these so every decoded value is finite.
QC_BLOCK_HD inline constexpr int block_d_offset(BlockType t) { return t == BlockType::kQ6_K ? 208 : 0; }
QC_BLOCK_HD inline constexpr int block_dmin_offset(BlockType t) {
  return t == BlockType::kQ4_K || t == BlockType::kQ5_K ? 2 : -1;
}
QC_BLOCK_HD inline constexpr size_t block_row_bytes(BlockType t, int64_t cols) {
  return static_cast<size_t>(cols / block_elems(t)) * static_cast<size_t>(block_bytes(t));
}

// A block-quantised matrix on the device.
struct BlockWeights {
  const uint8_t* data = nullptr;  // [rows][row_bytes]
  BlockType type = BlockType::kQ4_K;
  int rows = 0;  // N, outputs
  int cols = 0;  // K, inputs; a multiple of block_elems(type)
  QC_BLOCK_HD size_t row_bytes() const { return block_row_bytes(type, cols); }
};

}  // namespace qc::gpu
