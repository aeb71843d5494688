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
// Schedules (TileTuning::engine; every one gives the contract's bits, the tests compare them with its
// mirror): a block of 8 warps owns a 16-row tile at a time, warp w walking slice w, on a persistent grid
// (every block resident, each taking a contiguous run of tiles, the same number +- 1). 1 (the default) and 3,
// here: a warp takes its slice's blocks in pairs (64 bytes of a row) from registers, with kPairs pairs in
// flight per lane (TileTuning::unroll = 2 kPairs blocks), weights and weight scales of the first ones issued
// before the programmatic-launch wait, activations and their scales with every later pair; engine 1 refills
// the registers once a whole batch of kPairs pairs is consumed, engine 3 each slot as soon as it is (a ring,
// on across tiles), engine 4 as engine 1 with lean loads (kLean in the kernel). 2: shared-memory stages
// filled by cp.async (gemv_q8_mma_staged.cu). Fragments straight from global memory: lane (g, t) loads bytes
// [16t, 16t + 16) of the pair from rows g and g + 8 and from token g (one 16-byte load each), so lanes t = 0,
// 1 hold the first block and t = 2, 3 the second. A block's dot product is then two mmas, each taking 8 of
// the 16 bytes of every lane (k = 4t.. from the first 4, k = 16 + 4t.. from the next 4), with the activation
// words of the lanes that hold the other block set to zero; the second mma adds onto the first's sums
// (mma_s8.cuh), and the int32 result is exactly the block's dot product, whatever the order. A lane loads one
// weight scale a pair (row g + 8 (t / 2), block t % 2), handed to the others by shuffles.
//
// Why pairs (2026-12-07, H100: the first form, one block per 8-byte load, reached 58-69% of the read
// ceiling and got slower with more blocks in flight): an 8-byte load per lane touches 8 rows x 32 bytes, one
// sector of 8 different lines, and each row's scale load another 8 lines for 2 bytes; per 512 weight bytes
// that was ~34 L1 line look-ups against the dp4a tile kernel's 5 (a 16-byte load per lane along one row).
// Pairs cut it to ~16, with every row's 64 bytes in one request (two adjacent sectors: one HBM burst): 61-84%
// (one tile a block then). The cost is one more mma per block (2 for h, 4 for hl). Why batches: with the
// persistent grid, the ring refilled slot by slot fell to 52-62% while batches reached 58-78% -- a register
// load cannot be waited for apart from the loads issued after it when they share a scoreboard, so a ring of
// register loads waits for its newest loads (docs/PERFORMANCE.md "thirteenth session").
//
// Cost per warp and pair (1 KB of weights): 2 weight loads, 1 activation load (hl: 2), 2-4 activation-
// scale loads, 1 scale load, 4 shuffles, 4 mmas (hl: 8) and ~40 f32 instructions for M >= 2 (~24 at M = 1,
// where a lane folds only its column 0); the dp4a tile kernel's M = 4 pass issues ~120.
#include <algorithm>

#include <string>

#include "gemv_q8_internal.h"
#include "gemv_q8_lane.cuh"
#include "gemv_q8_mma_step.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kThreads = kMmaThreads;
constexpr int kTileRows = kMmaTileRows;
// Blocks in flight per lane when the caller leaves tile.unroll 0: 4 beat 8 on every 27B shape at every M
// (H100, 2026-12-07: 58-69% of the read ceiling against 40-58%; docs/PERFORMANCE.md "twelfth session"), and
// again with pairs and batches (thirteenth session).
constexpr int kDefaultRing = 4;
// The schedule when the caller leaves tile.engine 0: whole batches (engine 1) beat the slot-by-slot ring
// (engine 3) on every 27B shape at M = 1 (H100, 2026-12-07 16:47 UTC, h: 62-78% of the read ceiling
// against 52-62%; docs/measurements/2026-12-07-h100-mma-schedules-gemv-variants.log).
constexpr int kDefaultEngine = 1;

// kPairs: pairs of Q8_0 blocks in flight per lane (2 or 4: the knob's 4 or 8 blocks). kPair: M >= 2, so a
// lane folds both of its columns (2t, 2t + 1); at M = 1 only column 0 holds a token and the lanes fold half
// the elements (the same instructions per element: the same bits). kBatch: refill the ring only once all
// of its pairs are consumed (TileTuning::engine 1, 4) instead of each slot as soon as it is (engine 3).
// kLean (engine 4): loads without zero-fill (below).
template <bool kHL, int kPairs, bool kPair, bool kBatch, bool kLean>
__global__ void __launch_bounds__(kThreads, kPairs == 2 ? 3 : 2) gemv_mma_kernel(const MmaParams p) {
  __shared__ MmaPartials part[2];  // tile j's in part[j & 1] (mma_tile_combine)
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const bool first_half = t < 2;  // this lane's 16 bytes of a pair belong to the pair's first block
  const int nb = p.k / kQBlock;
  const int b0 = warp * p.per;
  const int steps = max(0, min(nb, b0 + p.per) - b0);  // blocks of this warp's slice
  const int pairs = (steps + 1) / 2;
  int tile0, tile1;
  mma_tile_range(p, &tile0, &tile1);

  int4 qa[kPairs], qb[kPairs];  // rows g, g + 8: 16 bytes of the pair each
  uint16_t sc[kPairs];          // one weight scale a lane: (row g + 8 (t / 2), block 2i + t % 2)
  int4 xh[kPairs], xl[kPairs];  // token g: 16 bytes of the pair (hi, lo)
  float xs[kPairs][4];          // tokens 2t, 2t + 1: scales of the pair's two blocks
  // The ring runs over f = (tile - tile0) * pairs + i and on across tiles, so a warp's loads stay in flight
  // through the end of a tile (its combine) into the next one.
  // Issue cursors: pairs are issued in order (f = 0, 1, ...), so the next one's tile and pair index advance
  // by one step, without a division or a 64-bit product per pair.
  //
  // Lean loads (kLean): what is loaded but never counted need not be zero, only readable. A lane's bytes of
  // a block that does not exist (the second block of a slice of odd length) or of a row past N, a token
  // past M, or the scales of either, reach only products that are discarded: the other block's mma sees them
  // against zero activation words (an exact 0 in the integer sums), the second block's fold is skipped,
  // rows >= N and tokens >= M are never stored. So the addresses are clamped into the matrix (the last
  // block of the slice, row N - 1, token 0) and the loads issue unpredicated, without the 4-register zero
  // fill of each int4 and the per-load predicates: fewer instructions in a kernel near its issue limit
  // (docs/PERFORMANCE.md "thirteenth session", ncu). Pairs past the warp's last are not issued at all (a
  // warp-uniform branch), so their registers are never read.
  const int ntiles = pairs ? tile1 - tile0 : 0;  // tiles this warp has pairs in
  int wj = 0, wi = 0;                            // the next pair to issue: tile tile0 + wj, pair wi
  int wrow = tile0 * kTileRows + g;              // row g of that tile
  // The lane's byte of a pair's bytes, and its clamp: block min(2i + t / 2, steps - 1), half t % 2.
  const int lim = 32 * (steps - 1) + 16 * (t & 1);
  const int8_t* wp = p.wq + static_cast<size_t>(wrow) * p.w_stride + 32 * b0 + 16 * t;
  const uint16_t* sp = p.wd + static_cast<size_t>(wrow + 8 * (t >> 1)) * nb + b0 + (t & 1);
  const size_t w_tile = static_cast<size_t>(kTileRows) * p.w_stride,
               w_half = 8 * static_cast<size_t>(p.w_stride);
  // kLean: row pointers clamped to row N - 1, at byte 0 of the slice (re-derived once a tile).
  const int8_t *wpa = nullptr, *wpb = nullptr;
  const uint16_t* spl = nullptr;
  auto lean_rows = [&]() {
    const int ra = min(wrow, p.n - 1), rb = min(wrow + 8, p.n - 1), rs = min(wrow + 8 * (t >> 1), p.n - 1);
    wpa = p.wq + static_cast<size_t>(ra) * p.w_stride + 32 * b0;
    wpb = p.wq + static_cast<size_t>(rb) * p.w_stride + 32 * b0;
    spl = p.wd + static_cast<size_t>(rs) * nb + b0;
  };
  if constexpr (kLean) lean_rows();
  auto issue_w = [&](int slot) {
    if constexpr (kLean) {
      if (wj >= ntiles) return;  // warp-uniform: past the warp's last pair
      const int off = min(64 * wi + 16 * t, lim);
      qa[slot] = load_w16(wpa + off);
      qb[slot] = load_w16(wpb + off);
      sc[slot] = __ldg(spl + min(2 * wi + (t & 1), steps - 1));
      if (++wi == pairs) {
        wi = 0;
        ++wj;
        wrow += kTileRows;
        lean_rows();
      }
    } else {
      const bool live = wj < ntiles;
      const bool in = live && 2 * wi + (t >> 1) < steps;  // the lane's block of the pair is 2 wi + t / 2
      qa[slot] = in && wrow < p.n ? load_w16(wp + 64 * wi) : make_int4(0, 0, 0, 0);
      qb[slot] = in && wrow + 8 < p.n ? load_w16(wp + w_half + 64 * wi) : make_int4(0, 0, 0, 0);
      // One scale a lane: row g + 8 (t / 2), block 2 wi + t % 2.
      sc[slot] =
          live && 2 * wi + (t & 1) < steps && wrow + 8 * (t >> 1) < p.n ? __ldg(sp + 2 * wi) : uint16_t{0};
      if (++wi == pairs) {
        wi = 0;
        ++wj;
        wrow += kTileRows;
        wp += w_tile;
        sp += static_cast<size_t>(kTileRows) * nb;
      }
    }
  };
#pragma unroll
  for (int u = 0; u < kPairs; ++u) issue_w(u);  // weights depend on nothing: before the wait

  pdl_wait();
  pdl_trigger();

  // Token g's activation bytes (the B fragment); the scales of tokens 2t, 2t + 1 (the C fragment's columns).
  const bool tok = g < p.m;
  const int8_t* ah = p.xh + static_cast<size_t>(tok ? g : 0) * p.ld_x + 32 * b0 + (kLean ? 0 : 16 * t);
  const int8_t* al =
      kHL ? p.xl + static_cast<size_t>(tok ? g : 0) * p.ld_x + 32 * b0 + (kLean ? 0 : 16 * t) : nullptr;
  const int c0 = 2 * t, c1 = 2 * t + 1;
  const float* xs0 = p.xs + static_cast<size_t>(c0 < p.m ? c0 : 0) * p.ld_s + b0;  // xs0 + ld_s: token c1
  const float* xs1 = p.xs + static_cast<size_t>(c1 < p.m ? c1 : 0) * p.ld_s + b0;  // kLean's token c1
  int xj = 0, xi = 0;  // the activations' own cursor (they start after the wait)
  auto issue_x = [&](int slot) {
    if constexpr (kLean) {
      if (xj >= ntiles) return;
      const int off = min(64 * xi + 16 * t, lim);
      xh[slot] = *reinterpret_cast<const int4*>(ah + off);
      if constexpr (kHL) xl[slot] = *reinterpret_cast<const int4*>(al + off);
      const int ia = 2 * xi, ib = min(2 * xi + 1, steps - 1);
      xs[slot][0] = xs0[ia];
      xs[slot][1] = xs0[ib];
      if constexpr (kPair) {
        xs[slot][2] = xs1[ia];
        xs[slot][3] = xs1[ib];
      } else {
        xs[slot][2] = xs[slot][3] = 0.0f;
      }
    } else {
      const bool live = xj < ntiles;
      const bool in = live && tok && 2 * xi + (t >> 1) < steps;
      xh[slot] = in ? *reinterpret_cast<const int4*>(ah + 64 * xi) : make_int4(0, 0, 0, 0);
      if constexpr (kHL) xl[slot] = in ? *reinterpret_cast<const int4*>(al + 64 * xi) : make_int4(0, 0, 0, 0);
      const bool ina = live && 2 * xi < steps, inb = live && 2 * xi + 1 < steps;
      xs[slot][0] = ina && c0 < p.m ? xs0[2 * xi] : 0.0f;
      xs[slot][1] = inb && c0 < p.m ? xs0[2 * xi + 1] : 0.0f;
      xs[slot][2] = kPair && ina && c1 < p.m ? xs0[p.ld_s + 2 * xi] : 0.0f;
      xs[slot][3] = kPair && inb && c1 < p.m ? xs0[p.ld_s + 2 * xi + 1] : 0.0f;
    }
    if (++xi == pairs) {
      xi = 0;
      ++xj;
    }
  };
#pragma unroll
  for (int u = 0; u < kPairs; ++u) issue_x(u);

  float acc[4];  // (row g, c0), (row g, c1), (row g+8, c0), (row g+8, c1)
  // The two mmas of one block: the lanes holding the other block give zero activation words.
  auto block_dot = [&](int(&d)[4], const uint32_t(&a1)[4], const uint32_t(&a2)[4], const int4& x, bool mine) {
    mma_biased(d, a1, mine ? x.x : 0u, mine ? x.y : 0u);
    mma_biased_add(d, a2, mine ? x.z : 0u, mine ? x.w : 0u);
  };
  // One pair from ring slot u (pair i of the slice), then the refill: the slot with the next pair (ring), or
  // after the batch's last slot all of them with the next kPairs pairs (batch).
  auto consume = [&](int u, int i) {
    const uint32_t a1[4] = {static_cast<uint32_t>(qa[u].x), static_cast<uint32_t>(qb[u].x),
                            static_cast<uint32_t>(qa[u].y), static_cast<uint32_t>(qb[u].y)};
    const uint32_t a2[4] = {static_cast<uint32_t>(qa[u].z), static_cast<uint32_t>(qb[u].z),
                            static_cast<uint32_t>(qa[u].w), static_cast<uint32_t>(qb[u].w)};
    int dha[4], dla[4], dhb[4], dlb[4];
    block_dot(dha, a1, a2, xh[u], first_half);
    block_dot(dhb, a1, a2, xh[u], !first_half);
    if constexpr (kHL) {
      block_dot(dla, a1, a2, xl[u], first_half);
      block_dot(dlb, a1, a2, xl[u], !first_half);
    }
    // Weight scales from lanes (g, 0 .. 3): rows g, g + 8 of blocks 2i, 2i + 1.
    const int src = g << 2;
    const float wsa0 = h2f(static_cast<uint16_t>(__shfl_sync(0xffffffffu, sc[u], src)));
    const float wsb0 = h2f(static_cast<uint16_t>(__shfl_sync(0xffffffffu, sc[u], src + 2)));
    mma_fold<kHL, kPair>(acc, dha, dla, wsa0, wsb0, xs[u][0], xs[u][2]);
    if (2 * i + 1 < steps) {  // warp-uniform: a slice of odd length ends on half a pair
      const float wsa1 = h2f(static_cast<uint16_t>(__shfl_sync(0xffffffffu, sc[u], src + 1)));
      const float wsb1 = h2f(static_cast<uint16_t>(__shfl_sync(0xffffffffu, sc[u], src + 3)));
      mma_fold<kHL, kPair>(acc, dhb, dlb, wsa1, wsb1, xs[u][1], xs[u][3]);
    }
    if constexpr (!kBatch) {
      issue_w(u);
      issue_x(u);
    } else if (u == kPairs - 1) {
#pragma unroll
      for (int v = 0; v < kPairs; ++v) issue_w(v);
#pragma unroll
      for (int v = 0; v < kPairs; ++v) issue_x(v);
    }
  };

  int f = 0;  // pairs consumed so far
  for (int j = 0; j < tile1 - tile0; ++j) {
    acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
    // Pairs i of this tile; the ring slot of pair f is f % kPairs (unrolled so that slots stay in registers).
    for (int i = 0; i < pairs;) {
#pragma unroll
      for (int u = 0; u < kPairs; ++u)
        if (f % kPairs == u && i < pairs) {
          consume(u, i);
          ++i;
          ++f;
        }
    }
    mma_tile_combine(p, part[j & 1], tile0 + j, acc);
  }
}

}  // namespace

using MmaKernel = void (*)(MmaParams);

template <int kPairs, bool kBatch, bool kLean>
MmaKernel pick(bool hl, bool pair) {
  return hl ? (pair ? gemv_mma_kernel<true, kPairs, true, kBatch, kLean>
                    : gemv_mma_kernel<true, kPairs, false, kBatch, kLean>)
            : (pair ? gemv_mma_kernel<false, kPairs, true, kBatch, kLean>
                    : gemv_mma_kernel<false, kPairs, false, kBatch, kLean>);
}

GpuStatus launch_gemv_mma(const GemvQ8Args& a, bool hl, cudaStream_t stream) {
  const int ring = a.tile.unroll == 0 ? kDefaultRing : a.tile.unroll;
  if (ring != 4 && ring != 8)
    return GpuStatus::invalid("gemv_q8 mma: tile.unroll (blocks in flight per lane) must be 0, 4 or 8, got " +
                              std::to_string(ring));
  if (a.tile.engine < 0 || a.tile.engine > 4)
    return GpuStatus::invalid(
        "gemv_q8 mma: tile.engine must be 0 (default), 1 (register batch), 2 (shared-memory "
        "stages), 3 (register ring) or 4 (register batch, lean loads), got " +
        std::to_string(a.tile.engine));
  if (a.tile.engine == 2) return launch_gemv_mma_staged(a, hl, stream);
  const int engine = a.tile.engine == 0 ? kDefaultEngine : a.tile.engine;
  const bool pair = a.m > 1;
  MmaKernel kernel = nullptr;
  if (engine == 4)
    kernel = ring == 4 ? pick<2, true, true>(hl, pair) : pick<4, true, true>(hl, pair);
  else if (engine == 1)
    kernel = ring == 4 ? pick<2, true, false>(hl, pair) : pick<4, true, false>(hl, pair);
  else
    kernel = ring == 4 ? pick<2, false, false>(hl, pair) : pick<4, false, false>(hl, pair);
  const MmaParams p = mma_params(a, 0);
  return launch_persistent(kernel, "gemv_mma_kernel", mma_grid(p, a.tile), kThreads, 0, device_sm_count(),
                           stream, a.pdl, p);
}

}  // namespace qc::gpu::detail
