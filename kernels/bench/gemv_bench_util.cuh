// Helpers of qwenchat-gemv-bench beyond the shared ones (bench_util.cuh: error checks, random fills, the
// read ceiling, event timing): the schedule labels and constructors of the engine sweep.
#pragma once

#include <functional>
#include <string>

#include "bench_util.cuh"
#include "gemv_q8/gemv_q8.h"

#define BENCH_CHECK(stmt) QC_BENCH_CHECK(stmt)

namespace qc::bench {

// Median time (seconds) of one CUDA graph of body(0..launches-1) launched `reps` times; a body(0) warm-up
// outside the graph checks the arguments. -1 with `err` set when a launch or the stream fails.
inline double graph_time(cudaStream_t stream, int reps, int launches,
                         const std::function<qc::gpu::GpuStatus(int)>& body, std::string& err) {
  {
    const qc::gpu::GpuStatus st = body(0);
    const cudaError_t e = st.ok() ? cudaStreamSynchronize(stream) : cudaSuccess;
    if (!st.ok() || e != cudaSuccess) {
      err = st.ok() ? cudaGetErrorString(e) : st.describe();
      (void)cudaGetLastError();
      return -1.0;
    }
  }
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  BENCH_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < launches && err.empty(); ++i)
    if (const qc::gpu::GpuStatus st = body(i); !st.ok()) err = st.describe();
  BENCH_CHECK(cudaStreamEndCapture(stream, &g));
  if (!err.empty()) {
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
    return -1.0;
  }
  BENCH_CHECK(cudaGraphInstantiate(&exec, g, 0));
  const double t = time_median(stream, reps, [&] { BENCH_CHECK(cudaGraphLaunch(exec, stream)); });
  BENCH_CHECK(cudaGraphExecDestroy(exec));
  BENCH_CHECK(cudaGraphDestroy(g));
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    err = cudaGetErrorString(e);
    return -1.0;
  }
  return t;
}

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
