// gemm_q8 (gemm_q8.h): Q8_0 weights x quantised activations on int8 tensor cores, for prefill.
//
// Block tile BM x BN (128x128, 64x128 or 64x64) of 8 warps as 2 (M) x 4 (N); each warp owns a
// (BM/2) x (BN/4) piece as MT x NT fragments of 16 x 8. K streams through shared memory in stages of 128
// bytes (4 Q8 blocks), 2 to 4 stages deep, with cp.async:
//   a_hi [BM][144], a_lo [BM][144] (hl), w [BN][144]   int8 rows, K contiguous, padded 128 -> 144 bytes
//   a_scale [4][BM], w_scale [4][BN]                    f32, one column per Q8 block of the stage
// The 16-byte pad makes the fragment loads conflict-free: ldmatrix reads 8 rows of 16 bytes per phase,
// and rows 144 bytes apart fall on 8 different 16-byte bank groups (144 / 16 = 9, odd).
//
// Per Q8 block j of a stage, per warp: ldmatrix.x4 fetches each A fragment (16 rows x 32 bytes) and two B
// fragments (2 x 8 weight rows x 32 bytes); then for every 16 x 8 fragment one mma.m16n8k32 (two for hl)
// gives the exact int32 dot products of that block, and the f32 fold of the contract (gemm_q8.h) follows
// at once, in the same order for every element: block after block, ascending. Nothing else touches acc,
// so the bits of an element depend on its row's and column's data only.
//
// int32 -> f32: mma_s8.cuh (the product accumulates onto 1.5 * 2^23, unbias() takes it off exactly).
//
// Edges: copies beyond M or N rows, or beyond K, are zero-filled (cp.async src-size 0; nothing is read
// there), scales too; blocks beyond K are never folded (fma(0, 0, -0) would turn a -0 into +0), and rows
// beyond M / columns beyond N are never written. The weight scales go through registers rather than
// cp.async: an f16 pair of row n starts at byte 2 * (n * K/32 + b), not 4-byte aligned for odd K/32, and
// cp.async copies 4 bytes at least. They are loaded when a stage is issued and stored to shared memory
// after the current stage's math, so the load latency hides behind it.
#include "gemm_q8.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "common.cuh"
#include "mma_s8.cuh"
#include "q8_io.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsM = 2, kWarpsN = 4;
constexpr int kStageK = 128;                     // K bytes per stage
constexpr int kStageBlocks = kStageK / kQBlock;  // Q8 blocks per stage
constexpr int kPitch = kStageK + 16;             // bytes per staged row (see the header comment)
constexpr int kMinStages = 2, kMaxStages = 4;


struct Params {
  const int8_t* wq;
  const uint16_t* wd;
  int n, k, w_stride;
  const int8_t* xh;
  const int8_t* xl;  // null for format h
  const float* xs;
  int ld_x, ld_s;
  int m;
  float* y;
  int ld_y;
  const float* res;  // may alias y
  int ld_res;
  int stages;
};

// Shared-memory layout of one stage (byte offsets) and the warp decomposition of a BM x BN tile.
template <int BM, int BN, bool kHL>
struct Tile {
  static constexpr int kAHi = 0;
  static constexpr int kALo = BM * kPitch;
  static constexpr int kW = kALo + (kHL ? BM * kPitch : 0);
  static constexpr int kAScale = kW + BN * kPitch;                 // f32 [kStageBlocks][BM]
  static constexpr int kWScale = kAScale + kStageBlocks * BM * 4;  // f32 [kStageBlocks][BN]
  static constexpr int kStageBytes = kWScale + kStageBlocks * BN * 4;
  static constexpr int kWarpM = BM / kWarpsM, kWarpN = BN / kWarpsN;
  static constexpr int kMT = kWarpM / 16, kNT = kWarpN / 8;               // mma fragments per warp
  static constexpr int kWScalesPerThread = kStageBlocks * BN / kThreads;  // 1 or 2
  static_assert(kStageBytes % 16 == 0, "stages must stay 16-byte aligned");
  static_assert(kNT % 2 == 0, "B fragments are fetched in pairs");
  static_assert(BM * (kStageK / 16) % kThreads == 0 && BN * (kStageK / 16) % kThreads == 0,
                "copies must spread evenly over the block");
  static_assert(kStageBlocks * BM % kThreads == 0 && kWScalesPerThread >= 1, "scale copies");
};

// ---- sm_80 primitives: cp.async, ldmatrix (the int8 mma: mma_s8.cuh) ----
__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared through L2 only; `valid` false writes 16 zero bytes and reads nothing (`src`
// must still be a valid address).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(__cvta_generic_to_global(src)),
               "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(__cvta_generic_to_global(src)),
               "r"(valid ? 4 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
// Wait until at most `pending` (0 .. 2) of this thread's groups are still in flight.
__device__ __forceinline__ void cp_async_wait(int pending) {
  if (pending <= 0)
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  else if (pending == 1)
    asm volatile("cp.async.wait_group 1;" ::: "memory");
  else
    asm volatile("cp.async.wait_group 2;" ::: "memory");
}
// Four 8x8 b16 matrices; lanes 8i .. 8i+7 give the row addresses of matrix i, and register i of lane l
// receives bytes 4(l%4) .. 4(l%4)+3 of row l/4 of matrix i -- for int8 data exactly the 32-bit word of
// 4 consecutive K bytes that the m16n8k32 fragments hold.
__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
// ---- stage loads ----
// Rows of a [rows][ld] int8 matrix from (r0, k0): 128 bytes each, zero beyond `rows_valid` or `k`.
template <int kRows>
__device__ __forceinline__ void issue_rows(uint32_t dst, const int8_t* src, int ld, int r0, int rows_valid,
                                           int k0, int k) {
#pragma unroll
  for (int i = 0; i < kRows * (kStageK / 16) / kThreads; ++i) {
    const int e = static_cast<int>(threadIdx.x) + i * kThreads;
    const int row = e / (kStageK / 16), chunk = e % (kStageK / 16);
    const int kk = k0 + chunk * 16;
    const bool ok = r0 + row < rows_valid && kk < k;
    const int8_t* p = ok ? src + static_cast<size_t>(r0 + row) * ld + kk : src;
    cp_async16(dst + row * kPitch + chunk * 16, p, ok);
  }
}

// The activation side of a stage: hi (and lo) rows and the row scales, transposed to [block][row].
template <int BM, int BN, bool kHL>
__device__ __forceinline__ void issue_acts(const Params& p, uint32_t stage, int m0, int kt) {
  using T = Tile<BM, BN, kHL>;
  const int k0 = kt * kStageK, b0 = kt * kStageBlocks, kb = p.k / kQBlock;
  issue_rows<BM>(stage + T::kAHi, p.xh, p.ld_x, m0, p.m, k0, p.k);
  if constexpr (kHL) issue_rows<BM>(stage + T::kALo, p.xl, p.ld_x, m0, p.m, k0, p.k);
#pragma unroll
  for (int i = 0; i < kStageBlocks * BM / kThreads; ++i) {
    const int e = static_cast<int>(threadIdx.x) + i * kThreads;
    const int row = e / kStageBlocks, j = e % kStageBlocks;
    const bool ok = m0 + row < p.m && b0 + j < kb;
    const float* s = ok ? p.xs + static_cast<size_t>(m0 + row) * p.ld_s + b0 + j : p.xs;
    cp_async4(stage + T::kAScale + (j * BM + row) * 4, s, ok);
  }
}

// The weight side's scales of stage kt, loaded into registers (f16 -> f32, exact; 0 beyond N or K).
template <int BM, int BN, bool kHL>
struct WScales {
  float v[Tile<BM, BN, kHL>::kWScalesPerThread];

  __device__ __forceinline__ void load(const Params& p, int n0, int kt) {
    const int b0 = kt * kStageBlocks, kb = p.k / kQBlock;
#pragma unroll
    for (int i = 0; i < Tile<BM, BN, kHL>::kWScalesPerThread; ++i) {
      const int e = static_cast<int>(threadIdx.x) + i * kThreads;
      const int row = e / kStageBlocks, j = e % kStageBlocks;
      const bool ok = n0 + row < p.n && b0 + j < kb;
      v[i] = ok ? h2f(__ldg(p.wd + static_cast<size_t>(n0 + row) * kb + b0 + j)) : 0.0f;
    }
  }
  __device__ __forceinline__ void store(unsigned char* stage) const {
    float* dst = reinterpret_cast<float*>(stage + Tile<BM, BN, kHL>::kWScale);
#pragma unroll
    for (int i = 0; i < Tile<BM, BN, kHL>::kWScalesPerThread; ++i) {
      const int e = static_cast<int>(threadIdx.x) + i * kThreads;
      dst[(e % kStageBlocks) * BN + e / kStageBlocks] = v[i];
    }
  }
};

// ---- the math of one stage ----
// Per-lane byte offsets of the ldmatrix row addresses inside a fragment (see ldsm_x4 and mma_biased).
struct LaneOffsets {
  uint32_t a;  // matrices: rows 0-7 k 0-15 (a0), rows 8-15 k 0-15 (a1), rows 0-7 k 16-31 (a2), rows 8-15 (a3)
  uint32_t b;  // matrices: cols 0-7 k 0-15 (b0), cols 0-7 k 16-31 (b1), then the same for cols 8-15
  __device__ explicit LaneOffsets(int lane)
      : a(static_cast<uint32_t>((lane % 8 + ((lane / 8) % 2) * 8) * kPitch + (lane / 16) * 16)),
        b(static_cast<uint32_t>((lane % 8 + (lane / 16) * 8) * kPitch + ((lane / 8) % 2) * 16)) {}
};

template <int BM, int BN, bool kHL>
using Acc = float[Tile<BM, BN, kHL>::kMT][Tile<BM, BN, kHL>::kNT][4];

// Folds the `nblocks` (1 .. 4) Q8 blocks of the stage at `stage` (generic and shared-window address) into
// acc, block after block. wm0 / wn0: the warp's first row / column inside the tile.
template <int BM, int BN, bool kHL>
__device__ __forceinline__ void fold_stage(Acc<BM, BN, kHL>& acc, const unsigned char* stage,
                                           uint32_t stage_s, int nblocks, int wm0, int wn0,
                                           const LaneOffsets& lo) {
  using T = Tile<BM, BN, kHL>;
  const int lane = static_cast<int>(threadIdx.x) & 31, g = lane / 4, t = lane % 4;
  const float* a_scale = reinterpret_cast<const float*>(stage + T::kAScale);
  const float* w_scale = reinterpret_cast<const float*>(stage + T::kWScale);
#pragma unroll
  for (int j = 0; j < kStageBlocks; ++j) {
    if (j >= nblocks) break;  // uniform: only the last stage of a K that is no multiple of 128 stops early
    uint32_t b[T::kNT][2];
#pragma unroll
    for (int np = 0; np < T::kNT / 2; ++np) {
      uint32_t r[4];
      ldsm_x4(stage_s + T::kW + (wn0 + np * 16) * kPitch + j * kQBlock + lo.b, r);
      b[2 * np][0] = r[0];
      b[2 * np][1] = r[1];
      b[2 * np + 1][0] = r[2];
      b[2 * np + 1][1] = r[3];
    }
    float2 d[T::kNT];  // weight scales of columns 2t, 2t+1 of each fragment
#pragma unroll
    for (int nt = 0; nt < T::kNT; ++nt)
      d[nt] = *reinterpret_cast<const float2*>(w_scale + j * BN + wn0 + nt * 8 + 2 * t);
#pragma unroll
    for (int mt = 0; mt < T::kMT; ++mt) {
      const uint32_t a_off = (wm0 + mt * 16) * kPitch + j * kQBlock + lo.a;
      uint32_t ah[4], al[4];
      ldsm_x4(stage_s + T::kAHi + a_off, ah);
      if constexpr (kHL) ldsm_x4(stage_s + T::kALo + a_off, al);
      const float s_row[2] = {a_scale[j * BM + wm0 + mt * 16 + g], a_scale[j * BM + wm0 + mt * 16 + g + 8]};
#pragma unroll
      for (int nt = 0; nt < T::kNT; ++nt) {
        int ch[4], cl[4];
        mma_biased(ch, ah, b[nt][0], b[nt][1]);
        if constexpr (kHL) mma_biased(cl, al, b[nt][0], b[nt][1]);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float v = unbias(ch[e]);
          if constexpr (kHL) v = __fmaf_rn(unbias(cl[e]), kInv127, v);
          const float sd = __fmul_rn(s_row[e / 2], e % 2 ? d[nt].y : d[nt].x);
          acc[mt][nt][e] = __fmaf_rn(v, sd, acc[mt][nt][e]);
        }
      }
    }
  }
}

template <int BM, int BN, bool kHL>
__device__ __forceinline__ void store_tile(const Params& p, const Acc<BM, BN, kHL>& acc, int row0, int col0) {
  using T = Tile<BM, BN, kHL>;
  const int lane = static_cast<int>(threadIdx.x) & 31, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < T::kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < T::kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row0 + mt * 16 + g + (e / 2) * 8, col = col0 + nt * 8 + 2 * t + e % 2;
        if (row >= p.m || col >= p.n) continue;
        float out = acc[mt][nt][e];
        // Read and written by this thread only, so y may be the residual itself.
        if (p.res) out = __fadd_rn(p.res[static_cast<size_t>(row) * p.ld_res + col], out);
        p.y[static_cast<size_t>(row) * p.ld_y + col] = out;
      }
}

// One block tile: the pipeline over K, then the epilogue.
template <int BM, int BN, bool kHL>
__device__ __forceinline__ void gemm_q8_block(const Params& p) {
  using T = Tile<BM, BN, kHL>;
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t smem_s = shared_addr(smem);
  const int m0 = static_cast<int>(blockIdx.x) * BM, n0 = static_cast<int>(blockIdx.y) * BN;
  const int kb = p.k / kQBlock;
  const int ktiles = (kb + kStageBlocks - 1) / kStageBlocks;
  const int S = p.stages;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int wm0 = (warp / kWarpsN) * T::kWarpM, wn0 = (warp % kWarpsN) * T::kWarpN;
  const LaneOffsets lo(static_cast<int>(threadIdx.x) & 31);

  pdl_trigger();
  // The weights depend on no earlier kernel: their first stages stream in while the previous one drains.
  // They join the first commit group below, so stage 0's wait covers them all.
  for (int s = 0; s < S - 1 && s < ktiles; ++s) {
    issue_rows<BN>(smem_s + s * T::kStageBytes + T::kW, p.wq, p.w_stride, n0, p.n, s * kStageK, p.k);
    WScales<BM, BN, kHL> ws;
    ws.load(p, n0, s);
    ws.store(smem + s * T::kStageBytes);
  }
  pdl_wait();
  for (int s = 0; s < S - 1; ++s) {
    if (s < ktiles) issue_acts<BM, BN, kHL>(p, smem_s + s * T::kStageBytes, m0, s);
    cp_async_commit();  // empty groups too: the wait below counts groups
  }

  Acc<BM, BN, kHL> acc;
#pragma unroll
  for (int mt = 0; mt < T::kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < T::kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.0f;

  int slot = 0, next_slot = S - 1;
  for (int kt = 0; kt < ktiles; ++kt) {
    // Stage kt has landed for this thread; the barrier makes it landed for all, and tells that every warp
    // is done with stage kt - 1, whose slot (next_slot) is refilled now.
    cp_async_wait(S - 2);
    __syncthreads();
    const int next = kt + S - 1;
    WScales<BM, BN, kHL> ws;
    if (next < ktiles) {
      const uint32_t dst = smem_s + next_slot * T::kStageBytes;
      issue_rows<BN>(dst + T::kW, p.wq, p.w_stride, n0, p.n, next * kStageK, p.k);
      issue_acts<BM, BN, kHL>(p, dst, m0, next);
      ws.load(p, n0, next);
    }
    cp_async_commit();
    fold_stage<BM, BN, kHL>(acc, smem + slot * T::kStageBytes, smem_s + slot * T::kStageBytes,
                            min(kStageBlocks, kb - kt * kStageBlocks), wm0, wn0, lo);
    // Nobody reads next_slot before the barrier of iteration `next` (> kt).
    if (next < ktiles) ws.store(smem + next_slot * T::kStageBytes);
    slot = slot + 1 == S ? 0 : slot + 1;
    next_slot = next_slot + 1 == S ? 0 : next_slot + 1;
  }
  cp_async_wait(0);  // only empty groups remain; leave nothing in flight at exit

  store_tile<BM, BN, kHL>(p, acc, m0 + wm0, n0 + wn0);
}

// Registers: 128x128 takes 201 (h) / 255 (hl) per thread, one block per SM; the smaller tiles are held to
// 128 (no spills on sm_80 / sm_90) so that two blocks fit.
template <int BM, int BN>
constexpr int kMinBlocks = BM == 128 && BN == 128 ? 1 : 2;

// Grid: x = row tiles (fastest), y = column tiles, so the blocks that share a weight tile run together.
template <int BM, int BN, bool kHL>
__global__ void __launch_bounds__(kThreads, kMinBlocks<BM, BN>) gemm_q8_kernel(const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // cp.async and the int8 m16n8k32 mma need sm_80; the launcher refuses older devices
#else
  gemm_q8_block<BM, BN, kHL>(p);
#endif
}

// ---- host side ----
std::string addr(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

GpuStatus check_args(const GemmQ8Args& a) {
  const Q8Weights& w = a.w;
  const QActIn& x = a.x;
  QC_GPU_REQUIRE(w.q && w.d, std::string("gemm_q8: weight pointers must be non-null, got w.q=") + addr(w.q) +
                                 " w.d=" + addr(w.d));
  QC_GPU_REQUIRE(w.rows >= 1 && w.rows <= 65535 * 64, "gemm_q8: N (w.rows) must be in [1, " +
                                                          std::to_string(65535 * 64) + "], got " +
                                                          std::to_string(w.rows));
  QC_GPU_REQUIRE(w.cols >= kQBlock && w.cols % kQBlock == 0,
                 "gemm_q8: K (w.cols) must be a positive multiple of 32, got " + std::to_string(w.cols));
  const int k = w.cols;
  QC_GPU_REQUIRE(w.row_stride >= k && w.row_stride % 16 == 0,
                 "gemm_q8: w.row_stride must be a multiple of 16 and >= K=" + std::to_string(k) + ", got " +
                     std::to_string(w.row_stride));
  QC_GPU_REQUIRE(aligned16(w.q),
                 "gemm_q8: w.q must be 16-byte aligned (cp.async copies 16 bytes), got " + addr(w.q));
  QC_GPU_REQUIRE(x.hi && x.scale, std::string("gemm_q8: activation pointers must be non-null, got x.hi=") +
                                      addr(x.hi) + " x.scale=" + addr(x.scale));
  QC_GPU_REQUIRE(aligned16(x.hi),
                 "gemm_q8: x.hi must be 16-byte aligned (cp.async copies 16 bytes), got " + addr(x.hi));
  QC_GPU_REQUIRE(!x.lo || aligned16(x.lo),
                 "gemm_q8: x.lo must be 16-byte aligned (cp.async copies 16 bytes), got " + addr(x.lo));
  QC_GPU_REQUIRE((reinterpret_cast<uintptr_t>(x.scale) & 3u) == 0,
                 "gemm_q8: x.scale must be 4-byte aligned, got " + addr(x.scale));
  QC_GPU_REQUIRE(x.ld >= k && x.ld % 16 == 0, "gemm_q8: x.ld must be a multiple of 16 and >= K=" +
                                                  std::to_string(k) + ", got " + std::to_string(x.ld));
  QC_GPU_REQUIRE(x.ld_scale >= k / kQBlock,
                 "gemm_q8: x.ld_scale must be >= K/32=" + std::to_string(k / kQBlock) + ", got " +
                     std::to_string(x.ld_scale));
  QC_GPU_REQUIRE(
      a.m >= 1 && a.m <= kGemmMaxRows,
      "gemm_q8: M must be in [1, " + std::to_string(kGemmMaxRows) + "], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.y, "gemm_q8: y must be non-null");
  QC_GPU_REQUIRE(a.ld_y >= w.rows,
                 "gemm_q8: ld_y must be >= N=" + std::to_string(w.rows) + ", got " + std::to_string(a.ld_y));
  if (a.residual) {
    QC_GPU_REQUIRE(a.ld_residual >= w.rows, "gemm_q8: ld_residual must be >= N=" + std::to_string(w.rows) +
                                                ", got " + std::to_string(a.ld_residual));
    QC_GPU_REQUIRE(a.residual != a.y || a.ld_residual == a.ld_y,
                   "gemm_q8: a residual that aliases y needs ld_residual == ld_y=" + std::to_string(a.ld_y) +
                       ", got " + std::to_string(a.ld_residual));
  }
  QC_GPU_REQUIRE(a.tile_m == 0 || a.tile_m == 64 || a.tile_m == 128,
                 "gemm_q8: tile_m must be 0 (auto), 64 or 128, got " + std::to_string(a.tile_m));
  QC_GPU_REQUIRE(a.tile_n == 0 || a.tile_n == 64 || a.tile_n == 128,
                 "gemm_q8: tile_n must be 0 (auto), 64 or 128, got " + std::to_string(a.tile_n));
  QC_GPU_REQUIRE(a.stages == 0 || (a.stages >= kMinStages && a.stages <= kMaxStages),
                 "gemm_q8: stages must be 0 (auto) or in [" + std::to_string(kMinStages) + ", " +
                     std::to_string(kMaxStages) + "], got " + std::to_string(a.stages));
  QC_GPU_REQUIRE(a.tile_m != 128 || a.tile_n != 64,
                 "gemm_q8: tile 128 x 64 is not built (128x128, 64x128, 64x64)");
  return GpuStatus::success();
}

int stage_bytes(int bm, int bn, bool hl) {
  return bm * kPitch * (hl ? 2 : 1) + bn * kPitch + kStageBlocks * (bm + bn) * 4;
}

struct Schedule {
  int bm = 0, bn = 0, stages = 0;
  int smem(bool hl) const { return stages * stage_bytes(bm, bn, hl); }
};
constexpr int kTiles[3][2] = {{128, 128}, {64, 128}, {64, 64}};  // the instantiated tiles

// Default: 64 x 128 with 2 stages, or 64 x 64 when that grid has fewer blocks than the device has SMs
// (there is no split-K to spread K over idle SMs). Measured on an H200 (qwenchat-gemm-bench --sweep,
// N x K = 5120 x 6144, median of 3): 64x128 s2 was the best or within 1% of it at M = 512..2048 (M = 1024:
// 210 TOPS h / 149 hl, against 175 / 118 for 128x128), 64x64 at M = 128 (102 / 76, 128x128: 62 / 42);
// 2 stages were within 1% of 3 or faster, and 64x128 hl with 3 stages (117 KB) fits one block per SM
// instead of two and lost 14-16%. 128x128 (201-255 registers: one block per SM) stays selectable for
// the sweep on the wide shapes. A request that the device's shared memory cannot hold runs with fewer
// stages, then (for an automatic tile) the next smaller tile.
Schedule choose_schedule(const GemmQ8Args& a, bool hl, int sms, int optin) {
  int first = 1;
  if (a.tile_m || a.tile_n) {
    const int bm = a.tile_m ? a.tile_m : (a.tile_n == 64 || a.m <= 64 ? 64 : 128);
    const int bn = a.tile_n ? a.tile_n : 128;
    for (int i = 0; i < 3; ++i)
      if (kTiles[i][0] == bm && kTiles[i][1] == bn) first = i;
  } else {
    const long long blocks = static_cast<long long>((a.m + 63) / 64) * ((a.w.rows + 127) / 128);
    first = blocks >= sms ? 1 : 2;
  }
  const int last = a.tile_m || a.tile_n ? first : 2;
  Schedule s;
  for (int i = first; i <= last; ++i) {
    s = Schedule{kTiles[i][0], kTiles[i][1], a.stages ? a.stages : 2};
    while (s.stages > kMinStages && s.smem(hl) > optin) --s.stages;
    if (s.smem(hl) <= optin) break;
  }
  return s;
}

template <int BM, int BN>
void (*kernel_for(bool hl))(Params) {
  return hl ? gemm_q8_kernel<BM, BN, true> : gemm_q8_kernel<BM, BN, false>;
}
void (*kernel_for(const Schedule& s, bool hl))(Params) {
  if (s.bm == 128 && s.bn == 128) return kernel_for<128, 128>(hl);
  if (s.bm == 64 && s.bn == 128) return kernel_for<64, 128>(hl);
  if (s.bm == 64 && s.bn == 64) return kernel_for<64, 64>(hl);
  return nullptr;
}

}  // namespace

GpuStatus gemm_q8(const GemmQ8Args& a, cudaStream_t stream) {
  QC_GPU_TRY(check_args(a));
  const bool hl = a.x.lo != nullptr;

  int dev = 0, major = 0, minor = 0, optin = 0;
  QC_CUDA_CHECK(cudaGetDevice(&dev));
  QC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  QC_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  QC_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  QC_GPU_REQUIRE(major >= 8, "gemm_q8: needs compute capability >= 8.0 (int8 mma.m16n8k32), the device has " +
                                 std::to_string(major) + "." + std::to_string(minor));

  const Schedule s = choose_schedule(a, hl, std::max(1, device_sm_count()), optin);
  const int smem = s.smem(hl);
  QC_GPU_REQUIRE(smem <= optin, "gemm_q8: tile " + std::to_string(s.bm) + " x " + std::to_string(s.bn) +
                                    " with " + std::to_string(s.stages) + " stages needs " +
                                    std::to_string(smem) + " bytes of shared memory, the device allows " +
                                    std::to_string(optin));
  void (*kernel)(Params) = kernel_for(s, hl);
  QC_GPU_REQUIRE(kernel,
                 "gemm_q8: no kernel for tile " + std::to_string(s.bm) + " x " + std::to_string(s.bn));
  if (smem > 48 * 1024)
    QC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  Params p;
  detail::fill_q8_io(a, p);
  p.stages = s.stages;
  const dim3 grid((a.m + s.bm - 1) / s.bm, (p.n + s.bn - 1) / s.bn);
  const cudaError_t e = launch_kernel(kernel, grid, dim3(kThreads), smem, stream, a.pdl, p);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemm_q8_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemm_q8_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
