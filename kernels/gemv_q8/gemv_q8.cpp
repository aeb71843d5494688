// The entry points of the Q8_0 GEMV family: argument checks, then the variant's kernel from the table
// (variants.h): the one dispatch point.
#include <string>

#include "gemv_q8_internal.h"

namespace qc::gpu {
namespace {

bool al16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

GpuStatus check_weights(const char* who, const Q8Weights& w) {
  const std::string p = std::string(who) + ": ";
  QC_GPU_REQUIRE(w.q && w.d, p + "null weight pointer");
  QC_GPU_REQUIRE(w.rows > 0 && w.cols > 0,
                 p + "empty weight matrix " + std::to_string(w.rows) + " x " + std::to_string(w.cols));
  QC_GPU_REQUIRE(w.cols % 32 == 0, p + "K must be a multiple of 32, got " + std::to_string(w.cols));
  QC_GPU_REQUIRE(w.row_stride >= w.cols && w.row_stride % 16 == 0,
                 p + "row_stride must be a multiple of 16 and >= K=" + std::to_string(w.cols) + ", got " +
                     std::to_string(w.row_stride));
  QC_GPU_REQUIRE(al16(w.q), p + "weight rows must be 16-byte aligned");
  return GpuStatus::success();
}

GpuStatus check_qact(const char* who, const QActIn& x, bool hl, int k) {
  const std::string p = std::string(who) + ": ";
  QC_GPU_REQUIRE(x.hi && x.scale, p + "null activation pointer");
  QC_GPU_REQUIRE(!hl || x.lo, p + "the hl format needs the low activation word (x.lo is null)");
  QC_GPU_REQUIRE(al16(x.hi) && (!hl || al16(x.lo)), p + "activation rows must be 16-byte aligned");
  QC_GPU_REQUIRE(x.ld >= k && x.ld % 16 == 0, p + "activation ld must be a multiple of 16 and >= K=" +
                                                  std::to_string(k) + ", got " + std::to_string(x.ld));
  QC_GPU_REQUIRE(x.ld_scale >= k / 32, p + "activation ld_scale must be >= K/32=" + std::to_string(k / 32) +
                                           ", got " + std::to_string(x.ld_scale));
  return GpuStatus::success();
}

}  // namespace

size_t gemv_q8_split_scratch_floats(int split_k, int m, int n) {
  return static_cast<size_t>(split_k) * static_cast<size_t>(m) * static_cast<size_t>(n);
}

GpuStatus gemv_q8(const GemvQ8Args& a, cudaStream_t stream) {
  QC_GPU_TRY(check_weights("gemv_q8", a.w));
  const int n = a.w.rows, k = a.w.cols;
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens, "gemv_q8: M must be in [1, 4], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.y && a.ld_y >= n, "gemv_q8: y must be non-null with ld_y >= N=" + std::to_string(n) +
                                         ", got " + std::to_string(a.ld_y));
  QC_GPU_REQUIRE(!a.residual || a.ld_residual >= n, "gemv_q8: ld_residual must be >= N=" + std::to_string(n) +
                                                        ", got " + std::to_string(a.ld_residual));
  const ActFormat fmt = gemv_act_format(a.variant);
  if (fmt == ActFormat::kF32) {
    QC_GPU_REQUIRE(a.x_f32 && al16(a.x_f32), "gemv_q8 deq: x_f32 must be non-null and 16-byte aligned");
    QC_GPU_REQUIRE(a.ld_x_f32 >= k && a.ld_x_f32 % 4 == 0,
                   "gemv_q8 deq: ld_x_f32 must be a multiple of 4 and >= K=" + std::to_string(k) + ", got " +
                       std::to_string(a.ld_x_f32));
  } else {
    QC_GPU_TRY(check_qact("gemv_q8", a.x, fmt == ActFormat::kHL, k));
  }

  // The variant's kernel: the table in variants.cpp.
  const GemvVariantEntry* e = gemv_variant_entry(a.variant);
  if (!e)
    return GpuStatus::invalid("gemv_q8: unknown variant " + std::to_string(static_cast<int>(a.variant)));
  switch (e->kernel) {
    case GemvKernel::kRows: {
      RowsShape shape = e->rows;
      if (e->split_over_k) {
        QC_GPU_REQUIRE(a.split_k >= 2 && a.split_k <= 64,
                       "gemv_q8 sk: split_k must be in [2, 64], got " + std::to_string(a.split_k));
        QC_GPU_REQUIRE(a.split_scratch, "gemv_q8 sk: split_scratch is null (needs split_k*M*N floats)");
        shape.split_k = a.split_k;
      }
      return detail::launch_gemv_rows(a, shape, stream);
    }
    case GemvKernel::kDeq:
      return detail::launch_gemv_deq(a, stream);
    case GemvKernel::kTile:
      return detail::launch_gemv_tile(a, e->hl, a.tile, stream);
    case GemvKernel::kMma:
      return detail::launch_gemv_mma(a, e->hl, stream);
  }
  return GpuStatus::invalid("gemv_q8: unknown variant " + std::to_string(static_cast<int>(a.variant)));
}

GpuStatus gemv_q8_gateup(const GemvQ8GateUpArgs& a, cudaStream_t stream) {
  QC_GPU_TRY(check_weights("gemv_q8_gateup gate", a.gate));
  QC_GPU_TRY(check_weights("gemv_q8_gateup up", a.up));
  QC_GPU_REQUIRE(a.gate.rows == a.up.rows && a.gate.cols == a.up.cols && a.gate.row_stride == a.up.row_stride,
                 "gemv_q8_gateup: gate " + std::to_string(a.gate.rows) + "x" + std::to_string(a.gate.cols) +
                     " and up " + std::to_string(a.up.rows) + "x" + std::to_string(a.up.cols) +
                     " must have the same shape and row stride");
  const int n = a.gate.rows, k = a.gate.cols;
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens,
                 "gemv_q8_gateup: M must be in [1, 4], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.format == ActFormat::kH || a.format == ActFormat::kHL,
                 "gemv_q8_gateup: activation format must be h or hl");
  QC_GPU_TRY(check_qact("gemv_q8_gateup", a.x, a.format == ActFormat::kHL, k));
  QC_GPU_REQUIRE(a.out_f32 || a.out_q.hi, "gemv_q8_gateup: no output (out_f32 and out_q.hi both null)");
  QC_GPU_REQUIRE(!a.out_f32 || a.ld_out >= n, "gemv_q8_gateup: ld_out must be >= N=" + std::to_string(n) +
                                                  ", got " + std::to_string(a.ld_out));
  if (a.out_q.hi) {
    QC_GPU_REQUIRE(n % 32 == 0,
                   "gemv_q8_gateup: a quantised output needs N multiple of 32, got " + std::to_string(n));
    QC_GPU_REQUIRE(a.out_q.scale, "gemv_q8_gateup: out_q.scale is null");
    QC_GPU_REQUIRE(a.out_q.ld >= n && a.out_q.ld_scale >= n / 32,
                   "gemv_q8_gateup: out_q ld/ld_scale must be >= N, N/32 (N=" + std::to_string(n) +
                       "), got " + std::to_string(a.out_q.ld) + ", " + std::to_string(a.out_q.ld_scale));
  }
  return detail::launch_gemv_gateup(a, a.tile, stream);
}

}  // namespace qc::gpu
