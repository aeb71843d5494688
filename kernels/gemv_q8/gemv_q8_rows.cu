// The seed's warp-per-row GEMV family, re-expressed as one template: h, hl, hu, hlu, hlu4, h2, hl2 and the
// split-K variant with its fixed-order combine.
//
// Schedule: a block of 8 warps; warp w owns rows_per_warp consecutive rows. Per iteration a warp reads
// `unroll` consecutive 512-weight segments of its row(s) (16 bytes per lane each) plus the matching
// activation words through the read-only cache, then folds them in ascending order (gemv_q8_lane.cuh), so
// all of these are bit-identical within an activation format. Measured on H200 (PERFORMANCE.md, the seed's
// versions of the same kernels): 46-69% of the read ceiling on the per-layer shapes -- one or two segments
// in flight per warp is too little to cover DRAM latency, and a 6144 -> 5120 matrix fills only 0.6 waves.
//
// Split-K (blockIdx.y = chunk): chunk c folds segments [c*per, (c+1)*per) into its own accumulator and
// writes a partial sum; the combine adds the partials in ascending chunk order. Deterministic, but the sum
// is re-associated, so it is its own bit-identity class. It multiplies the warps by S for the narrow
// (N = 5120) matrices.
#include "gemv_q8_internal.h"
#include "gemv_q8_lane.cuh"

namespace qc::gpu::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct RowsParams {
  const int8_t* wq;
  const uint16_t* wd;
  int n, k, w_stride;
  const int8_t* xh;
  const int8_t* xl;
  const float* xs;
  int ld, ld_s;
  float* y;
  int ld_y;
  const float* res;
  int ld_res;
  int seg_per_chunk;  // segments per blockIdx.y chunk
  float* part;        // split-K partials [chunks][M][N], or null
};

template <bool kHL, int M, int R, int U>
__global__ void __launch_bounds__(kThreads) gemv_rows_kernel(const RowsParams p) {
  pdl_wait();
  pdl_trigger();
  const int lane = threadIdx.x & 31;
  const int row0 = (blockIdx.x * kWarps + (threadIdx.x >> 5)) * R;
  if (row0 >= p.n) return;
  const int nseg = num_segments(p.k);
  const int s_begin = blockIdx.y * p.seg_per_chunk;
  const int s_end = min(nseg, s_begin + p.seg_per_chunk);
  const int d_stride = p.k / kQBlock;

  bool row_ok[R];
  const int8_t* wrow[R];
  const uint16_t* drow[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    row_ok[r] = row0 + r < p.n;
    const int row = row_ok[r] ? row0 + r : row0;  // stay in bounds; the result is not written
    wrow[r] = p.wq + static_cast<size_t>(row) * p.w_stride + 16 * lane;
    drow[r] = p.wd + static_cast<size_t>(row) * d_stride;
  }

  float acc[M][R];
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[m][r] = 0.0f;

  for (int s = s_begin; s < s_end; s += U) {
    // Issue every load of this step first: U segments x R rows of weights (+ their scales).
    int4 w[U][R];
    uint16_t wd[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool on = s + u < s_end && lane_active(s + u, lane, p.k);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        w[u][r] =
            on ? __ldg(reinterpret_cast<const int4*>(wrow[r] + (s + u) * kSegBytes)) : make_int4(0, 0, 0, 0);
        wd[u][r] = on ? __ldg(drow[r] + (s + u) * kSegBlocks + lane / 2) : uint16_t{0};
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int seg = s + u;
      if (seg < s_end && lane_active(seg, lane, p.k)) {
        const int b = seg * kSegBlocks + lane / 2;
#pragma unroll
        for (int m = 0; m < M; ++m) {
          const int4 ah = *reinterpret_cast<const int4*>(p.xh + m * p.ld + seg * kSegBytes + 16 * lane);
          int4 al = ah;
          if constexpr (kHL)
            al = *reinterpret_cast<const int4*>(p.xl + m * p.ld + seg * kSegBytes + 16 * lane);
          const float xs = p.xs[m * p.ld_s + b];
#pragma unroll
          for (int r = 0; r < R; ++r)
            acc[m][r] = seg_fold(acc[m][r], seg_value<kHL>(w[u][r], ah, al), wd[u][r], xs);
        }
      }
    }
  }

#pragma unroll
  for (int m = 0; m < M; ++m) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float v = warp_sum(acc[m][r]);
      if (lane == ((m * R + r) & 31) && row_ok[r]) {
        const int row = row0 + r;
        if (p.part) {
          p.part[(static_cast<size_t>(blockIdx.y) * M + m) * p.n + row] = v;
        } else {
          p.y[m * p.ld_y + row] = p.res ? __fadd_rn(v, p.res[m * p.ld_res + row]) : v;
        }
      }
    }
  }
}

// y[m][n] = sum over chunks c = 0, 1, ... (ascending) of part[c][m][n], then + residual.
__global__ void __launch_bounds__(kThreads)
    split_combine_kernel(const float* part, int chunks, int m_rows, int n, float* y, int ld_y,
                         const float* res, int ld_res) {
  pdl_wait();
  pdl_trigger();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m_rows * n) return;
  const int m = i / n, row = i - m * n;
  float acc = part[static_cast<size_t>(m) * n + row];
  for (int c = 1; c < chunks; ++c)
    acc = __fadd_rn(acc, part[(static_cast<size_t>(c) * m_rows + m) * n + row]);
  y[m * ld_y + row] = res ? __fadd_rn(acc, res[m * ld_res + row]) : acc;
}

template <bool kHL, int R, int U>
cudaError_t launch_m(const RowsParams& p, int m, dim3 grid, cudaStream_t s, bool pdl) {
  switch (m) {
    case 1:
      return launch_kernel(gemv_rows_kernel<kHL, 1, R, U>, grid, dim3(kThreads), 0, s, pdl, p);
    case 2:
      return launch_kernel(gemv_rows_kernel<kHL, 2, R, U>, grid, dim3(kThreads), 0, s, pdl, p);
    case 3:
      return launch_kernel(gemv_rows_kernel<kHL, 3, R, U>, grid, dim3(kThreads), 0, s, pdl, p);
    default:
      return launch_kernel(gemv_rows_kernel<kHL, 4, R, U>, grid, dim3(kThreads), 0, s, pdl, p);
  }
}

}  // namespace

GpuStatus launch_gemv_rows(const GemvQ8Args& a, const RowsShape& shape, cudaStream_t stream) {
  const int n = a.w.rows, k = a.w.cols;
  const int nseg = (k + kSegBytes - 1) / kSegBytes;
  const int chunks = shape.split_k > 1 ? shape.split_k : 1;
  const int per = (nseg + chunks - 1) / chunks;
  RowsParams p{a.w.q,          a.w.d,         n,      k,
               a.w.row_stride, a.x.hi,        a.x.lo, a.x.scale,
               a.x.ld,         a.x.ld_scale,  a.y,    a.ld_y,
               a.residual,     a.ld_residual, per,    chunks > 1 ? a.split_scratch : nullptr};
  const int rows_per_block = kWarps * shape.rows_per_warp;
  const dim3 grid((n + rows_per_block - 1) / rows_per_block, chunks);

  cudaError_t e = cudaErrorInvalidValue;
  const int key = (shape.hl ? 100 : 0) + shape.rows_per_warp * 10 + shape.unroll;
  switch (key) {
    case 11:
      e = launch_m<false, 1, 1>(p, a.m, grid, stream, a.pdl);
      break;  // h
    case 12:
      e = launch_m<false, 1, 2>(p, a.m, grid, stream, a.pdl);
      break;  // hu
    case 21:
      e = launch_m<false, 2, 1>(p, a.m, grid, stream, a.pdl);
      break;  // h2
    case 111:
      e = launch_m<true, 1, 1>(p, a.m, grid, stream, a.pdl);
      break;  // hl, sk
    case 112:
      e = launch_m<true, 1, 2>(p, a.m, grid, stream, a.pdl);
      break;  // hlu
    case 114:
      e = launch_m<true, 1, 4>(p, a.m, grid, stream, a.pdl);
      break;  // hlu4
    case 121:
      e = launch_m<true, 2, 1>(p, a.m, grid, stream, a.pdl);
      break;  // hl2
    default:
      return GpuStatus::invalid("gemv_q8 rows: no kernel for hl=" + std::to_string(shape.hl) +
                                " rows_per_warp=" + std::to_string(shape.rows_per_warp) +
                                " unroll=" + std::to_string(shape.unroll));
  }
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gemv_rows_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gemv_rows_kernel", stream);
  if (chunks > 1) {
    const int total = a.m * n;
    QC_CUDA_CHECK(launch_kernel(split_combine_kernel, dim3((total + kThreads - 1) / kThreads), dim3(kThreads),
                                0, stream, a.pdl, static_cast<const float*>(a.split_scratch), chunks, a.m, n,
                                a.y, a.ld_y, a.residual, a.ld_residual));
    QC_LAUNCH_CHECK("split_combine_kernel", stream);
  }
  return GpuStatus::success();
}

}  // namespace qc::gpu::detail
