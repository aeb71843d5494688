// The kernel settings the GUI toggles live and the worker applies between tokens (ARCHITECTURE.md,
// "Kernel variants"). Plain C++: no CUDA types, so the GUI and the CLI include it. Validated in one place,
// where it enters a backend (Backend::set_kernel_config, or the CUDA backend's construction). Speculative
// decoding is not a kernel setting: it travels with each reply (MtpOptions in GenerateCommand).
// The GEMV variants themselves (GemvVariant, ActFormat, their names and bit-identity classes) are kernel
// vocabulary: qwenchat_kernels/gemv_variant.h.
#pragma once

#include <string>

#include "qwenchat_kernels/gemv_variant.h"

namespace qc {

struct KernelConfig {
  GemvVariant gemv = GemvVariant::kTile;
  int split_k = 4;  // chunks over K for "sk" (2..16)
  // Tuning of the tile variants; 0 = the launcher's per-shape choice (kernels/gemv_q8/variants.h,
  // TileTuning).
  int tile_rows_per_warp = 0;            // 0, 1 or 2
  int tile_unroll = 0;                   // 0, 4 or 8 segments of 512 weights in flight per row (mma,
                                         // mma_h: Q8_0 blocks in flight per lane; 0 = 4)
  int tile_blocks_per_sm = -1;           // -1 = auto, 0 = one row tile per block, 1..8 = persistent grid
  // The block-format GEMV's engine for llama.cpp's K-quant and Q4_0/Q5_0 matrices (gemv_variant.h); where
  // the asked engine does not take a matrix's type, that matrix runs on the registers.
  BlockEngine block_engine = BlockEngine::kAuto;
  bool fuse_residual_norm_quant = true;  // residual add + RMSNorm + quantise in one kernel
  bool fuse_gate_up = true;              // gate and up in one launch with the SwiGLU (+quantise) epilogue
  bool cuda_graph = true;                // one captured graph replayed per token
  bool programmatic_launch = true;       // Hopper PDL: a kernel's weight prefetch overlaps the previous tail
  // Per-layer hidden-state L2 norms (the diagnostics panel), on every backend: the one home of this setting.
  // Switching it changes no output bit, so it needs no rebuild and keeps the kept states.
  bool probes = false;

  bool operator==(const KernelConfig&) const = default;

  // Empty when every field is in range, else a message naming the field, the range and the value.
  std::string validate() const {
    auto bad = [](const char* field, const char* range, int got) {
      return std::string(field) + " must be " + range + ", got " + std::to_string(got);
    };
    if (static_cast<int>(gemv) >= kGemvVariantCount)
      return bad("gemv", "a known variant", static_cast<int>(gemv));
    if (split_k < 2 || split_k > 16) return bad("split_k", "in [2, 16]", split_k);
    if (tile_rows_per_warp < 0 || tile_rows_per_warp > 2)
      return bad("tile_rows_per_warp", "0 (auto), 1 or 2", tile_rows_per_warp);
    if (tile_unroll != 0 && tile_unroll != 4 && tile_unroll != 8)
      return bad("tile_unroll", "0 (auto), 4 or 8", tile_unroll);
    if (tile_rows_per_warp == 2 && tile_unroll == 8)
      return bad("tile_unroll", "4 or auto when tile_rows_per_warp is 2", tile_unroll);
    if (static_cast<int>(block_engine) >= kBlockEngineCount)
      return bad("block_engine", "a known engine", static_cast<int>(block_engine));
    if (tile_blocks_per_sm < -1 || tile_blocks_per_sm > 8)
      return bad("tile_blocks_per_sm", "in [-1, 8]", tile_blocks_per_sm);
    return {};
  }
};

}  // namespace qc
