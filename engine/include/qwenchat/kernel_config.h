// The kernel settings the GUI toggles live and the worker applies between tokens (ARCHITECTURE.md,
// "Kernel variants"). Plain C++: no CUDA types, so the GUI, the CLI and the kernels library all include it.
//
// Bit-identity (what may change tokens): every Q8_0 GEMV variant folds the per-lane partial products in the
// same order (ascending 512-weight segments, one f32 accumulator per lane, then one fixed butterfly over the
// 32 lanes; kernels/gemv_q8_lane.cuh holds that contract). Variants that only change the schedule (how many
// segments are in flight, how many rows a warp owns, how blocks walk the rows) therefore give the same bits:
//   class "h"  : h == hu == h2 == tile_h                  (single int8 activation word)
//   class "hl" : hl == hlu == hlu4 == hl2 == tile          (two-word high/low int8 activation)
// These are NOT bit-identical to anything else and are judged by their distance from the f64 oracle:
//   sk  (split-K re-associates the sum over K; deterministic because the combine runs in fixed order),
//   deq (f32 activations, a different product entirely), and h-class vs hl-class (different activations).
// All variants are deterministic run to run, and a GEMV over M tokens gives every token the bits of an M=1
// run (so verifying MTP drafts in one weight pass cannot move a greedy token).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qc {

// GEMV family for Q8_0 weights (kernels/gemv_q8*.cu). Names are the CLI/GUI spellings.
enum class GemvVariant : uint8_t {
  kH,       // "h":      one warp per row, single int8 activation word, one 512-weight segment in flight
  kHL,      // "hl":     same with the two-word (high/low) activation: ~14-bit activations, 2x dp4a
  kHU,      // "hu":     h with two segments in flight per warp
  kHLU,     // "hlu":    hl with two segments in flight
  kHLU4,    // "hlu4":   hl with four segments in flight
  kH2,      // "h2":     h with two rows per warp (activation loaded once for both)
  kHL2,     // "hl2":    hl with two rows per warp
  kSplitK,  // "sk":     hl split over K into `split_k` chunks + fixed-order combine kernel
  kDeq,     // "deq":    f32 activations, weights dequantised in registers
  kTile,    // "tile":   the streaming design (hl): rows per warp x segments in flight tuned per shape,
            //           activations staged in shared memory once per block, persistent row walk,
            //           weight prefetch before the programmatic-launch wait
  kTileH,   // "tile_h": the same with the single-word activation
};
inline constexpr int kGemvVariantCount = 11;

// Activation format a variant consumes; the norm/quant producers write this format.
enum class ActFormat : uint8_t { kH, kHL, kF32 };

inline const char* gemv_variant_name(GemvVariant v) {
  switch (v) {
    case GemvVariant::kH:
      return "h";
    case GemvVariant::kHL:
      return "hl";
    case GemvVariant::kHU:
      return "hu";
    case GemvVariant::kHLU:
      return "hlu";
    case GemvVariant::kHLU4:
      return "hlu4";
    case GemvVariant::kH2:
      return "h2";
    case GemvVariant::kHL2:
      return "hl2";
    case GemvVariant::kSplitK:
      return "sk";
    case GemvVariant::kDeq:
      return "deq";
    case GemvVariant::kTile:
      return "tile";
    case GemvVariant::kTileH:
      return "tile_h";
  }
  return "?";
}

inline std::optional<GemvVariant> parse_gemv_variant(std::string_view s) {
  for (int i = 0; i < kGemvVariantCount; ++i) {
    const auto v = static_cast<GemvVariant>(i);
    if (s == gemv_variant_name(v)) return v;
  }
  return std::nullopt;
}

// "h, hl, hu, ..." for help texts and error messages.
inline std::string gemv_variant_list() {
  std::string out;
  for (int i = 0; i < kGemvVariantCount; ++i) {
    if (i) out += ", ";
    out += gemv_variant_name(static_cast<GemvVariant>(i));
  }
  return out;
}

inline ActFormat gemv_act_format(GemvVariant v) {
  switch (v) {
    case GemvVariant::kH:
    case GemvVariant::kHU:
    case GemvVariant::kH2:
    case GemvVariant::kTileH:
      return ActFormat::kH;
    case GemvVariant::kDeq:
      return ActFormat::kF32;
    default:
      return ActFormat::kHL;
  }
}

// Variants in one class produce identical bits (see the top of this file). 0 = class "h", 1 = class
// "hl"; every other variant is its own class (2 + its enum value).
inline int gemv_identity_class(GemvVariant v) {
  switch (v) {
    case GemvVariant::kH:
    case GemvVariant::kHU:
    case GemvVariant::kH2:
    case GemvVariant::kTileH:
      return 0;
    case GemvVariant::kHL:
    case GemvVariant::kHLU:
    case GemvVariant::kHLU4:
    case GemvVariant::kHL2:
    case GemvVariant::kTile:
      return 1;
    default:
      return 2 + static_cast<int>(v);
  }
}
inline bool gemv_bit_identical(GemvVariant a, GemvVariant b) {
  return gemv_identity_class(a) == gemv_identity_class(b);
}

struct KernelConfig {
  GemvVariant gemv = GemvVariant::kTile;
  int split_k = 4;  // chunks over K for "sk" (2..16)
  // Tuning of the tile variants; 0 = the launcher's per-shape choice (kernels/gemv_q8.h, TileTuning).
  int tile_rows_per_warp = 0;            // 0, 1 or 2
  int tile_unroll = 0;                   // 0, 4 or 8 segments of 512 weights in flight per row
  int tile_blocks_per_sm = -1;           // -1 = auto, 0 = one row tile per block, 1..8 = persistent grid
  bool fuse_residual_norm_quant = true;  // residual add + RMSNorm + quantise in one kernel
  bool fuse_gate_up = true;              // gate and up in one launch with the SwiGLU (+quantise) epilogue
  bool cuda_graph = true;                // one captured graph replayed per token
  bool programmatic_launch = true;       // Hopper PDL: a kernel's weight prefetch overlaps the previous tail
  bool mtp = false;                      // speculative decoding with the MTP block
  int mtp_draft = 1;                     // draft tokens per step (1..3: verification runs M = draft+1 <= 4)
  bool probes = false;                   // per-layer hidden-state L2 norms

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
    if (tile_blocks_per_sm < -1 || tile_blocks_per_sm > 8)
      return bad("tile_blocks_per_sm", "in [-1, 8]", tile_blocks_per_sm);
    if (mtp_draft < 1 || mtp_draft > 3) return bad("mtp_draft", "in [1, 3]", mtp_draft);
    return {};
  }
};

}  // namespace qc
