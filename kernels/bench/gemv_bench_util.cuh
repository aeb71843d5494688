// Helpers of qwenchat-gemv-bench beyond the shared ones (bench_util.cuh: error checks, random fills, the
// read ceiling, event timing): the schedule labels and constructors of the engine sweep.
#pragma once

#include <string>

#include "bench_util.cuh"
#include "gemv_q8.h"

#define BENCH_CHECK(stmt) QC_BENCH_CHECK(stmt)

namespace qc::bench {

// "e2 C8 R1 c4 S4 g1 t2" (engine 2: consumer warps, rows per warp, chunk, stages, blocks per SM, trigger),
// "e3 W8 R1 U8 g2 t2", "e1 R1 U4 b4"; "auto" for the launcher's choice.
inline std::string tuning_label(const qc::gpu::TileTuning& t) {
  char b[96];
  if (t.engine == 1)
    std::snprintf(b, sizeof b, "e1 R%d U%d b%d", t.rows_per_warp, t.unroll, t.blocks_per_sm);
  else if (t.engine == 2)
    std::snprintf(b, sizeof b, "e2 C%d R%d c%d S%d g%d t%d", t.warps, t.rows_per_warp, t.chunk, t.stages,
                  t.grid_per_sm, t.trigger);
  else if (t.engine == 3)
    std::snprintf(b, sizeof b, "e3 W%d R%d U%d g%d t%d", t.warps, t.rows_per_warp, t.unroll, t.grid_per_sm,
                  t.trigger);
  else
    std::snprintf(b, sizeof b, "auto");
  std::string out = b;
  if (t.grid > 0) out += " G" + std::to_string(t.grid);
  return out;
}

inline qc::gpu::TileTuning e1(int r, int u, int b) {
  qc::gpu::TileTuning t;
  t.engine = 1;
  t.rows_per_warp = r;
  t.unroll = u;
  t.blocks_per_sm = b;
  return t;
}
inline qc::gpu::TileTuning e2(int c, int r, int chunk, int stages, int g, int trig) {
  qc::gpu::TileTuning t;
  t.engine = 2;
  t.warps = c;
  t.rows_per_warp = r;
  t.chunk = chunk;
  t.stages = stages;
  t.grid_per_sm = g;
  t.trigger = trig;
  return t;
}
inline qc::gpu::TileTuning e3(int w, int r, int u, int g, int trig) {
  qc::gpu::TileTuning t;
  t.engine = 3;
  t.warps = w;
  t.rows_per_warp = r;
  t.unroll = u;
  t.grid_per_sm = g;
  t.trigger = trig;
  return t;
}

}  // namespace qc::bench
