// Engine 3 of the tile variants, "ring": each warp streams its rows through a register ring of U segments
// that stays full from the first load to the last.
//
// Why: engine 1 issues U segments, waits for all of them, folds them, then issues the next U: between
// batches a warp has nothing in flight. Here the warp's work is one flat sequence of items (row group,
// segment) across all its rows; item t is folded while item t+U is already loading, so U*R*512 bytes are in
// flight per warp at every moment, across row boundaries too (the K = 5120 rows have only 10 segments). The
// grid is persistent and balanced (balanced_grid(): every block owns the same number of rows, every warp
// the same share of them), so all warps finish together instead of in waves. Works on every architecture
// (the fallback of engine 2 below sm_90).
//
// Lane contract (gemv_q8_lane.cuh): a warp owns whole rows, folds their segments in ascending order, and
// the partial last segment disables lanes by the same predicate: "tile" == "hl", "tile_h" == "h" bit for bit.
#include <algorithm>

#include "gemv_q8_internal.h"
#include "gemv_q8_stage.cuh"
#include "persistent_launch.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kMaxThreads = 512;

struct RingParams {
  const int8_t* wq0;
  const int8_t* wq1;
  const uint16_t* wd0;
  const uint16_t* wd1;
  int n, k, w_stride;
  ActView x;
  float* y;
  int ld_y;
  const float* res;
  int ld_res;
  int8_t* oh;
  int8_t* ol;
  float* os;
  int ld_o, ld_os;
  int unit_rows, units;
  int stage;            // 1: activations staged in shared memory (offset 0)
  int out_off, out_ld;  // gate+up with quantised output: silu(g)*u of the block's rows, [M][out_ld] f32
  int late_trigger;
};

template <bool kHL, int M, int R, int U, int kMats>
__global__ void __launch_bounds__(kMaxThreads) gemv_ring_kernel(const RingParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int kRows = kMats * R;  // weight rows per item: [gate rows..., up rows...]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const int nseg = num_segments(p.k);
  const int d_stride = p.k / kQBlock;
  const int u0 = static_cast<int>(static_cast<long long>(blockIdx.x) * p.units / gridDim.x);
  const int u1 = static_cast<int>(static_cast<long long>(blockIdx.x + 1) * p.units / gridDim.x);
  const int row0 = u0 * p.unit_rows, row1 = min(p.n, u1 * p.unit_rows);
  const int nb = row1 - row0;
  const int wr0 = row0 + warp * nb / nwarps, wr1 = row0 + (warp + 1) * nb / nwarps;  // this warp's rows
  const int T = (wr1 - wr0 + R - 1) / R * nseg;                                      // items

  int4 rw[U][kRows];
  uint16_t rs[U][kRows];
  int ir = wr0, is = 0;  // the next item to issue: rows ir.., segment is
  // Loads are unconditional (a missing row reads row wr0, an inactive lane the segment's first 16 bytes;
  // the fold skips both): a load guarded by a branch merges with a zero into the slot's registers, and the
  // first build showed the compiler then copying the ring slot at every step, which waits for the load just
  // issued -- one segment in flight per warp (docs/KERNELS.md, "GEMV engines", run 1).
  auto issue = [&](int u) {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int row = min(ir + (i % R), wr1 - 1);
      const int8_t* wq = (kMats == 2 && i >= R) ? p.wq1 : p.wq0;
      const uint16_t* wd = (kMats == 2 && i >= R) ? p.wd1 : p.wd0;
      const int off = is * kSegBytes + (lane_active(is, lane, p.k) ? 16 * lane : 0);
      rw[u][i] = load_w16(wq + static_cast<size_t>(row) * p.w_stride + off);
      rs[u][i] = __ldg(wd + static_cast<size_t>(row) * d_stride + off / kQBlock);
    }
    if (++is == nseg) {
      is = 0;
      ir += R;
    }
  };

#pragma unroll
  for (int u = 0; u < U; ++u)
    if (u < T) issue(u);  // before the dependency wait: weights only

  pdl_wait();
  if (!p.late_trigger) pdl_trigger();
  ActView x = p.x;
  if (p.stage) x = stage_acts<kHL, M>(smem, p.x, p.k, threadIdx.x, blockDim.x);
  __syncthreads();

  float* tile = reinterpret_cast<float*>(smem + p.out_off);
  float acc[M][kRows];
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int i = 0; i < kRows; ++i) acc[m][i] = 0.0f;
  int cr = wr0, cs = 0;  // the item being folded
  const int trigger_at = max(T - U, 0);
  for (int base = 0; base < T; base += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int t = base + u;
      if (t < T) {  // warp-uniform
        // Fold slot u, then refill it: the new load reuses the registers just read (no copy), and U-1 to U
        // items stay in flight.
        if (lane_active(cs, lane, p.k)) {
#pragma unroll
          for (int m = 0; m < M; ++m) {
            int4 ah, al;
            float xs;
            act_words<kHL>(x, m, cs, lane, ah, al, xs);
#pragma unroll
            for (int i = 0; i < kRows; ++i)
              acc[m][i] = seg_fold(acc[m][i], seg_value<kHL>(rw[u][i], ah, al), rs[u][i], xs);
          }
        }
        if (t + U < T) issue(u);
        if (p.late_trigger && t == trigger_at) pdl_trigger();
        if (++cs == nseg) {  // rows cr .. cr+R-1 complete: epilogue
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const int row = cr + r;
            if (row >= wr1) break;  // warp-uniform
#pragma unroll
            for (int m = 0; m < M; ++m) {
              if constexpr (kMats == 1) {
                const float v = warp_sum(acc[m][r]);
                if (lane == ((m * R + r) & 31))
                  p.y[m * p.ld_y + row] = p.res ? __fadd_rn(v, p.res[m * p.ld_res + row]) : v;
              } else {
                const float g = warp_sum(acc[m][r]);
                const float uu = warp_sum(acc[m][R + r]);
                const float h = __fmul_rn(silu(g), uu);
                if (lane == 0) {
                  if (p.y) p.y[m * p.ld_y + row] = h;
                  if (p.oh) tile[m * p.out_ld + (row - row0)] = h;
                }
              }
            }
          }
#pragma unroll
          for (int m = 0; m < M; ++m)
#pragma unroll
            for (int i = 0; i < kRows; ++i) acc[m][i] = 0.0f;
          cs = 0;
          cr += R;
        }
      }
    }
  }
  if constexpr (kMats == 2) {
    if (p.oh) {
      __syncthreads();
      quantize_tiles<M>(tile, p.out_ld, u1 - u0, row0, p.oh, p.ol, p.os, p.ld_o, p.ld_os, warp, nwarps);
    }
  }
}

using RingKernel = void (*)(RingParams);

template <bool kHL, int R, int U, int kMats>
RingKernel pick_m(int m) {
  switch (m) {
    case 1:
      return gemv_ring_kernel<kHL, 1, R, U, kMats>;
    case 2:
      return gemv_ring_kernel<kHL, 2, R, U, kMats>;
    case 3:
      return gemv_ring_kernel<kHL, 3, R, U, kMats>;
    default:
      return gemv_ring_kernel<kHL, 4, R, U, kMats>;
  }
}

template <bool kHL>
RingKernel pick(int mats, int r, int u, int m) {
  const int key = r * 10 + u;
  if (mats == 2) {
    if (key == 14) return pick_m<kHL, 1, 4, 2>(m);
    if (key == 18) return pick_m<kHL, 1, 8, 2>(m);
    return nullptr;
  }
  if (key == 14) return pick_m<kHL, 1, 4, 1>(m);
  if (key == 18) return pick_m<kHL, 1, 8, 1>(m);
  if (key == 24) return pick_m<kHL, 2, 4, 1>(m);
  return nullptr;
}

constexpr int kActStageLimit = 64 * 1024;

}  // namespace

GpuStatus launch_gemv_ring(const GemvJob& j, const TileTuning& t, int sms, cudaStream_t stream) {
  const int W = t.warps, R = t.rows_per_warp, U = t.unroll;
  QC_GPU_REQUIRE(
      W >= 1 && W * 32 <= kMaxThreads,
      "gemv ring: warps must be in [1, " + std::to_string(kMaxThreads / 32) + "], got " + std::to_string(W));
  const RingKernel kernel = j.hl ? pick<true>(j.mats, R, U, j.m) : pick<false>(j.mats, R, U, j.m);
  QC_GPU_REQUIRE(kernel != nullptr, "gemv ring: unsupported rows_per_warp=" + std::to_string(R) +
                                        " unroll=" + std::to_string(U) +
                                        "; compiled: (1,4), (1,8), (2,4) (gate+up: (1,4), (1,8))");
  const bool quant = j.mats == 2 && j.out_q.hi;
  RingParams p{};
  const PersistentGrid g = fill_persistent_gemv(j, t, sms, W, R, p);
  const int act = act_stage_bytes(j.hl, j.m, j.k);
  p.stage = act <= kActStageLimit ? 1 : 0;
  p.out_off = p.stage ? act : 0;
  const int smem = p.out_off + (quant ? j.m * p.out_ld * 4 : 0);
  return launch_persistent(kernel, "gemv_ring_kernel", g, 32 * W, smem, sms, stream, j.pdl, p);
}

}  // namespace qc::gpu::detail
