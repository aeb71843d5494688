// "mma" / "mma_h", shared-memory schedule (TileTuning::engine 2): the contract of gemv_q8_mma.cu's header
// (the same bits: the same slices, the same per-block step, gemv_q8_mma_step.cuh), fed from per-warp stages
// filled by cp.async instead of from registers.
//
// Why (H100, 2026-12-07, docs/PERFORMANCE.md "thirteenth session"): the register schedule keeps its bytes in
// flight in registers, 64 bytes of each of 16 rows a batch, and reached 58-78% of the read ceiling; a ring
// refilled slot by slot was slower than refilling whole batches, the sign of loads that cannot complete out
// of order in registers. Here a warp copies 256 contiguous bytes of each of its 16 rows (8 Q8_0 blocks) a
// stage, one 16-byte copy a lane (16 lanes a row: whole 128-byte lines, like the dp4a tile kernel's loads),
// with the blocks' scales and the tokens' activation words and scales, into one of S stages of its own; the
// copies complete in order (cp.async groups), so S - 1 stages stay in flight while one is consumed, and the
// in-flight bytes cost no registers.
//
// Stage layout (per warp; rows r = 0..15 of the tile, tokens m < M): weights [16][256] with the 16-byte
// chunk c of row r at c ^ 2 (r & 3) (the fragment loads below, 8 bytes a lane from 4 rows a half-warp, then
// hit 32 distinct banks); activation words [M][256] (hi, then lo for hl) swizzled the same way by token;
// weight scales [16][24]: the 4-byte words that cover the row's 8 f16 scales (the first may start 2 bytes
// early: a word-aligned copy); activation scales [M][8] f32.
#include <algorithm>
#include <string>

#include "../cp_async.cuh"
#include "gemv_q8_internal.h"
#include "gemv_q8_mma_step.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kThreads = kMmaThreads;
constexpr int kSlices = kMmaSlices;
constexpr int kTileRows = kMmaTileRows;
constexpr int kChunk = 8;                            // Q8_0 blocks of a row per stage
constexpr int kRowBytes = kChunk * kQBlock;          // 256
constexpr int kScaleSlot = 24;                       // bytes per row of a stage's scale words (5 used)
constexpr int kWeightBytes = kTileRows * kRowBytes;  // 4096

// Byte offsets inside a stage.
__host__ __device__ constexpr int act_offset() {
  return kWeightBytes;
}
__host__ __device__ constexpr int act_bytes(int m, bool hl) {
  return (hl ? 2 : 1) * m * kRowBytes;
}
__host__ __device__ constexpr int scale_offset(int m, bool hl) {
  return act_offset() + act_bytes(m, hl);
}
__host__ __device__ constexpr int xs_offset(int m, bool hl) {
  return scale_offset(m, hl) + kTileRows * kScaleSlot;
}
__host__ __device__ constexpr int stage_size(int m, bool hl) {
  return xs_offset(m, hl) + m * kChunk * 4;
}

// Where the 16-byte chunk c of stage row r (a weight row or a token) lives.
__device__ __forceinline__ int swz(int r, int c) {
  return r * kRowBytes + 16 * (c ^ (2 * (r & 3)));
}

template <bool kHL, bool kPair, int kStages>
__global__ void __launch_bounds__(kThreads) gemv_mma_staged_kernel(const MmaParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ MmaPartials part[2];  // tile j's in part[j & 1] (mma_tile_combine)
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int nb = p.k / kQBlock;
  const int b0 = warp * p.per;
  const int steps = max(0, min(nb, b0 + p.per) - b0);
  const int nch = (steps + kChunk - 1) / kChunk;  // stages per tile for this warp
  int tile0, tile1;
  mma_tile_range(p, &tile0, &tile1);
  const int total = (tile1 - tile0) * nch;
  unsigned char* const ring = smem + static_cast<size_t>(warp) * kStages * p.stage_bytes;
  const int a_off = act_offset(), s_off = scale_offset(p.m, kHL), x_off = xs_offset(p.m, kHL);

  // Copies of item f = (tile tile0 + f / nch, chunk f % nch) into stage f % kStages; weights and weight
  // scales only before the dependency wait (acts = false), the activations' part after it.
  auto issue = [&](int f, bool weights, bool acts) {
    if (f >= total) return;  // past this warp's last item: nothing to copy (its group stays empty)
    const int j = f / nch, c = f - j * nch;
    const int cb0 = b0 + kChunk * c;                 // first block of the chunk
    const int nblk = min(kChunk, b0 + steps - cb0);  // blocks in it
    unsigned char* st = ring + (f % kStages) * p.stage_bytes;
    const int q = lane & 15;  // this lane's 16-byte chunk of a row
    const bool qin = 16 * q < kQBlock * nblk;
    if (weights) {
      const int row0 = (tile0 + j) * kTileRows;
#pragma unroll
      for (int i = 0; i < kTileRows / 2; ++i) {
        const int r = 2 * i + (lane >> 4), row = row0 + r;
        const bool ok = qin && row < p.n;
        const int8_t* src =
            p.wq + static_cast<size_t>(ok ? row : 0) * p.w_stride + (ok ? kQBlock * cb0 + 16 * q : 0);
        cp_async16(st + swz(r, q), src, ok);
      }
      // Scales: row r = lane / 2 takes words lane % 2, + 2, + 4 of its 5.
      {
        const int r = lane >> 1, row = row0 + r;
        const bool rok = row < p.n;
        const uintptr_t a = reinterpret_cast<uintptr_t>(p.wd + static_cast<size_t>(rok ? row : 0) * nb + cb0);
        const uintptr_t w0 = a & ~uintptr_t{3};
        const uintptr_t end = a + 2 * static_cast<uintptr_t>(nblk);  // one past the last scale byte
#pragma unroll
        for (int e = lane & 1; e < 5; e += 2) {
          const uintptr_t w = w0 + 4 * e;
          cp_async4(st + s_off + r * kScaleSlot + 4 * e,
                    reinterpret_cast<const void*>(rok && w < end ? w : w0), rok && w < end);
        }
      }
    }
    if (acts) {
      const int8_t* words[2] = {p.xh, p.xl};
#pragma unroll
      for (int h = 0; h < (kHL ? 2 : 1); ++h)
        for (int i = 0; 2 * i < p.m; ++i) {
          const int m = 2 * i + (lane >> 4);
          const bool ok = qin && m < p.m;
          const int8_t* src =
              words[h] + static_cast<size_t>(ok ? m : 0) * p.ld_x + (ok ? kQBlock * cb0 + 16 * q : 0);
          if (m < p.m) cp_async16(st + a_off + h * p.m * kRowBytes + swz(m, q), src, ok);
        }
      if (lane < kChunk * p.m) {
        const int m = lane / kChunk, b = lane % kChunk;
        const bool ok = b < nblk;
        const float* src = p.xs + static_cast<size_t>(m) * p.ld_s + (ok ? cb0 + b : 0);
        cp_async4(st + x_off + 4 * lane, src, ok);
      }
    }
  };
  // Items 0 .. S-2 in flight before the first is consumed (a group each, so wait_group counts items).
#pragma unroll
  for (int f = 0; f < kStages - 1; ++f) issue(f, true, false);  // weights depend on nothing: before the wait
  pdl_wait();
  pdl_trigger();
#pragma unroll
  for (int f = 0; f < kStages - 1; ++f) {
    issue(f, false, true);
    cp_async_commit();
  }

  const int c0 = 2 * t, c1 = 2 * t + 1;
  const bool tok = g < p.m;
  int f = 0;
  for (int j = 0; j < tile1 - tile0; ++j) {
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const int row_a = (tile0 + j) * kTileRows + g;
    for (int c = 0; c < nch; ++c, ++f) {
      issue(f + kStages - 1, true, true);  // the stage consumed one step ago is free (the __syncwarp below)
      cp_async_commit();
      cp_async_wait<kStages - 1>();  // item f has landed (this lane's copies) ...
      __syncwarp();                  // ... and every lane's
      const unsigned char* st = ring + (f % kStages) * p.stage_bytes;
      const int cb0 = b0 + kChunk * c, nblk = min(kChunk, b0 + steps - cb0);
      // Scale words of rows g, g + 8: the u16 of block b sits at byte 2b + (the row's first scale & 2).
      const int la = static_cast<int>(
          reinterpret_cast<uintptr_t>(p.wd + static_cast<size_t>(min(row_a, p.n - 1)) * nb + cb0) & 2);
      const int lb = static_cast<int>(
          reinterpret_cast<uintptr_t>(p.wd + static_cast<size_t>(min(row_a + 8, p.n - 1)) * nb + cb0) & 2);
      const unsigned char* sa = st + s_off + g * kScaleSlot + la;
      const unsigned char* sb = st + s_off + (g + 8) * kScaleSlot + lb;
      const float* xsv = reinterpret_cast<const float*>(st + x_off);
      for (int b = 0; b < nblk; ++b) {
        // Lane (g, t): bytes [8t, 8t + 8) of block b of rows g, g + 8 and of token g (gemv_q8_mma.cu's
        // permutation: the first 4 as k = 4t.., the last 4 as k = 16 + 4t..).
        const int ch = 2 * b + (t >> 1), half = 8 * (t & 1);
        const uint2 wa = *reinterpret_cast<const uint2*>(st + swz(g, ch) + half);
        const uint2 wb = *reinterpret_cast<const uint2*>(st + swz(g + 8, ch) + half);
        const uint32_t a[4] = {wa.x, wb.x, wa.y, wb.y};
        const uint2 xh =
            tok ? *reinterpret_cast<const uint2*>(st + a_off + swz(g, ch) + half) : make_uint2(0, 0);
        int dh[4], dl[4];
        mma_biased(dh, a, xh.x, xh.y);
        if constexpr (kHL) {
          const uint2 xl =
              tok ? *reinterpret_cast<const uint2*>(st + a_off + p.m * kRowBytes + swz(g, ch) + half)
                  : make_uint2(0, 0);
          mma_biased(dl, a, xl.x, xl.y);
        }
        const float wsa = h2f(*reinterpret_cast<const uint16_t*>(sa + 2 * b));
        const float wsb = h2f(*reinterpret_cast<const uint16_t*>(sb + 2 * b));
        const float s0 = c0 < p.m ? xsv[c0 * kChunk + b] : 0.0f;
        const float s1 = kPair && c1 < p.m ? xsv[c1 * kChunk + b] : 0.0f;
        mma_fold<kHL, kPair>(acc, dh, dl, wsa, wsb, s0, s1);
      }
      __syncwarp();  // every lane has read stage f before anyone refills it (next step's issue)
    }
    mma_tile_combine(p, part[j & 1], tile0 + j, acc);
  }
  cp_async_wait<0>();  // no copy outlives the block
}

using StagedKernel = void (*)(MmaParams);

template <int kStages>
StagedKernel pick(bool hl, bool pair) {
  return hl ? (pair ? gemv_mma_staged_kernel<true, true, kStages>
                    : gemv_mma_staged_kernel<true, false, kStages>)
            : (pair ? gemv_mma_staged_kernel<false, true, kStages>
                    : gemv_mma_staged_kernel<false, false, kStages>);
}

}  // namespace

GpuStatus launch_gemv_mma_staged(const GemvQ8Args& a, bool hl, cudaStream_t stream) {
  const int stages = a.tile.stages == 0 ? 2 : a.tile.stages;
  if (stages != 2 && stages != 3)
    return GpuStatus::invalid("gemv_q8 mma (staged): tile.stages must be 0, 2 or 3, got " +
                              std::to_string(stages));
  const MmaParams p = mma_params(a, (stage_size(a.m, hl) + 15) / 16 * 16);
  const int smem = kSlices * stages * p.stage_bytes;
  const StagedKernel kernel = stages == 2 ? pick<2>(hl, a.m > 1) : pick<3>(hl, a.m > 1);
  return launch_persistent(kernel, "gemv_mma_staged_kernel", mma_grid(p, a.tile), kThreads, smem,
                           device_sm_count(), stream, a.pdl, p);
}

}  // namespace qc::gpu::detail
