// Kernels of attention.h: prep (norm + RoPE + KV store), split (partial softmax over a range of
// positions for one KV head's query group), merge (fixed-order combine + output gate + quantise).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "attention.h"
#include "attention_flash.h"
#include "common.cuh"
#include "norm_quant.h"

namespace qc::gpu {
namespace {

constexpr int kSplitWarps = 4;
constexpr int kSplitThreads = 32 * kSplitWarps;

// ---- prep: one warp per (row, head), kPrepWarps warps a block ----
// Lane l holds dims l + 32 r (r < head_dim / 32). The sum of squares is reduced in the order block_sum
// used when a block of head_dim threads did it (a butterfly per 32 dims, then the partials' butterfly in
// which lanes past head_dim / 32 add zeros, i.e. the pairwise tree below), so the bits are the same as
// that kernel's, the decode path's included; the warp needs no block barrier (the block version waited
// on three a row: 77 us for 1024 rows of the 27B on an H100; the warp version was not timed alone, it is
// part of the attention phase's 14.2 -> 11.1 ms, docs/PERFORMANCE.md). The rotation partner (dim
// d +- rope_dims / 2) comes through the warp's shared row.
constexpr int kPrepWarps = 8;

// block_sum's second stage over the R = D / 32 partials, which sit in lanes 0 .. R-1 with zeros in the
// others: its xor butterfly adds zeros (x + 0 == x for x >= 0) until the offset drops below R, then
// lane i adds lane i + offset, which is this halving tree.
template <int D>
__device__ __forceinline__ float prep_sum(float (&v)[D / 32]) {
#pragma unroll
  for (int off = D / 64; off > 0; off >>= 1)
#pragma unroll
    for (int i = 0; i < off; ++i) v[i] = __fadd_rn(v[i], v[i + off]);
  return v[0];
}

template <int D>
__global__ void __launch_bounds__(32 * kPrepWarps) attn_prep_kernel(const AttentionArgs a) {
  constexpr int R = D / 32;
  __shared__ float rows[kPrepWarps][D];
  pdl_wait();
  pdl_trigger();
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  const int w = blockIdx.x * kPrepWarps + wib, heads = a.n_head + a.n_kv;
  const int m = w / heads, h = w % heads;
  if (m >= a.m) return;  // warp-uniform; only __syncwarp below
  const int pos = *a.d_pos + m;
  const bool is_q = h < a.n_head;
  const int kh = h - a.n_head;
  const float* src = is_q ? a.q_gate + static_cast<size_t>(m) * a.ld_q + h * 2 * D
                          : a.k + static_cast<size_t>(m) * a.ld_k + kh * D;
  const float* nw = is_q ? a.q_norm : a.k_norm;
  float x[R], part[R], vv[R];
#pragma unroll
  for (int r = 0; r < R; ++r) x[r] = src[lane + 32 * r];
  if (!is_q)
#pragma unroll
    for (int r = 0; r < R; ++r) vv[r] = a.v[static_cast<size_t>(m) * a.ld_v + kh * D + lane + 32 * r];
#pragma unroll
  for (int r = 0; r < R; ++r) part[r] = warp_sum(__fmul_rn(x[r], x[r]));
  const float ss = prep_sum<D>(part);
  const float inv = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(ss, static_cast<float>(D)), a.eps)));
  float* row = rows[wib];
  float y[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    y[r] = __fmul_rn(__fmul_rn(x[r], inv), nw[lane + 32 * r]);
    row[lane + 32 * r] = y[r];
  }
  __syncwarp();
  const int half = a.rope_dims / 2;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int d = lane + 32 * r;
    float out = y[r];
    if (d < a.rope_dims) {
      const int i = d < half ? d : d - half;
      const double inv_freq = pow(static_cast<double>(a.rope_theta), -2.0 * i / a.rope_dims);
      double sd, cd;
      sincos(static_cast<double>(pos) * inv_freq, &sd, &cd);
      const float sn = static_cast<float>(sd), cs = static_cast<float>(cd);
      out = d < half ? __fsub_rn(__fmul_rn(y[r], cs), __fmul_rn(row[d + half], sn))
                     : __fadd_rn(__fmul_rn(y[r], cs), __fmul_rn(row[d - half], sn));
    }
    if (is_q) {
      a.q_scratch[(static_cast<size_t>(m) * a.n_head + h) * D + d] = out;
    } else if (pos >= 0 && pos < a.max_ctx) {
      const size_t at = (static_cast<size_t>(kh) * a.max_ctx + pos) * D + d;
      a.k_cache[at] = f2h(out);
      a.v_cache[at] = f2h(vv[r]);
    }
  }
}

// ---- split: grid (n_kv * n_splits, M), 4 warps; G query heads per KV head, DPL dims per lane ----
// A lane's DPL f16 values of one K or V row, as loaded (16 bytes for head_dim 256, 8 for 128).
template <int DPL>
using F16Row = std::conditional_t<DPL == 8, uint4, uint2>;

template <int DPL>
__device__ __forceinline__ void unpack_f16_row(const F16Row<DPL>& raw, float* out) {
  if constexpr (DPL == 8) {
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      out[2 * j] = h2f(static_cast<uint16_t>(w[j] & 0xffffu));
      out[2 * j + 1] = h2f(static_cast<uint16_t>(w[j] >> 16));
    }
  } else {
    const uint32_t w[2] = {raw.x, raw.y};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      out[2 * j] = h2f(static_cast<uint16_t>(w[j] & 0xffffu));
      out[2 * j + 1] = h2f(static_cast<uint16_t>(w[j] >> 16));
    }
  }
}

// kKvAhead: positions of K and V a warp has in flight while it computes the ones before them (a batch:
// issued together, waited for once, after the batch before has been computed; AttentionArgs::kv_ahead).
// Why: one position at a time (the first form), a warp has one K and one V row in flight, 1 KB for head_dim
// 256, and with the 27B's grid at 32k (4 KV heads x 66 splits of 4 warps: 8 warps an SM) an SM 8 KB; by
// Little's law, with ~1 us of loaded DRAM latency, that is ~8 KB/us an SM, ~1 TB/s for 132 SMs -- what the
// 12-02 run measured (0.93 TB/s, 144 us a layer at 32k, docs/PERFORMANCE.md). A batch of 4 keeps ~4x that
// in flight, for 64 more registers a lane (head_dim 256); the arithmetic, and so every bit, is the first
// form's: the same positions in the same order through the same operations (a GPU test compares 1 and 4).
// kKvAhead 1 is the first form's loop, unchanged: the default until the batch of 4 has run and been timed on
// a GPU (written in the fourteenth session, when none came; tools/device/README.md has the call).
constexpr int kKvAheadDefault = 1;
constexpr int kKvAheadBatch = 4;

template <int G, int DPL, int kKvAhead>
__global__ void __launch_bounds__(kSplitThreads)
    attn_split_kernel(const AttentionArgs a, int n_splits, int split_len, float scale) {
  constexpr int D = 32 * DPL;
  extern __shared__ float sm[];  // per warp: max[G], sum[G], acc[G][D]
  pdl_wait();
  pdl_trigger();
  const int g = blockIdx.x / n_splits, s = blockIdx.x - g * n_splits, m = blockIdx.y;
  const int last = *a.d_pos + m;  // inclusive
  if (split_len <= 0) split_len = attention_row_split_len(min(last, a.max_ctx - 1), n_splits);
  const int t0 = s * split_len, t1 = min(min(t0 + split_len, last + 1), a.max_ctx);
  if (t0 >= t1) return;  // block-uniform: this split is beyond the current position
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  float q[G][DPL];
#pragma unroll
  for (int h = 0; h < G; ++h)
#pragma unroll
    for (int j = 0; j < DPL; ++j) q[h][j] = a.q_scratch[(m * a.n_head + g * G + h) * D + lane * DPL + j];

  float mx[G], l[G], acc[G][DPL];
#pragma unroll
  for (int h = 0; h < G; ++h) {
    mx[h] = -INFINITY;
    l[h] = 0.0f;
#pragma unroll
    for (int j = 0; j < DPL; ++j) acc[h][j] = 0.0f;
  }
  const uint16_t* kbase = a.k_cache + static_cast<size_t>(g) * a.max_ctx * D + lane * DPL;
  const uint16_t* vbase = a.v_cache + static_cast<size_t>(g) * a.max_ctx * D + lane * DPL;
  auto position = [&](const float(&kf)[DPL], const float(&vf)[DPL]) {
#pragma unroll
    for (int h = 0; h < G; ++h) {
      float dot = 0.0f;
#pragma unroll
      for (int j = 0; j < DPL; ++j) dot = __fmaf_rn(q[h][j], kf[j], dot);
      const float sc = __fmul_rn(warp_sum(dot), scale);
      const float m_new = fmaxf(mx[h], sc);
      const float corr = expf(__fsub_rn(mx[h], m_new));
      const float p = expf(__fsub_rn(sc, m_new));
      l[h] = __fmaf_rn(l[h], corr, p);
#pragma unroll
      for (int j = 0; j < DPL; ++j) acc[h][j] = __fmaf_rn(acc[h][j], corr, __fmul_rn(p, vf[j]));
      mx[h] = m_new;
    }
  };
  // This warp's positions: t0 + warp, + kSplitWarps, ... below t1.
  if constexpr (kKvAhead == 1) {  // the first form: one position loaded, then computed
    for (int t = t0 + warp; t < t1; t += kSplitWarps) {
      // Whole rows into registers first: through a reference the 16-byte load was split into three.
      const F16Row<DPL> kr = *reinterpret_cast<const F16Row<DPL>*>(kbase + static_cast<size_t>(t) * D);
      const F16Row<DPL> vr = *reinterpret_cast<const F16Row<DPL>*>(vbase + static_cast<size_t>(t) * D);
      float kf[DPL], vf[DPL];
      unpack_f16_row<DPL>(kr, kf);
      unpack_f16_row<DPL>(vr, vf);
      position(kf, vf);
    }
  } else {  // kKvAhead a batch, the next batch in flight (warp-uniform tests)
    constexpr int kStride = kSplitWarps * kKvAhead;
    F16Row<DPL> kc[kKvAhead] = {}, vc[kKvAhead] = {}, kn[kKvAhead] = {}, vn[kKvAhead] = {};
    auto load_batch = [&](F16Row<DPL>(&kr)[kKvAhead], F16Row<DPL>(&vr)[kKvAhead], int tb) {
#pragma unroll
      for (int u = 0; u < kKvAhead; ++u) {
        const int t = tb + u * kSplitWarps;
        if (t < t1) {
          kr[u] = *reinterpret_cast<const F16Row<DPL>*>(kbase + static_cast<size_t>(t) * D);
          vr[u] = *reinterpret_cast<const F16Row<DPL>*>(vbase + static_cast<size_t>(t) * D);
        }
      }
    };
    load_batch(kc, vc, t0 + warp);
    for (int tb = t0 + warp; tb < t1; tb += kStride) {
      load_batch(kn, vn, tb + kStride);  // in flight while this batch is computed
#pragma unroll
      for (int u = 0; u < kKvAhead; ++u) {
        if (tb + u * kSplitWarps >= t1) break;
        float kf[DPL], vf[DPL];
        unpack_f16_row<DPL>(kc[u], kf);
        unpack_f16_row<DPL>(vc[u], vf);
        position(kf, vf);
      }
#pragma unroll
      for (int u = 0; u < kKvAhead; ++u) {
        kc[u] = kn[u];
        vc[u] = vn[u];
      }
    }
  }
  // Per-warp partials to shared memory, then the fixed-order combine over the warps.
  float* wmax = sm + warp * G * (D + 2);
  float* wsum = wmax + G;
  float* wacc = wsum + G;
#pragma unroll
  for (int h = 0; h < G; ++h) {
    if (lane == 0) {
      wmax[h] = mx[h];
      wsum[h] = l[h];
    }
#pragma unroll
    for (int j = 0; j < DPL; ++j) wacc[h * D + lane * DPL + j] = acc[h][j];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * D; idx += kSplitThreads) {
    const int h = idx / D, d = idx - h * D;
    float big = -INFINITY;
    for (int w = 0; w < kSplitWarps; ++w) big = fmaxf(big, sm[w * G * (D + 2) + h]);
    float sum = 0.0f, o = 0.0f;
    for (int w = 0; w < kSplitWarps; ++w) {
      const float* base = sm + w * G * (D + 2);
      const float f = base[h] == -INFINITY ? 0.0f : expf(__fsub_rn(base[h], big));  // idle warp: weight 0
      sum = __fmaf_rn(base[G + h], f, sum);
      o = __fmaf_rn(base[2 * G + h * D + d], f, o);
    }
    float* part = a.partials + ((static_cast<size_t>(m) * a.n_head + g * G + h) * n_splits + s) * (D + 2);
    part[d] = o;
    if (d == 0) {
      part[D] = big;
      part[D + 1] = sum;
    }
  }
}

// ---- merge: grid (n_head, M), head_dim threads ----
__global__ void __launch_bounds__(256) attn_merge_kernel(const AttentionArgs a, int n_splits, int split_len) {
  pdl_wait();
  pdl_trigger();
  const int h = blockIdx.x, m = blockIdx.y, d = threadIdx.x, dim = a.head_dim;
  const int last = min(*a.d_pos + m, a.max_ctx - 1);
  if (split_len <= 0) split_len = attention_row_split_len(last, n_splits);
  const int used = min(n_splits, last / split_len + 1);
  const float* base = a.partials + (static_cast<size_t>(m) * a.n_head + h) * n_splits * (dim + 2);
  float big = -INFINITY;
  for (int s = 0; s < used; ++s) big = fmaxf(big, base[s * (dim + 2) + dim]);
  float sum = 0.0f, o = 0.0f;
  for (int s = 0; s < used; ++s) {
    const float* p = base + s * (dim + 2);
    const float f = expf(__fsub_rn(p[dim], big));
    sum = __fmaf_rn(p[dim + 1], f, sum);
    o = __fmaf_rn(p[d], f, o);
  }
  const float gate = a.q_gate[m * a.ld_q + h * 2 * dim + dim + d];
  const float y = __fmul_rn(__fdiv_rn(o, sum), sigmoid(gate));
  const int col = h * dim + d;
  if (a.out) a.out[m * a.ld_out + col] = y;
  if (a.out_q.hi) {
    const int warp_col = col - (threadIdx.x & 31);
    quantize_block_warp(y, a.out_q.hi + m * a.out_q.ld + warp_col,
                        a.out_q.lo ? a.out_q.lo + m * a.out_q.ld + warp_col : nullptr,
                        a.out_q.scale + m * a.out_q.ld_scale + warp_col / kQBlock);
  }
}

// ---- standalone KV store: grid (n_kv, M), head_dim threads ----
__global__ void __launch_bounds__(256) kv_store_kernel(const KvStoreArgs a) {
  pdl_wait();
  pdl_trigger();
  const int kh = blockIdx.x, m = blockIdx.y, d = threadIdx.x;
  const int pos = *a.d_pos + m;
  if (pos < 0 || pos >= a.max_ctx) return;
  const size_t at = (static_cast<size_t>(kh) * a.max_ctx + pos) * a.head_dim + d;
  a.k_cache[at] = f2h(a.k[m * a.ld_k + kh * a.head_dim + d]);
  a.v_cache[at] = f2h(a.v[m * a.ld_v + kh * a.head_dim + d]);
}

template <int G>
cudaError_t launch_split_g(const AttentionArgs& a, dim3 grid, int n_splits, int split_len, float scale,
                           cudaStream_t s) {
  const bool one = (a.kv_ahead == 0 ? kKvAheadDefault : a.kv_ahead) == 1;  // else 4 (attention_decode checks)
  if (a.head_dim == 256) {
    const size_t smem = static_cast<size_t>(kSplitWarps) * G * (256 + 2) * sizeof(float);
    return launch_kernel(one ? attn_split_kernel<G, 8, 1> : attn_split_kernel<G, 8, kKvAheadBatch>, grid,
                         dim3(kSplitThreads), smem, s, a.pdl, a, n_splits, split_len, scale);
  }
  const size_t smem = static_cast<size_t>(kSplitWarps) * G * (128 + 2) * sizeof(float);
  return launch_kernel(one ? attn_split_kernel<G, 4, 1> : attn_split_kernel<G, 4, kKvAheadBatch>, grid,
                       dim3(kSplitThreads), smem, s, a.pdl, a, n_splits, split_len, scale);
}

}  // namespace

int attention_row_splits(int n_kv, int sm_count) {
  return std::max(1, 2 * std::max(sm_count, 1) / std::max(1, n_kv));
}

int attention_grid_splits(int ctx_hint, int split_len, int n_kv, int sm_count) {
  if (split_len > 0) return (std::max(ctx_hint, 1) + split_len - 1) / split_len;
  return attention_row_splits(n_kv, sm_count);
}

size_t attention_q_scratch_floats(int n_head, int head_dim, int m) {
  return static_cast<size_t>(n_head) * head_dim * m;
}

size_t attention_partial_floats(int n_head, int head_dim, int m, int n_splits) {
  return static_cast<size_t>(m) * n_head * n_splits * (head_dim + 2);
}

namespace {

// The checks both entry points share and the prep launch (norm + RoPE + KV store). `who` names the entry
// point in errors; max_m its row limit.
GpuStatus check_and_prep(const AttentionArgs& a, const char* who, int max_m, cudaStream_t stream) {
  const std::string w = who;
  QC_GPU_REQUIRE(
      a.q_gate && a.k && a.v && a.q_norm && a.k_norm && a.k_cache && a.v_cache && a.d_pos && a.q_scratch,
      w + ": a required pointer is null");
  QC_GPU_REQUIRE(a.head_dim == 128 || a.head_dim == 256,
                 w + ": head_dim must be 128 or 256, got " + std::to_string(a.head_dim));
  QC_GPU_REQUIRE(a.n_kv > 0 && a.n_head > 0 && a.n_head % a.n_kv == 0,
                 w + ": n_head (" + std::to_string(a.n_head) + ") must be a positive multiple of n_kv (" +
                     std::to_string(a.n_kv) + ")");
  const int group = a.n_head / a.n_kv;
  QC_GPU_REQUIRE(group == 1 || group == 2 || group == 3 || group == 4 || group == 6 || group == 8,
                 w + ": GQA group size must be 1, 2, 3, 4, 6 or 8, got " + std::to_string(group));
  QC_GPU_REQUIRE(a.rope_dims >= 0 && a.rope_dims % 2 == 0 && a.rope_dims <= a.head_dim,
                 w + ": rope_dims must be even and <= head_dim, got " + std::to_string(a.rope_dims));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= max_m,
                 w + ": M must be in [1, " + std::to_string(max_m) + "], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(
      a.ld_q >= 2 * a.n_head * a.head_dim && a.ld_k >= a.n_kv * a.head_dim && a.ld_v >= a.n_kv * a.head_dim,
      w + ": ld_q >= 2*n_head*head_dim and ld_k, ld_v >= n_kv*head_dim required");
  // out16 is written by the prompt path only; attention_decode requires out or out_q itself.
  QC_GPU_REQUIRE(a.out || a.out_q.hi || a.out16, w + ": no output requested");
  QC_GPU_REQUIRE(!a.out || a.ld_out >= a.n_head * a.head_dim, w + ": ld_out must be >= n_head*head_dim");
  QC_GPU_REQUIRE(!a.out_q.hi || (a.out_q.scale && a.out_q.ld >= a.n_head * a.head_dim &&
                                 a.out_q.ld_scale >= a.n_head * a.head_dim / kQBlock),
                 w + ": out_q needs scale, ld >= n_head*head_dim, ld_scale >= that / 32");
  const int warps = (a.n_head + a.n_kv) * a.m;
  const dim3 grid((warps + kPrepWarps - 1) / kPrepWarps);
  QC_CUDA_CHECK(a.head_dim == 256
                    ? launch_kernel(attn_prep_kernel<256>, grid, dim3(32 * kPrepWarps), 0, stream, a.pdl, a)
                    : launch_kernel(attn_prep_kernel<128>, grid, dim3(32 * kPrepWarps), 0, stream, a.pdl, a));
  QC_LAUNCH_CHECK("attn_prep_kernel", stream);
  return GpuStatus::success();
}

// The decode core after the prep: split (n_splits per row, split_len positions each, 0 = per-row lengths),
// then merge (fixed-order combine, gate, optional quantised output).
GpuStatus split_and_merge(const AttentionArgs& a, int n_splits, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.partials, "attention_decode: partials is null");
  const int group = a.n_head / a.n_kv;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.head_dim)));
  const dim3 grid(a.n_kv * n_splits, a.m);
  cudaError_t e = cudaErrorInvalidValue;
  switch (group) {
    case 1:
      e = launch_split_g<1>(a, grid, n_splits, a.split_len, scale, stream);
      break;
    case 2:
      e = launch_split_g<2>(a, grid, n_splits, a.split_len, scale, stream);
      break;
    case 3:
      e = launch_split_g<3>(a, grid, n_splits, a.split_len, scale, stream);
      break;
    case 4:
      e = launch_split_g<4>(a, grid, n_splits, a.split_len, scale, stream);
      break;
    case 6:
      e = launch_split_g<6>(a, grid, n_splits, a.split_len, scale, stream);
      break;
    case 8:
      e = launch_split_g<8>(a, grid, n_splits, a.split_len, scale, stream);
      break;
    default:
      break;
  }
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch attn_split_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("attn_split_kernel", stream);
  QC_CUDA_CHECK(launch_kernel(attn_merge_kernel, dim3(a.n_head, a.m), dim3(a.head_dim), 0, stream, a.pdl, a,
                              n_splits, a.split_len));
  QC_LAUNCH_CHECK("attn_merge_kernel", stream);
  return GpuStatus::success();
}

}  // namespace

GpuStatus attention_decode(const AttentionArgs& in, cudaStream_t stream) {
  AttentionArgs a = in;
  QC_GPU_REQUIRE(a.ctx_hint >= a.m && a.ctx_hint <= a.max_ctx,
                 "attention_decode: ctx_hint must be in [M, max_ctx=" + std::to_string(a.max_ctx) +
                     "], got " + std::to_string(a.ctx_hint));
  QC_GPU_REQUIRE(a.out || a.out_q.hi,
                 "attention_decode: an output (out or out_q) is required; out16 is the "
                 "prompt path's (attention_prefill)");
  QC_GPU_REQUIRE(a.kv_ahead == 0 || a.kv_ahead == 1 || a.kv_ahead == kKvAheadBatch,
                 "attention_decode: kv_ahead must be 0, 1 or " + std::to_string(kKvAheadBatch) + ", got " +
                     std::to_string(a.kv_ahead));
  if (a.split_len < 0) a.split_len = 0;
  const int n_splits = attention_grid_splits(a.ctx_hint, a.split_len, a.n_kv, device_sm_count());
  QC_GPU_TRY(check_and_prep(a, "attention_decode", kMaxTokens, stream));
  return split_and_merge(a, n_splits, stream);
}

GpuStatus attention_prefill(const AttentionArgs& in, cudaStream_t stream) {
  AttentionArgs a = in;
  QC_GPU_REQUIRE(a.max_ctx >= 1,
                 "attention_prefill: max_ctx must be positive, got " + std::to_string(a.max_ctx));
  QC_GPU_REQUIRE(a.out || a.out16, "attention_prefill: an output (out or out16) is required");
  QC_GPU_REQUIRE(!a.out_q.hi || a.out, "attention_prefill: the quantised output (out_q) needs out");
  QC_GPU_REQUIRE(
      !a.out16 || (a.ld_out16 >= a.n_head * a.head_dim && a.ld_out16 % 2 == 0 &&
                   reinterpret_cast<uintptr_t>(a.out16) % 4 == 0 && a.shift16 >= -24 && a.shift16 <= 24),
      "attention_prefill: out16 needs 4-byte alignment, an even ld_out16 >= n_head*head_dim and shift16 in "
      "[-24, 24]");
  // Before the prep kernel, so that a bad block height writes no cache entry.
  QC_GPU_REQUIRE(
      a.flash_rows == 0 || a.flash_rows == 64 || a.flash_rows == 128,
      "attention_prefill: flash_rows must be 0 (default), 64 or 128, got " + std::to_string(a.flash_rows));
  QC_GPU_TRY(check_and_prep(a, "attention_prefill", kMaxRows, stream));
  QC_GPU_TRY(attention_flash_rows(a, stream));
  if (!a.out_q.hi) return GpuStatus::success();
  QuantizeArgs q;
  q.x = a.out;
  q.ld_x = a.ld_out;
  q.n = a.n_head * a.head_dim;
  q.m = a.m;
  q.out = a.out_q;
  q.pdl = a.pdl;
  return quantize_act(q, stream);
}

GpuStatus kv_store(const KvStoreArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.k && a.v && a.k_cache && a.v_cache && a.d_pos, "kv_store: a required pointer is null");
  QC_GPU_REQUIRE(a.head_dim > 0 && a.head_dim <= 1024 && a.n_kv > 0,
                 "kv_store: need 0 < head_dim <= 1024 and n_kv > 0, got " + std::to_string(a.head_dim) +
                     ", " + std::to_string(a.n_kv));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens, "kv_store: M must be in [1, 4], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_k >= a.n_kv * a.head_dim && a.ld_v >= a.n_kv * a.head_dim,
                 "kv_store: ld_k and ld_v must be >= n_kv*head_dim");
  QC_CUDA_CHECK(launch_kernel(kv_store_kernel, dim3(a.n_kv, a.m), dim3(a.head_dim), 0, stream, a.pdl, a));
  QC_LAUNCH_CHECK("kv_store_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
