// Engine 2 of the tile variants, "stream": weight rows reach shared memory through the bulk copy engine
// (cp.async.bulk, sm_90), a ring of stages between one producer warp and C consumer warps.
//
// Why: engine 1 (gemv_q8_tile.cu) keeps its loads in registers and issues them in batches (U segments, then
// consume them all, then the next U), so the bytes in flight per SM are bounded by registers and fall to zero
// between batches; its grid either runs in waves (a tail) or walks tiles unevenly. Here the in-flight bytes
// live in shared memory (S stages x C*R rows x chunk*512 bytes: 32-128 KB per block) at no register cost, the
// producer refills a stage the moment the consumers release it, and every block of the persistent grid
// owns the same number of rows (balanced_grid()), so all blocks finish together.
//
// Stage t of a block: row group g = t / nchunk (C*R consecutive rows), chunk c = t % nchunk (segments
// [c*chunk, (c+1)*chunk) of each row: one contiguous bulk copy per row, plus one for the row's f16 scales).
// Consumer warp w owns rows w*R .. w*R+R-1 of every group and walks the chunks in ascending order, so its
// lanes fold the segments exactly as gemv_q8_lane.cuh says: "tile" == "hl", "tile_h" == "h", bit for bit.
//
// PDL: the producer issues the first S stages before griddepcontrol.wait (weights depend on nothing), so a
// kernel launched behind another streams its first 32-128 KB per block while the previous one drains. The
// trigger that lets the next kernel launch is either right after the wait (trigger 1) or once the producer
// has issued its last stage (trigger 2: the next kernel's blocks then arrive while this one's last bytes
// are in flight, instead of parking early).
//
// Barriers: full[s] (1 arrival + the stage's transaction bytes), empty[s] (one arrival per consumer warp).
// Every consumer waits on full[s] for every stage, even one without rows for it, so no warp can arrive on
// empty[s] for a later use of the slot before the current use is released.
#include <algorithm>

#include "bulk_copy.cuh"
#include "gemv_q8_internal.h"
#include "gemv_q8_stage.cuh"
#include "persistent_launch.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kMaxConsumers = 15;  // 16 warps with the producer: 4 per scheduler, up to 128 registers
constexpr int kMaxThreads = 32 * (kMaxConsumers + 1);

struct StreamParams {
  const int8_t* wq0;
  const int8_t* wq1;
  const uint16_t* wd0;
  const uint16_t* wd1;
  int n, k, w_stride;
  ActView x;
  float* y;
  int ld_y;
  const float* res;
  int ld_res;
  int8_t* oh;
  int8_t* ol;
  float* os;
  int ld_o, ld_os;
  int unit_rows, units;  // a block owns whole units (1 row, or a 32-row quantisation tile)
  int consumers, chunk, stages;
  int whole;            // 1: a stage holds whole rows, one bulk copy per matrix for all its rows (+ one for
                        // their scales); 0: a chunk of each row, one copy per row (+ one per row's scales)
  int wslot;            // bytes between rows of a stage: chunk*512, or the row stride (whole rows)
  int sslot;            // chunk: one row's scale slot, chunk*32 + 32 (copied 16-byte aligned, so up to 15
                        // bytes early); whole: one matrix's scale region, C*R*K/16 + 32
  int stage_bytes;      // mats * C*R * (wslot + sslot) (chunk) or mats * (C*R*wslot + sslot) (whole)
  int act_off;          // shared-memory offset of the staged activations; 0 = read them from global memory
  int out_off, out_ld;  // gate+up with quantised output: silu(g)*u of the block's rows, [M][out_ld] f32
  int late_trigger;
};

template <bool kHL, int M, int R, int kMats>
__global__ void __launch_bounds__(kMaxThreads, 1) gemv_stream_kernel(const StreamParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  constexpr int kRows = kMats * R;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int C = p.consumers, CR = C * R, S = p.stages;
  const int nseg = num_segments(p.k);
  const int nchunk = (nseg + p.chunk - 1) / p.chunk;
  const int d_stride = p.k / kQBlock;
  const int u0 = static_cast<int>(static_cast<long long>(blockIdx.x) * p.units / gridDim.x);
  const int u1 = static_cast<int>(static_cast<long long>(blockIdx.x + 1) * p.units / gridDim.x);
  const int row0 = u0 * p.unit_rows, row1 = min(p.n, u1 * p.unit_rows);
  const int T = (row1 - row0 + CR - 1) / CR * nchunk;
  const uint32_t bars = smem_addr(smem);  // full[s] at bars + 8s, empty[s] at bars + 8(S + s)
  unsigned char* ring = smem + 16 * S;
  const int wregion = kMats * CR * p.wslot;
  const int scale_row_bytes = p.k / 16;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(bars + 8 * s, 1);
      mbar_init(bars + 8 * (S + s), C);
    }
    mbar_init_fence();
  }
  __syncthreads();

  // Stage geometry, the same arithmetic in producer and consumers.
  auto geometry = [&](int t, int& rg0, int& nrows, int& kb0, int& wbytes) {
    const int g = t / nchunk, c = t - g * nchunk;
    rg0 = row0 + g * CR;
    nrows = min(CR, row1 - rg0);
    kb0 = c * p.chunk * kSegBytes;
    wbytes = min(p.k, kb0 + p.chunk * kSegBytes) - kb0;  // a multiple of 32 (K is)
  };
  // Scales of (matrix, row) for weights [kb0, kb0 + wbytes): wbytes/16 bytes at `a`, copied as the 16-byte
  // aligned range [a0, a1). Where that range would leave the scale array (its first or last row when the
  // array's ends are not 16-byte aligned: never for K a multiple of 256 on an aligned array), the producer
  // copies the exact bytes with ordinary loads and stores instead.
  // Whole rows: the scales of rows [row, row + rows) are contiguous, one range for the group.
  auto scale_range = [&](int mat, int row, int rows, int kb0, int wbytes, uintptr_t& a, uintptr_t& a0,
                         uintptr_t& a1) {
    const uint16_t* wd = mat ? p.wd1 : p.wd0;
    a = reinterpret_cast<uintptr_t>(wd + static_cast<size_t>(row) * d_stride + kb0 / kQBlock);
    a0 = a & ~uintptr_t{15};
    a1 = (a + static_cast<size_t>(rows) * (wbytes / 16) + 15) & ~uintptr_t{15};
    return a0 >= reinterpret_cast<uintptr_t>(wd) &&
           a1 <= reinterpret_cast<uintptr_t>(wd + static_cast<size_t>(p.n) * d_stride);
  };
  // Where (matrix, stage row i)'s scale copy lands in a stage's scale region.
  auto scale_slot = [&](int mat, int i) { return p.whole ? mat * p.sslot : (mat * CR + i) * p.sslot; };

  const bool producer = warp == C;
  auto produce = [&](int t) {
    int rg0, nrows, kb0, wbytes;
    geometry(t, rg0, nrows, kb0, wbytes);
    const int slot = t % S;
    unsigned char* st = ring + slot * p.stage_bytes;
    const int copies = p.whole ? 1 : nrows;  // scale copies per matrix
    const int rows_per_copy = p.whole ? nrows : 1;
    uint32_t tx = 0;
    bool generic = false;
    for (int mat = 0; mat < kMats; ++mat) {
      tx += static_cast<uint32_t>(nrows) * (p.whole ? p.wslot : wbytes);
      for (int i = 0; i < copies; ++i) {
        uintptr_t a, a0, a1;
        if (scale_range(mat, rg0 + i, rows_per_copy, kb0, wbytes, a, a0, a1)) {
          tx += static_cast<uint32_t>(a1 - a0);
        } else {
          uint16_t* dst = reinterpret_cast<uint16_t*>(st + wregion + scale_slot(mat, i) + (a & 15));
          const uint16_t* src = reinterpret_cast<const uint16_t*>(a);
          for (int e = lane; e < rows_per_copy * (wbytes / 32); e += 32) dst[e] = __ldg(src + e);
          generic = true;
        }
      }
    }
    if (generic) fence_proxy_async();  // these bytes may be overwritten by bulk copies S stages later
    __syncwarp();
    if (lane == 0) {
      const uint32_t full = bars + 8 * slot;
      mbar_arrive_expect_tx(full, tx);
      for (int mat = 0; mat < kMats; ++mat) {
        const int8_t* wq = mat ? p.wq1 : p.wq0;
        if (p.whole)  // rows rg0.. are contiguous: one copy (padding to the row stride included)
          bulk_g2s(smem_addr(st + mat * CR * p.wslot), wq + static_cast<size_t>(rg0) * p.w_stride,
                   static_cast<uint32_t>(nrows) * p.wslot, full);
        for (int i = 0; i < copies; ++i) {
          if (!p.whole)
            bulk_g2s(smem_addr(st + (mat * CR + i) * p.wslot),
                     wq + static_cast<size_t>(rg0 + i) * p.w_stride + kb0, static_cast<uint32_t>(wbytes),
                     full);
          uintptr_t a, a0, a1;
          if (scale_range(mat, rg0 + i, rows_per_copy, kb0, wbytes, a, a0, a1))
            bulk_g2s(smem_addr(st + wregion + scale_slot(mat, i)), reinterpret_cast<const void*>(a0),
                     static_cast<uint32_t>(a1 - a0), full);
        }
      }
    }
  };

  int t_next = 0;
  if (producer)
    for (; t_next < min(T, S); ++t_next) produce(t_next);  // before the dependency wait: weights only

  pdl_wait();
  if (!p.late_trigger) pdl_trigger();
  ActView x = p.x;
  if (p.act_off) x = stage_acts<kHL, M>(smem + p.act_off, p.x, p.k, threadIdx.x, blockDim.x);
  __syncthreads();

  if (producer) {
    for (; t_next < T; ++t_next) {
      mbar_wait(bars + 8 * (S + t_next % S), ((t_next / S) & 1) ^ 1);
      produce(t_next);
    }
    if (p.late_trigger) pdl_trigger();
    return;
  }

  // Consumers.
  float* tile = reinterpret_cast<float*>(smem + p.out_off);
  float acc[M][kRows];
  const int i0 = warp * R;  // this warp's first row within a group
  for (int t = 0; t < T; ++t) {
    int rg0, nrows, kb0, wbytes;
    geometry(t, rg0, nrows, kb0, wbytes);
    const int slot = t % S;
    const int c = t % nchunk;
    if (c == 0) {
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int i = 0; i < kRows; ++i) acc[m][i] = 0.0f;
    }
    mbar_wait(bars + 8 * slot, (t / S) & 1);
    if (i0 < nrows) {  // warp-uniform
      const unsigned char* st = ring + slot * p.stage_bytes;
      const unsigned char* wrow[kRows];
      const unsigned char* srow[kRows];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int i = i0 + r < nrows ? i0 + r : i0;  // a missing row aliases the first: computed, not written
#pragma unroll
        for (int mat = 0; mat < kMats; ++mat) {
          uintptr_t a, a0, a1;  // the copy's source: the group's first row (whole rows) or this row
          (void)scale_range(mat, p.whole ? rg0 : rg0 + i, 1, kb0, wbytes, a, a0, a1);
          wrow[mat * R + r] = st + (mat * CR + i) * p.wslot + 16 * lane;
          srow[mat * R + r] = st + wregion + scale_slot(mat, i) + (a & 15) +
                              (p.whole ? i * scale_row_bytes : 0) + 2 * (lane / 2);
        }
      }
      const int s0 = kb0 / kSegBytes;
      const int segs = (wbytes + kSegBytes - 1) / kSegBytes;
#pragma unroll 2
      for (int j = 0; j < segs; ++j) {
        const int s = s0 + j;
        if (lane_active(s, lane, p.k)) {  // the lane contract (only a partial last segment disables lanes)
#pragma unroll
          for (int m = 0; m < M; ++m) {
            int4 ah, al;
            float xs;
            act_words<kHL>(x, m, s, lane, ah, al, xs);
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
              const int4 wv = *reinterpret_cast<const int4*>(wrow[i] + j * kSegBytes);
              const uint16_t sc = *reinterpret_cast<const uint16_t*>(srow[i] + j * 2 * kSegBlocks);
              acc[m][i] = seg_fold(acc[m][i], seg_value<kHL>(wv, ah, al), sc, xs);
            }
          }
        }
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(bars + 8 * (S + slot));  // the stage may be refilled

    if (c == nchunk - 1 && i0 < nrows) {  // the group's rows are complete: epilogue
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (i0 + r >= nrows) break;  // warp-uniform
        const int row = rg0 + i0 + r;
#pragma unroll
        for (int m = 0; m < M; ++m) {
          if constexpr (kMats == 1) {
            const float v = warp_sum(acc[m][r]);
            if (lane == ((m * R + r) & 31))
              p.y[m * p.ld_y + row] = p.res ? __fadd_rn(v, p.res[m * p.ld_res + row]) : v;
          } else {
            const float g = warp_sum(acc[m][r]);
            const float u = warp_sum(acc[m][R + r]);
            const float h = __fmul_rn(silu(g), u);
            if (lane == 0) {
              if (p.y) p.y[m * p.ld_y + row] = h;
              if (p.oh) tile[m * p.out_ld + (row - row0)] = h;
            }
          }
        }
      }
    }
  }
  if constexpr (kMats == 2) {
    if (p.oh) {
      named_sync(1, C * 32);  // consumers only: the producer warp has left
      quantize_tiles<M>(tile, p.out_ld, u1 - u0, row0, p.oh, p.ol, p.os, p.ld_o, p.ld_os, warp, C);
    }
  }
#else
  (void)p;  // sm_80-89: never launched (the tile entry falls back to engine 3 below compute capability 9)
#endif
}

using StreamKernel = void (*)(StreamParams);

template <bool kHL, int R, int kMats>
StreamKernel pick_m(int m) {
  switch (m) {
    case 1:
      return gemv_stream_kernel<kHL, 1, R, kMats>;
    case 2:
      return gemv_stream_kernel<kHL, 2, R, kMats>;
    case 3:
      return gemv_stream_kernel<kHL, 3, R, kMats>;
    default:
      return gemv_stream_kernel<kHL, 4, R, kMats>;
  }
}

template <bool kHL>
StreamKernel pick_r(int mats, int r, int m) {
  if (mats == 2) {
    if (r == 1) return pick_m<kHL, 1, 2>(m);
    if (r == 2) return pick_m<kHL, 2, 2>(m);
    return nullptr;
  }
  if (r == 1) return pick_m<kHL, 1, 1>(m);
  if (r == 2) return pick_m<kHL, 2, 1>(m);
  if (r == 4) return pick_m<kHL, 4, 1>(m);
  return nullptr;
}

int optin_smem() { return device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, 48 * 1024); }

constexpr int kActStageLimit = 64 * 1024;  // stage activations up to this many bytes (else L1/L2 serve them)

}  // namespace

GpuStatus launch_gemv_stream(const GemvJob& j, const TileTuning& t, int sms, cudaStream_t stream) {
  const int C = t.warps, R = t.rows_per_warp, chunk = t.chunk;
  int S = t.stages;
  QC_GPU_REQUIRE(
      C >= 1 && C <= kMaxConsumers,
      "gemv stream: warps must be in [1, " + std::to_string(kMaxConsumers) + "], got " + std::to_string(C));
  QC_GPU_REQUIRE(R == 1 || R == 2 || (R == 4 && j.mats == 1),
                 "gemv stream: rows_per_warp must be 1, 2 or 4 (gate+up: 1 or 2), got " + std::to_string(R));
  QC_GPU_REQUIRE(chunk >= 1 && chunk <= 64,
                 "gemv stream: chunk must be in [1, 64], got " + std::to_string(chunk));
  QC_GPU_REQUIRE(S >= 2 && S <= 16, "gemv stream: stages must be in [2, 16], got " + std::to_string(S));
  const bool quant = j.mats == 2 && j.out_q.hi;
  const StreamKernel kernel = j.hl ? pick_r<true>(j.mats, R, j.m) : pick_r<false>(j.mats, R, j.m);
  QC_GPU_REQUIRE(kernel != nullptr, "gemv stream: no kernel for rows_per_warp=" + std::to_string(R));
  // Every consumer warp takes part in every row group, so balanced_grid sees a block as one warp of 1 row.
  StreamParams p{};
  const PersistentGrid g = fill_persistent_gemv(j, t, sms, 1, 1, p);
  p.consumers = C;
  // A chunk that covers the row means whole rows per stage: one bulk copy per matrix (+ one for the scales).
  // The first run showed a stage's time set by its number of copies, not its bytes (~0.1-0.15 us per copy).
  const int nseg = (j.k + kSegBytes - 1) / kSegBytes;
  p.whole = chunk >= nseg ? 1 : 0;
  p.chunk = p.whole ? nseg : chunk;
  if (p.whole) {
    p.wslot = j.w_stride;
    p.sslot = (C * R * (j.k / 16) + 32 + 15) / 16 * 16;
    p.stage_bytes = j.mats * (C * R * p.wslot + p.sslot);
  } else {
    p.wslot = chunk * kSegBytes;
    p.sslot = chunk * 2 * kSegBlocks + 32;
    p.stage_bytes = j.mats * C * R * (p.wslot + p.sslot);
  }

  // Shared memory: barriers | S stages | staged activations (if they fit) | gate+up output tile.
  const int limit = optin_smem();
  const int act = act_stage_bytes(j.hl, j.m, j.k);
  const int out = quant ? (j.m * p.out_ld * 4 + 15) / 16 * 16 : 0;
  auto ring_bytes = [&](int s) { return 16 * s + s * p.stage_bytes; };
  while (S > 2 && ring_bytes(S) + out > limit) --S;  // the ring shrinks before anything fails
  const bool staged = act <= kActStageLimit && ring_bytes(S) + act + out <= limit;
  p.stages = S;
  p.act_off = staged ? ring_bytes(S) : 0;
  p.out_off = ring_bytes(S) + (staged ? act : 0);
  const int smem = p.out_off + out;
  QC_GPU_REQUIRE(smem <= limit, "gemv stream: " + std::to_string(smem) + " bytes of shared memory needed (" +
                                    std::to_string(S) + " stages of " + std::to_string(p.stage_bytes) +
                                    "), the device allows " + std::to_string(limit));
  // C consumer warps + the producer.
  return launch_persistent(kernel, "gemv_stream_kernel", g, 32 * (C + 1), smem, sms, stream, j.pdl, p);
}

}  // namespace qc::gpu::detail
