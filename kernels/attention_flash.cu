// attention_flash.h: causal gated attention for a chunk of prompt rows on f16 tensor cores.
//
// Block: 16 W query rows of one query head (W = 4 or 8 warps x 16 rows: AttentionArgs::flash_rows), grid
// (row blocks, n_head), the row blocks with the most positions first. The block walks the positions 0 ..
// its last row's in tiles of 64: K and V tiles [64][head_dim] f16 stream into shared memory with cp.async,
// one buffer each, on flash-attention 2's schedule (V_j lands during S_j and the softmax, K_{j+1} during
// P_j V_j). Per tile and warp: S = Q K^T (16 x 64, mma m16n8k16 over head_dim), causal mask by
// position, online softmax in base 2 (row max and sum over the four lanes that share a row),
// O = O * rescale + P V (16 x head_dim). Fragments come from shared memory with ldmatrix (.trans for V);
// shared rows are padded by 16 bytes so the eight rows of an 8x8 matrix fall on distinct banks.
// Shared memory: (16 W + 2 x 64) x
// (head_dim + 8) halves = 99 KiB for head_dim 256 and 4 warps (two blocks per SM), 132 KiB for 8 warps
// (one block per SM, half the K/V traffic per query row). Registers: the output accumulator is
// head_dim / 8 x 4 floats per thread (128 for head_dim 256). The GQA group's heads read the same KV tiles
// through L2 (24 query heads, 4 KV heads for the 27B).
#include <cmath>

#include "attention_flash.h"
#include "common.cuh"
#include "cp_async.cuh"

namespace qc::gpu {
namespace {

constexpr int kKeys = 64;  // positions per tile

// Shared memory of a block of W warps (16 W query rows): the Q tile, one K tile, one V tile, rows padded by
// 16 bytes. 99 KiB for head_dim 256 and 4 warps (two blocks per SM), 132 KiB for 8 warps (one).
template <int D, int W>
struct FlashSmem {
  static constexpr int kRows = 16 * W;
  static constexpr int kLd = D + 8;          // halves per shared row (+16 B: conflict-free ldmatrix)
  static constexpr int kTile = kKeys * kLd;  // halves per K or V tile
  static constexpr size_t kBytes = static_cast<size_t>(kRows * kLd + 2 * kTile) * sizeof(uint16_t);
};

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
// c (16x8 f32) += a (16x16 f16, row) * b (16x8 f16, col)
__device__ __forceinline__ void mma_f16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack_h2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}
// 2^x by the special function unit alone (MUFU.EX2; relative error below 2^-22, subnormal results flushed
// to 0, 2^-inf = 0). expf wraps the same MUFU.EX2 in range reduction and subnormal handling: with it the
// PTX of the 256-dim tile loop is 1956 instructions, with this 1203.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The softmax in base 2 on the raw scores, flash-attention 2's form: the row maximum of the unscaled
// scores, p = 2^(s log2(e) scale - m log2(e) scale) as one FFMA and one MUFU.EX2 a score, no scale multiply
// and no -inf test per score (a masked score is -inf, and 2^-inf = 0; the maximum is taken as 0 while a row
// has none, so -inf - -inf never happens). Against expf on scaled scores: attention phase of a 2048-token
// 27B prompt 9.95 / 10.09 -> 8.56 / 8.46 ms (H100, 2026-12-06, docs/PERFORMANCE.md).
template <int D, int W>
__global__ void __launch_bounds__(32 * W, W == 4 ? 2 : 1)
    attn_flash_kernel(const AttentionArgs a, float scale) {
  using S = FlashSmem<D, W>;
  constexpr int kRows = S::kRows, kThreads = 32 * W;
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t* qs = smem;                   // [kRows][kLd]
  uint16_t* ks = smem + kRows * S::kLd;  // [kKeys][kLd]
  uint16_t* vs = ks + S::kTile;          // [kKeys][kLd]
  pdl_wait();
  pdl_trigger();
  const int h = blockIdx.y, g = h / (a.n_head / a.n_kv);
  const int r0 = (gridDim.x - 1 - blockIdx.x) * kRows;  // the longest blocks start first
  const int pos0 = *a.d_pos;
  const int rows = min(kRows, a.m - r0);
  const int kv_len = min(pos0 + r0 + rows, a.max_ctx);  // positions 0 .. kv_len - 1 exist for this block
  const int n_tiles = (kv_len + kKeys - 1) / kKeys;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  // Q tile: the rotated queries rounded to f16 once; rows past M are zero (never written out). Loads in
  // batches of kQBatch float4s before their stores: one memory latency per batch, not per float4.
  constexpr int kQVecs = kRows * (D / 4) / kThreads, kQBatch = 8;
  static_assert(kQVecs % kQBatch == 0, "Q tile batches");
#pragma unroll 1
  for (int b0 = 0; b0 < kQVecs; b0 += kQBatch) {
    float4 v[kQBatch];
#pragma unroll
    for (int u = 0; u < kQBatch; ++u) {
      const int i = tid + (b0 + u) * kThreads, r = i / (D / 4), c = (i - r * (D / 4)) * 4;
      v[u] = r < rows ? *reinterpret_cast<const float4*>(a.q_scratch +
                                                         (static_cast<size_t>(r0 + r) * a.n_head + h) * D + c)
                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int u = 0; u < kQBatch; ++u) {
      const int i = tid + (b0 + u) * kThreads, r = i / (D / 4), c = (i - r * (D / 4)) * 4;
      *reinterpret_cast<uint2*>(qs + r * S::kLd + c) =
          make_uint2(pack_h2(v[u].x, v[u].y), pack_h2(v[u].z, v[u].w));
    }
  }
  const uint16_t* kg = a.k_cache + static_cast<size_t>(g) * a.max_ctx * D;
  const uint16_t* vg = a.v_cache + static_cast<size_t>(g) * a.max_ctx * D;
  // One K or V tile into its buffer, one commit group. Positions past kv_len (not written yet: any bits)
  // are zero-filled, so 0 * value stays 0 in P V. A thread copies the same 16 bytes of rows lrow,
  // lrow + kRowStep, ...: its column and row offsets are fixed, so a tile costs a pointer, a bound and an
  // unrolled run of copies (the loop with its index arithmetic was ~15 instructions a copy, ~40% of the
  // tile loop's instructions for head_dim 256; SASS, H100 2026-12-06).
  constexpr int kRowChunks = D / 8, kRowStep = kThreads / kRowChunks;  // 16-byte pieces a row, rows a pass
  static_assert(kThreads % kRowChunks == 0 && kKeys % kRowStep == 0, "tile copy passes");
  const int lrow = tid / kRowChunks, lcol = (tid % kRowChunks) * 8;
  auto load_tile = [&](const uint16_t* src, uint16_t* dst, int j) {
    const int t0 = j * kKeys + lrow;
    const uint16_t* s0 = src + static_cast<size_t>(t0) * D + lcol;
    uint16_t* d0 = dst + lrow * S::kLd + lcol;
#pragma unroll
    for (int u = 0; u < kKeys / kRowStep; ++u) {
      const bool ok = t0 + u * kRowStep < kv_len;
      cp_async16(d0 + u * kRowStep * S::kLd, ok ? s0 + static_cast<size_t>(u) * kRowStep * D : src, ok);
    }
    cp_async_commit();
  };

  // This thread's two rows (the accumulator layout of m16n8k16): block rows qr and qr + 8.
  const int qr = warp * 16 + (lane >> 2);
  const int pos_a = pos0 + r0 + qr, pos_b = pos_a + 8;
  const int warp_first_row = r0 + warp * 16;
  // The warp's last real position; a warp with no real row does no math (-1: every tile is past it).
  const int warp_last = warp_first_row < a.m ? pos0 + min(warp_first_row + 15, a.m - 1) : -1;
  const int sel = lane >> 3, sub = lane & 7;  // ldmatrix: which 8x8 matrix this lane addresses, which row

  float o[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;

  // K and V of a tile travel separately, each while the block computes with the other (flash-attention
  // 2's schedule): V_j during S_j = Q K_j^T and the softmax, K_{j+1} during O += P_j V_j. One buffer each.
  load_tile(kg, ks, 0);
  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<0>();
    __syncthreads();  // K_j visible to all; every warp is done with V_{j-1}
    load_tile(vg, vs, j);
    // A tile that starts after every row of this warp is a no-op for them.
    const bool active = j * kKeys <= warp_last;
    uint32_t pa[4]
               [4];  // P as the A operand of P V: k-step nt / 2 holds n-tiles nt (a0, a1) and nt + 1 (a2, a3)
    if (active) {
      // S = Q K^T: 8 n-tiles of 8 positions, k over head_dim in steps of 16.
      float s[8][4];
#pragma unroll
      for (int i = 0; i < 8; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t qa[4];  // rows +0/+8 (sel & 1), dims +0/+8 (sel >> 1)
        ldsm_x4(smem_u32(qs + (warp * 16 + (sel & 1) * 8 + sub) * S::kLd + kk * 16 + (sel >> 1) * 8), qa);
#pragma unroll
        for (int np = 0; np < 4; ++np) {
          uint32_t kb[4];  // positions +0/+8 (sel >> 1), dims +0/+8 (sel & 1)
          ldsm_x4(smem_u32(ks + (np * 16 + (sel >> 1) * 8 + sub) * S::kLd + kk * 16 + (sel & 1) * 8), kb);
          mma_f16(s[2 * np], qa, kb[0], kb[1]);
          mma_f16(s[2 * np + 1], qa, kb[2], kb[3]);
        }
      }

      // Mask by position, online softmax. Lane holds positions key0 + 8 nt + {0, 1} of rows a and b.
      // A tile whose every position exists and precedes the warp's first row needs no mask (the masked
      // path would give the same values: every comparison passes).
      const int key0 = j * kKeys + (lane & 3) * 2;
      const bool full = (j + 1) * kKeys <= kv_len && (j + 1) * kKeys - 1 <= pos0 + warp_first_row;
      float tm_a = -INFINITY, tm_b = -INFINITY;
      if (full) {
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            tm_a = fmaxf(tm_a, s[nt][e]);
            tm_b = fmaxf(tm_b, s[nt][2 + e]);
          }
      } else {
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int key = key0 + nt * 8 + e;
            const bool in = key < kv_len;
            s[nt][e] = in && key <= pos_a ? s[nt][e] : -INFINITY;
            s[nt][2 + e] = in && key <= pos_b ? s[nt][2 + e] : -INFINITY;
            tm_a = fmaxf(tm_a, s[nt][e]);
            tm_b = fmaxf(tm_b, s[nt][2 + e]);
          }
      }
      tm_a = fmaxf(tm_a, __shfl_xor_sync(kFullMask, tm_a, 1));
      tm_a = fmaxf(tm_a, __shfl_xor_sync(kFullMask, tm_a, 2));
      tm_b = fmaxf(tm_b, __shfl_xor_sync(kFullMask, tm_b, 1));
      tm_b = fmaxf(tm_b, __shfl_xor_sync(kFullMask, tm_b, 2));
      const float nm_a = fmaxf(m_a, tm_a), nm_b = fmaxf(m_b, tm_b);
      float sum_a = 0.0f, sum_b = 0.0f;
      const float sl2 = __fmul_rn(scale, 1.4426950408889634f);  // scale log2(e)
      const float ms_a = nm_a == -INFINITY ? 0.0f : __fmul_rn(nm_a, sl2);
      const float ms_b = nm_b == -INFINITY ? 0.0f : __fmul_rn(nm_b, sl2);
      // Exactly 1 when the maximum stays (so the O rescale below can be skipped), 0 on the first tile.
      const float c_a = nm_a == m_a ? 1.0f : ex2(__fsub_rn(__fmul_rn(m_a, sl2), ms_a));
      const float c_b = nm_b == m_b ? 1.0f : ex2(__fsub_rn(__fmul_rn(m_b, sl2), ms_b));
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const float p0 = ex2(__fmaf_rn(s[nt][0], sl2, -ms_a)), p1 = ex2(__fmaf_rn(s[nt][1], sl2, -ms_a));
        const float p2 = ex2(__fmaf_rn(s[nt][2], sl2, -ms_b)), p3 = ex2(__fmaf_rn(s[nt][3], sl2, -ms_b));
        sum_a = __fadd_rn(__fadd_rn(sum_a, p0), p1);
        sum_b = __fadd_rn(__fadd_rn(sum_b, p2), p3);
        pa[nt / 2][(nt & 1) * 2] = pack_h2(p0, p1);
        pa[nt / 2][(nt & 1) * 2 + 1] = pack_h2(p2, p3);
      }
      m_a = nm_a;
      m_b = nm_b;
      sum_a = __fadd_rn(sum_a, __shfl_xor_sync(kFullMask, sum_a, 1));
      sum_a = __fadd_rn(sum_a, __shfl_xor_sync(kFullMask, sum_a, 2));
      sum_b = __fadd_rn(sum_b, __shfl_xor_sync(kFullMask, sum_b, 1));
      sum_b = __fadd_rn(sum_b, __shfl_xor_sync(kFullMask, sum_b, 2));
      l_a = __fadd_rn(__fmul_rn(l_a, c_a), sum_a);
      l_b = __fadd_rn(__fmul_rn(l_b, c_b), sum_b);
      // o * 1 == o exactly: once the rows' maxima settle (most tiles of a long row), the warp skips the
      // head_dim / 2 multiplies a thread.
      if (!__all_sync(kFullMask, c_a == 1.0f && c_b == 1.0f)) {
#pragma unroll
        for (int i = 0; i < D / 8; ++i) {
          o[i][0] = __fmul_rn(o[i][0], c_a);
          o[i][1] = __fmul_rn(o[i][1], c_a);
          o[i][2] = __fmul_rn(o[i][2], c_b);
          o[i][3] = __fmul_rn(o[i][3], c_b);
        }
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // V_j visible to all; every warp is done with K_j
    if (j + 1 < n_tiles) load_tile(kg, ks, j + 1);
    if (active) {
      // O += P V: k over the tile's 64 positions in steps of 16, n over head_dim in pairs of 8.
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t vb[4];  // positions +0/+8 (sel & 1), dims +0/+8 (sel >> 1), transposed
          ldsm_x4_trans(smem_u32(vs + (kk * 16 + (sel & 1) * 8 + sub) * S::kLd + dp * 16 + (sel >> 1) * 8),
                        vb);
          mma_f16(o[2 * dp], pa[kk], vb[0], vb[1]);
          mma_f16(o[2 * dp + 1], pa[kk], vb[2], vb[3]);
        }
    }
  }

  // out = o / l * sigmoid(gate), the decode merge's arithmetic. The gates of kOutBatch column groups are
  // loaded before any of their outputs is stored (a store may alias a later load for all the compiler
  // knows, so element by element each gate cost one memory latency: ~40 us a block for head_dim 256).
  const int row_a = r0 + qr, row_b = row_a + 8;
  const bool in_a = row_a < a.m, in_b = row_b < a.m;
  const float* gate_a = a.q_gate + static_cast<size_t>(in_a ? row_a : 0) * a.ld_q + h * 2 * D + D;
  const float* gate_b = a.q_gate + static_cast<size_t>(in_b ? row_b : 0) * a.ld_q + h * 2 * D + D;
  // f32 rows and/or f16 ones (rows_to_f16's rounding of the same values, two columns a 4-byte store).
  float* out_a = a.out ? a.out + static_cast<size_t>(in_a ? row_a : 0) * a.ld_out + h * D : nullptr;
  float* out_b = a.out ? a.out + static_cast<size_t>(in_b ? row_b : 0) * a.ld_out + h * D : nullptr;
  uint16_t* o16_a = a.out16 ? a.out16 + static_cast<size_t>(in_a ? row_a : 0) * a.ld_out16 + h * D : nullptr;
  uint16_t* o16_b = a.out16 ? a.out16 + static_cast<size_t>(in_b ? row_b : 0) * a.ld_out16 + h * D : nullptr;
  const float scale16 = ldexpf(1.0f, -a.shift16);  // a power of two: exact
  constexpr int kOutBatch = 8;
  static_assert((D / 8) % kOutBatch == 0, "output batches");
#pragma unroll
  for (int i0 = 0; i0 < D / 8; i0 += kOutBatch) {
    float ga[kOutBatch][2], gb[kOutBatch][2];
#pragma unroll
    for (int u = 0; u < kOutBatch; ++u)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = (i0 + u) * 8 + (lane & 3) * 2 + e;
        ga[u][e] = in_a ? gate_a[col] : 0.0f;
        gb[u][e] = in_b ? gate_b[col] : 0.0f;
      }
#pragma unroll
    for (int u = 0; u < kOutBatch; ++u) {
      const int col = (i0 + u) * 8 + (lane & 3) * 2;
      float ya[2], yb[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        ya[e] = __fmul_rn(__fdiv_rn(o[i0 + u][e], l_a), sigmoid(ga[u][e]));
        yb[e] = __fmul_rn(__fdiv_rn(o[i0 + u][2 + e], l_b), sigmoid(gb[u][e]));
        if (in_a && out_a) out_a[col + e] = ya[e];
        if (in_b && out_b) out_b[col + e] = yb[e];
      }
      if (in_a && o16_a)
        *reinterpret_cast<uint32_t*>(o16_a + col) =
            static_cast<uint32_t>(f2h(saturate_f16(__fmul_rn(ya[0], scale16)))) |
            static_cast<uint32_t>(f2h(saturate_f16(__fmul_rn(ya[1], scale16)))) << 16;
      if (in_b && o16_b)
        *reinterpret_cast<uint32_t*>(o16_b + col) =
            static_cast<uint32_t>(f2h(saturate_f16(__fmul_rn(yb[0], scale16)))) |
            static_cast<uint32_t>(f2h(saturate_f16(__fmul_rn(yb[1], scale16)))) << 16;
    }
  }
}

template <int D, int W>
cudaError_t launch_flash(const AttentionArgs& a, float scale, cudaStream_t stream) {
  const size_t smem = FlashSmem<D, W>::kBytes;
  const cudaError_t e = cudaFuncSetAttribute(
      attn_flash_kernel<D, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  const dim3 grid((a.m + FlashSmem<D, W>::kRows - 1) / FlashSmem<D, W>::kRows, a.n_head);
  return launch_kernel(attn_flash_kernel<D, W>, grid, dim3(32 * W), smem, stream, a.pdl, a, scale);
}

}  // namespace

GpuStatus attention_flash_rows(const AttentionArgs& a, cudaStream_t stream) {
  const int rows = a.flash_rows == 0 ? kFlashRowsDefault : a.flash_rows;  // 64 or 128 (attention_prefill)
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.head_dim)));
  cudaError_t e;
  if (a.head_dim == 256)
    e = rows == 64 ? launch_flash<256, 4>(a, scale, stream) : launch_flash<256, 8>(a, scale, stream);
  else
    e = rows == 64 ? launch_flash<128, 4>(a, scale, stream) : launch_flash<128, 8>(a, scale, stream);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch attn_flash_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("attn_flash_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
