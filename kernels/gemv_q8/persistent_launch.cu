// balanced_grid() of persistent_launch.cuh: host code, kept in a .cu file (compiled as it was in
// gemv_q8_tile.cu before #11).
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

}  // namespace qc::gpu::detail
