// balanced_grid() and fill_persistent_gemv() of persistent_launch.cuh: host code, kept in a .cu file
// (balanced_grid() compiled as it was in gemv_q8_tile.cu before #11; the header's device types need nvcc).
#include <algorithm>
#include <cstdlib>

#include "persistent_launch.cuh"

namespace qc::gpu::detail {

int balanced_grid(int units, int unit_rows, int n, int warps, int rows_per_warp, int target, int max_blocks) {
  target = std::max(1, std::min(target, max_blocks));
  if (units <= target) return std::max(1, units);
  int best = target;
  double best_cost = 1e30;
  for (int g = std::max(1, target * 3 / 4); g <= std::min(units, std::min(max_blocks, target * 5 / 4)); ++g) {
    const int block_rows = std::min(n, (units + g - 1) / g * unit_rows);  // the busiest block
    const int warp_rows = (block_rows + warps - 1) / warps;
    const int warp_load = (warp_rows + rows_per_warp - 1) / rows_per_warp * rows_per_warp;
    const double cost = static_cast<double>(warp_load) * warps * g / n;  // >= 1; 1 = perfectly even
    if (cost < best_cost - 1e-9 ||
        (cost < best_cost + 1e-9 && std::abs(g - target) < std::abs(best - target))) {
      best = g;
      best_cost = cost;
    }
  }
  return best;
}

PersistentGrid fill_persistent_gemv(const GemvJob& j, const TileTuning& t, int sms, int warps,
                                    int rows_per_warp, PersistentGemvParams& p) {
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
  p.out_ld = (g.units + grid_min - 1) / grid_min * g.unit_rows;
  p.late_trigger = t.trigger == 2 ? 1 : 0;
  return g;
}

}  // namespace qc::gpu::detail
