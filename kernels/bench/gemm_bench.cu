// qwenchat-gemm-bench: the prefill GEMM (gemm_q8) on the 27B projection shapes.
//
//   qwenchat-gemm-bench [--sweep] [--reps N] [--shape NAME] [--m M1,M2,..] [--plan-rows R] [--ld-x L]
//
// Per shape (N x K), M in {128, 512, 1024, 2048}: gemm_q8 in formats h and hl, and gemm_f16 (format f16:
// cuBLASLt on the weights dequantised to f16, its algorithm chosen for --plan-rows rows, default 1024, the
// prefill chunk; timed as "deq+lt": the weight dequantisation, the activation rounding and the GEMM, as
// the prompt path runs them, and as "lt": the GEMM alone; --ld-x: the f16 inputs' row stride, K by default,
// the prompt path's is the widest K, 17408 on the 27B). gemm_q8: the launcher's schedule ("auto") and,
// with --sweep, every tile with 2, 3 and 4 stages (ten times the work: pair it with --shape and --m, or
// fewer --reps). --shape keeps the shapes whose name contains NAME, --m the listed row counts. Each point:
// one warm-up, then the median of --reps (default 20) runs timed with events. The weights are spread over
// copies of >= 256 MB that the runs take in turn, so no run finds its matrix in L2 (60 MB on an H200) --
// what a prefill layer sees.
// Reported: ms, effective TOPS = 2*M*N*K / t (hl counted once, although it issues two mma per block), and
// the weight bytes (N*K*34/32) / t in GB/s. A summary table comes last: per point, auto against the best.
//
// For comparison (NVIDIA's H200 SXM data sheet, not measured here): 1,979 dense INT8 tensor TOPS (with
// wgmma; the mma.sync used here reaches a fraction of it) and 4.8 TB/s of HBM3e.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.cuh"
#include "gemm_f16.h"
#include "gemm_q8.h"

namespace {

using namespace qc::bench;
using qc::gpu::GemmQ8Args;
using qc::gpu::GpuStatus;

struct Shape {
  const char* name;
  int n, k;
};
const Shape kShapes[] = {
    {"gdn in_proj", 16512, 5120}, {"attn in_proj", 12288, 5120}, {"attn/gdn out", 5120, 6144},
    {"ffn gate|up", 34816, 5120}, {"ffn down", 5120, 17408},
    // gemm_f16 multiplies gate|up in two slices of its rows (engine/cuda/prefill_program.h kF16SliceElems).
    {"gate|up half", 17408, 5120},
    // The MTP block's entry, [e | h] (2H) -> H, run over every prompt row that has a next token.
    {"mtp eh_proj", 5120, 10240},
};
const int kRows[] = {128, 512, 1024, 2048};

struct Schedule {
  int tile_m = 0, tile_n = 0, stages = 0;
  std::string label() const {
    if (!tile_m) return "auto";
    return std::to_string(tile_m) + "x" + std::to_string(tile_n) + " s" + std::to_string(stages);
  }
};
std::vector<Schedule> schedules(bool sweep) {
  std::vector<Schedule> v{{}};
  if (!sweep) return v;
  for (const auto& [bm, bn] : std::vector<std::pair<int, int>>{{128, 128}, {64, 128}, {64, 64}})
    for (int st = 2; st <= 4; ++st) v.push_back({bm, bn, st});
  return v;
}

// lo words in [-64, 64], as the quantiser writes them.
__global__ void fill_lo(int8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<int8_t>(static_cast<int>(mix(seed + i) % 129u) - 64);
}

using Weights = Q8Copies;  // bench_util.cuh: weight copies of one shape, filled on the device

// Quantised activations of the largest M for every K of the shapes, and the output.
struct Buffers {
  int8_t *hi = nullptr, *lo = nullptr;
  float *scale = nullptr, *y = nullptr;
  float* x32 = nullptr;       // f32 activations [M][K] (gemm_f16's input)
  uint16_t* x16 = nullptr;    // their f16 rounding
  uint16_t* w16 = nullptr;    // one weight matrix dequantised, [N][K]
  void* workspace = nullptr;  // cuBLASLt's
  int max_k = 0, max_n = 0, max_m = 0;
  void alloc(int m, int k, int n, size_t max_nk) {
    max_m = m;
    max_k = k;
    max_n = n;
    const size_t count = static_cast<size_t>(m) * k;
    QC_BENCH_CHECK(cudaMalloc(&hi, count));
    QC_BENCH_CHECK(cudaMalloc(&lo, count));
    QC_BENCH_CHECK(cudaMalloc(&scale, count / 32 * sizeof(float)));
    QC_BENCH_CHECK(cudaMalloc(&y, static_cast<size_t>(m) * n * sizeof(float)));
    fill(fill_int8, hi, count, uint64_t{11});
    fill(fill_lo, lo, count, uint64_t{12});
    fill(fill_uniform, scale, count / 32, uint64_t{13}, 1e-3f, 5e-2f);
    QC_BENCH_CHECK(cudaMalloc(&x32, count * sizeof(float)));
    QC_BENCH_CHECK(cudaMalloc(&x16, count * sizeof(uint16_t)));
    QC_BENCH_CHECK(cudaMalloc(&w16, max_nk * sizeof(uint16_t)));
    QC_BENCH_CHECK(cudaMalloc(&workspace, qc::gpu::GemmF16::kWorkspaceBytes));
    fill(fill_normal, x32, count, uint64_t{14}, 0.0f, 1.0f);
    QC_BENCH_CHECK(cudaDeviceSynchronize());
  }
  void release() {
    QC_BENCH_CHECK(cudaFree(x32));
    QC_BENCH_CHECK(cudaFree(x16));
    QC_BENCH_CHECK(cudaFree(w16));
    QC_BENCH_CHECK(cudaFree(workspace));
    QC_BENCH_CHECK(cudaFree(hi));
    QC_BENCH_CHECK(cudaFree(lo));
    QC_BENCH_CHECK(cudaFree(scale));
    QC_BENCH_CHECK(cudaFree(y));
  }
};

struct Point {
  std::string shape;
  int n, k, m;
  std::string fmt;  // h, hl, f16
  std::string schedule;
  double ms, tops, gbs;
};

// Median seconds of `reps` runs (after one warm-up), each on the next weight copy; 0 when the call fails.
double time_gemm(cudaStream_t s, const Weights& w, const Buffers& b, int m, bool hl, const Schedule& sch,
                 int reps, std::string& err) {
  int copy = 0;
  auto body = [&] {
    GemmQ8Args a;
    a.w = w.copy(copy++);
    a.x = qc::gpu::QActIn{b.hi, hl ? b.lo : nullptr, b.scale, w.k, w.k / 32};
    a.m = m;
    a.y = b.y;
    a.ld_y = w.n;
    a.tile_m = sch.tile_m;
    a.tile_n = sch.tile_n;
    a.stages = sch.stages;
    const GpuStatus st = qc::gpu::gemm_q8(a, s);
    if (!st.ok() && err.empty()) err = st.describe();
  };
  body();  // a failing schedule is reported once, not timed
  QC_BENCH_CHECK(cudaStreamSynchronize(s));
  if (!err.empty()) return 0.0;
  return time_median(s, reps, body);
}

// gemm_f16 as the prompt path runs it (with_prep: dequantise the weight copy, round the activations, then
// the GEMM) or the GEMM alone.
double time_f16(cudaStream_t s, qc::gpu::GemmF16& g, const Weights& w, const Buffers& b, int m, bool with_prep,
                int ld_x, int reps, std::string& err) {
  int copy = 0;
  auto note = [&](const GpuStatus& st) {
    if (!st.ok() && err.empty()) err = st.describe();
  };
  auto body = [&] {
    if (with_prep) {
      note(qc::gpu::dequant_q8_f16(w.copy(copy++), 0, w.n, b.w16, w.k, s));
      note(qc::gpu::rows_to_f16(b.x32, w.k, m, w.k, 0, b.x16, ld_x, s));
    }
    qc::gpu::GemmF16Args a;
    a.w = b.w16;
    a.n = w.n;
    a.k = w.k;
    a.ld_w = w.k;
    a.x = b.x16;
    a.ld_x = ld_x;
    a.m = m;
    a.y = b.y;
    a.ld_y = w.n;
    note(g.run(a, s));
  };
  body();
  QC_BENCH_CHECK(cudaStreamSynchronize(s));
  if (!err.empty()) return 0.0;
  return time_median(s, reps, body);
}

void print_point(const Point& p) {
  std::printf("%-13s %6d %6d %5d %-3s %-11s %9.3f %8.1f %8.0f\n", p.shape.c_str(), p.n, p.k, p.m,
              p.fmt.c_str(), p.schedule.c_str(), p.ms, p.tops, p.gbs);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool sweep = false;
  int reps = 20, plan_rows = 1024, ld_x = 0;
  std::string only;
  std::vector<int> rows(std::begin(kRows), std::end(kRows));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sweep") {
      sweep = true;
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--ld-x" && i + 1 < argc) {
      ld_x = (std::max(0, std::atoi(argv[++i])) + 7) / 8 * 8;
    } else if (a == "--plan-rows" && i + 1 < argc) {
      plan_rows = std::clamp(std::atoi(argv[++i]), 1, qc::gpu::kGemmF16MaxRows);
    } else if (a == "--shape" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--m" && i + 1 < argc) {
      rows.clear();
      for (const char* c = argv[++i]; *c;) {
        char* end = nullptr;
        const long v = std::strtol(c, &end, 10);
        if (end == c) break;
        if (v >= 1 && v <= qc::gpu::kGemmMaxRows) rows.push_back(static_cast<int>(v));
        c = *end ? end + 1 : end;
      }
    } else {
      std::printf("usage: %s [--sweep] [--reps N] [--shape NAME] [--m M1,M2,..] [--plan-rows R] [--ld-x L]\n", argv[0]);
      return a == "--help" || a == "-h" ? 0 : 1;
    }
  }
  int dev = 0, clock_khz = 0;
  cudaDeviceProp prop{};
  QC_BENCH_CHECK(cudaGetDevice(&dev));
  QC_BENCH_CHECK(cudaGetDeviceProperties(&prop, dev));
  QC_BENCH_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  std::printf("device: %s, cc %d.%d, %d SMs, L2 %.0f MB, peak SM clock %.0f MHz\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1e6, clock_khz / 1e3);
  std::printf("median of %d runs after one warm-up; TOPS = 2*M*N*K / t (hl counted once)\n\n", reps);

  cudaStream_t s;
  QC_BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int max_k = 0, max_n = 0;
  size_t max_nk = 0;
  for (const Shape& sh : kShapes) {
    max_k = std::max(max_k, sh.k);
    max_n = std::max(max_n, sh.n);
    max_nk = std::max(max_nk, static_cast<size_t>(sh.n) * sh.k);
  }
  if (rows.empty()) {
    std::printf("--m: no row count in [1, %d]\n", qc::gpu::kGemmMaxRows);
    return 1;
  }
  ld_x = std::min(ld_x, max_k);
  Buffers buf;
  buf.alloc(*std::max_element(rows.begin(), rows.end()), max_k, max_n, max_nk);
  std::string lt_why;
  auto f16 = qc::gpu::GemmF16::create(plan_rows, buf.workspace, &lt_why);
  if (f16)
    std::printf("gemm_f16: cuBLASLt algorithms chosen for %d rows\n", plan_rows);
  else
    std::printf("gemm_f16: not measured: %s\n", lt_why.c_str());

  std::printf("%-13s %6s %6s %5s %-3s %-11s %9s %8s %8s\n", "shape", "N", "K", "M", "fmt", "schedule", "ms",
              "TOPS", "wt GB/s");
  std::vector<Point> points;
  for (const Shape& sh : kShapes) {
    if (std::string(sh.name).find(only) == std::string::npos) continue;
    Weights w;
    w.alloc(sh.n, sh.k, 256e6);
    auto record = [&](int m, const std::string& fmt, const std::string& schedule, double t, const std::string& err) {
      if (t <= 0.0) {
        std::printf("%-13s %6d %6d %5d %-3s %-11s !! %s\n", sh.name, sh.n, sh.k, m, fmt.c_str(), schedule.c_str(),
                    err.c_str());
        return;
      }
      const Point p{sh.name, sh.n, sh.k, m, fmt, schedule, t * 1e3, 2.0 * m * sh.n * sh.k / t / 1e12,
                    w.bytes() / t / 1e9};
      print_point(p);
      points.push_back(p);
    };
    for (int m : rows) {
      for (bool hl : {false, true})
        for (const Schedule& sch : schedules(sweep)) {
          std::string err;
          const double t = time_gemm(s, w, buf, m, hl, sch, reps, err);
          record(m, hl ? "hl" : "h", sch.label(), t, err);
        }
      if (!f16) continue;
      for (bool prep : {true, false}) {
        std::string err;
        const double t = time_f16(s, *f16, w, buf, m, prep, std::max(ld_x, sh.k), reps, err);
        record(m, "f16", prep ? "deq+lt" : "lt", t, err);
      }
    }
    if (f16) {
      qc::gpu::GemmF16Args a;
      a.w = buf.w16;
      a.n = sh.n;
      a.k = a.ld_w = a.ld_x = sh.k;
      a.x = buf.x16;
      a.m = 1;
      a.y = buf.y;
      a.ld_y = sh.n;
      std::printf("%-13s cuBLASLt: %s\n", sh.name, f16->describe(a).c_str());
    }
    w.release();
  }

  std::printf("\nsummary: the launcher's choice against the best schedule of this run\n");
  std::printf("%-13s %5s %-3s %9s %8s   %-11s %9s %8s\n", "shape", "M", "fmt", "auto ms", "TOPS", "best",
              "ms", "TOPS");
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].schedule != "auto" && points[i].schedule != "deq+lt") continue;
    const Point* best = &points[i];
    for (const Point& q : points)
      if (q.shape == points[i].shape && q.m == points[i].m && q.fmt == points[i].fmt && q.ms < best->ms)
        best = &q;
    std::printf("%-13s %5d %-3s %9.3f %8.1f   %-11s %9.3f %8.1f\n", points[i].shape.c_str(), points[i].m,
                points[i].fmt.c_str(), points[i].ms, points[i].tops, best->schedule.c_str(), best->ms, best->tops);
  }
  buf.release();
  QC_BENCH_CHECK(cudaStreamDestroy(s));
  return 0;
}
