// The persistent-grid launch that engines 2 ("stream", gemv_q8_stream.cu) and 3 ("ring", gemv_q8_ring.cu)
// share: every block owns a contiguous run of whole work units (1 row, or a 32-row quantisation tile of the
// fused gate+up with a quantised output) and walks them once, so the grid must be resident at once (a block
// that started a wave later would finish a wave later): at most what the occupancy calculator allows for the
// kernel's threads and shared memory on the device's SMs, and balanced so that every block (and warp) gets
// the same number of rows (balanced_grid(): N = 5120 -> 128 blocks of 40 rows; 17408 -> 136 of 128).
#pragma once

#include <algorithm>
#include <string>

#include "common.cuh"

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

// The fewest blocks the grid may get; sizes what a block keeps per row (the fused gate+up's output tile)
// before the grid itself is chosen.
inline int persistent_grid_min(const PersistentGrid& g, int sms) {
  return g.grid > 0 ? std::min(g.grid, g.units) : std::min(g.units, std::max(1, sms / 2));
}

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
