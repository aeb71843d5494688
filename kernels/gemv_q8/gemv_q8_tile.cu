// The tile variants' entry ("tile" / "tile_h" and the fused gate+up): the schedule comes from the table
// (variants.h: resolve_tile_tuning), then engine 1 below runs it or the job goes to engine 2
// (gemv_q8_stream.cu) or 3 (gemv_q8_ring.cu). Engine 1, the first tile design:
//
// Why: the seed's warp-per-row kernels keep one or two 512-byte segments in flight per warp and re-read
// the activation through L1 for every row; on an H200 they reach 46-69% of the read ceiling on the
// per-layer shapes (PERFORMANCE.md). Little's law at ~4.6 TB/s and ~1 us loaded DRAM latency wants ~35 KB
// in flight per SM, continuously, from the first microsecond of the launch to the last.
//
// Schedule (block = 8 warps; a row tile = tile_rows consecutive rows, 8*R for the plain GEMV):
//  1. Before waiting on the previous kernel (programmatic dependent launch), each warp issues the loads of
//     its first U segments x R rows: weights depend on nothing, so on Hopper they stream while the previous
//     kernel drains. This is the kernel-boundary cost PERFORMANCE.md measured (~2 us per launch).
//  2. The block copies the M activation rows (and scales) into shared memory once: L2->SM traffic for the
//     activations is paid once per block, not once per warp-row.
//  3. The block walks row tiles blockIdx.x, blockIdx.x + gridDim.x, ... (persistent when the grid is
//     capped at blocks_per_sm * SMs; one tile per block when blocks_per_sm == 0). A warp handles R rows
//     at a time and issues U segments x R rows of 16-byte loads per lane before it consumes the first, so
//     U*R*512 bytes are in flight per warp (U=8, R=1: 4 KB; 16 warps/SM: 64 KB/SM).
//  4. Per lane the fold is the contract of gemv_q8_lane.cuh, so "tile" == "hl" and "tile_h" == "h" bit for
//     bit, whatever R, U, or the grid.
// Gate+up: a warp owns a row of W_gate and the same row of W_up (2R weight rows), the epilogue computes
// h = silu(g) * u and, with a quantised output, the block's tile of 32 rows forms whole quantisation blocks
// that one warp quantises from shared memory -- the FFN's middle never round-trips as f32.
#include <algorithm>

#include "gemv_q8_internal.h"
#include "gemv_q8_lane.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kStageLimit = 64 * 1024;  // stage activations in shared memory up to this many bytes
constexpr int kGateUpTile = 32;         // rows per tile for gate+up: whole quantisation blocks
static_assert(kSegBytes == kGemvSegmentWeights, "the table (variants.cpp) counts segments as the kernels do");

struct TileParams {
  const int8_t* wq0;
  const uint16_t* wd0;
  const int8_t* wq1;  // gate+up: W_up (wq0 = W_gate)
  const uint16_t* wd1;
  int n, k, w_stride;
  const int8_t* xh;
  const int8_t* xl;
  const float* xs;
  int ld, ld_s;
  float* y;  // plain: y; gate+up: the f32 h (may be null)
  int ld_y;
  const float* res;
  int ld_res;
  int8_t* oh;  // gate+up quantised output (null: none)
  int8_t* ol;
  float* os;
  int ld_o, ld_os;
  int tile_rows;
  int n_tiles;
  int stage;  // 1: copy activations to shared memory
};

template <bool kHL, int M, int R, int U, int kMats>
__global__ void __launch_bounds__(kThreads) gemv_tile_kernel(const TileParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float tile_out[kMats == 2 ? M : 1][kMats == 2 ? kGateUpTile : 1];
  constexpr int kRows = R * kMats;  // weight rows per warp pass: [gate rows..., up rows...]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nseg = num_segments(p.k);
  const int ngrp = (nseg + U - 1) / U;
  const int d_stride = p.k / kQBlock;

  int4 wv[kRows][U];
  uint16_t wsv[kRows][U];
  auto issue = [&](int row_base, int grp) {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int row = row_base + (i % R);
      const int8_t* wq = (kMats == 2 && i >= R) ? p.wq1 : p.wq0;
      const uint16_t* wd = (kMats == 2 && i >= R) ? p.wd1 : p.wd0;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int s = grp * U + u;
        const bool on = row < p.n && s < nseg && lane_active(s, lane, p.k);
        wv[i][u] = on ? load_w16(wq + static_cast<size_t>(row) * p.w_stride + s * kSegBytes + 16 * lane)
                      : make_int4(0, 0, 0, 0);
        wsv[i][u] =
            on ? __ldg(wd + static_cast<size_t>(row) * d_stride + s * kSegBlocks + lane / 2) : uint16_t{0};
      }
    }
  };

  int tile = blockIdx.x;
  const int slot0 = warp * R;
  if (tile < p.n_tiles) issue(tile * p.tile_rows + slot0, 0);  // (1) before the dependency wait

  pdl_wait();
  pdl_trigger();

  // (2) activations -> shared memory: hi [M][kp] | lo [M][kp] | scale [M][kp/32], kp = nseg * 512.
  const int8_t* xh = p.xh;
  const int8_t* xl = p.xl;
  const float* xs = p.xs;
  int ld = p.ld, ld_s = p.ld_s;
  if (p.stage) {
    const int kp = nseg * kSegBytes;
    int8_t* sh = reinterpret_cast<int8_t*>(smem);
    int8_t* sl = sh + M * kp;
    float* ss = reinterpret_cast<float*>(smem + (kHL ? 2 : 1) * M * kp);
    const int vec = p.k / 16;
    for (int i = threadIdx.x; i < M * vec; i += kThreads) {
      const int m = i / vec, v = i - m * vec;
      *reinterpret_cast<int4*>(sh + m * kp + 16 * v) =
          *reinterpret_cast<const int4*>(p.xh + m * p.ld + 16 * v);
      if constexpr (kHL)
        *reinterpret_cast<int4*>(sl + m * kp + 16 * v) =
            *reinterpret_cast<const int4*>(p.xl + m * p.ld + 16 * v);
    }
    for (int i = threadIdx.x; i < M * d_stride; i += kThreads) {
      const int m = i / d_stride, b = i - m * d_stride;
      ss[m * (kp / kQBlock) + b] = p.xs[m * p.ld_s + b];
    }
    xh = sh;
    xl = sl;
    xs = ss;
    ld = kp;
    ld_s = kp / kQBlock;
  }
  __syncthreads();

  bool prefetched = true;
  for (; tile < p.n_tiles; tile += gridDim.x) {  // (3) block-uniform trip count
    for (int slot = slot0; slot < p.tile_rows; slot += kWarps * R) {
      const int row_base = tile * p.tile_rows + slot;
      float acc[M][kRows];
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int i = 0; i < kRows; ++i) acc[m][i] = 0.0f;

      for (int g = 0; g < ngrp; ++g) {
        if (!prefetched) issue(row_base, g);
        prefetched = false;
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int s = g * U + u;
          if (s < nseg && lane_active(s, lane, p.k)) {  // (4) the lane contract
            const int b = s * kSegBlocks + lane / 2;
#pragma unroll
            for (int m = 0; m < M; ++m) {
              const int4 ah = *reinterpret_cast<const int4*>(xh + m * ld + s * kSegBytes + 16 * lane);
              int4 al = ah;
              if constexpr (kHL) al = *reinterpret_cast<const int4*>(xl + m * ld + s * kSegBytes + 16 * lane);
              const float xsv = xs[m * ld_s + b];
#pragma unroll
              for (int i = 0; i < kRows; ++i)
                acc[m][i] = seg_fold(acc[m][i], seg_value<kHL>(wv[i][u], ah, al), wsv[i][u], xsv);
            }
          }
        }
      }

      // Epilogue: every lane holds every sum after the butterfly; lane (m*R + r) writes.
#pragma unroll
      for (int m = 0; m < M; ++m) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const int row = row_base + r;
          if constexpr (kMats == 1) {
            const float v = warp_sum(acc[m][r]);
            if (lane == ((m * R + r) & 31) && row < p.n)
              p.y[m * p.ld_y + row] = p.res ? __fadd_rn(v, p.res[m * p.ld_res + row]) : v;
          } else {
            const float g = warp_sum(acc[m][r]);
            const float u = warp_sum(acc[m][R + r]);
            const float h = __fmul_rn(silu(g), u);
            if (lane == 0 && row < p.n) {
              if (p.y) p.y[m * p.ld_y + row] = h;
              if (p.oh) tile_out[m][slot + r] = h;
            }
          }
        }
      }
    }
    if constexpr (kMats == 2) {
      if (p.oh) {  // quantise the tile's 32 rows per token: one warp per token row
        __syncthreads();
        if (warp < M) {
          const int m = warp;
          const int base = tile * kGateUpTile;
          quantize_block_warp(tile_out[m][lane], p.oh + m * p.ld_o + base,
                              p.ol ? p.ol + m * p.ld_o + base : nullptr, p.os + m * p.ld_os + tile);
        }
        __syncthreads();
      }
    }
  }
}

int stage_bytes(bool hl, int m, int k) {
  const int kp = (k + kSegBytes - 1) / kSegBytes * kSegBytes;
  return (hl ? 2 : 1) * m * kp + m * (kp / kQBlock) * 4;
}

template <bool kHL, int M, int R, int U, int kMats>
cudaError_t launch_one(const TileParams& p, dim3 grid, size_t smem, cudaStream_t s, bool pdl) {
  auto kernel = gemv_tile_kernel<kHL, M, R, U, kMats>;
  // Above 48 KB the per-kernel limit must be raised; a plain attribute write, legal during stream capture
  // (FlashAttention does the same per launch inside captured decode graphs).
  if (smem > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  return launch_kernel(kernel, grid, dim3(kThreads), smem, s, pdl, p);
}

template <bool kHL, int R, int U, int kMats>
cudaError_t launch_m(const TileParams& p, int m, dim3 grid, size_t smem, cudaStream_t s, bool pdl) {
  switch (m) {
    case 1:
      return launch_one<kHL, 1, R, U, kMats>(p, grid, smem, s, pdl);
    case 2:
      return launch_one<kHL, 2, R, U, kMats>(p, grid, smem, s, pdl);
    case 3:
      return launch_one<kHL, 3, R, U, kMats>(p, grid, smem, s, pdl);
    default:
      return launch_one<kHL, 4, R, U, kMats>(p, grid, smem, s, pdl);
  }
}

template <int kMats>
cudaError_t launch_shape(const TileParams& p, bool hl, int m, const TileTuning& t, dim3 grid, size_t smem,
                         cudaStream_t s, bool pdl) {
  const int key = t.rows_per_warp * 10 + t.unroll;
  if (hl) {
    if (key == 14) return launch_m<true, 1, 4, kMats>(p, m, grid, smem, s, pdl);
    if (key == 18) return launch_m<true, 1, 8, kMats>(p, m, grid, smem, s, pdl);
    if (kMats == 1 && key == 24) return launch_m<true, 2, 4, 1>(p, m, grid, smem, s, pdl);
  } else {
    if (key == 14) return launch_m<false, 1, 4, kMats>(p, m, grid, smem, s, pdl);
    if (key == 18) return launch_m<false, 1, 8, kMats>(p, m, grid, smem, s, pdl);
    if (kMats == 1 && key == 24) return launch_m<false, 2, 4, 1>(p, m, grid, smem, s, pdl);
  }
  return cudaErrorInvalidValue;
}

int device_cc_major() {
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return 0;
  return major;
}

// The table's decision for this call (variants.cpp: resolve_tile_tuning) as a GpuStatus.
GpuStatus resolve(TileTuning& t, int m, int k, int n, int sms, bool gateup) {
  // device_cc_major() decides only engine 2's fallback to engine 3 below sm_90; like device_sm_count(), it
  // is two attribute queries, legal during stream capture.
  const std::string bad = resolve_tile_tuning(t, m, k, n, sms, gateup, device_cc_major());
  if (!bad.empty()) return GpuStatus::invalid(bad);
  return GpuStatus::success();
}

dim3 tile_grid(int n_tiles, int blocks_per_sm, int sms) {
  if (blocks_per_sm <= 0 || sms <= 0) return dim3(n_tiles);
  return dim3(std::min(n_tiles, blocks_per_sm * sms));
}

// Engine 1 on job `j` (tuning resolved): its parameters from the job, one tile of rows per block.
GpuStatus launch_engine1(const GemvJob& j, const TileTuning& t, int sms, cudaStream_t stream) {
  const bool gateup = j.mats == 2;
  const int tile_rows = gateup ? kGateUpTile : kWarps * t.rows_per_warp;
  const int n_tiles = (j.n + tile_rows - 1) / tile_rows;
  const int sbytes = stage_bytes(j.hl, j.m, j.k);
  const bool stage = sbytes <= kStageLimit;
  TileParams p{};
  p.wq0 = j.wq[0];
  p.wd0 = j.wd[0];
  p.wq1 = j.wq[1];  // gate+up only (else null)
  p.wd1 = j.wd[1];
  p.n = j.n;
  p.k = j.k;
  p.w_stride = j.w_stride;
  p.xh = j.x.hi;
  p.xl = j.x.lo;
  p.xs = j.x.scale;
  p.ld = j.x.ld;
  p.ld_s = j.x.ld_scale;
  p.y = j.y;
  p.ld_y = j.ld_y;
  p.res = j.res;  // plain only (else null)
  p.ld_res = j.ld_res;
  p.oh = j.out_q.hi;  // gate+up only (else null, ld 0)
  p.ol = j.out_q.lo;
  p.os = j.out_q.scale;
  p.ld_o = j.out_q.ld;
  p.ld_os = j.out_q.ld_scale;
  p.tile_rows = tile_rows;
  p.n_tiles = n_tiles;
  p.stage = stage ? 1 : 0;
  const dim3 grid = tile_grid(n_tiles, t.blocks_per_sm, sms);
  const size_t smem = stage ? static_cast<size_t>(sbytes) : 0;
  const cudaError_t e = gateup ? launch_shape<2>(p, j.hl, j.m, t, grid, smem, stream, j.pdl)
                               : launch_shape<1>(p, j.hl, j.m, t, grid, smem, stream, j.pdl);
  if (e != cudaSuccess)
    return GpuStatus::cuda(e, gateup ? "launch gemv_tile_kernel (gate+up)" : "launch gemv_tile_kernel",
                           __FILE__, __LINE__);
  QC_LAUNCH_CHECK(gateup ? "gemv_tile_kernel (gate+up)" : "gemv_tile_kernel", stream);
  return GpuStatus::success();
}

// The job on the engine the table chose (resolve): 1 here, 2 stream, else ring.
GpuStatus launch_job(const GemvJob& j, const TileTuning& t, int sms, cudaStream_t stream) {
  if (t.engine == 1) return launch_engine1(j, t, sms, stream);
  return t.engine == 2 ? launch_gemv_stream(j, t, sms, stream) : launch_gemv_ring(j, t, sms, stream);
}

}  // namespace

GpuStatus launch_gemv_tile(const GemvQ8Args& a, bool hl, const TileTuning& tuning, cudaStream_t stream) {
  const int sms = device_sm_count();
  TileTuning t = tuning;
  QC_GPU_TRY(resolve(t, a.m, a.w.cols, a.w.rows, sms, false));
  GemvJob j;
  j.wq[0] = a.w.q;
  j.wd[0] = a.w.d;
  j.n = a.w.rows;
  j.k = a.w.cols;
  j.w_stride = a.w.row_stride;
  j.x = a.x;
  j.hl = hl;
  j.m = a.m;
  j.y = a.y;
  j.ld_y = a.ld_y;
  j.res = a.residual;
  j.ld_res = a.ld_residual;
  j.pdl = a.pdl;
  return launch_job(j, t, sms, stream);
}

GpuStatus launch_gemv_gateup(const GemvQ8GateUpArgs& a, const TileTuning& tuning, cudaStream_t stream) {
  const int sms = device_sm_count();
  TileTuning t = tuning;
  QC_GPU_TRY(resolve(t, a.m, a.gate.cols, a.gate.rows, sms, true));
  GemvJob j;
  j.wq[0] = a.gate.q;
  j.wd[0] = a.gate.d;
  j.wq[1] = a.up.q;
  j.wd[1] = a.up.d;
  j.mats = 2;
  j.n = a.gate.rows;
  j.k = a.gate.cols;
  j.w_stride = a.gate.row_stride;
  j.x = a.x;
  j.hl = a.format == ActFormat::kHL;
  j.m = a.m;
  j.y = a.out_f32;
  j.ld_y = a.ld_out;
  j.out_q = a.out_q;
  j.pdl = a.pdl;
  return launch_job(j, t, sms, stream);
}

}  // namespace qc::gpu::detail
