// Kernels of gdn_group.h: the coefficient rows, then the grouped scan. Arithmetic with explicit __f*_rn and
// every sum in a fixed order (per-lane chains, xor butterflies), so results are a function of the inputs.
#include <cstdint>

#include "common.cuh"
#include "cp_async.cuh"
#include "gdn_group.h"
#include "gdn_scan_tile.cuh"

namespace qc::gpu {
namespace {

constexpr int kG = kGdnGroup;
constexpr int kCoef = kGdnGroupCoef;
constexpr int kWin = 2 * kG - 1;  // positions t0 - (kG-1) .. t0 + kG - 1 a coefficient warp reads
static_assert(kG == 4 && kCoef == 12, "the coefficient row layout below is written for groups of 4");

constexpr int kCoefThreads = 256;  // coefficient kernel block: 8 warps, one (key head, kG positions) each
constexpr int kTile = kScanTile;   // the token scan's tiling (gdn_scan_tile.cuh)
static_assert(kTile % kG == 0, "tiles of a call starting on the grid must end on it");

// 1. Coefficients. One warp per (key head kh, positions t0 .. t0 + 3, t0 a multiple of 4 of the call's
// rows); lane l holds channels l + 32 r. The Gram entries of position t = t0 + i with its 3 predecessors
// (k_{t-d}.q_t for d <= 3, k_{t-d}.k_t for 1 <= d <= 3; a position outside [0, M) counts as k = 0: such
// entries are never used, groups do not reach before a call's first row) are per-lane chains over r, then
// warp_sum. Then one lane per value head j of key head kh (j % Nk == kh) writes the rows of t0 .. t0 + 3:
//   [beta, R1, R2, R3 | R4, R1 kk1, R2 kk2, R3 kk3 | kq0, R1 kq1, R2 kq2, R3 kq3]
// with R_d = R_{d-1} decay_{t-d+1} (a decay outside [0, M) counts as 1, again never used).
template <int DK>
__global__ void __launch_bounds__(kCoefThreads) gdn_group_coef_kernel(const GdnArgs a, const GdnGroupBufs b) {
  constexpr int R = DK / 32;
  pdl_wait();
  pdl_trigger();
  const int nk = a.n_k_heads, m = a.m;
  const int w = blockIdx.x * (kCoefThreads / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  const int kh = w % nk, t0 = (w / nk) * kG;
  if (t0 >= m) return;  // warp-uniform; nothing below synchronises the block
  float k[kWin][R], q[kG][R];
#pragma unroll
  for (int i = 0; i < kWin; ++i) {
    const int t = t0 - (kG - 1) + i;
    const bool in = t >= 0 && t < m;
    const float* row = b.qk + (static_cast<size_t>(in ? t : 0) * nk + kh) * 2 * DK + DK;
#pragma unroll
    for (int r = 0; r < R; ++r) k[i][r] = in ? row[lane + 32 * r] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kG; ++i) {
    const int t = t0 + i;
    const float* row = b.qk + (static_cast<size_t>(t < m ? t : 0) * nk + kh) * 2 * DK;
#pragma unroll
    for (int r = 0; r < R; ++r) q[i][r] = t < m ? row[lane + 32 * r] : 0.0f;
  }
  float kq[kG][kG], kk[kG][kG];  // [i][d]; kk[i][0] unused
#pragma unroll
  for (int i = 0; i < kG; ++i)
#pragma unroll
    for (int d = 0; d < kG; ++d) {
      const int s = i + kG - 1 - d;  // window slot of position t0 + i - d
      float pq = 0.0f, pk = 0.0f;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        pq = __fmaf_rn(k[s][r], q[i][r], pq);
        pk = __fmaf_rn(k[s][r], k[i + kG - 1][r], pk);
      }
      kq[i][d] = warp_sum(pq);
      kk[i][d] = d > 0 ? warp_sum(pk) : 0.0f;
    }
  for (int j = kh + lane * nk; j < a.n_v_heads; j += 32 * nk) {  // the value heads of key head kh
    const float* g = b.gate + static_cast<size_t>(j) * b.mp * 2;
    float dec[kWin];
#pragma unroll
    for (int i = 0; i < kWin; ++i) {
      const int t = t0 - (kG - 1) + i;
      dec[i] = (t >= 0 && t < m) ? g[2 * t + 1] : 1.0f;
    }
#pragma unroll
    for (int i = 0; i < kG; ++i) {
      const int t = t0 + i;
      if (t >= m) break;
      float rd[kG + 1];
      rd[0] = 1.0f;
#pragma unroll
      for (int d = 1; d <= kG; ++d) rd[d] = __fmul_rn(rd[d - 1], dec[i + kG - d]);  // decay of t - d + 1
      float4* row = reinterpret_cast<float4*>(b.coef + (static_cast<size_t>(j) * b.mp + t) * kCoef);
      row[0] = make_float4(g[2 * t], rd[1], rd[2], rd[3]);
      row[1] = make_float4(rd[4], __fmul_rn(rd[1], kk[i][1]), __fmul_rn(rd[2], kk[i][2]),
                           __fmul_rn(rd[3], kk[i][3]));
      row[2] = make_float4(kq[i][0], __fmul_rn(rd[1], kq[i][1]), __fmul_rn(rd[2], kq[i][2]),
                           __fmul_rn(rd[3], kq[i][3]));
    }
  }
}

// A group's coefficients as the scan reads them from shared memory.
struct GroupCoef {
  float beta, r[kG + 1], kk[kG], kq[kG];  // r[d] = R_d, kk[d] = R_d k_{t-d}.k_t, kq[d] = R_d k_{t-d}.q_t
};

__device__ __forceinline__ GroupCoef load_coef(const float* row) {
  const float4* p = reinterpret_cast<const float4*>(row);
  const float4 c0 = p[0], c1 = p[1], c2 = p[2];
  GroupCoef c;
  c.beta = c0.x;
  c.r[0] = 1.0f;
  c.r[1] = c0.y;
  c.r[2] = c0.z;
  c.r[3] = c0.w;
  c.r[4] = c1.x;
  c.kk[0] = 0.0f;
  c.kk[1] = c1.y;
  c.kk[2] = c1.z;
  c.kk[3] = c1.w;
  c.kq[0] = c2.x;
  c.kq[1] = c2.y;
  c.kq[2] = c2.z;
  c.kq[3] = c2.w;
  return c;
}

// One group of L positions (tile rows tt .. tt + L - 1) for one thread: state rows 4 (g P + pp) + i of its
// column, the column's v / o at `col` of the tile rows. Sums: each dot product one chain over (g, i)
// ascending, then an xor butterfly over the P lanes (the same bits in every lane); delta and o as written
// in gdn_group.h, u' ascending; the state scaled first, then the L updates in u order.
template <int DK, int L, int P>
__device__ __forceinline__ void scan_group(float (&S)[kScanRows / 4][4], const float* s_qk, const float* s_v,
                                           const float* s_c, float* s_o, int tt, int pp, int col, int cw) {
  constexpr int NG = kScanRows / 4;
  float ab[2 * L];  // a_u = S^T k_u, then b_u = S^T q_u
#pragma unroll
  for (int u = 0; u < 2 * L; ++u) ab[u] = 0.0f;
#pragma unroll
  for (int g = 0; g < NG; ++g)
#pragma unroll
    for (int u = 0; u < L; ++u) {
      const float* row = s_qk + (tt + u) * 2 * DK;
      const float4 qv = reinterpret_cast<const float4*>(row)[g * P + pp];
      const float4 kv = reinterpret_cast<const float4*>(row + DK)[g * P + pp];
      ab[u] = __fmaf_rn(S[g][0], kv.x, ab[u]);
      ab[u] = __fmaf_rn(S[g][1], kv.y, ab[u]);
      ab[u] = __fmaf_rn(S[g][2], kv.z, ab[u]);
      ab[u] = __fmaf_rn(S[g][3], kv.w, ab[u]);
      ab[L + u] = __fmaf_rn(S[g][0], qv.x, ab[L + u]);
      ab[L + u] = __fmaf_rn(S[g][1], qv.y, ab[L + u]);
      ab[L + u] = __fmaf_rn(S[g][2], qv.z, ab[L + u]);
      ab[L + u] = __fmaf_rn(S[g][3], qv.w, ab[L + u]);
    }
#pragma unroll
  for (int off = 1; off < P; off <<= 1)
#pragma unroll
    for (int u = 0; u < 2 * L; ++u) ab[u] = __fadd_rn(ab[u], __shfl_xor_sync(kFullMask, ab[u], off));

  GroupCoef c[L];
#pragma unroll
  for (int u = 0; u < L; ++u) c[u] = load_coef(s_c + (tt + u) * kCoef);
  float delta[L];
#pragma unroll
  for (int u = 0; u < L; ++u) {
    float mem = __fmul_rn(c[u].r[u + 1], ab[u]);
#pragma unroll
    for (int v = 0; v < u; ++v) mem = __fmaf_rn(c[u].kk[u - v], delta[v], mem);
    delta[u] = __fmul_rn(c[u].beta, __fsub_rn(s_v[(tt + u) * cw + col], mem));
  }
#pragma unroll
  for (int u = 0; u < L; ++u) {
    float o = __fmul_rn(c[u].r[u + 1], ab[L + u]);
#pragma unroll
    for (int v = 0; v <= u; ++v) o = __fmaf_rn(c[u].kq[u - v], delta[v], o);
    if (pp == 0) s_o[(tt + u) * cw + col] = o;
  }
  const float scale = c[L - 1].r[L];
  float d[L];
#pragma unroll
  for (int u = 0; u < L; ++u) d[u] = u == L - 1 ? delta[u] : __fmul_rn(c[L - 1].r[L - 1 - u], delta[u]);
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    float4 kv[L];
#pragma unroll
    for (int u = 0; u < L; ++u)
      kv[u] = reinterpret_cast<const float4*>(s_qk + (tt + u) * 2 * DK + DK)[g * P + pp];
    float x[4] = {__fmul_rn(S[g][0], scale), __fmul_rn(S[g][1], scale), __fmul_rn(S[g][2], scale),
                  __fmul_rn(S[g][3], scale)};
#pragma unroll
    for (int u = 0; u < L; ++u) {
      x[0] = __fmaf_rn(kv[u].x, d[u], x[0]);
      x[1] = __fmaf_rn(kv[u].y, d[u], x[1]);
      x[2] = __fmaf_rn(kv[u].z, d[u], x[2]);
      x[3] = __fmaf_rn(kv[u].w, d[u], x[3]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) S[g][i] = x[i];
  }
}

// 2. Scan. Block (x, j): columns [x*CW, +CW) of value head j (key head j % Nk); thread tid = cg*P + pp
// holds rows 4*(g*P + pp) + i (g < 4, i < 4) of column cg, as in the token scan. Tiles of 16 positions (q,
// k, v, coefficient rows) staged with cp.async, double buffered; within a tile the groups are the grid's
// (absolute positions), cut at the tile's ends.
template <int DK>
__global__ void __launch_bounds__(kScanThreads)
    gdn_group_scan_kernel(const GdnArgs a, const GdnGroupBufs bf) {
  constexpr int P = DK / kScanRows;
  constexpr int CW = scan_cols(DK);
  constexpr int NG = kScanRows / 4;
  __shared__ __align__(16) float s_qk[2][kTile][2 * DK];  // q | k per position
  __shared__ __align__(16) float s_v[2][kTile][CW];
  __shared__ __align__(16) float s_c[2][kTile][kCoef];
  __shared__ float s_o[kTile][CW];

  pdl_wait();
  pdl_trigger();
  const int j = blockIdx.y, kh = j % a.n_k_heads, nk = a.n_k_heads, dv = a.head_v_dim;
  const int ldv = a.n_v_heads * dv;
  const int c0 = blockIdx.x * CW;
  const int tid = threadIdx.x, cg = tid / P, pp = tid % P;
  const int m = a.m, pos0 = *a.d_pos;

  auto load_tile = [&](int b, int t0, int nt) {
    stage_qk_v<DK, CW, kScanThreads>(s_qk[b], s_v[b], bf.qk, bf.vo, nk, kh, ldv, j * dv + c0, t0, nt, tid);
    constexpr int kCoefChunks = kCoef / 4;
    for (int c = tid; c < nt * kCoefChunks; c += kScanThreads) {
      const int tt = c / kCoefChunks, w = c % kCoefChunks;
      cp_async16(&s_c[b][tt][4 * w], bf.coef + (static_cast<size_t>(j) * bf.mp + t0 + tt) * kCoef + 4 * w);
    }
    cp_async_commit();
  };

  float S[NG][4];
  float* state_blk = a.state + static_cast<size_t>(j) * DK * dv + c0 + cg;
  load_state_column<NG, P>(S, state_blk, dv, pp);

  const int n_tiles = (m + kTile - 1) / kTile;
  load_tile(0, 0, min(kTile, m));
  for (int it = 0; it < n_tiles; ++it) {
    const int b = it & 1, t0 = it * kTile, nt = min(kTile, m - t0);
    if (it + 1 < n_tiles)
      load_tile(b ^ 1, t0 + kTile, min(kTile, m - t0 - kTile));  // buffer b^1 was released by the
    else                                                         // barrier after tile it-1's compute
      cp_async_commit();  // empty group: keeps "all but the newest group done" meaning tile it
    cp_async_wait<1>();
    __syncthreads();  // tile it visible to all threads; s_o free (copied out after the last barrier)

    const float* qk = &s_qk[b][0][0];
    const float* v = &s_v[b][0][0];
    const float* cf = &s_c[b][0][0];
    for (int tt = 0; tt < nt;) {  // block-uniform
      const int len = min(kG - (pos0 + t0 + tt) % kG, nt - tt);
      if (len == kG)
        scan_group<DK, kG, P>(S, qk, v, cf, &s_o[0][0], tt, pp, cg, CW);
      else if (len == 3)
        scan_group<DK, 3, P>(S, qk, v, cf, &s_o[0][0], tt, pp, cg, CW);
      else if (len == 2)
        scan_group<DK, 2, P>(S, qk, v, cf, &s_o[0][0], tt, pp, cg, CW);
      else
        scan_group<DK, 1, P>(S, qk, v, cf, &s_o[0][0], tt, pp, cg, CW);
      tt += len;
    }
    __syncthreads();  // s_o complete; buffer b no longer read (the next iteration refills it)
    copy_out<CW, kScanThreads>(s_o, bf.vo, ldv, j * dv + c0, t0, nt, tid);
  }
  cp_async_wait<0>();
  store_state_column<NG, P>(S, state_blk, dv, pp);
}

}  // namespace

size_t gdn_group_floats(const GdnArgs& a, int mp) {
  return static_cast<size_t>(a.n_v_heads) * static_cast<size_t>(mp > 0 ? mp : 0) * kCoef;
}

GpuStatus gdn_group_scan(const GdnArgs& a, const GdnGroupBufs& b, cudaStream_t stream) {
  const int coef_warps = a.n_k_heads * ((a.m + kG - 1) / kG);
  const dim3 coef_grid((coef_warps + kCoefThreads / 32 - 1) / (kCoefThreads / 32));
  cudaError_t e =
      a.head_k_dim == 128
          ? launch_kernel(gdn_group_coef_kernel<128>, coef_grid, dim3(kCoefThreads), 0, stream, a.pdl, a, b)
          : launch_kernel(gdn_group_coef_kernel<64>, coef_grid, dim3(kCoefThreads), 0, stream, a.pdl, a, b);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_group_coef_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_group_coef_kernel", stream);
  e = launch_column_scan(gdn_group_scan_kernel<128>, gdn_group_scan_kernel<64>, a, b, stream);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_group_scan_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_group_scan_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
