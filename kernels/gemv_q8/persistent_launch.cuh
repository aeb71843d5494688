// The persistent-grid launch that engines 2 ("stream", gemv_q8_stream.cu) and 3 ("ring", gemv_q8_ring.cu)
// share: every block owns a contiguous run of whole work units (1 row, or a 32-row quantisation tile of the
// fused gate+up with a quantised output) and walks them once, so the grid must be resident at once (a block
// that started a wave later would finish a wave later): at most what the occupancy calculator allows for the
// kernel's threads and shared memory on the device's SMs, and balanced so that every block (and warp) gets
// the same number of rows (balanced_grid(): N = 5120 -> 128 blocks of 40 rows; 17408 -> 136 of 128).
// The two engines also share most of their kernel parameters (PersistentGemvParams), filled in one place.
#pragma once

#include <algorithm>
#include <string>

#include "common.cuh"
#include "gemv_q8_internal.h"
#include "gemv_q8_stage.cuh"

namespace qc::gpu::detail {

// Blocks of a persistent grid over `units` work units of `unit_rows` rows (N rows in all) for about `target`
// blocks, at most `max_blocks`: the count in [3/4, 5/4] x target whose busiest warp (a block's rows split
// over `warps` warps, each walking them in groups of `rows_per_warp`) carries the least above the mean; ties
// go to the count nearest `target`. (persistent_launch.cu)
int balanced_grid(int units, int unit_rows, int n, int warps, int rows_per_warp, int target, int max_blocks);

// One launch's grid request.
struct PersistentGrid {
  int units = 0;          // work units
  int unit_rows = 1;      // rows per unit
  int n = 0;              // rows in all
  int warps = 1;          // how balanced_grid sees a block: its rows split over `warps` warps ...
  int rows_per_warp = 1;  // ... each walking them `rows_per_warp` at a time (engine 2: 1 and 1)
  int grid = 0;           // TileTuning::grid: exact block count (tests, sweeps); 0 = balanced
  int grid_per_sm = 0;    // TileTuning::grid_per_sm: the balanced grid's target blocks per SM
};

// The kernel parameters engines 2 and 3 share; RingParams and StreamParams derive from it and add their own
// (the kernel still takes one struct by value).
struct PersistentGemvParams {
  const int8_t* wq0;  // matrix 0 (gate+up: W_gate), [N][w_stride] int8
  const int8_t* wq1;  // gate+up: W_up (else null)
  const uint16_t* wd0;
  const uint16_t* wd1;
  int n, k, w_stride;
  ActView x;
  float* y;  // plain: y; gate+up: the f32 silu(g)*u (may be null)
  int ld_y;
  const float* res;
  int ld_res;
  int8_t* oh;  // gate+up quantised output (null: none)
  int8_t* ol;
  float* os;
  int ld_o, ld_os;
  int unit_rows, units;  // a block owns whole units (1 row, or a 32-row quantisation tile)
  int out_off, out_ld;   // gate+up with quantised output: silu(g)*u of the block's rows, [M][out_ld] f32
  int late_trigger;      // 1: TileTuning::trigger 2 (PDL trigger once the block has issued its last load)
};

// The fewest blocks the grid may get; sizes what a block keeps per row (the fused gate+up's output tile)
// before the grid itself is chosen.
inline int persistent_grid_min(const PersistentGrid& g, int sms) {
  return g.grid > 0 ? std::min(g.grid, g.units) : std::min(g.units, std::max(1, sms / 2));
}

// Fills `p` for job `j` under tuning `t` on `sms` multiprocessors, all but p.out_off (where the output tile
// sits is the engine's shared-memory layout), and returns the grid request, balanced_grid seeing a block as
// `warps` warps each walking its rows `rows_per_warp` at a time. (persistent_launch.cu)
PersistentGrid fill_persistent_gemv(const GemvJob& j, const TileTuning& t, int sms, int warps,
                                    int rows_per_warp, PersistentGemvParams& p);

// Launches `kernel` (named `name` in errors) with `threads` threads and `smem` bytes of dynamic shared memory
// per block on the persistent grid for `g` on `sms` multiprocessors; pdl as launch_kernel().
template <class Params>
GpuStatus launch_persistent(void (*kernel)(Params), const char* name, const PersistentGrid& g, int threads,
                            int smem, int sms, cudaStream_t stream, bool pdl, const Params& p) {
  if (smem > 48 * 1024)
    QC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  QC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  const int resident = std::max(1, per_sm) * std::max(1, sms);
  const int grid_min = persistent_grid_min(g, sms);
  int grid = g.grid > 0 ? grid_min
                        : balanced_grid(g.units, g.unit_rows, g.n, g.warps, g.rows_per_warp,
                                        std::min(resident, std::max(1, g.grid_per_sm) * sms), resident);
  grid = std::max(grid, grid_min);
  const cudaError_t e = launch_kernel(kernel, dim3(grid), dim3(threads), smem, stream, pdl, p);
  if (e != cudaSuccess)
    return GpuStatus::cuda(e, (std::string("launch ") + name).c_str(), __FILE__, __LINE__);
  QC_LAUNCH_CHECK(name, stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu::detail
