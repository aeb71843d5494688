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
#include "gemv_q8_internal.h"
#include "gemv_q8_stage.cuh"
#include "variants.h"

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

// The parameters engines 2 and 3 share (RingParams, StreamParams: each declares them under the same names),
// filled in one place: every field but the engine's own and out_off (where the gate+up output tile sits is
// the engine's shared-memory layout). Returns the grid request, balanced_grid seeing a block as `warps`
// warps each walking its rows `rows_per_warp` at a time. The two structs keep their own declarations: one
// shared base struct was measured to change nvcc's register allocation of the unchanged kernels (5 of 80,
// 2026-12-06), and this template leaves the compiled kernels as they are.
template <class Params>
PersistentGrid fill_persistent_gemv(const GemvJob& j, const TileTuning& t, int sms, int warps,
                                    int rows_per_warp, Params& p) {
  const bool quant = j.mats == 2 && j.out_q.hi;
  PersistentGrid g;  // (device code is C++17: no designated initialisers in .cu files)
  g.unit_rows = quant ? kQBlock : 1;
  g.units = (j.n + g.unit_rows - 1) / g.unit_rows;
  g.n = j.n;
  g.warps = warps;
  g.rows_per_warp = rows_per_warp;
  g.grid = t.grid;
  g.grid_per_sm = t.grid_per_sm;
  // The fewest blocks the grid may get (sizes the gate+up output tile before the grid is chosen).
  const int grid_min = persistent_grid_min(g, sms);
  p.wq0 = j.wq[0];
  p.wq1 = j.wq[1];
  p.wd0 = j.wd[0];
  p.wd1 = j.wd[1];
  p.n = j.n;
  p.k = j.k;
  p.w_stride = j.w_stride;
  p.x = ActView{j.x.hi, j.x.lo, j.x.scale, j.x.ld, j.x.ld_scale};
  p.y = j.y;
  p.ld_y = j.ld_y;
  p.res = j.res;
  p.ld_res = j.ld_res;
  p.oh = quant ? j.out_q.hi : nullptr;
  p.ol = quant ? j.out_q.lo : nullptr;
  p.os = quant ? j.out_q.scale : nullptr;
  p.ld_o = j.out_q.ld;
  p.ld_os = j.out_q.ld_scale;
  p.unit_rows = g.unit_rows;
  p.units = g.units;
  p.out_ld = (g.units + grid_min - 1) / grid_min * g.unit_rows;  // rows of the output tile per block
  p.late_trigger = t.trigger == 2 ? 1 : 0;
  return g;
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
