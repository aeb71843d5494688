// Kernels of gdn_chunk.h: prep (per chunk and value head) and scan (per value-column tile and value head).
// Every sum has a fixed order (mma.sync, fixed loops), so the results are a function of the inputs and
// the chunk grid alone.

#include "common.cuh"
#include "cp_async.cuh"
#include "gdn_chunk.h"
#include "mma_tf32.cuh"

namespace qc::gpu {
namespace {

constexpr int kC = kGdnChunk;
constexpr int kThreads = 128;  // 4 warps; warp w owns chunk rows [16w, 16w + 16) of every 64-row product
constexpr int kTS = kC + 4;  // row stride of the 64x64 matrices (= 4 mod 32: A-fragment loads conflict-free)
constexpr int kXS = 40;      // row stride of 32-column tiles (= 8 mod 32: B-fragment loads conflict-free)
constexpr int kTile = 32;    // value (and key) columns per tile

static_assert(kC == 64, "the warp layout assumes 64-row chunks");

// Prep's shared memory (dynamic): k, q and v rows of the chunk staged with cp.async at the start (one
// load latency per block), then everything is read from here. dk 128, dv 128: 164 KB, one block per SM.
template <int DK>
struct PrepSmem {
  float k[kC][DK + 4];  // k rows of the chunk (0 outside the call)
  float q[kC][DK + 4];  // q rows
  float a[kC][kTS];     // A (strictly lower)
  float t[kC][kTS];     // T = (I + A)^-1 (lower, unit diagonal)
  float p[kC][kTS];     // P (lower)
  float x[kC][kXS];     // a 64 x 32 tile: W or U (B operand of the next product); R of the block solve
  float g[kC];          // G: cumulative log decay, hi part (gdn_chunk.h)
  float g_lo[kC];       // its lo part
  float beta[kC];
  float bg[kC];  // beta * exp(G)
  float v[1];    // [kC][dv + 4] v rows (run-time dv; the struct is allocated with prep_smem_bytes)
};

template <int DK>
size_t prep_smem_bytes(int dv) {
  return sizeof(PrepSmem<DK>) - sizeof(float) + sizeof(float) * kC * (dv + 4);
}

__device__ __forceinline__ bool in_call(int r, int m) {
  return r >= 0 && r < m;
}

// G_t - G_s from hi + lo parts (gdn_chunk.h): the hi difference is exact when the two are within a factor 2.
__device__ __forceinline__ float g_diff(float hi_t, float lo_t, float hi_s, float lo_s) {
  return __fadd_rn(__fsub_rn(hi_t, hi_s), __fsub_rn(lo_t, lo_s));
}

// acc[nt] += L[band rows][s] * B(s, nt) for a 16-row band (A-fragment rows row_a, row_a + 8) and the four
// 8-wide column tiles nt, over the chunk columns s < 8 n_low: L (T or P) is lower triangular, so nothing
// right of the band's diagonal contributes. bop(s, nt) gives the B fragment (rows s, s + 4; column g).
template <class BOperand>
__device__ __forceinline__ void lower_band_product(float (&acc)[4][4], const float (*L)[kTS], int row_a,
                                                   int n_low, int t, BOperand bop) {
  for (int ks = 0; ks < 8; ++ks) {
    if (ks < n_low) {
      const int s = 8 * ks + t;
      const float al[4] = {L[row_a][s], L[row_a + 8][s], L[row_a][s + 4], L[row_a + 8][s + 4]};
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const float2 v = bop(s, nt);
        const float bb[2] = {v.x, v.y};
        mma_f32x3(acc[nt], al, bb);
      }
    }
  }
}

// One block per (chunk ci, value head j). Chunk rows l = 0..63 are call rows r0 + l, r0 = ci*64 - off.
template <int DK>
__global__ void __launch_bounds__(kThreads, 1) gdn_chunk_prep_kernel(const GdnArgs a, const GdnChunkBufs b) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  PrepSmem<DK>& sm = *reinterpret_cast<PrepSmem<DK>*>(smem_raw);
  pdl_wait();
  pdl_trigger();
  const int off = *a.d_pos % kC, nc = (off + a.m + kC - 1) / kC;
  const int ci = blockIdx.x, j = blockIdx.y;
  if (ci >= nc) return;  // block-uniform
  const int nk = a.n_k_heads, kh = j % nk, dv = a.head_v_dim, ldv = a.n_v_heads * dv, vs = dv + 4;
  const int r0 = ci * kC - off;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const size_t slot = static_cast<size_t>(j) * b.rows + static_cast<size_t>(ci) * kC;
  float* const sv = sm.v;  // v row l at sv + l * vs

  // 1. k, q, v rows (zeros outside the call), gates, zeroed A / T / P.
  for (int e = tid; e < kC * DK / 2; e += kThreads) {  // q | k, 16 bytes each
    const int row = e / (DK / 2), c4 = e % (DK / 2), r = r0 + row;
    const bool ok = in_call(r, a.m);
    const float* src = ok ? b.qk + (static_cast<size_t>(r) * nk + kh) * 2 * DK + 4 * c4 : b.qk;
    float* dst = c4 < DK / 4 ? &sm.q[row][4 * c4] : &sm.k[row][4 * c4 - DK];
    cp_async16(dst, src, ok);
  }
  for (int e = tid; e < kC * dv / 4; e += kThreads) {
    const int row = e / (dv / 4), c4 = e % (dv / 4), r = r0 + row;
    const bool ok = in_call(r, a.m);
    const float* src = ok ? b.vo + static_cast<size_t>(r) * ldv + static_cast<size_t>(j) * dv + 4 * c4 : b.vo;
    cp_async16(sv + row * vs + 4 * c4, src, ok);
  }
  cp_async_commit();
  if (tid < kC) {
    const int r = r0 + tid;
    const bool ok = in_call(r, a.m);
    sm.beta[tid] = ok ? b.gate[(static_cast<size_t>(j) * b.mp + r) * 2] : 0.0f;
    sm.g[tid] = ok ? fmaxf(b.gate[(static_cast<size_t>(j) * b.mp + r) * 2 + 1], kGdnChunkMinLogDecay) : 0.0f;
  }
  for (int e = tid; e < kC * kTS; e += kThreads) {
    (&sm.a[0][0])[e] = 0.0f;
    (&sm.t[0][0])[e] = 0.0f;
    (&sm.p[0][0])[e] = 0.0f;
  }
  __syncthreads();
  // G: inclusive scan in double, lane l holds positions 2l, 2l+1 (a fixed tree), split into hi + lo.
  if (warp == 0) {
    const double x0 = sm.g[2 * lane], x1 = sm.g[2 * lane + 1];
    double s = __dadd_rn(x0, x1);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const double y = __shfl_up_sync(kFullMask, s, o);
      if (lane >= o) s = __dadd_rn(s, y);
    }
    double excl = __shfl_up_sync(kFullMask, s, 1);
    if (lane == 0) excl = 0.0;
    const double g0 = __dadd_rn(excl, x0), g1 = __dadd_rn(g0, x1);
    const float h0 = __double2float_rn(g0), h1 = __double2float_rn(g1);
    sm.g[2 * lane] = h0;
    sm.g_lo[2 * lane] = __double2float_rn(__dsub_rn(g0, h0));
    sm.g[2 * lane + 1] = h1;
    sm.g_lo[2 * lane + 1] = __double2float_rn(__dsub_rn(g1, h1));
  }
  cp_async_wait<0>();
  __syncthreads();
  if (tid < kC) {
    sm.bg[tid] = __fmul_rn(sm.beta[tid], expf(sm.g[tid]));
    b.g[slot + tid] = sm.g[tid];
    b.g_lo[slot + tid] = sm.g_lo[tid];
  }

  // 2. K K^T and Q K^T for the lower triangle: warp w, rows [16w, 16w+16), column tiles 0 .. 2w+1.
  const int row_a = 16 * warp + g;  // A-fragment rows row_a, row_a + 8
  const int n_low = 2 * warp + 2;   // 8-wide tiles at or left of the band's diagonal
  {
    float kk[8][4] = {}, qk[8][4] = {};
    for (int ks = 0; ks < DK / 8; ++ks) {
      const int c = 8 * ks + t;
      const float ak[4] = {sm.k[row_a][c], sm.k[row_a + 8][c], sm.k[row_a][c + 4], sm.k[row_a + 8][c + 4]};
      const float aq[4] = {sm.q[row_a][c], sm.q[row_a + 8][c], sm.q[row_a][c + 4], sm.q[row_a + 8][c + 4]};
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        if (nt < n_low) {
          const float bb[2] = {sm.k[8 * nt + g][c], sm.k[8 * nt + g][c + 4]};
          mma_f32x3(kk[nt], ak, bb);
          mma_f32x3(qk[nt], aq, bb);
        }
      }
    }
    __syncthreads();  // bg visible
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      if (nt < n_low) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = row_a + (e >= 2 ? 8 : 0), col = 8 * nt + 2 * t + (e & 1);
          if (col <= row) {
            const float decay = expf(g_diff(sm.g[row], sm.g_lo[row], sm.g[col], sm.g_lo[col]));
            if (col < row) sm.a[row][col] = __fmul_rn(__fmul_rn(sm.beta[row], decay), kk[nt][e]);
            sm.p[row][col] = __fmul_rn(decay, qk[nt][e]);
          }
        }
      }
    }
  }
  __syncthreads();

  // 3. T = (I + A)^-1. Diagonal 16x16 blocks: warp w, lane c < 16 solves column c by forward substitution.
  if (lane < 16) {
    const int base = 16 * warp;
    float x[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      float acc = i == lane ? 1.0f : 0.0f;
#pragma unroll
      for (int jj = 0; jj < i; ++jj) acc = __fmaf_rn(-sm.a[base + i][base + jj], x[jj], acc);
      x[i] = acc;
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) sm.t[base + i][base + lane] = x[i];
  }
  __syncthreads();
  // Off-diagonal blocks, block row ib = 1..3: T_ib = -T_ii sum_{k=b}^{ib-1} A_ik T_kb (b < ib), R in x.
  for (int ib = 1; ib < 4; ++ib) {
    const int n = ib * 256;
    for (int e = tid; e < n; e += kThreads) {
      const int bb = e / 256, rr = (e / 16) % 16, cc = e % 16;
      float acc = 0.0f;
      for (int kb = bb; kb < ib; ++kb)
#pragma unroll
        for (int m = 0; m < 16; ++m)
          acc = __fmaf_rn(sm.a[16 * ib + rr][16 * kb + m], sm.t[16 * kb + m][16 * bb + cc], acc);
      sm.x[16 * bb + rr][cc] = acc;
    }
    __syncthreads();
    for (int e = tid; e < n; e += kThreads) {
      const int bb = e / 256, rr = (e / 16) % 16, cc = e % 16;
      float acc = 0.0f;
#pragma unroll
      for (int m = 0; m < 16; ++m)  // T_ii is lower triangular: the terms m > rr are exact zeros
        acc = __fmaf_rn(sm.t[16 * ib + rr][16 * ib + m], sm.x[16 * bb + m][cc], acc);
      sm.t[16 * ib + rr][16 * bb + cc] = -acc;
    }
    __syncthreads();
  }

  // The x tile as the B operand (P W, P U).
  auto x_tile = [&](int s, int nt) { return make_float2(sm.x[s][8 * nt + g], sm.x[s + 4][8 * nt + g]); };

  // 4. Key side, 32 columns at a time: W = T (beta gamma K), Qw = gamma Q - P W. T and P are lower
  // triangular, so band w needs chunk columns < 16w + 16 only (k-steps < n_low).
  for (int ct = 0; ct < DK / kTile; ++ct) {
    float acc[4][4] = {};
    lower_band_product(acc, sm.t, row_a, n_low, t, [&](int s, int nt) {
      const int c = kTile * ct + 8 * nt + g;
      return make_float2(__fmul_rn(sm.bg[s], sm.k[s][c]), __fmul_rn(sm.bg[s + 4], sm.k[s + 4][c]));
    });
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_a + (e >= 2 ? 8 : 0), col = 8 * nt + 2 * t + (e & 1);
        b.w[(slot + row) * DK + kTile * ct + col] = acc[nt][e];
        sm.x[row][col] = acc[nt][e];
      }
    __syncthreads();
    float pw[4][4] = {};
    lower_band_product(pw, sm.p, row_a, n_low, t, x_tile);
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_a + (e >= 2 ? 8 : 0), col = 8 * nt + 2 * t + (e & 1);
        b.qw[(slot + row) * DK + kTile * ct + col] =
            __fsub_rn(__fmul_rn(expf(sm.g[row]), sm.q[row][kTile * ct + col]), pw[nt][e]);
      }
    __syncthreads();  // x is rewritten by the next tile
  }

  // 5. Value side, 32 columns at a time: U = T (beta V) over v in place in global memory (v itself is
  // read from shared memory), Ou = P U.
  for (int vt = 0; vt < dv / kTile; ++vt) {
    const size_t col0 = static_cast<size_t>(j) * dv + kTile * vt;
    float acc[4][4] = {};
    lower_band_product(acc, sm.t, row_a, n_low, t, [&](int s, int nt) {
      const int c = kTile * vt + 8 * nt + g;
      return make_float2(__fmul_rn(sm.beta[s], sv[s * vs + c]),
                         __fmul_rn(sm.beta[s + 4], sv[(s + 4) * vs + c]));
    });
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_a + (e >= 2 ? 8 : 0), col = 8 * nt + 2 * t + (e & 1), r = r0 + row;
        sm.x[row][col] = acc[nt][e];
        if (in_call(r, a.m)) b.vo[static_cast<size_t>(r) * ldv + col0 + col] = acc[nt][e];
      }
    __syncthreads();
    float pu[4][4] = {};
    lower_band_product(pu, sm.p, row_a, n_low, t, x_tile);
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_a + (e >= 2 ? 8 : 0), col = 8 * nt + 2 * t + (e & 1);
        b.ou[(slot + row) * dv + kTile * vt + col] = pu[nt][e];
      }
    __syncthreads();
  }
}

// Scan's shared memory (dynamic: 202 KB for dk 128, one block per SM). Each warp stages its own operands
// with cp.async a chunk ahead (W and Qw rows of its band, double-buffered) or a step ahead (its slice of
// the k columns), so the loads of chunk c+1 are in flight while chunk c computes.
template <int DK>
struct ScanSmem {
  static constexpr int MT = DK / 64;      // 16-row state tiles per warp
  static constexpr int KS = 16 * MT + 8;  // k-slice row stride (= 8 mod 32)
  float wq[2][2][kC][DK + 4];             // [stage][W | Qw][chunk row][key column]
  float kc[4][kC][KS];                    // [warp][chunk row][the warp's state rows]
  float s[DK][kXS];                       // the state tile as the B operand of W S and Qw S
  float d[kC][kXS];                       // delta
};

// One block per (32 value columns c0.., value head j): the chunks in order. Warp w holds state rows
// [16 MT w, 16 MT (w+1)) x 32 columns as MT x 4 accumulator tiles.
template <int DK>
__global__ void __launch_bounds__(kThreads, 1) gdn_chunk_scan_kernel(const GdnArgs a, const GdnChunkBufs b) {
  using Sm = ScanSmem<DK>;
  constexpr int MT = Sm::MT;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Sm& sm = *reinterpret_cast<Sm*>(smem_raw);
  pdl_wait();
  pdl_trigger();
  const int off = *a.d_pos % kC, nc = (off + a.m + kC - 1) / kC;
  const int j = blockIdx.y, c0 = blockIdx.x * kTile;
  const int nk = a.n_k_heads, kh = j % nk, dv = a.head_v_dim, ldv = a.n_v_heads * dv;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  float* state = a.state + static_cast<size_t>(j) * DK * dv + c0;
  auto srow = [&](int mt, int e) { return (warp * MT + mt) * 16 + g + (e >= 2 ? 8 : 0); };
  auto scol = [&](int nt, int e) { return 8 * nt + 2 * t + (e & 1); };
  auto chunk_slot = [&](int ci) { return static_cast<size_t>(j) * b.rows + static_cast<size_t>(ci) * kC; };
  // This warp's band of W and Qw for chunk ci into stage st.
  auto load_wq = [&](int ci, int st) {
    constexpr int P = DK / 4;  // 16-byte pieces per row
    const size_t slot = chunk_slot(ci);
    for (int e = lane; e < 2 * 16 * P; e += 32) {
      const int which = e / (16 * P), rr = (e / P) % 16, c4 = e % P;
      const float* src = (which ? b.qw : b.w) + (slot + 16 * warp + rr) * DK + 4 * c4;
      cp_async16(&sm.wq[st][which][16 * warp + rr][4 * c4], src);
    }
  };
  // This warp's slice of the k rows of chunk ci (zeros outside the call).
  auto load_k = [&](int ci) {
    constexpr int P = 4 * MT;
    const int r0 = ci * kC - off;
    for (int e = lane; e < kC * P; e += 32) {
      const int s = e / P, c4 = e % P, r = r0 + s;
      const bool ok = in_call(r, a.m);
      const float* src =
          ok ? b.qk + (static_cast<size_t>(r) * nk + kh) * 2 * DK + DK + 16 * MT * warp + 4 * c4 : b.qk;
      cp_async16(&sm.kc[warp][s][4 * c4], src, ok);
    }
  };

  float acc[MT][4][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][nt][e] = state[static_cast<size_t>(srow(mt, e)) * dv + scol(nt, e)];

  const int row_a = 16 * warp + g;
  load_wq(0, 0);
  cp_async_commit();
  for (int ci = 0; ci < nc; ++ci) {
    const int r0 = ci * kC - off, st = ci & 1;
    const size_t slot = chunk_slot(ci);
    load_k(ci);
    cp_async_commit();
    if (ci + 1 < nc) load_wq(ci + 1, st ^ 1);  // stage st^1 was last read in chunk ci-1's step 2
    cp_async_commit();
    // Registers for after step 2 (loads in flight during it): U and Ou of this warp's rows, the gates.
    float u[4][4], ou[4][4], gs[8][2], gl[8][2];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_a + (e >= 2 ? 8 : 0), col = scol(nt, e), r = r0 + row;
        u[nt][e] = in_call(r, a.m)
                       ? b.vo[static_cast<size_t>(r) * ldv + static_cast<size_t>(j) * dv + c0 + col]
                       : 0.0f;
        ou[nt][e] = b.ou[(slot + row) * dv + c0 + col];
      }
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) {
      gs[ks][0] = b.g[slot + 8 * ks + t];
      gs[ks][1] = b.g[slot + 8 * ks + t + 4];
      gl[ks][0] = b.g_lo[slot + 8 * ks + t];
      gl[ks][1] = b.g_lo[slot + 8 * ks + t + 4];
    }
    const float g_last = b.g[slot + kC - 1], g_last_lo = b.g_lo[slot + kC - 1];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) sm.s[srow(mt, e)][scol(nt, e)] = acc[mt][nt][e];
    cp_async_wait<2>();  // this warp's W and Qw of chunk ci
    __syncwarp();
    __syncthreads();  // the state tile complete

    // delta = U - W S and o = Qw S + Ou for rows [16w, 16w+16).
    {
      float ws[4][4] = {}, qs[4][4] = {};
      const float(*w)[DK + 4] = sm.wq[st][0];
      const float(*q)[DK + 4] = sm.wq[st][1];
#pragma unroll 4
      for (int ks = 0; ks < DK / 8; ++ks) {
        const int c = 8 * ks + t;
        const float aw[4] = {w[row_a][c], w[row_a + 8][c], w[row_a][c + 4], w[row_a + 8][c + 4]};
        const float aq[4] = {q[row_a][c], q[row_a + 8][c], q[row_a][c + 4], q[row_a + 8][c + 4]};
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          const float bb[2] = {sm.s[c][8 * nt + g], sm.s[c + 4][8 * nt + g]};
          mma_f32x3(ws[nt], aw, bb);
          mma_f32x3(qs[nt], aq, bb);
        }
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = row_a + (e >= 2 ? 8 : 0), col = scol(nt, e), r = r0 + row;
          sm.d[row][col] = __fsub_rn(u[nt][e], ws[nt][e]);
          if (in_call(r, a.m))
            b.vo[static_cast<size_t>(r) * ldv + static_cast<size_t>(j) * dv + c0 + col] =
                __fadd_rn(ou[nt][e], qs[nt][e]);
        }
    }
    cp_async_wait<1>();  // this warp's k slice of chunk ci
    __syncwarp();
    __syncthreads();  // delta complete

    // S = gamma_L S + (e K)^T delta, e_s = exp(G_L - G_s).
    {
      const float gamma_l = expf(g_last);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][nt][e] = __fmul_rn(acc[mt][nt][e], gamma_l);
#pragma unroll
      for (int ks = 0; ks < kC / 8; ++ks) {
        const int s = 8 * ks + t;
        const float ea = expf(g_diff(g_last, g_last_lo, gs[ks][0], gl[ks][0]));
        const float eb = expf(g_diff(g_last, g_last_lo, gs[ks][1], gl[ks][1]));
        float bd[4][2];
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          bd[nt][0] = sm.d[s][8 * nt + g];
          bd[nt][1] = sm.d[s + 4][8 * nt + g];
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const float* ka = sm.kc[warp][s];
          const float* kb = sm.kc[warp][s + 4];
          const int cl = 16 * mt + g;
          const float ak[4] = {__fmul_rn(ka[cl], ea), __fmul_rn(ka[cl + 8], ea), __fmul_rn(kb[cl], eb),
                               __fmul_rn(kb[cl + 8], eb)};
#pragma unroll
          for (int nt = 0; nt < 4; ++nt) mma_f32x3(acc[mt][nt], ak, bd[nt]);
        }
      }
    }
    __syncthreads();  // s and d are rewritten by the next chunk
  }
  cp_async_wait<0>();

#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) state[static_cast<size_t>(srow(mt, e)) * dv + scol(nt, e)] = acc[mt][nt][e];
}

template <int DK>
GpuStatus launch(const GdnArgs& a, const GdnChunkBufs& b, cudaStream_t stream) {
  const int smem = static_cast<int>(prep_smem_bytes<DK>(a.head_v_dim));
  cudaError_t e =
      cudaFuncSetAttribute(gdn_chunk_prep_kernel<DK>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "gdn_chunk_prep_kernel shared memory", __FILE__, __LINE__);
  e = launch_kernel(gdn_chunk_prep_kernel<DK>, dim3(gdn_chunk_slots(a.m), a.n_v_heads), dim3(kThreads),
                    static_cast<size_t>(smem), stream, a.pdl, a, b);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_chunk_prep_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_chunk_prep_kernel", stream);
  const int scan_smem = static_cast<int>(sizeof(ScanSmem<DK>));
  e = cudaFuncSetAttribute(gdn_chunk_scan_kernel<DK>, cudaFuncAttributeMaxDynamicSharedMemorySize, scan_smem);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "gdn_chunk_scan_kernel shared memory", __FILE__, __LINE__);
  e = launch_kernel(gdn_chunk_scan_kernel<DK>, dim3(a.head_v_dim / kTile, a.n_v_heads), dim3(kThreads),
                    static_cast<size_t>(scan_smem), stream, a.pdl, a, b);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_chunk_scan_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_chunk_scan_kernel", stream);
  return GpuStatus::success();
}

}  // namespace

size_t gdn_chunk_floats(const GdnArgs& a) {
  const size_t rows = static_cast<size_t>(gdn_chunk_slots(a.m > 0 ? a.m : 0)) * kC;
  return rows * a.n_v_heads * (2 * static_cast<size_t>(a.head_k_dim) + a.head_v_dim + 2);
}

GpuStatus gdn_chunk_scan(const GdnArgs& a, const GdnChunkBufs& b, cudaStream_t stream) {
  return a.head_k_dim == 128 ? launch<128>(a, b, stream) : launch<64>(a, b, stream);
}

}  // namespace qc::gpu
