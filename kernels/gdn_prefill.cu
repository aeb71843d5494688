// Kernels of gdn_prefill.h: conv + norms + gates, ring update, scan (or gdn_chunk.cu's), gated norm.
// Arithmetic with explicit __f*_rn like gdn.cu; every reduction has a fixed order (per-lane chains, fixed
// accumulator trees, xor butterflies), so the results are a function of the inputs alone.
#include <cstdint>

#include "common.cuh"
#include "cp_async.cuh"
#include "gdn_chunk.h"
#include "gdn_group.h"
#include "gdn_prefill.h"
#include "gdn_scaled.h"
#include "gdn_scan_tile.cuh"

namespace qc::gpu {
namespace {

constexpr int kMaxDv = 256;
constexpr int kConvThreads = 256;  // conv kernel block: 8 warps, one (token, head) each
constexpr int kNormThreads = 256;  // gated-norm kernel block: 8 warps, one (token, value head) each
constexpr int kRingThreads = 256;
constexpr int kScanCols = 1;  // columns per thread (gdn_scan_tile.cuh scan_cols counts one)
static_assert(kScanCols == 1, "launch_column_scan's grid (scan_cols) assumes one column a thread");
constexpr int kTile = kScanTile;  // positions staged per shared-memory tile (gdn_scan_tile.cuh)
static_assert(kTile == kGdnScaledPositions, "the scaled scan's tiles are the token scan's");

int round_up(int x, int m) {
  return (x + m - 1) / m * m;
}

// Scratch regions (gdn_prefill.h).
struct Scratch {
  float* qk;     // [M][Nk][2][dk]
  float* vo;     // [M][Nv*dv]
  float* gate;   // [Nv][Mp][2]
  int mp;        // M rounded up to kTile
  // kChunked: gdn_chunk_floats(a) (w | qw | ou | g | g_lo); kGroup: gdn_group_floats(a, mp) (coef).
  float* extra;
};

Scratch carve(const GdnArgs& a, float* scratch) {
  Scratch s;
  const size_t m = static_cast<size_t>(a.m);
  s.qk = scratch;
  s.vo = s.qk + m * 2 * a.n_k_heads * a.head_k_dim;
  s.gate = s.vo + m * a.n_v_heads * a.head_v_dim;
  s.mp = round_up(a.m, kTile);
  s.extra = s.gate + static_cast<size_t>(s.mp) * 2 * a.n_v_heads;
  return s;
}

GdnGroupBufs group_bufs(const Scratch& s) {
  GdnGroupBufs b;
  b.qk = s.qk;
  b.vo = s.vo;
  b.gate = s.gate;
  b.mp = s.mp;
  b.coef = s.extra;
  return b;
}

GdnScaledBufs scaled_bufs(const Scratch& s) {
  GdnScaledBufs b;
  b.qk = s.qk;
  b.vo = s.vo;
  b.gate = s.gate;
  b.mp = s.mp;
  return b;
}

// Floats after the gate rows: the chunked or grouped scan's own buffers.
size_t extra_floats(const GdnArgs& a, int mp) {
  if (a.scan == GdnScan::kChunked) return gdn_chunk_floats(a);
  if (a.scan == GdnScan::kGroup) return gdn_group_floats(a, mp);
  return 0;
}

GdnChunkBufs chunk_bufs(const GdnArgs& a, const Scratch& s) {
  GdnChunkBufs b;
  b.qk = s.qk;
  b.vo = s.vo;
  b.gate = s.gate;
  b.mp = s.mp;
  b.rows = gdn_chunk_slots(a.m) * kGdnChunk;
  const size_t head = static_cast<size_t>(b.rows) * a.n_v_heads;
  b.w = s.extra;
  b.qw = b.w + head * a.head_k_dim;
  b.ou = b.qw + head * a.head_k_dim;
  b.g = b.ou + head * a.head_v_dim;
  b.g_lo = b.g + head;
  return b;
}

// 1. One warp per (unit, tile of kConvTokens consecutive tokens): unit u < Nk is key head u (q and k, dk/32
// channels of each per lane), u >= Nk value head u - Nk (dv/32 channels per lane, and the gates in lanes
// 0 .. kConvTokens-1, one token each). Lane l holds channels l + 32 r, so loads and stores are coalesced
// and the L2 sums are a per-lane chain over r then a butterfly: no block barrier. A channel's conv inputs
// for the tile's tokens (kConvTokens + kc - 1 positions) are loaded once into registers and its kc weights
// once, instead of kc inputs and kc weights per token (2.9x fewer loads than a warp per token, which took
// 92 us for a 1024-row call of a 27B layer on an H100; the GDN phase of a 2048-token prompt went from 48.9
// to 46.0 ms with this, 2026-12-06). Every value is the same function of the same inputs in the
// same order as gdn_step's conv (gdn.cu): silu(sum_i w[ch][i] * x_{p-kc+1+i}[ch]), i ascending, so the
// bits are the same. Earlier positions come from the ring (read only, never written here), positions
// before 0 are 0. All loads of a warp are issued before its first store (the compiler may not move a
// load across a store that could alias it).
constexpr int kConvTokens = 4;
constexpr int kConvWindow = kConvTokens + kConvRing - 1;  // inputs of a channel, at most

// Where the conv input of position t lives: this call's rows, the ring, or nowhere (t < 0: zero).
__device__ __forceinline__ const float* conv_source(const GdnArgs& a, int conv_dim, int pos0, int t) {
  if (t >= pos0) return a.qkv + static_cast<size_t>(t - pos0) * a.ld_qkv;
  if (t < 0) return nullptr;
  return a.conv_ring + static_cast<size_t>(t % kConvRing) * conv_dim;
}

// Conv outputs of channel ch for the tile's tokens p0 .. p0 + nt - 1 into y[0 .. nt).
__device__ __forceinline__ void conv_tile(const GdnArgs& a, const float* const (&src)[kConvWindow], int ch,
                                          float (&y)[kConvTokens]) {
  const int kc = a.conv_kernel;
  float w[kConvRing], x[kConvWindow];
#pragma unroll
  for (int i = 0; i < kConvRing; ++i) w[i] = i < kc ? a.conv_w[ch * kc + i] : 0.0f;
#pragma unroll
  for (int j = 0; j < kConvWindow; ++j) x[j] = src[j] ? src[j][ch] : 0.0f;
#pragma unroll
  for (int tt = 0; tt < kConvTokens; ++tt) {
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < kConvRing; ++i)
      if (i < kc) acc = __fmaf_rn(w[i], x[tt + i], acc);
    y[tt] = silu(acc);
  }
}

template <int DK>
__global__ void __launch_bounds__(kConvThreads) gdn_prefill_conv_kernel(const GdnArgs a, const Scratch s) {
  constexpr int R = DK / 32;
  constexpr int T = kConvTokens;
  pdl_wait();
  pdl_trigger();
  const int nk = a.n_k_heads, nv = a.n_v_heads, dv = a.head_v_dim, units = nk + nv;
  const int w = blockIdx.x * (kConvThreads / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  const int u = w % units, t0 = (w / units) * T;
  if (t0 >= a.m) return;  // warp-uniform; nothing below synchronises the block
  const int nt = min(T, a.m - t0);
  const int conv_dim = 2 * nk * DK + nv * dv;
  const int pos0 = *a.d_pos, p0 = pos0 + t0, kc = a.conv_kernel;
  // Window slot j holds position p0 - kc + 1 + j; slots past the tile's last token are not read.
  const float* src[kConvWindow];
#pragma unroll
  for (int j = 0; j < kConvWindow; ++j)
    src[j] = j < nt + kc - 1 ? conv_source(a, conv_dim, pos0, p0 - kc + 1 + j) : nullptr;
  if (u < nk) {
    float q[R][T], k[R][T];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      conv_tile(a, src, u * DK + lane + 32 * r, q[r]);
      conv_tile(a, src, nk * DK + u * DK + lane + 32 * r, k[r]);
    }
    const float q_scale = __fdiv_rn(1.0f, __fsqrt_rn(static_cast<float>(DK)));
#pragma unroll
    for (int tt = 0; tt < T; ++tt) {
      if (tt >= nt) break;  // warp-uniform
      float qss = 0.0f, kss = 0.0f;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        qss = __fmaf_rn(q[r][tt], q[r][tt], qss);
        kss = __fmaf_rn(k[r][tt], k[r][tt], kss);
      }
      const float qn = __fmul_rn(__fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(warp_sum(qss), a.l2_eps))), q_scale);
      const float kn = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(warp_sum(kss), a.l2_eps)));
      float* dst = s.qk + (static_cast<size_t>(t0 + tt) * nk + u) * 2 * DK;  // q at [0, dk), k at [dk, 2dk)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        dst[lane + 32 * r] = __fmul_rn(q[r][tt], qn);
        dst[DK + lane + 32 * r] = __fmul_rn(k[r][tt], kn);
      }
    }
  } else {
    const int j = u - nk;
    const int ch0 = 2 * nk * DK + j * dv;
    float* g = s.gate + static_cast<size_t>(j) * s.mp * 2;
    // The gates of token t0 + lane (loaded with the conv inputs, stored after them).
    float beta = 0.0f, gl = 0.0f;
    if (lane < nt) {
      const int t = t0 + lane;
      beta = sigmoid(a.beta[static_cast<size_t>(t) * a.ld_beta + j]);
      gl = __fmul_rn(softplus(__fadd_rn(a.alpha[static_cast<size_t>(t) * a.ld_alpha + j], a.dt_bias[j])),
                     a.ssm_a[j]);
    }
    float x[kMaxDv / 32][T];
#pragma unroll
    for (int r = 0; r < kMaxDv / 32; ++r)
      if (r < dv / 32) conv_tile(a, src, ch0 + lane + 32 * r, x[r]);
#pragma unroll
    for (int tt = 0; tt < T; ++tt) {
      if (tt >= nt) break;  // warp-uniform
      float* dst = s.vo + static_cast<size_t>(t0 + tt) * nv * dv + j * dv;
#pragma unroll
      for (int r = 0; r < kMaxDv / 32; ++r)
        if (r < dv / 32) dst[lane + 32 * r] = x[r][tt];
    }
    if (lane < nt) {
      const int t = t0 + lane;
      g[2 * t] = beta;
      g[2 * t + 1] = a.scan == GdnScan::kChunked ? gl : expf(gl);  // gdn_chunk.h takes the log decay
    }
    // The padding tokens [M, Mp) of the last tile: the scan copies whole 16-byte chunks, never uses them.
    if (t0 + nt == a.m)
      for (int e = 2 * a.m + lane; e < 2 * s.mp; e += 32) g[e] = 0.0f;
  }
}

// 2. Ring: the raw conv inputs of the last min(M, kConvRing) rows into their slots. Block (x, r): row
// M - R + r, channels [x*256, +256).
__global__ void __launch_bounds__(kRingThreads) gdn_prefill_ring_kernel(const GdnArgs a, int rows) {
  pdl_wait();
  pdl_trigger();
  const int conv_dim = 2 * a.n_k_heads * a.head_k_dim + a.n_v_heads * a.head_v_dim;
  const int ch = blockIdx.x * kRingThreads + threadIdx.x;
  const int row = a.m - rows + static_cast<int>(blockIdx.y);
  const int p = *a.d_pos + row;
  if (ch < conv_dim)
    a.conv_ring[(p % kConvRing) * conv_dim + ch] = a.qkv[static_cast<size_t>(row) * a.ld_qkv + ch];
}

// 3. Scan. Block (x, j): columns [x*CW, +CW) of value head j (key head j % Nk). Thread tid = cg*P + pp
// (column group cg, part pp < P) owns kScanCols columns cg + n * (kScanThreads / P) (n < kScanCols) and, of
// each, the rows 4*(g*P + pp) + i (g < 4, i < 4): the P lanes of a column group lie in one warp and read
// consecutive float4s of q and k from shared memory (no bank conflict; the other groups of the warp read
// the same addresses). Each k and q value read serves kScanCols columns.
// Per token (the same arithmetic for every token):
//   S *= decay;  mem = S^T k;  delta = beta (v - mem);  S += k delta;  o = S^T q
// with each dot product summed as: 4 accumulators (i) over g ascending, ((a0 + a1) + (a2 + a3)), then an
// xor butterfly over the P lanes (bitwise the same in every lane: a + b == b + a).
template <int DK>
__global__ void __launch_bounds__(kScanThreads) gdn_prefill_scan_kernel(const GdnArgs a, const Scratch s) {
  constexpr int P = DK / kScanRows;     // lanes per column: 8 (dk 128) or 4 (dk 64)
  constexpr int NG = kScanThreads / P;  // column groups per block
  constexpr int NC = kScanCols;         // columns per thread
  constexpr int CW = scan_cols(DK);     // columns per block = NG * NC: 16 (dk 128) or 32 (dk 64)
  constexpr int G = kScanRows / 4;      // float4 groups per thread
  static_assert(32 % P == 0 && P >= 2, "a column's lanes must lie in one warp");
  static_assert(CW == NG * NC && CW % 4 == 0, "column tiling");
  __shared__ __align__(16) float s_qk[2][kTile][2 * DK];  // q | k per token
  __shared__ __align__(16) float s_v[2][kTile][CW];
  __shared__ __align__(16) float s_g[2][2 * kTile];  // beta, decay per token
  __shared__ float s_o[kTile][CW];

  pdl_wait();
  pdl_trigger();
  const int j = blockIdx.y, kh = j % a.n_k_heads, nk = a.n_k_heads, dv = a.head_v_dim;
  const int ldv = a.n_v_heads * dv;
  const int c0 = blockIdx.x * CW;
  const int tid = threadIdx.x, cg = tid / P, pp = tid % P;
  const int m = a.m;

  // Stage tokens [t0, t0 + nt) of this block's inputs into buffer b (this thread's share; one group).
  auto load_tile = [&](int b, int t0, int nt) {
    stage_qk_v<DK, CW, kScanThreads>(s_qk[b], s_v[b], s.qk, s.vo, nk, kh, ldv, j * dv + c0, t0, nt, tid);
    const int g_chunks = (2 * nt + 3) / 4;  // t0 is a multiple of kTile: within [0, 2*Mp) of head j
    if (tid < g_chunks)
      cp_async16(&s_g[b][4 * tid], s.gate + (static_cast<size_t>(j) * s.mp + t0) * 2 + 4 * tid);
    cp_async_commit();
  };

  float S[NC][G][4];
  float* state_blk = a.state + static_cast<size_t>(j) * DK * dv + c0 + cg;
#pragma unroll
  for (int n = 0; n < NC; ++n) load_state_column<G, P>(S[n], state_blk + n * NG, dv, pp);

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

    // o of token tt is reduced across the P lanes together with mem of token tt + 1 (its butterfly is off
    // the state's dependency chain): one shuffle chain per token instead of two. Same values either way.
    float o_part[NC];  // this lane's partial o of token tt - 1
#pragma unroll
    for (int n = 0; n < NC; ++n) o_part[n] = 0.0f;
    for (int tt = 0; tt < nt; ++tt) {
      const float4* q4 = reinterpret_cast<const float4*>(&s_qk[b][tt][0]);
      const float4* k4 = reinterpret_cast<const float4*>(&s_qk[b][tt][DK]);
      const float beta = s_g[b][2 * tt], decay = s_g[b][2 * tt + 1];
      float4 kv[G];
      float acc[NC][4];
#pragma unroll
      for (int n = 0; n < NC; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[n][i] = 0.0f;
#pragma unroll
      for (int g = 0; g < G; ++g) {
        kv[g] = k4[g * P + pp];
        const float kk[4] = {kv[g].x, kv[g].y, kv[g].z, kv[g].w};
#pragma unroll
        for (int n = 0; n < NC; ++n)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            S[n][g][i] = __fmul_rn(S[n][g][i], decay);
            acc[n][i] = __fmaf_rn(S[n][g][i], kk[i], acc[n][i]);
          }
      }
      float mem[NC], o_prev[NC];
#pragma unroll
      for (int n = 0; n < NC; ++n) {
        mem[n] = __fadd_rn(__fadd_rn(acc[n][0], acc[n][1]), __fadd_rn(acc[n][2], acc[n][3]));
        o_prev[n] = o_part[n];
      }
#pragma unroll
      for (int off = 1; off < P; off <<= 1)
#pragma unroll
        for (int n = 0; n < NC; ++n) {
          mem[n] = __fadd_rn(mem[n], __shfl_xor_sync(kFullMask, mem[n], off));
          o_prev[n] = __fadd_rn(o_prev[n], __shfl_xor_sync(kFullMask, o_prev[n], off));
        }
      float delta[NC];
#pragma unroll
      for (int n = 0; n < NC; ++n) {
        if (tt > 0 && pp == 0) s_o[tt - 1][cg + n * NG] = o_prev[n];
        delta[n] = __fmul_rn(beta, __fsub_rn(s_v[b][tt][cg + n * NG], mem[n]));
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[n][i] = 0.0f;
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float4 qv = q4[g * P + pp];
        const float kk[4] = {kv[g].x, kv[g].y, kv[g].z, kv[g].w};
        const float qq[4] = {qv.x, qv.y, qv.z, qv.w};
#pragma unroll
        for (int n = 0; n < NC; ++n)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            S[n][g][i] = __fmaf_rn(kk[i], delta[n], S[n][g][i]);
            acc[n][i] = __fmaf_rn(S[n][g][i], qq[i], acc[n][i]);
          }
      }
#pragma unroll
      for (int n = 0; n < NC; ++n)
        o_part[n] = __fadd_rn(__fadd_rn(acc[n][0], acc[n][1]), __fadd_rn(acc[n][2], acc[n][3]));
    }
#pragma unroll
    for (int off = 1; off < P; off <<= 1)
#pragma unroll
      for (int n = 0; n < NC; ++n)
        o_part[n] = __fadd_rn(o_part[n], __shfl_xor_sync(kFullMask, o_part[n], off));
    if (pp == 0)
#pragma unroll
      for (int n = 0; n < NC; ++n) s_o[nt - 1][cg + n * NG] = o_part[n];
    __syncthreads();  // s_o complete; buffer b no longer read (the next iteration refills it)
    // o over v in place: rows of tile it only (the copies in flight read tile it+1's rows).
    copy_out<CW, kScanThreads>(s_o, s.vo, ldv, j * dv + c0, t0, nt, tid);
  }
  cp_async_wait<0>();
#pragma unroll
  for (int n = 0; n < NC; ++n) store_state_column<G, P>(S[n], state_blk + n * NG, dv, pp);
}

// 4. Gated norm: one warp per (token, value head); lane l holds columns l + 32 r (r < dv/32), so the 32
// columns of quantisation block r are lanes 0..31 of step r.
__global__ void __launch_bounds__(kNormThreads) gdn_prefill_norm_kernel(const GdnArgs a, const Scratch s) {
  pdl_wait();
  pdl_trigger();
  const int nv = a.n_v_heads, dv = a.head_v_dim, nr = dv / 32;
  const int w = blockIdx.x * (kNormThreads / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  const int t = w / nv, j = w % nv;
  if (t >= a.m) return;  // warp-uniform
  const float* orow = s.vo + static_cast<size_t>(t) * nv * dv + j * dv;
  float o[kMaxDv / 32];
  float oss = 0.0f;
#pragma unroll
  for (int r = 0; r < kMaxDv / 32; ++r) {
    if (r < nr) {
      o[r] = orow[lane + 32 * r];
      oss = __fmaf_rn(o[r], o[r], oss);
    }
  }
  oss = warp_sum(oss);
  const float inv =
      __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(oss, static_cast<float>(dv)), a.norm_eps)));
  const float scale16 = ldexpf(1.0f, -a.shift16);  // a power of two: exact
#pragma unroll
  for (int r = 0; r < kMaxDv / 32; ++r) {
    if (r < nr) {  // warp-uniform
      const int v = lane + 32 * r, col = j * dv + v;
      const float gate = silu(a.z[static_cast<size_t>(t) * a.ld_z + col]);
      const float y = __fmul_rn(__fmul_rn(__fmul_rn(o[r], inv), a.norm_w[v]), gate);
      if (a.out) a.out[static_cast<size_t>(t) * a.ld_out + col] = y;
      if (a.out16)
        a.out16[static_cast<size_t>(t) * a.ld_out16 + col] = f2h(saturate_f16(__fmul_rn(y, scale16)));
      if (a.out_q.hi) {
        const int wcol = j * dv + 32 * r;
        const size_t row = static_cast<size_t>(t) * a.out_q.ld;
        quantize_block_warp(y, a.out_q.hi + row + wcol, a.out_q.lo ? a.out_q.lo + row + wcol : nullptr,
                            a.out_q.scale + static_cast<size_t>(t) * a.out_q.ld_scale + wcol / kQBlock);
      }
    }
  }
}

}  // namespace

size_t gdn_prefill_scratch_floats(const GdnArgs& a) {
  const size_t m = a.m > 0 ? static_cast<size_t>(a.m) : 0;
  const size_t mp = static_cast<size_t>(round_up(a.m > 0 ? a.m : 0, kTile));
  return m * (2 * static_cast<size_t>(a.n_k_heads) * a.head_k_dim +
              static_cast<size_t>(a.n_v_heads) * a.head_v_dim) +
         2 * static_cast<size_t>(a.n_v_heads) * mp + extra_floats(a, static_cast<int>(mp));
}

GpuStatus gdn_prefill(const GdnArgs& a, float* scratch, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.qkv && a.z && a.beta && a.alpha && a.conv_w && a.dt_bias && a.ssm_a && a.norm_w &&
                     a.conv_ring && a.state && a.d_pos && scratch,
                 "gdn_prefill: a required pointer is null");
  QC_GPU_REQUIRE(aligned16(scratch), "gdn_prefill: scratch must be 16-byte aligned");
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kGdnPrefillMaxRows, "gdn_prefill: M must be in [1, " +
                                                            std::to_string(kGdnPrefillMaxRows) + "], got " +
                                                            std::to_string(a.m));
  QC_GPU_REQUIRE(!a.state_per_token, "gdn_prefill: state_per_token is not supported (must be null)");
  QC_GPU_REQUIRE(a.head_k_dim == 64 || a.head_k_dim == 128,
                 "gdn_prefill: head_k_dim must be 64 or 128, got " + std::to_string(a.head_k_dim));
  QC_GPU_REQUIRE(
      a.head_v_dim >= 32 && a.head_v_dim <= kMaxDv && a.head_v_dim % 32 == 0,
      "gdn_prefill: head_v_dim must be a multiple of 32 in [32, 256], got " + std::to_string(a.head_v_dim));
  QC_GPU_REQUIRE(a.n_k_heads > 0 && a.n_v_heads >= a.n_k_heads && a.n_v_heads % a.n_k_heads == 0,
                 "gdn_prefill: n_v_heads (" + std::to_string(a.n_v_heads) +
                     ") must be a multiple of n_k_heads (" + std::to_string(a.n_k_heads) + ")");
  QC_GPU_REQUIRE(a.conv_kernel >= 1 && a.conv_kernel <= kConvRing,
                 "gdn_prefill: conv_kernel must be in [1, " + std::to_string(kConvRing) + "], got " +
                     std::to_string(a.conv_kernel));
  const int inner = a.n_v_heads * a.head_v_dim;
  QC_GPU_REQUIRE(
      a.ld_qkv >= a.conv_dim() && a.ld_z >= inner && a.ld_beta >= a.n_v_heads && a.ld_alpha >= a.n_v_heads,
      "gdn_prefill: ld_qkv >= conv_dim (" + std::to_string(a.conv_dim()) +
          "), ld_z >= Nv*dv, ld_beta/alpha >= Nv required");
  QC_GPU_REQUIRE(a.out || a.out_q.hi || a.out16, "gdn_prefill: no output requested");
  QC_GPU_REQUIRE(
      !a.out16 || (a.ld_out16 >= inner && a.shift16 >= -24 && a.shift16 <= 24),
      "gdn_prefill: out16 needs ld_out16 >= Nv*dv=" + std::to_string(inner) + " and shift16 in [-24, 24]");
  QC_GPU_REQUIRE(!a.out || a.ld_out >= inner,
                 "gdn_prefill: ld_out must be >= Nv*dv=" + std::to_string(inner));
  QC_GPU_REQUIRE(!a.out_q.hi || (a.out_q.scale && a.out_q.ld >= inner && a.out_q.ld_scale >= inner / kQBlock),
                 "gdn_prefill: out_q needs scale, ld >= Nv*dv and ld_scale >= Nv*dv/32");

  const Scratch s = carve(a, scratch);
  const int conv_warps = (a.n_k_heads + a.n_v_heads) * ((a.m + kConvTokens - 1) / kConvTokens);
  const dim3 conv_grid((conv_warps + kConvThreads / 32 - 1) / (kConvThreads / 32));
  cudaError_t e =
      a.head_k_dim == 128
          ? launch_kernel(gdn_prefill_conv_kernel<128>, conv_grid, dim3(kConvThreads), 0, stream, a.pdl, a, s)
          : launch_kernel(gdn_prefill_conv_kernel<64>, conv_grid, dim3(kConvThreads), 0, stream, a.pdl, a, s);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_prefill_conv_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_prefill_conv_kernel", stream);

  const int ring_rows = a.m < kConvRing ? a.m : kConvRing;
  e = launch_kernel(gdn_prefill_ring_kernel,
                    dim3((a.conv_dim() + kRingThreads - 1) / kRingThreads, ring_rows), dim3(kRingThreads), 0,
                    stream, a.pdl, a, ring_rows);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_prefill_ring_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_prefill_ring_kernel", stream);

  if (a.scan == GdnScan::kChunked) {
    const GpuStatus scan = gdn_chunk_scan(a, chunk_bufs(a, s), stream);
    if (!scan.ok()) return scan;
  } else if (a.scan == GdnScan::kGroup) {
    const GpuStatus scan = gdn_group_scan(a, group_bufs(s), stream);
    if (!scan.ok()) return scan;
  } else if (a.scan == GdnScan::kScaled) {
    const GpuStatus scan = gdn_scaled_scan(a, scaled_bufs(s), stream);
    if (!scan.ok()) return scan;
  } else {
    e = launch_column_scan(gdn_prefill_scan_kernel<128>, gdn_prefill_scan_kernel<64>, a, s, stream);
    if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_prefill_scan_kernel", __FILE__, __LINE__);
    QC_LAUNCH_CHECK("gdn_prefill_scan_kernel", stream);
  }

  const int norm_warps = a.n_v_heads * a.m;
  e = launch_kernel(gdn_prefill_norm_kernel, dim3((norm_warps + kNormThreads / 32 - 1) / (kNormThreads / 32)),
                    dim3(kNormThreads), 0, stream, a.pdl, a, s);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_prefill_norm_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_prefill_norm_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
