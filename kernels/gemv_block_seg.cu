// The segment engine of gemv_block, for Q4_K and Q5_K (opt-in, BlockEngine::kSegments): a warp's lanes read
// consecutive 16-byte segments of a row's quants, so every weight byte reaches a lane once, and a warp
// reads the activation words once for R rows.
//
// Why (docs/PERFORMANCE.md 2026-12-05/06): the register engine gives each lane a 32-value piece, so the two
// lanes of a Q4_K sub-block pair load the same 32 quant bytes and each uses half of every byte, and every
// lane loads its piece's 32 (h) or 64 (hl) activation bytes at a 32-byte stride, half of each 128-byte L1
// wavefront: about 44 L1 wavefronts per 1024 weights of a row (hl, M = 1) against ~34 cycles of an H200
// SM's share of DRAM for the same 576 bytes. Nsight Compute saw it L1-bound (waiting on L1 data, L1
// throughput 60-83%, DRAM 46-49%). Here: weights 1 load (~5 wavefronts: 512 quant bytes of 4 blocks) and
// the header 1 (4 distinct 16-byte headers), activations 4 loads (hl, 8 wavefronts each) shared by R rows:
// ~14 wavefronts per 1024 weights of a row at R = 4.
//
// Layout (the file's, nothing repacked): a Q4_K block is a 16-byte header (d, dmin, 12 bytes of 6-bit
// scales and mins), then 4 chunks of 32 quant bytes; byte i of chunk c holds value 64c + i (low nibble,
// sub-block 2c) and value 64c + 32 + i (high nibble, sub-block 2c + 1). Q5_K adds 32 bytes of fifth bits
// after the header (bit 2c / 2c + 1 of byte i). A "window" is 16 consecutive chunks (1024 values) of a row;
// lane l takes half h = l & 1 of chunk l >> 1 of the window: the 16 quant bytes at 16 h in it, i.e. values
// 16h .. 16h + 15 of sub-blocks 2c and 2c + 1, two dot products of 16 with their own factors.
//
// Order of every sum (deterministic; the same bits for every M, R and pipeline, which only change which
// rows and tokens share loads): lane l of the w-th of a row's `wpr` warps folds windows w, w + wpr, ... in
// ascending order, per window first sub-block 2c's term then 2c + 1's (acc = fma(u, d1 D - m1 S, acc) with
// u the activation piece's scale), then the butterfly (warp_sum), then the row's warps in ascending order.
// warps_per_row is chosen from N and K alone. Not the register engine's order (that folds whole pieces per
// lane): a bit class of its own, judged against the exact dot product within the same bound
// (tests/gpu/test_backend_kquant.cpp).
#include <algorithm>
#include <string>

#include "block_quant.cuh"
#include "common.cuh"
#include "gemv_block_epilogue.cuh"
#include "gemv_block_seg.h"

namespace qc::gpu::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kWindowChunks = 16;  // chunks of 64 values a warp takes per step: one per lane pair

// A lane's bytes of one row and window, as loaded: the block header and the 16 quant bytes (+ Q5_K's 16
// fifth-bit bytes for the same values).
template <BlockType T>
struct SegRaw {
  uint4 h, q;
};
template <>
struct SegRaw<BlockType::kQ5_K> {
  uint4 h, qh, q;
};

template <BlockType T>
__device__ __forceinline__ SegRaw<T> load_seg(const uint8_t* blk, int c, int half) {
  SegRaw<T> r;
  r.h = bq::ld_u128(blk);
  if constexpr (T == BlockType::kQ4_K) {
    r.q = bq::ld_u128(blk + 16 + c * 32 + half * 16);
  } else {
    r.qh = bq::ld_u128(blk + 16 + half * 16);
    r.q = bq::ld_u128(blk + 48 + c * 32 + half * 16);
  }
  return r;
}

// Sub-blocks 2c and 2c + 1 of a lane's segment as integers and factors: qa / qb the 16 values of each as
// signed bytes (4 words, values in order), d1 = d * sc and m1 = dmin * m as the reference rounds them.
struct SegInts {
  int qa[4], qb[4];
  float da, ma, db, mb;
};

// get_scale_min_k4 (ggml-quants.c) for sub-block j = 4 hi + jj, with `w` the header's scale words
// (bytes 4..7, 8..11, 12..15) shifted right by 8 jj: byte jj of each at bits 0..7.
__device__ __forceinline__ void scale_min_shifted(uint32_t w0, uint32_t w1, uint32_t w2, bool hi,
                                                  uint32_t* sc, uint32_t* m) {
  if (hi) {
    *sc = (w2 & 0xFu) | ((w0 >> 2) & 0x30u);
    *m = ((w2 >> 4) & 0xFu) | ((w1 >> 2) & 0x30u);
  } else {
    *sc = w0 & 63u;
    *m = w1 & 63u;
  }
}

template <BlockType T>
__device__ __forceinline__ void seg_ints(const SegRaw<T>& r, int c, SegInts& s) {
  const float d = bq::f16_bits(r.h.x), dmin = bq::f16_bits(r.h.x >> 16);
  const bool hi = c >= 2;
  const uint32_t sh0 = 16u * static_cast<uint32_t>(c & 1);  // byte 2c & 3 of each scale word
  uint32_t sc, m;
  scale_min_shifted(r.h.y >> sh0, r.h.z >> sh0, r.h.w >> sh0, hi, &sc, &m);
  s.da = __fmul_rn(d, static_cast<float>(sc));
  s.ma = __fmul_rn(dmin, static_cast<float>(m));
  scale_min_shifted(r.h.y >> (sh0 + 8), r.h.z >> (sh0 + 8), r.h.w >> (sh0 + 8), hi, &sc, &m);
  s.db = __fmul_rn(d, static_cast<float>(sc));
  s.mb = __fmul_rn(dmin, static_cast<float>(m));
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t w = bq::word_of(r.q, i);
    uint32_t a = w & 0x0F0F0F0Fu, b = (w >> 4) & 0x0F0F0F0Fu;
    if constexpr (T == BlockType::kQ5_K) {
      const uint32_t h = bq::word_of(r.qh, i) >> (2 * c);
      a |= (h & 0x01010101u) << 4;
      b |= ((h >> 1) & 0x01010101u) << 4;
    }
    s.qa[i] = static_cast<int>(a);
    s.qb[i] = static_cast<int>(b);
  }
}

// The activation words of a lane's two 16-value halves (values 64 g + 16 h and 64 g + 32 + 16 h of token
// row m), their pieces' scales (hl: already times fl(1/127)) and their sums (hl: in units of scale / 127).
struct SegActs {
  int4 ha, hb, la, lb;
  float ua, ub;
  int sa, sb;
};

__device__ __forceinline__ int sum16(const int4& x) {
  constexpr int kOnes = 0x01010101;
  return __dp4a(kOnes, x.x, __dp4a(kOnes, x.y, __dp4a(kOnes, x.z, __dp4a(kOnes, x.w, 0))));
}

template <bool HL>
__device__ __forceinline__ SegActs seg_acts(const QActIn& xq, int m, int g, int half) {
  SegActs a{};
  const size_t at = static_cast<size_t>(m) * xq.ld + 64 * static_cast<size_t>(g) + 16 * half;
  a.ha = *reinterpret_cast<const int4*>(xq.hi + at);
  a.hb = *reinterpret_cast<const int4*>(xq.hi + at + 32);
  const float* sc = xq.scale + static_cast<size_t>(m) * xq.ld_scale + 2 * g;
  a.ua = sc[0];
  a.ub = sc[1];
  a.sa = sum16(a.ha);
  a.sb = sum16(a.hb);
  if constexpr (HL) {
    a.la = *reinterpret_cast<const int4*>(xq.lo + at);
    a.lb = *reinterpret_cast<const int4*>(xq.lo + at + 32);
    a.ua = __fmul_rn(a.ua, kInv127);
    a.ub = __fmul_rn(a.ub, kInv127);
    a.sa = 127 * a.sa + sum16(a.la);
    a.sb = 127 * a.sb + sum16(a.lb);
  }
  return a;
}

__device__ __forceinline__ int dot16(const int (&q)[4], const int4& x) {
  return __dp4a(q[3], x.w, __dp4a(q[2], x.z, __dp4a(q[1], x.y, __dp4a(q[0], x.x, 0))));
}

// One half's integer dot product: exact (hl: 127 hi + lo per value, |.| <= 16 x 31 x 16256 < 2^24, so its
// float conversion is exact too).
template <bool HL>
__device__ __forceinline__ int seg_dot(const int (&q)[4], const int4& h, const int4& l) {
  const int d = dot16(q, h);
  if constexpr (HL) return 127 * d + dot16(q, l);
  return d;
}

template <BlockType T, int M, bool HL, int R, bool kPipe>
__global__ void __launch_bounds__(kThreads) gemv_seg_kernel(const GemvBlockArgs a) {
  __shared__ float part[R][M][kWarps];
  constexpr int BB = block_bytes(T);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wpr = a.warps_per_row;
  const int row0 = (blockIdx.x * (kWarps / wpr) + warp / wpr) * R;
  const int phase = warp % wpr;
  const int chunks = a.w.cols / 64;
  const int windows = (chunks + kWindowChunks - 1) / kWindowChunks;
  const int cw = lane >> 1, half = lane & 1;
  const int c = cw & 3;  // the lane's chunk within its block: the same in every window (16 chunks a window)
  const bool active = row0 < a.w.rows;
  const size_t row_bytes = a.w.row_bytes();
  const uint8_t* wrow[R];
#pragma unroll
  for (int r = 0; r < R; ++r)  // rows past N read row row0 again (discarded at the store)
    wrow[r] = a.w.data + static_cast<size_t>(row0 + r < a.w.rows ? row0 + r : row0) * row_bytes;
  // The lane's chunk of window wi, clamped to the row's last chunk past its end (the loads stay inside the
  // row; such a lane adds nothing).
  auto load = [&](int wi, SegRaw<T>(&raw)[R]) {
    const int g = min(wi * kWindowChunks + cw, chunks - 1);
#pragma unroll
    for (int r = 0; r < R; ++r) raw[r] = load_seg<T>(wrow[r] + static_cast<size_t>(g >> 2) * BB, c, half);
  };
  SegRaw<T> cur[R];
  int wi = phase;
  // The first window's weights are in flight before the wait: nothing writes them.
  if (active && wi < windows) load(wi, cur);
  pdl_wait();
  pdl_trigger();
  float acc[R][M];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < M; ++m) acc[r][m] = 0.0f;
  if (active) {
    for (; wi < windows; wi += wpr) {
      SegRaw<T> next[R];
      if constexpr (kPipe) load(min(wi + wpr, windows - 1), next);
      const int g = wi * kWindowChunks + cw;
      if (g < chunks) {
        SegActs x[M];
#pragma unroll
        for (int m = 0; m < M; ++m) x[m] = seg_acts<HL>(a.xq, m, g, half);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          SegInts s;
          seg_ints<T>(cur[r], c, s);
#pragma unroll
          for (int m = 0; m < M; ++m) {
            const int da = seg_dot<HL>(s.qa, x[m].ha, x[m].la), db = seg_dot<HL>(s.qb, x[m].hb, x[m].lb);
            const float va =
                __fmaf_rn(-s.ma, static_cast<float>(x[m].sa), __fmul_rn(s.da, static_cast<float>(da)));
            const float vb =
                __fmaf_rn(-s.mb, static_cast<float>(x[m].sb), __fmul_rn(s.db, static_cast<float>(db)));
            acc[r][m] = __fmaf_rn(x[m].ua, va, acc[r][m]);
            acc[r][m] = __fmaf_rn(x[m].ub, vb, acc[r][m]);
          }
        }
      }
      if constexpr (kPipe) {
#pragma unroll
        for (int r = 0; r < R; ++r) cur[r] = next[r];
      } else if (wi + wpr < windows) {
        load(wi + wpr, cur);
      }
    }
  }
  warp_sum_rows(acc);
  if (wpr > 1) {
    stash_part(part, warp, lane, acc);
    __syncthreads();
    if (phase == 0) combine_parts(part, warp, wpr, acc);
  }
  if (phase == 0) store_rows(a, acc, row0, a.w.rows, lane);
}

template <BlockType T, int M, bool HL>
cudaError_t launch_schedule(const GemvBlockArgs& a, dim3 grid, cudaStream_t s) {
  auto go = [&](auto kernel) { return launch_kernel(kernel, grid, dim3(kThreads), 0, s, a.pdl, a); };
  switch (a.rows_per_warp * 10 + a.pipeline) {
    case 21:
      return go(gemv_seg_kernel<T, M, HL, 2, true>);
    case 40:
      return go(gemv_seg_kernel<T, M, HL, 4, false>);
    case 41:
      return go(gemv_seg_kernel<T, M, HL, 4, true>);
    case 20:
    default:
      return go(gemv_seg_kernel<T, M, HL, 2, false>);
  }
}

template <BlockType T, int M>
cudaError_t launch_form(const GemvBlockArgs& a, dim3 grid, cudaStream_t s) {
  return a.format == ActFormat::kHL ? launch_schedule<T, M, true>(a, grid, s)
                                    : launch_schedule<T, M, false>(a, grid, s);
}

template <BlockType T>
cudaError_t launch_m(const GemvBlockArgs& a, dim3 grid, cudaStream_t s) {
  switch (a.m) {
    case 1:
      return launch_form<T, 1>(a, grid, s);
    case 2:
      return launch_form<T, 2>(a, grid, s);
    case 3:
      return launch_form<T, 3>(a, grid, s);
    default:
      return launch_form<T, 4>(a, grid, s);
  }
}

}  // namespace

// About three waves of 24 resident warps an SM at two rows a warp (the M >= 2 schedule), and at least two
// windows a warp: more warps per row than that add combine work without loads in flight. From N and K
// only, so the bits of a row never depend on M or on rows per warp.
int gemv_block_seg_auto_wpr(int n, int k, int sms) {
  const long long target = 3LL * 24 * (sms > 0 ? sms : 100);
  const int windows = (k / 64 + kWindowChunks - 1) / kWindowChunks;
  int wpr = 1;
  while (wpr < 8 && static_cast<long long>((n + 1) / 2) * wpr < target && windows >= 4 * wpr) wpr *= 2;
  return wpr;
}

GpuStatus gemv_block_seg(const GemvBlockArgs& in, cudaStream_t stream) {
  GemvBlockArgs a = in;
  QC_GPU_REQUIRE(
      a.w.type == BlockType::kQ4_K || a.w.type == BlockType::kQ5_K,
      std::string("gemv_block: the segment engine reads Q4_K and Q5_K, got ") + block_type_name(a.w.type));
  QC_GPU_REQUIRE(a.format == ActFormat::kH || a.format == ActFormat::kHL,
                 "gemv_block: the segment engine runs the quantised activation forms (h, hl), not f32");
  const int sms = device_sm_count() > 0 ? device_sm_count() : 100;
  if (a.warps_per_row == 0) a.warps_per_row = gemv_block_seg_auto_wpr(a.w.rows, a.w.cols, sms);
  QC_GPU_REQUIRE(a.warps_per_row == 1 || a.warps_per_row == 2 || a.warps_per_row == 4 || a.warps_per_row == 8,
                 "gemv_block: warps_per_row must be 1, 2, 4 or 8, got " + std::to_string(a.warps_per_row));
  // Auto, from the sweep of 2026-12-07 (H100, 27B shapes, Q4_K; docs/PERFORMANCE.md): at M = 1 two rows a
  // warp without the next window in flight beat the first choice (four rows where two waves of 24 warps an
  // SM remained, else two rows pipelined) on every shape, by 2-15%; at M = 2 four rows without it were the
  // best on every shape (the activation loads shared by more rows); at M = 3, 4 two rows pipelined.
  if (a.rows_per_warp == 0) {
    a.rows_per_warp = a.m == 2 ? 4 : 2;
    if (a.pipeline < 0) a.pipeline = a.m >= 3 ? 1 : 0;
  }
  QC_GPU_REQUIRE(a.rows_per_warp == 2 || a.rows_per_warp == 4,
                 "gemv_block: rows_per_warp must be 0 (auto), 2 or 4 on the segment engine, got " +
                     std::to_string(a.rows_per_warp));
  if (a.pipeline < 0) a.pipeline = a.rows_per_warp == 2 ? 1 : 0;
  QC_GPU_REQUIRE(a.pipeline == 0 || a.pipeline == 1,
                 "gemv_block: pipeline must be -1 (auto), 0 or 1, got " + std::to_string(a.pipeline));
  const int rows_per_block = kWarps / a.warps_per_row * a.rows_per_warp;
  const dim3 grid((a.w.rows + rows_per_block - 1) / rows_per_block);
  const cudaError_t e = a.w.type == BlockType::kQ4_K ? launch_m<BlockType::kQ4_K>(a, grid, stream)
                                                     : launch_m<BlockType::kQ5_K>(a, grid, stream);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_seg_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_seg_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu::detail
