// The Q8_0 GEMV family's one table: for every GemvVariant, which kernel runs it, and for the tile variants,
// which engine with which schedule per shape (variants.cpp holds the data; gemv_q8.cpp and gemv_q8_tile.cu
// only look it up). Plain C++ (no CUDA types), so a host unit test (tests/unit/test_gemv_table.cpp) pins
// every choice without a GPU.
//
// Nothing here changes bits: every kernel and every schedule keeps the lane contract of gemv_q8_lane.cuh
// ("tile" == "hl", "tile_h" == "h", and a token's result never depends on the other M-1 rows). The table
// decides speed only.
#pragma once

#include <cstdint>
#include <string>

#include "qwenchat_kernels/gemv_variant.h"

namespace qc::gpu {

// Weights per segment, the unit every Q8_0 GEMV loads per warp (kSegBytes in gemv_q8_lane.cuh, which checks
// that the two agree); the table's shape classes count a row's segments.
inline constexpr int kGemvSegmentWeights = 512;

// Schedule of the tile variants. 0 / -1 = chosen per shape by the launcher (tile_tuning_for()). Every engine
// and every setting below keeps the lane contract of gemv_q8_lane.cuh: "tile" == "hl" and "tile_h" == "h" bit
// for bit, and a token's result never depends on the other M-1 rows.
// Production sets only the first three fields (KernelConfig's tile_* settings); the rest are the table's
// values and the sweeps' knobs (kernels/bench/gemv_bench.cu, tests/gpu/test_gemv_q8.cpp).
struct TileTuning {
  int rows_per_warp = 0;   // rows of W per warp (the activation word is read once for all of them): engine 1:
                           // 1 or 2; engine 2: 1, 2 or 4 (gate+up 1 or 2); engine 3: 1 or 2
  int unroll = 0;          // engine 1: 4 or 8 segments (512 weights each) issued per row before the first is
                           // used; engine 3: the register ring's length (4 or 8 segments in flight per row);
                           // mma / mma_h: Q8_0 blocks in flight per lane (4 or 8; 0 = 4); their `engine`:
                           // 0 = 1, 1 register batches, 3 register ring, 4 register batches with lean
                           // loads, 2 shared-memory stages (`stages` 2 or 3, 0 = 2); `grid`, `grid_per_sm`
                           // as engines 2, 3 (gemv_q8_mma.cu)
  int blocks_per_sm = -1;  // engine 1: 0 = one row tile per block, k > 0 = persistent grid of k blocks per SM
  // Engines (added after the first H200 measurements; docs/KERNELS.md "GEMV engines"). An explicit `unroll`
  // or `blocks_per_sm >= 0` with engine 0 selects engine 1 (what those two fields always meant).
  int engine = 0;  // 0 auto; 1 "batch": each warp issues U segments, then consumes them (the first tile
                   // design); 2 "stream": a producer warp streams row chunks into a ring of shared-memory
                   // stages with bulk copies (sm_90; engine 3 elsewhere); 3 "ring": each warp keeps a
                   // register ring of U segments continuously in flight
  int warps = 0;   // engines 2, 3: warps per block doing dot products (engine 2: consumers, + 1 producer)
  int chunk = 0;   // engine 2: segments per row per stage; >= the row's segments (64 always is): whole
                   // rows, one bulk copy per matrix per stage (the faster form)
  int stages = 0;  // engine 2: stages in the ring
  int grid_per_sm = 0;  // engines 2, 3: blocks per SM of the persistent grid (the exact count is chosen so
                        // that every block gets the same number of rows)
  int grid = 0;         // engines 2, 3: exact number of blocks (overrides grid_per_sm; tests, sweeps)
  int trigger = 0;  // engines 2, 3, PDL launches: 1 = let the next kernel launch right after the dependency
                    // wait; 2 = only once this block has issued its last weight load
};

// Schedule of the warp-per-row kernels (gemv_q8_rows.cu).
struct RowsShape {
  bool hl = false;
  int rows_per_warp = 1;  // 1 or 2
  int unroll = 1;         // 1, 2 or 4 (4 only with hl, rows_per_warp 1)
  int split_k = 1;        // > 1: partial sums to args.split_scratch, then the fixed-order combine
};

// The kernel file that runs a variant.
enum class GemvKernel : uint8_t {
  kRows,  // gemv_q8_rows.cu, with the entry's RowsShape
  kDeq,   // gemv_q8_deq.cu (f32 activations)
  kTile,  // gemv_q8_tile.cu: engine 1, 2 or 3 per shape (tile_tuning_for), activations h or hl
  kMma,   // gemv_q8_mma.cu: int8 tensor cores, activations h or hl
};

// One row of the variant table.
struct GemvVariantEntry {
  GemvVariant variant = GemvVariant::kTile;
  GemvKernel kernel = GemvKernel::kTile;
  RowsShape rows{};           // kRows: the schedule
  bool split_over_k = false;  // kRows: rows.split_k is the caller's GemvQ8Args::split_k (variant sk)
  bool hl = true;             // kTile, kMma: the two-word activations (tile, mma) or the single word
};
// The entry of `v` (the table is in variants.cpp); null for a value outside the enum.
const GemvVariantEntry* gemv_variant_entry(GemvVariant v);

// The launcher's choice for a shape (M tokens, K inputs, N outputs) on `sm_count` multiprocessors: the
// measured winners per shape class (variants.cpp, docs/KERNELS.md), engine and its fields filled in.
TileTuning tile_tuning_for(int m, int k, int n, int sm_count);
// The fused gate+up's choice (two matrices per row; a quantised output needs whole 32-row tiles per block).
TileTuning gateup_tuning_for(int m, int k, int n, int sm_count);
// An engine's own defaults for a shape, used when the caller picks an engine other than the table's choice
// (KernelConfig's tile_unroll / tile_blocks_per_sm select engine 1; sweeps pick any; engine 2 falls back to
// engine 3 below sm_90).
TileTuning engine_defaults(int engine, int m, int k, bool gateup);

// What the tile entry runs for a requested tuning: fills the auto fields of `t` from the table (or the chosen
// engine's defaults) and checks engine 1's combination against the compiled set. `cc_major`: the device's
// compute capability (engine 2 needs 9). Returns "" or the error message.
std::string resolve_tile_tuning(TileTuning& t, int m, int k, int n, int sms, bool gateup, int cc_major);

}  // namespace qc::gpu
