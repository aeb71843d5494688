// "mma" / "mma_h": the Q8_0 GEMV on int8 tensor cores, for M = 1 .. 4 token rows at the cost of one.
//
// Why: the dp4a variants spend per weight byte M times the integer work and M times the activation reads
// (2M for hl), so an M = 4 verification pass costs 1.5-2x a one-token pass (PERFORMANCE.md). One
// mma.m16n8k32 takes 16 weight rows x one Q8_0 block against 8 token columns: the tokens ride in columns
// the instruction computes anyway, and M = 1 .. 4 issue the same instructions.
//
// Numerics (the contract; each variant is its own bit-identity class, gemv_variant.h). Per row n, token m:
// K's Q8_0 blocks are cut into kSlices = 8 contiguous slices of ceil(nb / 8) blocks (nb = K / 32; the last
// slices may be short or empty), and per slice s
//     p_s = 0; for each block b of the slice, ascending:
//       ih = sum_k hi[m][32b+k] q[n][32b+k]   il = sum_k lo[m][32b+k] q[n][32b+k]   (int32, exact)
//       v  = hl ? fmaf((float)il, kInv127, (float)ih) : (float)ih
//       p_s = fmaf(v, scale[m][b] * f16(d[n][b]), p_s)        (the product rounded to f32 first)
//     y = ((p_0 + p_1) + p_2) + ... over the non-empty slices   (+ residual: residual + y, one f32 add)
// The per-block step is gemm_q8's (gemm_q8.h); the slices are what make the launch wide enough for N = 5120.
// Slices depend on K only, so a token's bits do not depend on M, on the other tokens, or on the device.
//
// Schedule: a block of 8 warps owns 16 rows; warp w walks slice w, so a row tile's K is read by 8 warps at
// once and the grid is N / 16 blocks (320 for N = 5120, 15,520 for the lm_head). Each lane keeps a ring of
// U blocks in flight (2 x 8 bytes of weights + 2 scales each), issued before the programmatic-launch wait
// for the first U. The fragments come straight from global memory, no shared-memory staging: K may be
// permuted inside a block as long as weights and activations use the same permutation, so lane (g, t)
// reads bytes [8t, 8t + 8) of the block of rows g and g + 8 (one 8-byte load each) and of token g, and
// uses the first 4 as k = 4t.. and the last 4 as k = 16 + 4t.. (mma_s8.cuh's fragments). Every 32-byte
// sector a warp touches is read whole.
//
// Cost per warp and block (512 weight bytes): 2 weight loads, 2 scale loads, 2 activation loads (h: 1),
// 1 mma (hl: 2) and ~20 f32 instructions for any M >= 2 (~12 at M = 1, where a lane folds only its column
// 0); the dp4a tile kernel's M = 4 pass issues ~60.
#include <algorithm>

#include <string>

#include "../mma_s8.cuh"
#include "gemv_q8_internal.h"
#include "gemv_q8_lane.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kSlices = kThreads / 32;  // one K slice per warp
constexpr int kTileRows = 16;           // weight rows per block: the mma's M
// Blocks in flight per lane when the caller leaves tile.unroll 0: 4 beat 8 on every 27B shape at every M
// (H100, 2026-12-07: 58-69% of the read ceiling against 40-58%; docs/PERFORMANCE.md "twelfth session").
constexpr int kDefaultRing = 4;

struct MmaParams {
  const int8_t* wq;
  const uint16_t* wd;
  int n, k, w_stride;
  const int8_t* xh;
  const int8_t* xl;  // null for format h
  const float* xs;
  int ld, ld_s;
  int m;
  float* y;
  int ld_y;
  const float* res;  // may alias y
  int ld_res;
  int per;  // blocks per slice
};

__device__ __forceinline__ uint2 load_w8(const int8_t* p) {
  uint2 r;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}

// kRing: Q8_0 blocks in flight per lane; 4 keeps the registers under 85 so that three blocks share an SM
// (all 320 blocks of an N = 5120 matrix in one wave on 132 SMs), 8 holds twice the bytes in flight but
// fits two blocks an SM, and measured slower everywhere: what limits this kernel is not the weight bytes
// in flight. A likely suspect, not yet measured: each block's activation words and scales are loaded when
// the block is consumed (L1 / L2 latency on the path to the mma), not ahead with the weights.
// kPair: M >= 2, so a lane folds both of its columns (2t, 2t + 1); at M = 1 only column 0 holds a token and
// the lanes fold half the elements (the same instructions per element: the same bits).
template <bool kHL, int kRing, bool kPair>
__global__ void __launch_bounds__(kThreads, kRing == 4 ? 3 : 2) gemv_mma_kernel(const MmaParams p) {
  __shared__ float part[kSlices][kMaxTokens][kTileRows];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int nb = p.k / kQBlock;
  const int b0 = warp * p.per;
  const int steps = max(0, min(nb, b0 + p.per) - b0);
  const int row_a = blockIdx.x * kTileRows + g, row_b = row_a + 8;
  const bool on_a = row_a < p.n, on_b = row_b < p.n;
  const int8_t* wa = p.wq + static_cast<size_t>(on_a ? row_a : 0) * p.w_stride + 8 * t;
  const int8_t* wb = p.wq + static_cast<size_t>(on_b ? row_b : 0) * p.w_stride + 8 * t;
  const uint16_t* da = p.wd + static_cast<size_t>(on_a ? row_a : 0) * nb;
  const uint16_t* db = p.wd + static_cast<size_t>(on_b ? row_b : 0) * nb;

  uint2 qa[kRing], qb[kRing];
  uint16_t sa[kRing], sb[kRing];
  auto issue = [&](int i, int slot) {
    const int b = b0 + i;
    const bool in = i < steps;
    qa[slot] = in && on_a ? load_w8(wa + b * kQBlock) : make_uint2(0, 0);
    qb[slot] = in && on_b ? load_w8(wb + b * kQBlock) : make_uint2(0, 0);
    sa[slot] = in && on_a ? __ldg(da + b) : uint16_t{0};
    sb[slot] = in && on_b ? __ldg(db + b) : uint16_t{0};
  };
#pragma unroll
  for (int u = 0; u < kRing; ++u) issue(u, u);  // weights depend on nothing: before the wait

  pdl_wait();
  pdl_trigger();

  // Token g's activation bytes (the B fragment); the scales of tokens 2t, 2t + 1 (the C fragment's columns).
  const bool tok = g < p.m;
  const int8_t* xh = p.xh + static_cast<size_t>(tok ? g : 0) * p.ld + 8 * t;
  const int8_t* xl = kHL ? p.xl + static_cast<size_t>(tok ? g : 0) * p.ld + 8 * t : nullptr;
  const int c0 = 2 * t, c1 = 2 * t + 1;
  const float* xs0 = p.xs + static_cast<size_t>(c0 < p.m ? c0 : 0) * p.ld_s;
  const float* xs1 = p.xs + static_cast<size_t>(c1 < p.m ? c1 : 0) * p.ld_s;

  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // (row g, c0), (row g, c1), (row g+8, c0), (row g+8, c1)
  for (int i0 = 0; i0 < steps; i0 += kRing) {
#pragma unroll
    for (int u = 0; u < kRing; ++u) {
      const int i = i0 + u;
      if (i < steps) {
        const int b = b0 + i;
        const uint2 ah = tok ? *reinterpret_cast<const uint2*>(xh + b * kQBlock) : make_uint2(0, 0);
        const uint32_t a[4] = {qa[u].x, qb[u].x, qa[u].y, qb[u].y};
        int dh[4], dl[4];
        mma_biased(dh, a, ah.x, ah.y);
        if constexpr (kHL) {
          const uint2 al = tok ? *reinterpret_cast<const uint2*>(xl + b * kQBlock) : make_uint2(0, 0);
          mma_biased(dl, a, al.x, al.y);
        }
        const float s0 = c0 < p.m ? xs0[b] : 0.0f, s1 = kPair && c1 < p.m ? xs1[b] : 0.0f;
        const float wsa = h2f(sa[u]), wsb = h2f(sb[u]);
        const float scale[4] = {__fmul_rn(s0, wsa), __fmul_rn(s1, wsa), __fmul_rn(s0, wsb),
                                __fmul_rn(s1, wsb)};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (!kPair && (e & 1)) continue;
          float v = unbias(dh[e]);
          if constexpr (kHL) v = __fmaf_rn(unbias(dl[e]), kInv127, v);
          acc[e] = __fmaf_rn(v, scale[e], acc[e]);
        }
        issue(i + kRing, u);
      }
    }
  }

  if (c0 < p.m) {
    part[warp][c0][g] = acc[0];
    part[warp][c0][g + 8] = acc[2];
  }
  if (c1 < p.m) {
    part[warp][c1][g] = acc[1];
    part[warp][c1][g + 8] = acc[3];
  }
  __syncthreads();
  // The fixed-order combine over the non-empty slices (a K property: the same for every block and M).
  const int r = threadIdx.x % kTileRows, m = threadIdx.x / kTileRows;
  const int row = blockIdx.x * kTileRows + r;
  if (m < p.m && row < p.n) {
    const int used = min(kSlices, (nb + p.per - 1) / p.per);
    float s = part[0][m][r];
    for (int w = 1; w < used; ++w) s = __fadd_rn(s, part[w][m][r]);
    if (p.res) s = __fadd_rn(p.res[static_cast<size_t>(m) * p.ld_res + row], s);
    p.y[static_cast<size_t>(m) * p.ld_y + row] = s;
  }
}

}  // namespace

template <int kRing, bool kPair>
cudaError_t launch_ring(const MmaParams& p, bool hl, dim3 grid, cudaStream_t stream, bool pdl) {
  return hl ? launch_kernel(gemv_mma_kernel<true, kRing, kPair>, grid, dim3(kThreads), 0, stream, pdl, p)
            : launch_kernel(gemv_mma_kernel<false, kRing, kPair>, grid, dim3(kThreads), 0, stream, pdl, p);
}

GpuStatus launch_gemv_mma(const GemvQ8Args& a, bool hl, cudaStream_t stream) {
  const int ring = a.tile.unroll == 0 ? kDefaultRing : a.tile.unroll;
  if (ring != 4 && ring != 8)
    return GpuStatus::invalid("gemv_q8 mma: tile.unroll (blocks in flight per lane) must be 0, 4 or 8, got " +
                              std::to_string(ring));
  const int n = a.w.rows, k = a.w.cols, nb = k / kQBlock;
  const MmaParams p{.wq = a.w.q,
                    .wd = a.w.d,
                    .n = n,
                    .k = k,
                    .w_stride = a.w.row_stride,
                    .xh = a.x.hi,
                    .xl = a.x.lo,
                    .xs = a.x.scale,
                    .ld = a.x.ld,
                    .ld_s = a.x.ld_scale,
                    .m = a.m,
                    .y = a.y,
                    .ld_y = a.ld_y,
                    .res = a.residual,
                    .ld_res = a.ld_residual,
                    .per = (nb + kSlices - 1) / kSlices};
  const dim3 grid((n + kTileRows - 1) / kTileRows);
  const bool pair = a.m > 1;
  const cudaError_t e = ring == 4 ? (pair ? launch_ring<4, true>(p, hl, grid, stream, a.pdl)
                                          : launch_ring<4, false>(p, hl, grid, stream, a.pdl))
                                  : (pair ? launch_ring<8, true>(p, hl, grid, stream, a.pdl)
                                          : launch_ring<8, false>(p, hl, grid, stream, a.pdl));
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_mma_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_mma_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu::detail
