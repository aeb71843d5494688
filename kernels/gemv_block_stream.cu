// The stream engine of gemv_block (sm_90): the weights reach shared memory through the bulk copy engine
// (cp.async.bulk), a ring of S stages between one producer warp and C consumer warps, as in the Q8_0
// stream engine (gemv_q8/gemv_q8_stream.cu).
//
// Why: the register engine (gemv_block.cu) keeps a lane's weight bytes in flight in registers, 12-20 per
// piece; measured (docs/PERFORMANCE.md 2026-12-05, 2026-12-06) it is bound by the loads it can keep in
// flight and their L1 latency (57-80% of an H100's read ceiling, ~1.5x less on an H200), and a second piece
// in flight per lane costs more occupancy than it gains. Here the bytes in flight live in shared memory
// (up to ~220 KB per SM) at no register cost, and a consumer's loads hit shared memory.
//
// Measured (2026-12-06, H100, docs/PERFORMANCE.md): slower than the register engine on every 27B decode
// shape but the lm_head. Its consumers are bound by their loads' latency (12 warps beat 8; two rows per
// warp beat one), a block that takes the whole SM cannot overlap its ring's first fill with the previous
// kernel's drain, and a ring of half an SM forces one copy per row. Hence opt-in (gemv_block.h).
//
// Stage t of a block: row group g = t / nchunk (G = C / warps_per_row x R consecutive rows), chunk
// c = t % nchunk (pieces [c x chunk, ...) of each row). Whole rows (nchunk = 1): the group's rows are
// contiguous in the file's layout, one bulk copy per stage. Chunks: one copy per row, issued by the
// producer's lanes in parallel. A copy covers the 16-byte aligned range around its bytes (Q6_K, Q4_0 and
// Q5_0 rows are only 2-byte aligned); the first row's bytes sit at its address's offset in 16 bytes.
// Where the aligned range would pass the matrix's end, its last (< 16) bytes are copied with ordinary
// loads instead.
//
// Order of every sum: consumer warp w takes row slot w / warps_per_row (rows R x slot .. of each group) and
// piece phase w % warps_per_row; its lane l folds pieces q x 32 + l + j x 32 x warps_per_row in ascending
// order through accumulate_piece (gemv_block_piece.cuh), then the butterfly, then the row's warps in
// ascending phase: exactly the register engine's order for the same warps_per_row, so the same bits (chunks
// are multiples of 32 x warps_per_row pieces, so a lane's pieces keep their order across stages).
//
// Barriers: full[s] (one arrival + the stage's transaction bytes), empty[s] (one arrival per consumer warp);
// every consumer waits on full[s] for every stage, even one without rows for it (see gemv_q8_stream.cu).
#include <algorithm>
#include <string>

#include "bulk_copy.cuh"
#include "gemv_block_epilogue.cuh"
#include "gemv_block_piece.cuh"
#include "gemv_block_stream.h"
#include "gemv_q8/persistent_launch.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kMaxConsumers = 15;  // 16 warps with the producer
constexpr int kMaxThreads = 32 * (kMaxConsumers + 1);

struct BlockStreamParams {
  GemvBlockArgs a;  // resolved: format kH / kHL, warps_per_row, rows_per_warp
  int consumers;    // C
  int chunk;        // pieces of a row per stage (all of them: whole rows)
  int stages;       // S
  int wslot;        // chunks: bytes between row slots of a stage
  int stage_bytes;
  int act_off;   // offset of the staged activation words in dynamic shared memory; 0 = read them from global
  int ring_off;  // the ring's offset in dynamic shared memory (after the barriers and the staged words)
};

// The M activation rows (words hi, lo and their scales) copied into shared memory at `at` by all `threads`
// threads (the caller synchronises), as a view with ld = K: a consumer's loads then hit shared memory instead
// of an L1 that the ring leaves small (the 2026-12-06 sweep: reading them from global memory, the engine was
// bound by their latency).
template <bool HL, int M>
__device__ __forceinline__ QActIn stage_act_words(unsigned char* at, const QActIn& g, int k, int tid,
                                                  int threads) {
  int8_t* hi = reinterpret_cast<int8_t*>(at);
  int8_t* lo = hi + M * k;
  float* sc = reinterpret_cast<float*>(at + (HL ? 2 : 1) * M * k);
  const int vec = k / 16, nb = k / 32;
  for (int i = tid; i < M * vec; i += threads) {
    const int m = i / vec, v = i - m * vec;
    *reinterpret_cast<int4*>(hi + m * k + 16 * v) = *reinterpret_cast<const int4*>(g.hi + m * g.ld + 16 * v);
    if constexpr (HL)
      *reinterpret_cast<int4*>(lo + m * k + 16 * v) =
          *reinterpret_cast<const int4*>(g.lo + m * g.ld + 16 * v);
  }
  for (int i = tid; i < M * nb; i += threads) {
    const int m = i / nb, b = i - m * nb;
    sc[m * nb + b] = g.scale[m * g.ld_scale + b];
  }
  return QActIn{hi, HL ? lo : nullptr, sc, k, nb};
}

template <BlockType T, int M, bool HL, int R>
__global__ void __launch_bounds__(kMaxThreads, 1) gemv_block_stream_kernel(const BlockStreamParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float part[R][M][kMaxConsumers];
  constexpr int P = block_pieces(T), BB = block_bytes(T);
  const GemvBlockArgs& a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int C = p.consumers, wpr = a.warps_per_row, S = p.stages;
  const int G = C / wpr * R;
  const int pieces = a.w.cols / 32;
  const int nchunk = (pieces + p.chunk - 1) / p.chunk;
  const bool whole = nchunk == 1;
  const size_t row_bytes = a.w.row_bytes();
  const int row0 = static_cast<int>(static_cast<long long>(blockIdx.x) * a.w.rows / gridDim.x);
  const int row1 = static_cast<int>(static_cast<long long>(blockIdx.x + 1) * a.w.rows / gridDim.x);
  const int n_stages = (row1 - row0 + G - 1) / G * nchunk;
  const uintptr_t wbase = reinterpret_cast<uintptr_t>(a.w.data);
  const uintptr_t wend = wbase + static_cast<size_t>(a.w.rows) * row_bytes;
  const uint32_t bars = smem_addr(smem);  // full[s] at bars + 8s, empty[s] at bars + 8(S + s)
  unsigned char* ring = smem + p.ring_off;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(bars + 8 * s, 1);
      mbar_init(bars + 8 * (S + s), C);
    }
    mbar_init_fence();
  }
  __syncthreads();

  // Stage geometry, the same arithmetic in producer and consumers.
  auto geometry = [&](int t, int& rg0, int& nrows, int& pb0, int& np) {
    const int g = t / nchunk, c = t - g * nchunk;
    rg0 = row0 + g * G;
    nrows = min(G, row1 - rg0);
    pb0 = c * p.chunk;
    np = min(p.chunk, pieces - pb0);
  };
  // Copy i of a stage: its source bytes [src, src + len) and where its slot starts in the stage.
  auto copy_of = [&](int rg0, int nrows, int pb0, int np, int i, uintptr_t& src, size_t& len, int& slot) {
    if (whole) {
      src = wbase + static_cast<size_t>(rg0) * row_bytes;
      len = static_cast<size_t>(nrows) * row_bytes;
      slot = 0;
    } else {
      src = wbase + static_cast<size_t>(rg0 + i) * row_bytes + static_cast<size_t>(pb0 / P) * BB;
      len = static_cast<size_t>(np / P) * BB;
      slot = i * p.wslot;
    }
  };

  // Copy i's bulk range [a0, a1): the 16-byte aligned envelope of its bytes, cut back to the last aligned
  // address where it would leave the matrix (the bytes past a1 are then copied with ordinary loads).
  auto envelope = [&](int rg0, int nrows, int pb0, int np, int i, uintptr_t& src, size_t& len, int& slot,
                      uintptr_t& a0, uintptr_t& a1) {
    copy_of(rg0, nrows, pb0, np, i, src, len, slot);
    a0 = src & ~uintptr_t{15};
    a1 = (src + len + 15) & ~uintptr_t{15};
    if (a1 > wend) a1 = (src + len) & ~uintptr_t{15};
  };

  const bool producer = warp == C;
  auto produce = [&](int t) {
    int rg0, nrows, pb0, np;
    geometry(t, rg0, nrows, pb0, np);
    const int s = t % S;
    unsigned char* st = ring + s * p.stage_bytes;
    const int copies = whole ? 1 : nrows;
    uint32_t tx = 0;
    bool generic = false;
    for (int i = lane; i < copies; i += 32) {
      uintptr_t src, a0, a1;
      size_t len;
      int slot;
      envelope(rg0, nrows, pb0, np, i, src, len, slot, a0, a1);
      if (a1 < src + len) {  // the matrix's last bytes: the aligned range would leave it
        const uint16_t* from = reinterpret_cast<const uint16_t*>(a1);
        uint16_t* to = reinterpret_cast<uint16_t*>(st + slot + (a1 - a0));
        for (uintptr_t e = 0; e < (src + len - a1) / 2; ++e) to[e] = __ldg(from + e);
        generic = true;
      }
      tx += static_cast<uint32_t>(a1 - a0);
    }
    tx = __reduce_add_sync(kFullMask, tx);
    if (__any_sync(kFullMask, generic)) fence_proxy_async();  // bulk copies refill these bytes S stages on
    __syncwarp();
    const uint32_t full = bars + 8 * s;
    if (lane == 0) mbar_arrive_expect_tx(full, tx);
    __syncwarp();
    for (int i = lane; i < copies; i += 32) {
      uintptr_t src, a0, a1;
      size_t len;
      int slot;
      envelope(rg0, nrows, pb0, np, i, src, len, slot, a0, a1);
      if (a1 > a0)
        bulk_g2s(smem_addr(st + slot), reinterpret_cast<const void*>(a0), static_cast<uint32_t>(a1 - a0),
                 full);
    }
  };

  int t_next = 0;
  if (producer)
    for (; t_next < min(n_stages, S); ++t_next) produce(t_next);  // before the dependency wait: weights only

  pdl_wait();
  pdl_trigger();
  QActIn xq = a.xq;
  if (p.act_off) xq = stage_act_words<HL, M>(smem + p.act_off, a.xq, a.w.cols, threadIdx.x, blockDim.x);
  __syncthreads();

  if (producer) {
    for (; t_next < n_stages; ++t_next) {
      mbar_wait(bars + 8 * (S + t_next % S), ((t_next / S) & 1) ^ 1);
      produce(t_next);
    }
    return;
  }

  // Consumers.
  const int slot_row = warp / wpr, q = warp - slot_row * wpr;
  const int i0 = slot_row * R;  // this warp's first row within a group
  float acc[R][M];
  for (int t = 0; t < n_stages; ++t) {
    int rg0, nrows, pb0, np;
    geometry(t, rg0, nrows, pb0, np);
    const int s = t % S;
    const int c = t % nchunk;
    if (c == 0) {
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int m = 0; m < M; ++m) acc[r][m] = 0.0f;
    }
    mbar_wait(bars + 8 * s, (t / S) & 1);
    if (i0 < nrows) {  // warp-uniform
      const unsigned char* st = ring + s * p.stage_bytes;
      const unsigned char* wrow[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int i = i0 + r < nrows ? i0 + r : i0;  // a missing row aliases the first: computed, not written
        uintptr_t src;
        size_t len;
        int slot;
        copy_of(rg0, nrows, pb0, np, i, src, len, slot);
        wrow[r] = st + slot + (src & 15) + (whole ? static_cast<size_t>(i) * row_bytes : 0);
      }
#pragma unroll 2
      for (int pl = q * 32 + lane; pl < np; pl += 32 * wpr) {
        IntPiece w[R];
#pragma unroll
        for (int r = 0; r < R; ++r)
          int_piece<T>(load_piece<T, bq::SharedSrc>(wrow[r] + static_cast<size_t>(pl / P) * BB, pl % P),
                       pl % P, w[r]);
        accumulate_piece<T, M, HL, R, false>(w, xq, pb0 + pl, pieces, nullptr, acc);
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(bars + 8 * (S + s));  // the stage may be refilled

    if (c == nchunk - 1 && i0 < nrows) {  // the group's rows are complete: the register engine's epilogue
      warp_sum_rows(acc);
      if (wpr > 1) {  // the row's warps in ascending phase; a named barrier per row slot (ids 1..C/wpr)
        stash_part(part, warp, lane, acc);
        named_sync(1 + slot_row, 32 * wpr);
        if (q == 0) combine_parts(part, warp, wpr, acc);
        named_sync(1 + slot_row, 32 * wpr);  // part is rewritten by the next group's epilogue
      }
      if (q == 0) store_rows(a, acc, rg0 + i0, rg0 + nrows, lane);
    }
  }
#else
  (void)p;  // below sm_90: never launched (block_stream_supported())
#endif
}

using StreamKernel = void (*)(BlockStreamParams);

template <BlockType T, bool HL, int R>
StreamKernel pick_m(int m) {
  switch (m) {
    case 1:
      return gemv_block_stream_kernel<T, 1, HL, R>;
    case 2:
      return gemv_block_stream_kernel<T, 2, HL, R>;
    case 3:
      return gemv_block_stream_kernel<T, 3, HL, R>;
    default:
      return gemv_block_stream_kernel<T, 4, HL, R>;
  }
}

template <BlockType T>
StreamKernel pick(bool hl, int r, int m) {
  switch (r * 2 + (hl ? 1 : 0)) {
    case 2:
      return pick_m<T, false, 1>(m);
    case 3:
      return pick_m<T, true, 1>(m);
    case 4:
      return pick_m<T, false, 2>(m);
    case 5:
      return pick_m<T, true, 2>(m);
    case 8:
      return pick_m<T, false, 4>(m);
    default:
      return pick_m<T, true, 4>(m);
  }
}

bool block_stream_supported() {
  return device_attribute(cudaDevAttrComputeCapabilityMajor, 0) >= 9;
}

}  // namespace

GpuStatus gemv_block_stream(const GemvBlockArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(block_stream_supported(),
                 "gemv_block: the stream engine needs compute capability 9.0 or later");
  const int wpr = a.warps_per_row, R = a.rows_per_warp;
  QC_GPU_REQUIRE(R == 1 || R == 2 || R == 4,
                 "gemv_block stream: rows_per_warp must be 1, 2 or 4, got " + std::to_string(R));
  // Auto: 12 consumer warps (the 2026-12-06 sweep: the consumers are bound by their loads' latency, 12
  // warps beat 8 by 2-20 points of the read ceiling where the ring is the whole block's).
  const int C = a.stream_warps > 0 ? a.stream_warps : (wpr == 8 ? 8 : 12);
  QC_GPU_REQUIRE(
      C <= kMaxConsumers && C % wpr == 0,
      "gemv_block stream: stream_warps must be a multiple of warps_per_row=" + std::to_string(wpr) +
          " and at most " + std::to_string(kMaxConsumers) + ", got " + std::to_string(C));
  const BlockType t = a.w.type;
  const int P = block_pieces(t), BB = block_bytes(t);
  const int pieces = a.w.cols / 32, G = C / wpr * R;
  const size_t row_bytes = a.w.row_bytes();
  const int unit = 32 * wpr;  // a chunk keeps every lane's pieces in order
  QC_GPU_REQUIRE(a.stream_chunk >= 0 && a.stream_chunk % unit == 0,
                 "gemv_block stream: stream_chunk must be a multiple of 32 x warps_per_row = " +
                     std::to_string(unit) + ", got " + std::to_string(a.stream_chunk));
  QC_GPU_REQUIRE(a.stream_stages == 0 || (a.stream_stages >= 2 && a.stream_stages <= 16),
                 "gemv_block stream: stream_stages must be 0 (auto) or in [2, 16], got " +
                     std::to_string(a.stream_stages));

  // Shared memory: barriers (256 bytes: up to 16 stages) | staged activation words | S stages. A block
  // takes at most stream_smem, by default all it may opt in to (less the 1 KB the runtime keeps per block
  // and the static `part` array). Half an SM's would let one block of the next kernel fit beside it and
  // issue its first copies before this one has drained; measured slower (2026-12-06: the shallower ring
  // forces row chunks, one copy per row, on the wide shapes).
  const int optin = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, 48 * 1024) - 1024;
  const int per_sm = device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, 48 * 1024);
  const int limit = a.stream_smem > 0 ? std::min(a.stream_smem, optin) : std::min(optin, per_sm - 2048);
  constexpr int kBarBytes = 256;
  const bool hl = a.format == ActFormat::kHL;
  const int act_bytes = ((hl ? 2 : 1) * a.m * a.w.cols + a.m * pieces * 4 + 127) / 128 * 128;
  QC_GPU_REQUIRE(
      a.stream_acts >= -1 && a.stream_acts <= 1,
      "gemv_block stream: stream_acts must be -1 (auto), 0 or 1, got " + std::to_string(a.stream_acts));
  const bool staged = a.stream_acts == 1 || (a.stream_acts < 0 && 2 * act_bytes <= limit);
  BlockStreamParams p{};
  p.a = a;
  p.consumers = C;
  p.act_off = staged ? kBarBytes : 0;
  p.ring_off = kBarBytes + (staged ? act_bytes : 0);
  const int budget = limit - p.ring_off;
  // Whole rows when three stages of them fit; else chunks of about a quarter of the ring per stage.
  const size_t whole_stage = (static_cast<size_t>(G) * row_bytes + 15) / 16 * 16 + 32;
  int chunk = a.stream_chunk;
  if (chunk == 0) {
    if (whole_stage * 3 <= static_cast<size_t>(std::max(0, budget))) {
      chunk = pieces;
    } else {
      const int per_row = budget / 4 / G - 32;  // bytes of a row per stage
      chunk = std::max(unit, per_row / BB * P / unit * unit);
    }
  }
  p.chunk = std::min(chunk, pieces);
  if (p.chunk >= pieces) {
    p.chunk = pieces;
    p.wslot = 0;
    p.stage_bytes = static_cast<int>(std::min<size_t>(whole_stage, 1u << 30));
  } else {
    // A row slot: the chunk's bytes, up to 15 bytes of alignment before them and the 4 bytes past them a
    // Q6_K lane's realigned loads may touch.
    p.wslot = (p.chunk / P * BB + 15) / 16 * 16 + 32;
    p.stage_bytes = G * p.wslot;
  }
  const int S =
      a.stream_stages > 0 ? a.stream_stages : std::min(16, std::max(0, budget) / std::max(1, p.stage_bytes));
  QC_GPU_REQUIRE(S >= 2 && static_cast<long long>(S) * p.stage_bytes <= budget,
                 "gemv_block stream: " + std::to_string(S) + " stages of " + std::to_string(p.stage_bytes) +
                     " bytes (" + std::to_string(G) + " rows of " + std::to_string(p.chunk) +
                     " pieces) do not fit the " + std::to_string(budget) +
                     " bytes of shared memory left of " + std::to_string(limit) +
                     (staged ? " after the staged activations" : ""));
  p.stages = S;
  const int smem = p.ring_off + S * p.stage_bytes;

  const StreamKernel kernel = with_block_type(
      t, [&](auto type) { return pick<decltype(type)::value>(a.format == ActFormat::kHL, R, a.m); });
  QC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  // One block per SM, balanced so that every warp's share of rows is as even as the row count allows
  // (persistent_launch.cuh).
  const int sms = std::max(1, device_sm_count());
  const int grid = balanced_grid(a.w.rows, 1, a.w.rows, C / wpr, R, sms, sms);
  const cudaError_t e = launch_kernel(kernel, dim3(grid), dim3(32 * (C + 1)), smem, stream, a.pdl, p);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_block_stream_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_block_stream_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu::detail
