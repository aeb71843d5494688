// The GEMV variants of the Q8_0 family and the activation formats they read: kernel facts (each name is
// a kernel schedule in kernels/gemv_q8/*.cu), plain C++ with no CUDA types, so the settings
// (qwenchat/kernel_config.h), the GUI, the CLI and the kernels all include this one header, and the
// kernels include nothing above them.
//
// Bit-identity (what may change tokens): every Q8_0 GEMV variant folds the per-lane partial products in the
// same order (ascending 512-weight segments, one f32 accumulator per lane, then one fixed butterfly over the
// 32 lanes; kernels/gemv_q8/gemv_q8_lane.cuh holds that contract). Variants that only change the schedule
// (how many segments are in flight, how many rows a warp owns, how blocks walk the rows) therefore give the
// same bits:
//   class "h"  : h == hu == h2 == tile_h                  (single int8 activation word)
//   class "hl" : hl == hlu == hlu4 == hl2 == tile          (two-word high/low int8 activation)
// These are NOT bit-identical to anything else and are judged by their distance from the f64 oracle:
//   sk  (split-K re-associates the sum over K; deterministic because the combine runs in fixed order),
//   deq (f32 activations, a different product entirely), h-class vs hl-class (different activations),
//   mma and mma_h (exact int32 dot products per 32-weight block on tensor cores, folded per block within
//   8 K slices, then the slices added in order: kernels/gemv_q8/gemv_q8_mma.cu).
// All variants are deterministic run to run, and a GEMV over M tokens gives every token the bits of an M=1
// run (so verifying MTP drafts in one weight pass cannot move a greedy token).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qc {

// The names of a dense enum (values 0 .. N - 1, each named by `name`): parsed back, and listed for help
// texts and error messages ("a, b, c"). One spelling per value, so the settings file, the CLI and the GUI
// agree.
template <typename E, int N>
std::optional<E> parse_enum_name(std::string_view s, const char* (*name)(E)) {
  for (int i = 0; i < N; ++i)
    if (s == name(static_cast<E>(i))) return static_cast<E>(i);
  return std::nullopt;
}
template <typename E, int N>
std::string enum_name_list(const char* (*name)(E)) {
  std::string out;
  for (int i = 0; i < N; ++i) {
    if (i) out += ", ";
    out += name(static_cast<E>(i));
  }
  return out;
}

// GEMV family for Q8_0 weights (kernels/gemv_q8/*.cu). Names are the CLI/GUI spellings.
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
  kMma,     // "mma":    int8 tensor cores (mma.m16n8k32, hl): 16 rows x 8 token columns per instruction, so
            //           M = 1 .. 4 cost the same instructions; K in 8 slices (kernels/gemv_q8/gemv_q8_mma.cu)
  kMmaH,    // "mma_h":  the same with the single-word activation
};
inline constexpr int kGemvVariantCount = 13;

// The streaming design (tile, tile_h): tuned tile schedules, the fused gate+up, and the block GEMV's stream
// engine on K-quant matrices.
inline bool gemv_streaming(GemvVariant v) { return v == GemvVariant::kTile || v == GemvVariant::kTileH; }

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
    case GemvVariant::kMma:
      return "mma";
    case GemvVariant::kMmaH:
      return "mma_h";
  }
  return "?";
}

inline std::optional<GemvVariant> parse_gemv_variant(std::string_view s) {
  return parse_enum_name<GemvVariant, kGemvVariantCount>(s, gemv_variant_name);
}

// "h, hl, hu, ..." for help texts and error messages.
inline std::string gemv_variant_list() {
  return enum_name_list<GemvVariant, kGemvVariantCount>(gemv_variant_name);
}

inline ActFormat gemv_act_format(GemvVariant v) {
  switch (v) {
    case GemvVariant::kH:
    case GemvVariant::kHU:
    case GemvVariant::kH2:
    case GemvVariant::kTileH:
    case GemvVariant::kMmaH:
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

// Engines of the block-format GEMV (llama.cpp's Q4_0 .. Q6_K matrices, kernels/gemv_block.h); the Q8_0
// family above does not read it. Bits: registers and stream fold every sum in the same order (one class);
// segments (Q4_K / Q5_K only, the others stay on registers) sums in its own order, the same bits for every
// M. A K-quant model's tokens can therefore differ between segments and the other two, never between M.
// auto is its own mix: segments for the wide Q4_K / Q5_K matrices in hl (N >= 2K), registers elsewhere
// (kernels/gemv_block.h block_engine_for), so its bits are neither registers' nor segments' alone.
enum class BlockEngine : uint8_t {
  kAuto,       // the launcher's choice per matrix (kernels/gemv_block.h block_engine_for)
  kRegisters,  // a lane decodes 32-value pieces from registers (gemv_block.cu)
  kStream,     // sm_90: the bulk copy engine stages rows in a shared-memory ring (gemv_block_stream.cu)
  kSegments,   // Q4_K / Q5_K: lanes on consecutive 16-byte segments, activations shared by rows
               // (gemv_block_seg.cu)
};
inline constexpr int kBlockEngineCount = 4;

inline const char* block_engine_name(BlockEngine e) {
  switch (e) {
    case BlockEngine::kAuto:
      return "auto";
    case BlockEngine::kRegisters:
      return "registers";
    case BlockEngine::kStream:
      return "stream";
    case BlockEngine::kSegments:
      return "segments";
  }
  return "?";
}

inline std::optional<BlockEngine> parse_block_engine(std::string_view s) {
  return parse_enum_name<BlockEngine, kBlockEngineCount>(s, block_engine_name);
}

inline std::string block_engine_list() {
  return enum_name_list<BlockEngine, kBlockEngineCount>(block_engine_name);
}

}  // namespace qc
