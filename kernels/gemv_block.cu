// Block-quantised GEMV. A block of 8 warps; `warps_per_row` (1 or 8) warps share a row, as in gemv_dense
// (small N needs the whole block on a row, or too few loads are in flight). A lane takes 32-value pieces
// of the row (block_quant.cuh), lane-strided so a warp reads consecutive blocks; per piece it dequantises
// the 32 weights into registers and runs an FMA chain over them for each of the M token rows. Per lane
// the pieces go in ascending k, then warp_sum, then the row's warps in ascending order: deterministic.
//
// What it costs: the f32 form decodes every weight to a float and runs an FMA per weight and token (~7
// instructions per weight: issue-bound well below the memory floor on a 27B) and reads 128 bytes of
// activations per token per 32 weights from L1. The quantised forms (kH, kHL) work on the quants as
// integers, 8 dp4a per piece and word (+8 for the activation sum of Q4_K/Q5_K's min) and one float
// multiply-add per piece, and read 32 (h) or 64 (hl) activation bytes per token per piece.
// Measured (docs/PERFORMANCE.md 2026-12-05): at M = 1, hl, the launcher's choice reaches 57-80% of an
// H100's 3.09 TB/s read ceiling on the 27B shapes (h: 60-90%), and about the same GB/s on an H200 (34-64%
// of its 4.53 TB/s): not memory-bound. Nsight Compute on the H100: 47 registers (40 warps an SM), half the
// cycles no warp eligible, most stalls waiting on L1 (the weights' and the activations' loads; the
// activation words are read at a 32-byte lane stride, two L1 wavefronts per 128 bytes used). Capping the
// registers for 48 warps was measured slower (spills); what remains is fewer instructions and L1
// wavefronts per weight (a layout where a lane's activations are contiguous with its neighbours').
#include "block_quant.cuh"
#include "common.cuh"
#include "gemv_block.h"
#include "gemv_block_epilogue.cuh"
#include "gemv_block_piece.cuh"
#include "gemv_block_seg.h"
#include "gemv_block_stream.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <BlockType T, int M>
__global__ void __launch_bounds__(kThreads) gemv_block_kernel(const GemvBlockArgs a) {
  __shared__ float part[1][M][kWarps];
  pdl_wait();
  pdl_trigger();
  constexpr int P = block_pieces(T);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wpr = a.warps_per_row;
  const int row = blockIdx.x * (kWarps / wpr) + warp / wpr;
  const int piece0 = warp % wpr;
  float acc[1][M];  // the epilogue's R x M shape, one row per warp
#pragma unroll
  for (int m = 0; m < M; ++m) acc[0][m] = 0.0f;
  if (row < a.w.rows) {
    const uint8_t* wrow = a.w.data + static_cast<size_t>(row) * a.w.row_bytes();
    const int pieces = a.w.cols / 32;
    for (int p = piece0 * 32 + lane; p < pieces; p += 32 * wpr) {
      float v[32];
      decode_piece<T>(wrow + static_cast<size_t>(p / P) * block_bytes(T), p % P, v);
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const float4* x = reinterpret_cast<const float4*>(a.x + static_cast<size_t>(m) * a.ld_x + p * 32);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float4 xv = x[j];
          acc[0][m] = __fmaf_rn(v[4 * j], xv.x, acc[0][m]);
          acc[0][m] = __fmaf_rn(v[4 * j + 1], xv.y, acc[0][m]);
          acc[0][m] = __fmaf_rn(v[4 * j + 2], xv.z, acc[0][m]);
          acc[0][m] = __fmaf_rn(v[4 * j + 3], xv.w, acc[0][m]);
        }
      }
    }
  }
  warp_sum_rows(acc);
  if (wpr > 1) {
    stash_part(part, warp, lane, acc);
    __syncthreads();
    if (piece0 == 0) combine_parts(part, warp, wpr, acc);
  }
  if (piece0 == 0) store_rows(a, acc, row, a.w.rows, lane);
}

// The quantised-activation form: the schedule and summation order of the f32 form (a lane's pieces in
// ascending order) for R consecutive rows per warp. Every R, kPipe and kSums gives the same bits: a row's
// sum never depends on them.
// - The first piece's weight loads are issued before pdl_wait(): nothing writes weights, so they may be in
//   flight while the kernel before this one drains.
// - kPipe: a lane issues its next piece's loads (the raw bytes, block_quant.cuh RawPiece) before it
//   decodes the current one, so two pieces per lane and row are in flight; without it one is.
// - kSums (Q4_K / Q5_K): the activation sums of every piece and token row are formed once per block into
//   shared memory (M x K/32 ints) instead of once per piece and row (16 dp4a a piece in hl).
// - R > 1 shares the activation loads and sums between rows.
template <BlockType T, int M, bool HL, int R, bool kPipe, bool kSums>
__global__ void __launch_bounds__(kThreads) gemv_block_q_kernel(const GemvBlockArgs a) {
  extern __shared__ int act_sums[];  // kSums: [M][pieces]
  __shared__ float part[R][M][kWarps];
  constexpr int P = block_pieces(T);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wpr = a.warps_per_row;
  const int row0 = (blockIdx.x * (kWarps / wpr) + warp / wpr) * R;
  const int piece0 = warp % wpr;
  const int pieces = a.w.cols / 32, stride = 32 * wpr;
  const bool active = row0 < a.w.rows;
  const size_t row_bytes = a.w.row_bytes();
  const uint8_t* wrow[R];
#pragma unroll
  for (int r = 0; r < R; ++r)  // rows past N read row row0 again (discarded at the store)
    wrow[r] = a.w.data + static_cast<size_t>(row0 + r < a.w.rows ? row0 + r : row0) * row_bytes;
  // A lane's piece p, clamped to the row's last piece past its end (the loads stay inside the row; the
  // result is not used).
  auto load = [&](int p, RawPiece<T>(&raw)[R]) {
    p = min(p, pieces - 1);
#pragma unroll
    for (int r = 0; r < R; ++r) raw[r] = load_piece<T>(wrow[r] + static_cast<size_t>(p / P) * block_bytes(T), p % P);
  };
  RawPiece<T> cur[R];
  int p = piece0 * 32 + lane;
  if (active) load(p, cur);
  pdl_wait();
  pdl_trigger();
  if constexpr (kSums) {
    for (int i = threadIdx.x; i < M * pieces; i += kThreads) {
      const int m = i / pieces, q = i - m * pieces;
      act_sums[i] = piece_act_sum<HL>(piece_acts<HL>(a.xq, m, q));
    }
    __syncthreads();
  }
  float acc[R][M];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < M; ++m) acc[r][m] = 0.0f;
  if (active) {
    for (; p < pieces; p += stride) {
      RawPiece<T> next[R];
      if constexpr (kPipe) load(p + stride, next);
      IntPiece w[R];
#pragma unroll
      for (int r = 0; r < R; ++r) int_piece<T>(cur[r], p % P, w[r]);
      accumulate_piece<T, M, HL, R, kSums>(w, a.xq, p, pieces, act_sums, acc);
      if constexpr (kPipe) {
#pragma unroll
        for (int r = 0; r < R; ++r) cur[r] = next[r];
      } else if (p + stride < pieces) {
        load(p + stride, cur);
      }
    }
  }
  warp_sum_rows(acc);
  if (wpr > 1) {
    stash_part(part, warp, lane, acc);
    __syncthreads();
    if (piece0 == 0) combine_parts(part, warp, wpr, acc);
  }
  if (piece0 == 0) store_rows(a, acc, row0, a.w.rows, lane);
}

template <BlockType T, int M, bool HL, int R, bool kPipe>
cudaError_t launch_sums(const GemvBlockArgs& a, dim3 grid, cudaStream_t s) {
  constexpr bool kMin = T == BlockType::kQ4_K || T == BlockType::kQ5_K;
  if constexpr (kMin) {
    if (a.act_sums == 1) {
      const size_t smem = sizeof(int) * static_cast<size_t>(M) * static_cast<size_t>(a.w.cols / 32);
      return launch_kernel(gemv_block_q_kernel<T, M, HL, R, kPipe, true>, grid, dim3(kThreads), smem, s, a.pdl, a);
    }
  }
  return launch_kernel(gemv_block_q_kernel<T, M, HL, R, kPipe, false>, grid, dim3(kThreads), 0, s, a.pdl, a);
}

template <BlockType T, int M, bool HL>
cudaError_t launch_schedule(const GemvBlockArgs& a, dim3 grid, cudaStream_t s) {
  switch (a.rows_per_warp * 10 + a.pipeline) {
    case 11:
      return launch_sums<T, M, HL, 1, true>(a, grid, s);
    case 20:
      return launch_sums<T, M, HL, 2, false>(a, grid, s);
    case 21:
      return launch_sums<T, M, HL, 2, true>(a, grid, s);
    case 10:
    default:
      return launch_sums<T, M, HL, 1, false>(a, grid, s);
  }
}

template <BlockType T, int M>
cudaError_t launch_form(const GemvBlockArgs& a, dim3 grid, cudaStream_t s) {
  switch (a.format) {
    case ActFormat::kH:
      return launch_schedule<T, M, false>(a, grid, s);
    case ActFormat::kHL:
      return launch_schedule<T, M, true>(a, grid, s);
    case ActFormat::kF32:
    default:
      return launch_kernel(gemv_block_kernel<T, M>, grid, dim3(kThreads), 0, s, a.pdl, a);
  }
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

BlockEngine block_engine_for(BlockEngine preferred, const BlockWeights& w, ActFormat f) {
  if (f == ActFormat::kF32) return BlockEngine::kRegisters;
  const bool seg_type = w.type == BlockType::kQ4_K || w.type == BlockType::kQ5_K;
  if (preferred == BlockEngine::kAuto)
    return seg_type && f == ActFormat::kHL && w.rows >= 2LL * w.cols ? BlockEngine::kSegments
                                                                     : BlockEngine::kRegisters;
  if (preferred == BlockEngine::kSegments && !seg_type) return BlockEngine::kRegisters;
  return preferred;
}

GpuStatus gemv_block(const GemvBlockArgs& in, cudaStream_t stream) {
  GemvBlockArgs a = in;
  QC_GPU_REQUIRE(a.w.data && a.y, "gemv_block: w and y must be non-null");
  QC_GPU_REQUIRE(a.w.rows > 0 && a.w.cols > 0,
                 "gemv_block: empty matrix " + std::to_string(a.w.rows) + " x " + std::to_string(a.w.cols));
  QC_GPU_REQUIRE(a.w.cols % block_elems(a.w.type) == 0,
                 std::string("gemv_block: K must be a multiple of the ") + block_type_name(a.w.type) +
                     " block (" + std::to_string(block_elems(a.w.type)) + "), got " + std::to_string(a.w.cols));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens, "gemv_block: M must be in [1, 4], got " + std::to_string(a.m));
  if (a.format == ActFormat::kF32) {
    QC_GPU_REQUIRE(a.x && a.ld_x >= a.w.cols && a.ld_x % 4 == 0 && aligned16(a.x),
                   "gemv_block: x must be 16-byte aligned with ld_x a multiple of 4 and >= K=" +
                       std::to_string(a.w.cols) + ", got ld_x=" + std::to_string(a.ld_x));
  } else {
    const bool hl = a.format == ActFormat::kHL;
    QC_GPU_REQUIRE(a.xq.hi && a.xq.scale && (!hl || a.xq.lo),
                   std::string("gemv_block: format ") + (hl ? "hl needs xq.hi, xq.lo" : "h needs xq.hi") +
                       " and xq.scale");
    QC_GPU_REQUIRE(a.xq.ld >= a.w.cols && a.xq.ld % 16 == 0 && aligned16(a.xq.hi) && (!hl || aligned16(a.xq.lo)),
                   "gemv_block: quantised activations need 16-byte aligned rows with ld a multiple of 16 and >= K=" +
                       std::to_string(a.w.cols) + ", got ld=" + std::to_string(a.xq.ld));
    QC_GPU_REQUIRE(a.xq.ld_scale >= a.w.cols / 32,
                   "gemv_block: xq.ld_scale must be >= K/32=" + std::to_string(a.w.cols / 32));
  }
  QC_GPU_REQUIRE(a.ld_y >= a.w.rows, "gemv_block: ld_y must be >= N=" + std::to_string(a.w.rows));
  QC_GPU_REQUIRE(!a.residual || a.ld_residual >= a.w.rows,
                 "gemv_block: ld_residual must be >= N=" + std::to_string(a.w.rows));
  const bool k_types = block_elems(a.w.type) == 256;
  QC_GPU_REQUIRE(!k_types || aligned16(a.w.data),
                 "gemv_block: K-quant weights must start 16-byte aligned (block_quant.cuh loads 16-byte vectors)");
  QC_GPU_REQUIRE(k_types || reinterpret_cast<uintptr_t>(a.w.data) % 2 == 0,
                 "gemv_block: Q4_0/Q5_0 weights must start 2-byte aligned");
  QC_GPU_REQUIRE(a.engine != BlockEngine::kStream || a.format != ActFormat::kF32,
                 "gemv_block: the stream engine runs the quantised activation forms (h, hl), not f32");
  if (a.engine == BlockEngine::kAuto) a.engine = block_engine_for(BlockEngine::kAuto, a.w, a.format);
  if (a.engine == BlockEngine::kSegments) return detail::gemv_block_seg(a, stream);
  const bool stream_engine = a.engine == BlockEngine::kStream;
  int rows_per_warp = 1;
  if (stream_engine) {
    // Auto: two rows per warp share the activation words' loads (measured 2026-12-06).
    if (a.rows_per_warp == 0) a.rows_per_warp = 2;
    QC_GPU_REQUIRE(a.rows_per_warp == 1 || a.rows_per_warp == 2 || a.rows_per_warp == 4,
                   "gemv_block: rows_per_warp must be 0 (auto), 1, 2 or 4 on the stream engine, got " +
                       std::to_string(a.rows_per_warp));
    // warps_per_row below as the register engine's auto choice sees it: the same warps per row, so the same
    // bits on both engines.
    rows_per_warp = a.m == 1 ? 1 : 2;
  } else if (a.format != ActFormat::kF32) {
    // Auto, from the sweep of 2026-12-05 (H100, docs/PERFORMANCE.md; per shape, % of the read ceiling):
    // - M = 1: one row per warp; Q6_K's loads pipelined (down 60 -> 68%, out 55 -> 63%, the rest +-1),
    //   Q4_K's not (its extra registers cost occupancy: out 66 -> 45%); sums per piece (the shared sums'
    //   prologue delays every block: gate/up 66 -> 60%).
    // - M >= 2: two rows per warp, pipelined, shared sums (hl M = 2: Q4_K 26-57% -> 36-63%).
    const bool q6 = a.w.type == BlockType::kQ6_K;
    if (a.rows_per_warp == 0) a.rows_per_warp = a.m == 1 ? 1 : 2;
    if (a.pipeline < 0) a.pipeline = a.m > 1 || q6 ? 1 : 0;
    if (a.act_sums < 0) a.act_sums = a.m > 1 ? 1 : 0;
    QC_GPU_REQUIRE(a.rows_per_warp == 1 || a.rows_per_warp == 2,
                   "gemv_block: rows_per_warp must be 0 (auto), 1 or 2, got " + std::to_string(a.rows_per_warp));
    QC_GPU_REQUIRE(a.pipeline == 0 || a.pipeline == 1,
                   "gemv_block: pipeline must be -1 (auto), 0 or 1, got " + std::to_string(a.pipeline));
    QC_GPU_REQUIRE(a.act_sums == 0 || a.act_sums == 1,
                   "gemv_block: act_sums must be -1 (auto), 0 or 1, got " + std::to_string(a.act_sums));
    // The shared sums take M x K/32 ints: within the 48 KiB a block gets without opting in (K <= 98304 at
    // M = 4); types without a min term have nothing to sum.
    const bool has_min = a.w.type == BlockType::kQ4_K || a.w.type == BlockType::kQ5_K;
    if (!has_min || static_cast<size_t>(a.m) * (a.w.cols / 32) * sizeof(int) > 48 * 1024) a.act_sums = 0;
    rows_per_warp = a.rows_per_warp;
  }
  if (a.warps_per_row == 0) {
    // Small N: the whole block on a row, or too few loads are in flight. Long rows with fewer warps than
    // ~48 a SM (ffn down, 17408 -> 5120): two warps a row (Q4_K hl 52 -> 69% on the H100); not for short
    // rows (attn/gdn out, K = 6144: 66 -> 55%), where each warp would get too few pieces.
    // From N, K and the device alone, never from M or rows per warp: warps_per_row sets the order of a row's
    // sum, and a token must get the same bits in an M-token call as alone (MTP verification, prompt reuse).
    // (It used to count row groups of the M-dependent rows per warp: between 48 and 96 rows an SM, e.g. the
    // 27B's ffn down on a 54..106-SM card, M = 1 and M >= 2 split rows differently.)
    const int sms = device_sm_count() > 0 ? device_sm_count() : 100;
    const int row_groups = a.w.rows;
    if (a.w.rows < 2 * kWarps * sms)
      a.warps_per_row = kWarps;
    else if (a.format != ActFormat::kF32 && row_groups < 48 * sms && a.w.cols / 32 >= 12 * 32)
      a.warps_per_row = 2;
    else
      a.warps_per_row = 1;
  }
  QC_GPU_REQUIRE(a.warps_per_row == 1 || a.warps_per_row == 2 || a.warps_per_row == 4 || a.warps_per_row == 8,
                 "gemv_block: warps_per_row must be 1, 2, 4 or 8, got " + std::to_string(a.warps_per_row));
  if (stream_engine) return detail::gemv_block_stream(a, stream);
  const int rows_per_block = kWarps / a.warps_per_row * rows_per_warp;
  const dim3 grid((a.w.rows + rows_per_block - 1) / rows_per_block);
  const cudaError_t e =
      with_block_type(a.w.type, [&](auto type) { return launch_m<decltype(type)::value>(a, grid, stream); });
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_block_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_block_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
