// The scan of gdn_scaled.h. Arithmetic with explicit __f*_rn (and the hardware reciprocal for 1/D) and
// every sum in a fixed order (per-lane chains, xor butterflies, a fixed tree over a column's lanes), so
// results are a function of the inputs.
#include <cstdint>

#include "common.cuh"
#include "cp_async.cuh"
#include "gdn_scaled.h"
#include "gdn_scan_tile.cuh"

namespace qc::gpu {
namespace {

constexpr int kTile = kGdnScaledTile;  // the token scan's tiling (gdn_scan_tile.cuh)
static_assert(kTile == kScanTile, "segments end with the staging tile");

// 1/x by the SFU (MUFU.RCP: within 1 ulp, the same bits every time on a given architecture): a scale in
// [2^-64, 1], normal, so flushing denormals changes nothing.
__device__ __forceinline__ float rcp_approx(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// One position of one column: S~ (this thread's 16 rows: 4 (g P + pp) + i) and the segment's scale D
// updated; this lane's share of o (times D) into part[tid]. qk: the position's q | k in shared memory.
template <int DK, int P>
__device__ __forceinline__ void scaled_position(float (&S)[kScanRows / 4][4], float& D, const float* qk,
                                                float v, float beta, float decay, float* part, int pp,
                                                int tid) {
  constexpr int G = kScanRows / 4;
  float dn = __fmul_rn(D, decay);
  if (dn < kGdnScaledFoldBelow) {  // block-uniform (one head's decay); rare: fold D d_t into S~
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int i = 0; i < 4; ++i) S[g][i] = __fmul_rn(S[g][i], dn);
    dn = 1.0f;
  }
  D = dn;
  const float4* k4 = reinterpret_cast<const float4*>(qk + DK);
  const float4* q4 = reinterpret_cast<const float4*>(qk);
  float4 kv[G];
  float acc[4];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    kv[g] = k4[g * P + pp];
    const float kk[4] = {kv[g].x, kv[g].y, kv[g].z, kv[g].w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
      acc[i] = g == 0 ? __fmul_rn(S[g][i], kk[i]) : __fmaf_rn(S[g][i], kk[i], acc[i]);
  }
  float mem = __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3]));
#pragma unroll
  for (int off = 1; off < P; off <<= 1) mem = __fadd_rn(mem, __shfl_xor_sync(kFullMask, mem, off));
  // delta / D = (beta / D) (v - D mem)
  const float dl = __fmul_rn(__fmul_rn(beta, rcp_approx(D)), __fmaf_rn(-D, mem, v));
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const float4 qv = q4[g * P + pp];
    const float kk[4] = {kv[g].x, kv[g].y, kv[g].z, kv[g].w};
    const float qq[4] = {qv.x, qv.y, qv.z, qv.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      S[g][i] = __fmaf_rn(kk[i], dl, S[g][i]);
      acc[i] = g == 0 ? __fmul_rn(S[g][i], qq[i]) : __fmaf_rn(S[g][i], qq[i], acc[i]);
    }
  }
  part[tid] = __fmul_rn(D, __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3])));
}

// Block (x, j): columns [x*CW, +CW) of value head j (key head j % Nk); thread tid = cg*P + pp holds rows
// 4*(g*P + pp) + i (g < 4, i < 4) of column cg, as in the token scan. Per tile: the positions in order
// (a full tile unrolled by 4, so shared addresses are immediate offsets), the scale folded in, then the
// tile's o reduced from s_part and written over v.
template <int DK>
__global__ void __launch_bounds__(kScanThreads)
    gdn_scaled_scan_kernel(const GdnArgs a, const GdnScaledBufs bf) {
  constexpr int P = DK / kScanRows;  // lanes per column: 8 (dk 128) or 4 (dk 64)
  constexpr int CW = scan_cols(DK);  // columns per block: 16 or 32
  constexpr int G = kScanRows / 4;
  static_assert(P % 4 == 0, "a column's shares are summed as float4s");
  __shared__ __align__(16) float s_qk[2][kTile][2 * DK];  // q | k per position
  __shared__ __align__(16) float s_v[2][kTile][CW];
  __shared__ __align__(16) float s_g[2][2 * kTile];            // beta, decay per position
  __shared__ __align__(16) float s_part[kTile][kScanThreads];  // [position][cg * P + pp]: shares of o

  pdl_wait();
  pdl_trigger();
  const int j = blockIdx.y, kh = j % a.n_k_heads, nk = a.n_k_heads, dv = a.head_v_dim;
  const int ldv = a.n_v_heads * dv;
  const int c0 = blockIdx.x * CW, vcol = j * dv + c0;
  const int tid = threadIdx.x, cg = tid / P, pp = tid % P;
  const int m = a.m;

  auto load_tile = [&](int b, int t0, int nt) {
    stage_qk_v<DK, CW, kScanThreads>(s_qk[b], s_v[b], bf.qk, bf.vo, nk, kh, ldv, vcol, t0, nt, tid);
    const int g_chunks = (2 * nt + 3) / 4;  // t0 is a multiple of kTile: within [0, 2*Mp) of head j
    if (tid < g_chunks)
      cp_async16(&s_g[b][4 * tid], bf.gate + (static_cast<size_t>(j) * bf.mp + t0) * 2 + 4 * tid);
    cp_async_commit();
  };

  float S[G][4];
  float* state_blk = a.state + static_cast<size_t>(j) * DK * dv + c0 + cg;
  load_state_column<G, P>(S, state_blk, dv, pp);

  const int n_tiles = (m + kTile - 1) / kTile;
  load_tile(0, 0, min(kTile, m));
  for (int it = 0; it < n_tiles; ++it) {
    const int b = it & 1, t0 = it * kTile, nt = min(kTile, m - t0);
    if (it + 1 < n_tiles)
      load_tile(b ^ 1, t0 + kTile, min(kTile, m - t0 - kTile));  // buffer b^1 was released by the
    else                                                         // barrier after tile it-1's compute
      cp_async_commit();  // empty group: keeps "all but the newest group done" meaning tile it
    cp_async_wait<1>();
    __syncthreads();  // tile it visible to all threads; s_part free (reduced after the last barrier)

    const float* qk = &s_qk[b][0][0];
    const float* v = &s_v[b][0][cg];
    const float* g = &s_g[b][0];
    float D = 1.0f;  // S = D S~; a segment starts at the tile
    if (nt == kTile) {
#pragma unroll 4
      for (int tt = 0; tt < kTile; ++tt)
        scaled_position<DK, P>(S, D, qk + tt * 2 * DK, v[tt * CW], g[2 * tt], g[2 * tt + 1], &s_part[tt][0],
                               pp, tid);
    } else {
#pragma unroll 1
      for (int tt = 0; tt < nt; ++tt)
        scaled_position<DK, P>(S, D, qk + tt * 2 * DK, v[tt * CW], g[2 * tt], g[2 * tt + 1], &s_part[tt][0],
                               pp, tid);
    }
#pragma unroll
    for (int gg = 0; gg < G; ++gg)
#pragma unroll
      for (int i = 0; i < 4; ++i) S[gg][i] = __fmul_rn(S[gg][i], D);  // the segment ends with the tile
    __syncthreads();  // s_part complete; buffer b no longer read (the next iteration refills it)
    // o over v in place, rows of tile it only (the copies in flight read tile it+1's rows): the P shares
    // of (position, column) summed as a tree over float4s, ((s0 + s1) + (s2 + s3)) each, left to right.
    for (int e = tid; e < nt * CW; e += kScanThreads) {
      const int tt = e / CW, c = e % CW;
      const float4* sh = reinterpret_cast<const float4*>(&s_part[tt][c * P]);
      float o = 0.0f;
#pragma unroll
      for (int u = 0; u < P / 4; ++u) {
        const float4 x = sh[u];
        const float s4 = __fadd_rn(__fadd_rn(x.x, x.y), __fadd_rn(x.z, x.w));
        o = u == 0 ? s4 : __fadd_rn(o, s4);
      }
      bf.vo[static_cast<size_t>(t0 + tt) * ldv + vcol + c] = o;
    }
  }
  cp_async_wait<0>();
  store_state_column<G, P>(S, state_blk, dv, pp);
}

}  // namespace

GpuStatus gdn_scaled_scan(const GdnArgs& a, const GdnScaledBufs& b, cudaStream_t stream) {
  const cudaError_t e =
      launch_column_scan(gdn_scaled_scan_kernel<128>, gdn_scaled_scan_kernel<64>, a, b, stream);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_scaled_scan_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_scaled_scan_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
