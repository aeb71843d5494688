// qwenchat-gemv-bench: the Q8_0 GEMV variants on the 27B shapes against the read-only bandwidth ceiling
// measured in the same run (PERFORMANCE.md "Method").
//
//   qwenchat-gemv-bench [--json PATH] [--budget SECONDS] [--quick]
//
// 1. Read ceiling: 16-byte loads, four in flight per thread, grid-stride over an 8 GiB buffer, blocks of
//    512 threads x {2, 4, 8, 16} per SM, median of 10 each; the ceiling is the best median.
// 2. Device-to-device copy of 4 GiB (bytes read + written), median of 10.
// 3. Every variant on every shape, M = 1, with random weights in enough copies that L2 never holds the
//    matrix (>= 256 MB rotated): (a) events around L plain launches, (b) L launches captured in a CUDA
//    graph (what decode sees), (c) the same graph with programmatic dependent launch. Median of trials.
// 4. The tile schedule sweep (rows per warp, segments in flight, blocks per SM), M = 1..4 for the best
//    tile schedule, fused gate+up vs two launches, and a 27B per-token GEMV estimate from the graph times.
// Everything is printed as it is measured; a compact table comes last. A wall-clock budget (default 170 s)
// skips what is left rather than overrunning.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_util.cuh"
#include "gemv_q8.h"
#include "norm_quant.h"

namespace {

using qc::GemvVariant;
using qc::gpu::GpuStatus;

#define BENCH_CHECK(stmt) QC_BENCH_CHECK(stmt)

using Clock = std::chrono::steady_clock;

struct Options {
  std::string json;
  double budget_s = 170.0;
  bool quick = false;
};

// Shared with qwenchat-bench (kernels/bench/bench_util.cuh): hash fills, the read stream, event timing.
using qc::bench::fill;
using qc::bench::fill_int8;
using qc::bench::fill_normal;
using qc::bench::median;
using qc::bench::time_median;

// ---- the model's shapes and the variants ----
struct Shape {
  const char* name;
  int k, n;
  int per_token;  // launches of this shape per 27B token (64 layers: 48 GDN + 16 attention)
};
const Shape kShapes[] = {
    {"ffn gate/up", 5120, 17408, 128}, {"ffn down", 17408, 5120, 64},    {"gdn qkv+z", 5120, 16384, 48},
    {"attn/gdn out", 6144, 5120, 64},  {"attn q+gate", 5120, 12288, 16}, {"lm_head", 5120, 248320, 1},
};

struct Variant {
  std::string label;
  GemvVariant v;
  qc::gpu::TileTuning tile{};
  int split_k = 4;
};

struct Weights {
  int k = 0, n = 0, copies = 0;
  size_t q_bytes = 0, d_count = 0;
  int8_t* q = nullptr;
  uint16_t* d = nullptr;
  qc::gpu::Q8Weights copy(int i) const {
    return qc::gpu::Q8Weights{q + static_cast<size_t>(i % copies) * q_bytes,
                              d + static_cast<size_t>(i % copies) * d_count, n, k, qc::gpu::q8_row_stride(k)};
  }
  double bytes() const { return static_cast<double>(q_bytes) + 2.0 * d_count; }
};

struct Acts {
  int8_t *hi = nullptr, *lo = nullptr;
  float *scale = nullptr, *f32 = nullptr;
  int k = 0;
  qc::gpu::QActIn in() const { return qc::gpu::QActIn{hi, lo, scale, k, k / 32}; }
};

struct Result {
  std::string shape, variant, mode;
  int k, n, m;
  double us, gbs, pct;
  std::string error;
};

class Bench {
 public:
  explicit Bench(Options o) : opt_(std::move(o)), t0_(Clock::now()) {}
  int run();

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  bool out_of_time(const char* what) {
    if (elapsed() < opt_.budget_s) return false;
    if (!budget_note_)
      std::printf("!! time budget of %.0f s reached: skipping the rest (first: %s)\n", opt_.budget_s, what);
    budget_note_ = true;
    return true;
  }
  void device_info();
  void read_ceiling();
  void gemv_section();
  GpuStatus launch(const Variant& v, const Weights& w, int copy, int m, bool pdl);
  Result measure(const Shape& s, const Variant& v, const Weights& w, int m, const char* mode);
  void print_table();
  void write_json();

  Options opt_;
  Clock::time_point t0_;
  bool budget_note_ = false;
  cudaStream_t stream_ = nullptr;
  cudaDeviceProp prop_{};
  int sm_clock_khz_ = 0, mem_clock_khz_ = 0;
  double ceiling_gbs_ = 0.0, copy_gbs_ = 0.0;
  std::vector<std::pair<int, double>> read_runs_;  // blocks per SM, GB/s
  std::vector<Result> results_;
  std::vector<Result> sweep_, mscale_, fused_;
  std::string estimate_;
  Acts acts_;
  float* y_ = nullptr;
  float* scratch_ = nullptr;
};

void Bench::device_info() {
  int dev = 0;
  BENCH_CHECK(cudaGetDevice(&dev));
  BENCH_CHECK(cudaGetDeviceProperties(&prop_, dev));
  BENCH_CHECK(cudaDeviceGetAttribute(&sm_clock_khz_, cudaDevAttrClockRate, dev));
  BENCH_CHECK(cudaDeviceGetAttribute(&mem_clock_khz_, cudaDevAttrMemoryClockRate, dev));
  std::printf(
      "device: %s, cc %d.%d, %d SMs, L2 %.0f MB, %.1f GiB, peak SM clock %.0f MHz, memory clock %.0f MHz, "
      "bus %d bit\n",
      prop_.name, prop_.major, prop_.minor, prop_.multiProcessorCount, prop_.l2CacheSize / 1e6,
      prop_.totalGlobalMem / 1073741824.0, sm_clock_khz_ / 1e3, mem_clock_khz_ / 1e3, prop_.memoryBusWidth);
}

void Bench::read_ceiling() {
  const qc::bench::Ceilings c =
      qc::bench::measure_ceilings(stream_, prop_.multiProcessorCount, opt_.quick ? 5 : 10);
  read_runs_ = c.read_runs;
  ceiling_gbs_ = c.read_gbs;
  copy_gbs_ = c.copy_gbs;
}

GpuStatus Bench::launch(const Variant& v, const Weights& w, int copy, int m, bool pdl) {
  qc::gpu::GemvQ8Args a;
  a.w = w.copy(copy);
  a.x = acts_.in();
  a.x_f32 = acts_.f32;
  a.ld_x_f32 = acts_.k;
  a.y = y_;
  a.ld_y = w.n;
  a.m = m;
  a.variant = v.v;
  a.split_k = v.split_k;
  a.split_scratch = scratch_;
  a.tile = v.tile;
  a.pdl = pdl;
  return qc::gpu::gemv_q8(a, stream_);
}

// mode: "events" (L launches between two events), "graph" or "graph_pdl" (L launches captured once, the
// graph replayed). L rotates over the weight copies; a trial lasts >= ~1 ms.
Result Bench::measure(const Shape& s, const Variant& v, const Weights& w, int m, const char* mode) {
  Result r{s.name, v.label, mode, s.k, s.n, m, 0, 0, 0, {}};
  const double est_s = w.bytes() / 3.0e12;  // a pessimistic launch time
  const int L = std::clamp(static_cast<int>(std::ceil(1.5e-3 / est_s)), 4, 256);
  const int reps = opt_.quick ? 5 : 9;
  const bool graph = std::strcmp(mode, "events") != 0;
  const bool pdl = std::strcmp(mode, "graph_pdl") == 0;
  GpuStatus st = launch(v, w, 0, m, pdl);  // argument check + warm-up
  const cudaError_t warm = st.ok() ? cudaStreamSynchronize(stream_) : cudaSuccess;
  if (!st.ok() || warm != cudaSuccess) {
    r.error = st.ok() ? cudaGetErrorString(warm) : st.describe();
    (void)cudaGetLastError();
    return r;
  }
  double t = 0.0;
  if (!graph) {
    t = time_median(stream_, reps, [&] {
      for (int i = 0; i < L; ++i) (void)launch(v, w, i, m, false);
    });
  } else {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    BENCH_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    std::string err;
    for (int i = 0; i < L && err.empty(); ++i)
      if (const GpuStatus li = launch(v, w, i, m, pdl); !li.ok()) err = li.describe();
    BENCH_CHECK(cudaStreamEndCapture(stream_, &g));
    if (!err.empty()) {
      r.error = err;
      if (g) cudaGraphDestroy(g);
      (void)cudaGetLastError();
      return r;
    }
    BENCH_CHECK(cudaGraphInstantiate(&exec, g, 0));
    t = time_median(stream_, reps, [&] { BENCH_CHECK(cudaGraphLaunch(exec, stream_)); });
    BENCH_CHECK(cudaGraphExecDestroy(exec));
    BENCH_CHECK(cudaGraphDestroy(g));
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    r.error = cudaGetErrorString(e);
    return r;
  }
  r.us = t / L * 1e6;
  r.gbs = w.bytes() / (t / L) / 1e9;
  r.pct = ceiling_gbs_ > 0 ? 100.0 * r.gbs / ceiling_gbs_ : 0.0;
  return r;
}

void Bench::gemv_section() {
  const int kmax = 17408, nmax = 248320;
  const size_t act_n = static_cast<size_t>(4) * kmax;
  BENCH_CHECK(cudaMalloc(&acts_.hi, act_n));
  BENCH_CHECK(cudaMalloc(&acts_.lo, act_n));
  BENCH_CHECK(cudaMalloc(&acts_.scale, act_n / 32 * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&acts_.f32, act_n * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&y_, static_cast<size_t>(4) * nmax * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&scratch_, qc::gpu::gemv_q8_split_scratch_floats(16, 4, nmax) * sizeof(float)));

  const std::vector<Variant> main_variants = {
      {"h", GemvVariant::kH},         {"hl", GemvVariant::kHL},
      {"hu", GemvVariant::kHU},       {"hlu", GemvVariant::kHLU},
      {"hlu4", GemvVariant::kHLU4},   {"h2", GemvVariant::kH2},
      {"hl2", GemvVariant::kHL2},     {"sk4", GemvVariant::kSplitK, {}, 4},
      {"deq", GemvVariant::kDeq},     {"tile", GemvVariant::kTile},
      {"tile_h", GemvVariant::kTileH}};

  for (const Shape& s : kShapes) {
    if (out_of_time(s.name)) break;
    // Activations for this K (M = 4 rows; M = 1 uses the first).
    acts_.k = s.k;
    fill(fill_normal, acts_.f32, static_cast<size_t>(4) * s.k, uint64_t{77} + s.k, 0.0f, 1.0f);
    BENCH_CHECK(cudaDeviceSynchronize());  // the fills run on the legacy stream; stream_ does not wait for it
    qc::gpu::QuantizeArgs qa;
    qa.x = acts_.f32;
    qa.ld_x = s.k;
    qa.n = s.k;
    qa.m = 4;
    qa.out = qc::gpu::QActOut{acts_.hi, acts_.lo, acts_.scale, s.k, s.k / 32};
    const GpuStatus qs = qc::gpu::quantize_act(qa, stream_);
    if (!qs.ok()) std::printf("!! quantize_act: %s\n", qs.describe().c_str());
    // Weights: enough copies for >= 256 MB.
    Weights w;
    w.k = s.k;
    w.n = s.n;
    w.q_bytes = qc::gpu::q8_split_q_bytes(s.n, s.k);
    w.d_count = qc::gpu::q8_split_d_count(s.n, s.k);
    w.copies = std::max(2, static_cast<int>(std::ceil(256e6 / w.bytes())));
    BENCH_CHECK(cudaMalloc(&w.q, w.q_bytes * w.copies));
    BENCH_CHECK(cudaMalloc(&w.d, w.d_count * w.copies * sizeof(uint16_t)));
    fill(fill_int8, w.q, w.q_bytes * w.copies, uint64_t{1000} + s.n);
    fill(qc::bench::fill_scales, w.d, w.d_count * w.copies, uint64_t{2000} + s.n, 1e-3f, 2e-2f);
    BENCH_CHECK(cudaDeviceSynchronize());
    std::printf("\n== %s: K=%d -> N=%d, %.1f MB of weights, %d copies rotated ==\n", s.name, s.k, s.n,
                w.bytes() / 1e6, w.copies);
    for (const Variant& v : main_variants) {
      for (const char* mode : {"events", "graph", "graph_pdl"}) {
        if (out_of_time(v.label.c_str())) break;
        Result r = measure(s, v, w, 1, mode);
        if (r.error.empty())
          std::printf("  %-8s %-9s %8.2f us %7.0f GB/s %5.1f%%\n", v.label.c_str(), mode, r.us, r.gbs, r.pct);
        else
          std::printf("  %-8s %-9s ERROR %s\n", v.label.c_str(), mode, r.error.c_str());
        results_.push_back(r);
      }
    }
    // Tile schedule sweep, graph + PDL, M = 1.
    Variant best{"tile", GemvVariant::kTile};
    double best_us = 1e30;
    for (const auto& [R, U] : std::vector<std::pair<int, int>>{{1, 4}, {1, 8}, {2, 4}}) {
      for (int bps : {0, 1, 2, 3, 4}) {
        if (out_of_time("tile sweep")) break;
        Variant v{"tile R" + std::to_string(R) + "U" + std::to_string(U) + "b" + std::to_string(bps),
                  GemvVariant::kTile, qc::gpu::TileTuning{R, U, bps}};
        Result r = measure(s, v, w, 1, "graph_pdl");
        if (r.error.empty()) {
          std::printf("  sweep %-12s %8.2f us %7.0f GB/s %5.1f%%\n", v.label.c_str(), r.us, r.gbs, r.pct);
          if (r.us < best_us) {
            best_us = r.us;
            best = v;
          }
        } else {
          std::printf("  sweep %-12s ERROR %s\n", v.label.c_str(), r.error.c_str());
        }
        sweep_.push_back(r);
      }
    }
    // M = 1..4 with the best schedule: the cost of verifying several tokens in one weight pass.
    // Also the launcher's own choice (tile_tuning_for: two rows per warp from M = 3).
    const Variant autov{"tile auto", GemvVariant::kTile};
    for (int m = 1; m <= 4 && !out_of_time("M scaling"); ++m) {
      for (const Variant* v : std::initializer_list<const Variant*>{&best, &autov}) {
        Result r = measure(s, *v, w, m, "graph_pdl");
        if (r.error.empty())
          std::printf("  M=%d %-14s %8.2f us (%.2fx of the best M=1)\n", m, v->label.c_str(), r.us,
                      r.us / best_us);
        mscale_.push_back(r);
      }
    }
    // Fused gate+up (one launch over both matrices: consecutive copies play gate and up) vs two tile
    // launches.
    if (std::strcmp(s.name, "ffn gate/up") == 0 && !out_of_time("gate+up")) {
      const int L = 32;
      for (bool fused : {false, true}) {
        cudaGraph_t g = nullptr;
        cudaGraphExec_t exec = nullptr;
        BENCH_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        std::string err;
        for (int i = 0; i < L && err.empty(); ++i) {
          if (fused) {
            qc::gpu::GemvQ8GateUpArgs ga;
            ga.gate = w.copy(2 * i);
            ga.up = w.copy(2 * i + 1);
            ga.x = acts_.in();
            ga.out_q = qc::gpu::QActOut{acts_.hi + 2 * kmax, acts_.lo + 2 * kmax, acts_.scale + 2 * kmax / 32,
                                        s.n, s.n / 32};
            ga.pdl = true;
            if (const GpuStatus li = qc::gpu::gemv_q8_gateup(ga, stream_); !li.ok()) err = li.describe();
          } else {
            for (int j = 0; j < 2 && err.empty(); ++j)
              if (const GpuStatus li = launch(best, w, 2 * i + j, 1, true); !li.ok()) err = li.describe();
          }
        }
        BENCH_CHECK(cudaStreamEndCapture(stream_, &g));
        Result r{s.name,      fused ? "gateup fused (+quant)" : "gate, up: 2 launches",
                 "graph_pdl", s.k,
                 2 * s.n,     1,
                 0,           0,
                 0,           {}};
        if (!err.empty()) {
          r.error = err;
          std::printf("  %s: ERROR %s\n", r.variant.c_str(), r.error.c_str());
        } else {
          BENCH_CHECK(cudaGraphInstantiate(&exec, g, 0));
          const double t =
              time_median(stream_, opt_.quick ? 5 : 9, [&] { BENCH_CHECK(cudaGraphLaunch(exec, stream_)); });
          BENCH_CHECK(cudaGraphExecDestroy(exec));
          r.us = t / L * 1e6;
          r.gbs = 2.0 * w.bytes() / (t / L) / 1e9;
          r.pct = ceiling_gbs_ > 0 ? 100.0 * r.gbs / ceiling_gbs_ : 0.0;
          std::printf("  %-24s %8.2f us per pair %7.0f GB/s %5.1f%%\n", r.variant.c_str(), r.us, r.gbs,
                      r.pct);
        }
        if (g) BENCH_CHECK(cudaGraphDestroy(g));
        fused_.push_back(r);
      }
    }
    BENCH_CHECK(cudaFree(w.q));
    BENCH_CHECK(cudaFree(w.d));
  }
}

const Result* find(const std::vector<Result>& v, const std::string& shape, const std::string& variant,
                   const std::string& mode, int m = 1) {
  for (const Result& r : v)
    if (r.shape == shape && r.variant == variant && r.mode == mode && r.m == m && r.error.empty()) return &r;
  return nullptr;
}

void Bench::print_table() {
  std::printf(
      "\n==== summary: %s, read ceiling %.0f GB/s, copy %.0f GB/s; GB/s (%% of read ceiling), M=1, graph+PDL "
      "====\n",
      prop_.name, ceiling_gbs_, copy_gbs_);
  const char* cols[] = {"h", "hl", "hu", "hlu4", "h2", "sk4", "deq", "tile", "tile_h"};
  std::printf("%-14s", "shape");
  for (const char* c : cols) std::printf(" %11s", c);
  std::printf(" %16s\n", "best tile sweep");
  double token_s = 0.0, token_bytes = 0.0;
  bool complete = true;
  for (const Shape& s : kShapes) {
    std::printf("%-14s", s.name);
    for (const char* c : cols) {
      const Result* r = find(results_, s.name, c, "graph_pdl");
      if (r)
        std::printf(" %5.0f (%3.0f%%)", r->gbs, r->pct);
      else
        std::printf(" %11s", "-");
    }
    const Result* best = nullptr;
    for (const Result& r : sweep_)
      if (r.shape == s.name && r.error.empty() && (!best || r.us < best->us)) best = &r;
    if (best) {
      std::printf(" %5.0f (%3.0f%%) %s\n", best->gbs, best->pct, best->variant.c_str() + 5);
      token_s += s.per_token * best->us * 1e-6;
      token_bytes += s.per_token * (static_cast<double>(s.n) * s.k * 34.0 / 32.0);
    } else {
      std::printf(" %11s\n", "-");
      complete = false;
    }
  }
  for (const Result& r : fused_)
    if (r.error.empty())
      std::printf("gate+up pair: %-24s %8.2f us  %5.0f GB/s (%3.0f%%)\n", r.variant.c_str(), r.us, r.gbs,
                  r.pct);
  if (complete && token_s > 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "27B per-token Q8_0 GEMV estimate (best tile schedule per shape, graph+PDL, %d GEMV "
                  "launches): %.2f ms "
                  "for %.2f GB = %.0f GB/s (%.0f%% of the read ceiling) -> %.0f tok/s if nothing else ran; "
                  "floor at the "
                  "ceiling %.0f tok/s (k/v and 48-wide projections not included: ~0.7%% of the bytes)",
                  128 + 64 + 48 + 64 + 16 + 1, token_s * 1e3, token_bytes / 1e9, token_bytes / token_s / 1e9,
                  100.0 * token_bytes / token_s / 1e9 / ceiling_gbs_, 1.0 / token_s,
                  ceiling_gbs_ * 1e9 / token_bytes);
    estimate_ = buf;
    std::printf("%s\n", buf);
  }
  std::printf("total bench time %.1f s\n", elapsed());
}

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) o += c;
  }
  return o;
}

void Bench::write_json() {
  if (opt_.json.empty()) return;
  FILE* f = std::fopen(opt_.json.c_str(), "w");
  if (!f) {
    std::printf("!! cannot write %s\n", opt_.json.c_str());
    return;
  }
  std::fprintf(f,
               "{\n  \"device\": {\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d, "
               "\"sm_clock_mhz\": %.0f, "
               "\"mem_clock_mhz\": %.0f, \"bus_bits\": %d},\n",
               esc(prop_.name).c_str(), prop_.major, prop_.minor, prop_.multiProcessorCount,
               prop_.l2CacheSize, sm_clock_khz_ / 1e3, mem_clock_khz_ / 1e3, prop_.memoryBusWidth);
  std::fprintf(f, "  \"read_ceiling_gbs\": %.1f,\n  \"read_runs\": [", ceiling_gbs_);
  for (size_t i = 0; i < read_runs_.size(); ++i)
    std::fprintf(f, "%s{\"blocks_per_sm\": %d, \"gbs\": %.1f}", i ? ", " : "", read_runs_[i].first,
                 read_runs_[i].second);
  std::fprintf(f, "],\n  \"copy_gbs\": %.1f,\n", copy_gbs_);
  auto dump = [&](const char* key, const std::vector<Result>& v, bool last) {
    std::fprintf(f, "  \"%s\": [\n", key);
    for (size_t i = 0; i < v.size(); ++i) {
      const Result& r = v[i];
      std::fprintf(
          f,
          "    {\"shape\": \"%s\", \"k\": %d, \"n\": %d, \"variant\": \"%s\", \"mode\": \"%s\", \"m\": %d, "
          "\"us\": %.3f, \"gbs\": %.1f, \"pct_ceiling\": %.2f, \"error\": \"%s\"}%s\n",
          esc(r.shape).c_str(), r.k, r.n, esc(r.variant).c_str(), r.mode.c_str(), r.m, r.us, r.gbs, r.pct,
          esc(r.error).c_str(), i + 1 < v.size() ? "," : "");
    }
    std::fprintf(f, "  ]%s\n", last ? "" : ",");
  };
  dump("gemv", results_, false);
  dump("tile_sweep", sweep_, false);
  dump("m_scaling", mscale_, false);
  dump("gate_up", fused_, false);
  std::fprintf(f, "  \"estimate\": \"%s\",\n  \"seconds\": %.1f\n}\n", esc(estimate_).c_str(), elapsed());
  std::fclose(f);
  std::printf("wrote %s\n", opt_.json.c_str());
}

int Bench::run() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("qwenchat-gemv-bench: no CUDA device (%s); nothing to measure\n",
                cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  device_info();
  read_ceiling();
  gemv_section();
  print_table();
  write_json();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      o.json = argv[++i];
    else if (a == "--budget" && i + 1 < argc)
      o.budget_s = std::atof(argv[++i]);
    else if (a == "--quick")
      o.quick = true;
    else {
      std::printf("usage: %s [--json PATH] [--budget SECONDS] [--quick]\n", argv[0]);
      return a == "--help" || a == "-h" ? 0 : 1;
    }
  }
  Bench b(o);
  return b.run();
}
