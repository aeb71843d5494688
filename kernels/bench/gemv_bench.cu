// qwenchat-gemv-bench: the Q8_0 GEMVs on the 27B shapes against the read-only bandwidth ceiling measured in
// the same run (PERFORMANCE.md "Method").
//
//   qwenchat-gemv-bench [--json PATH] [--budget SECONDS] [--quick] [--engines LIST]
//   qwenchat-gemv-bench --variants tile,mma,... [--budget SECONDS]
//
// --variants: only the read ceiling and the named variants (the tile ones with the launcher's choice) at
// M = 1..4 on every shape, graph + PDL, then a table of % of the ceiling and each M's time over M = 1's.
//
// --engines 1,3 leaves engine 2 out of the sweeps and replaces the launcher's choice by engine 3's defaults
// (for a machine or build where engine 2 fails: tools/ run scripts retry with it).
//
// 1. Read ceiling: 16-byte loads, four in flight per thread, grid-stride over an 8 GiB buffer, blocks of
//    512 threads x {2, 4, 8, 16} per SM, median of 10 each; the ceiling is the best median. Device-to-device
//    copy of 4 GiB (bytes read + written).
// 2. Per shape, M = 1: the seed's variants and the launcher's tile choice ("tile"/"tile_h" = auto), then the
//    sweep of the tile engines (engine 1 batch, 2 stream, 3 ring: gemv_q8.h TileTuning), each point = L
//    launches over rotated weight copies (>= 256 MB, so L2 never holds the matrix) captured in a CUDA graph
//    with programmatic dependent launch (what decode runs), median of replays. Each engine's best is then
//    also timed as plain launches (events) and as a graph without PDL.
// 3. Fused gate+up (+ quantised output, as decode runs it) against two launches of the best plain schedule.
// 4. The token: every Q8_0 GEMV of a 27B decode step (64 layers, distinct weights, 27 GB; 48 GDN layers:
//    qkv+z, out; 16 attention layers: q+gate, out; every layer gate, up, down; then lm_head) in one graph
//    with PDL, for the launcher's choice, this run's best schedule per shape, and the seed's "hu".
// 5. M = 2..4 (MTP verification): a reduced sweep per shape and the token graph with the launcher's choice.
// Everything is printed as it is measured; a compact table comes last. A wall-clock budget (default 200 s)
// skips what is left rather than overrunning.
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "gemv_bench_util.cuh"
#include "gemv_block_section.cuh"
#include "gemv_q8/gemv_q8.h"
#include "norm_quant.h"

namespace {

using namespace qc::bench;
using qc::GemvVariant;
using qc::gpu::GpuStatus;
using qc::gpu::TileTuning;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string json;
  double budget_s = 200.0;
  bool quick = false;
  unsigned engines = 0xe;  // bit e: engine e may run
  std::vector<qc::gpu::BlockType> blocks;  // --blocks: only the read ceiling and gemv_block on these types
  std::string block_forms, block_shapes;   // --block-forms, --block-shapes: subsets of the gemv_block sweep
  std::vector<GemvVariant> variants;       // --variants: only these at M = 1..4 (variants_section)
};

struct Shape {
  const char* name;
  int k, n;
  int per_token;  // launches of this shape per 27B token (64 layers: 48 GDN + 16 attention)
};
const Shape kShapes[] = {
    {"ffn gate/up", 5120, 17408, 128}, {"ffn down", 17408, 5120, 64},    {"gdn qkv+z", 5120, 16384, 48},
    {"attn/gdn out", 6144, 5120, 64},  {"attn q+gate", 5120, 12288, 16}, {"lm_head", 5120, 248320, 1},
};
const Shape& shape_by_name(const char* name) {
  for (const Shape& s : kShapes)
    if (std::strcmp(s.name, name) == 0) return s;
  return kShapes[0];
}

struct Variant {
  std::string label;
  GemvVariant v;
  TileTuning tile{};
  int split_k = 4;
};
Variant tile_variant(const TileTuning& t) {
  return Variant{tuning_label(t), GemvVariant::kTile, t};
}

double q8_bytes(int n, int k) {
  return static_cast<double>(qc::gpu::q8_split_q_bytes(n, k)) + 2.0 * qc::gpu::q8_split_d_count(n, k);
}

struct Weights {
  int k = 0, n = 0, copies = 0;
  size_t q_bytes = 0, d_count = 0;
  int8_t* q = nullptr;
  uint16_t* d = nullptr;
  qc::gpu::Q8Weights copy(int i) const {
    return qc::gpu::Q8Weights{q + static_cast<size_t>(i % copies) * q_bytes,
                              d + static_cast<size_t>(i % copies) * d_count, n, k, qc::gpu::q8_row_stride(k)};
  }
  double bytes() const { return q8_bytes(n, k); }
  void alloc(int kk, int nn, double min_total) {
    k = kk;
    n = nn;
    q_bytes = qc::gpu::q8_split_q_bytes(n, k);
    d_count = qc::gpu::q8_split_d_count(n, k);
    copies = std::max(2, static_cast<int>(std::ceil(min_total / bytes())));
    BENCH_CHECK(cudaMalloc(&q, q_bytes * copies));
    BENCH_CHECK(cudaMalloc(&d, d_count * copies * sizeof(uint16_t)));
    fill(fill_int8, q, q_bytes * copies, uint64_t{1000} + n + k);
    fill(fill_scales, d, d_count * copies, uint64_t{2000} + n + k, 1e-3f, 2e-2f);
    BENCH_CHECK(cudaDeviceSynchronize());
  }
  void release() {
    BENCH_CHECK(cudaFree(q));
    BENCH_CHECK(cudaFree(d));
    q = nullptr;
    d = nullptr;
  }
};

// Quantised activations (hl words) for M <= 4 rows of K, from random normals.
struct Acts {
  int8_t *hi = nullptr, *lo = nullptr;
  float *scale = nullptr, *f32 = nullptr;
  int k = 0;
  qc::gpu::QActIn in() const { return qc::gpu::QActIn{hi, lo, scale, k, k / 32}; }
  qc::gpu::QActOut out() const { return qc::gpu::QActOut{hi, lo, scale, k, k / 32}; }
  void alloc(int kk, cudaStream_t s) {
    k = kk;
    const size_t n = static_cast<size_t>(4) * k;
    BENCH_CHECK(cudaMalloc(&hi, n));
    BENCH_CHECK(cudaMalloc(&lo, n));
    BENCH_CHECK(cudaMalloc(&scale, n / 32 * sizeof(float)));
    BENCH_CHECK(cudaMalloc(&f32, n * sizeof(float)));
    fill(fill_normal, f32, n, uint64_t{77} + k, 0.0f, 1.0f);
    BENCH_CHECK(cudaDeviceSynchronize());  // the fill ran on the legacy stream
    qc::gpu::QuantizeArgs qa;
    qa.x = f32;
    qa.ld_x = k;
    qa.n = k;
    qa.m = 4;
    qa.out = out();
    const GpuStatus st = qc::gpu::quantize_act(qa, s);
    if (!st.ok()) std::printf("!! quantize_act: %s\n", st.describe().c_str());
    BENCH_CHECK(cudaStreamSynchronize(s));
  }
  void release() {
    BENCH_CHECK(cudaFree(hi));
    BENCH_CHECK(cudaFree(lo));
    BENCH_CHECK(cudaFree(scale));
    BENCH_CHECK(cudaFree(f32));
  }
};

struct Result {
  std::string shape, variant, mode;
  int k, n, m;
  double us, gbs, pct;
  std::string error;
};

// The sweep of the tile engines at M = 1 (graph + PDL). Engine 2 with chunk 64 = whole rows per stage.
std::vector<TileTuning> sweep_m1(bool quick, int k) {
  std::vector<TileTuning> v;
  for (const auto& [r, u] : std::vector<std::pair<int, int>>{{1, 4}, {1, 8}, {2, 4}})
    for (int b : {0, 2, 3, 4}) v.push_back(e1(r, u, b));
  v.push_back(e2(8, 1, 8, 4, 2, 1));  // the best chunked stages of run 1, for reference
  v.push_back(e2(4, 2, 8, 2, 2, 1));
  for (int c : quick ? std::vector<int>{4} : std::vector<int>{2, 4, 8})
    for (int r : {1, 2})
      for (int st : {2, 3, 4})
        for (int g : {1, 2})
          for (int trig : {1, 2}) {
            const int ring = st * c * r * (k + k / 16);
            if (ring > 224 * 1024) continue;
            v.push_back(e2(c, r, 64, st, g, trig));
          }
  for (int w : {4, 8, 16})
    for (const auto& [r, u] : std::vector<std::pair<int, int>>{{1, 4}, {1, 8}, {2, 4}})
      for (int g : {1, 2, 3, 4}) v.push_back(e3(w, r, u, g, 2));
  return v;
}
// M = 2..4: rows per warp matter (activation reuse); a reduced sweep.
std::vector<TileTuning> sweep_mk() {
  std::vector<TileTuning> v{e1(2, 4, 2),       e1(1, 4, 4),        e1(1, 8, 0),
                            e1(1, 8, 3),       e3(8, 1, 8, 2, 2),  e3(8, 2, 4, 2, 2),
                            e3(8, 2, 4, 3, 2), e3(16, 2, 4, 1, 2), e3(4, 2, 4, 4, 2)};
  for (int c : {2, 4, 8})
    for (int r : {1, 2, 4})
      for (int st : {2, 3}) v.push_back(e2(c, r, 64, st, 1, 2));
  return v;
}
std::vector<TileTuning> sweep_gateup() {
  std::vector<TileTuning> v{TileTuning{}};
  for (int u : {4, 8})
    for (int b : {0, 2, 3, 4}) v.push_back(e1(1, u, b));
  for (int c : {2, 4, 8})
    for (int r : {1, 2})
      for (int st : {2, 3})
        for (int g : {1, 2})
          for (int trig : {1, 2}) v.push_back(e2(c, r, 64, st, g, trig));
  for (int w : {4, 8, 16})
    for (int u : {4, 8})
      for (int g : {1, 2, 3}) v.push_back(e3(w, 1, u, g, 2));
  return v;
}

const Result* find(const std::vector<Result>& v, const std::string& shape, const std::string& variant,
                   const std::string& mode, int m = 1);

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
  Acts& acts(int k);
  GpuStatus launch(const Variant& v, const Weights& w, int copy, int m, bool pdl);
  GpuStatus launch_gateup(const TileTuning& t, const Weights& w, int pair, int m, bool pdl);
  double graph_time(int launches, const std::function<GpuStatus(int)>& body, std::string& err);
  Result measure(const Shape& s, const Variant& v, const Weights& w, int m, const char* mode);
  Result finish(Result r, double t, int launches, double bytes) const;
  bool allowed(const TileTuning& t) const {
    return t.engine == 0 ? (opt_.engines & 4u) : (opt_.engines >> t.engine) & 1u;
  }
  // The launcher's choice, or engine 3's defaults when engine 2 is excluded (it may be the choice).
  TileTuning auto_t() const {
    TileTuning t;
    if (!(opt_.engines & 4u)) t.engine = 3;
    return t;
  }
  std::vector<TileTuning> filtered(std::vector<TileTuning> v) const {
    std::vector<TileTuning> out;
    for (TileTuning& t : v) out.push_back(t.engine == 0 ? auto_t() : t);
    v.clear();
    for (const TileTuning& t : out)
      if (allowed(t)) v.push_back(t);
    return v;
  }
  void shape_m1(const Shape& s);
  void gateup_section();
  void token_section(int m, bool main);
  void mscale_section();
  void variants_section();
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
  std::vector<Result> results_, sweep_, mscale_, gateup_, token_;
  std::map<std::string, TileTuning> best_;  // shape -> best schedule at M = 1 (graph + PDL)
  std::map<std::string, double> best_us_;   // shape -> its time
  TileTuning best_gateup_{};                // best fused gate+up schedule
  std::map<int, Acts> acts_;                // by K
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
  size_t bytes = size_t{8} << 30;
  void* buf = nullptr;
  while (cudaMalloc(&buf, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    bytes /= 2;
    if (bytes < (size_t{1} << 30)) {
      std::printf("!! could not allocate 1 GiB for the read ceiling\n");
      return;
    }
  }
  int* sink = nullptr;
  BENCH_CHECK(cudaMalloc(&sink, sizeof(int)));
  fill(fill_bytes, static_cast<uint32_t*>(buf), bytes / 4, uint64_t{1});
  BENCH_CHECK(cudaDeviceSynchronize());
  const int reps = opt_.quick ? 5 : 10;
  for (int bps : {2, 4, 8, 16}) {
    const int grid = bps * prop_.multiProcessorCount;
    const double t = time_median(stream_, reps, [&] {
      const GpuStatus st = qc::gpu::read_stream({buf, bytes, grid, sink}, stream_);
      if (!st.ok()) std::printf("!! read_stream: %s\n", st.describe().c_str());
    });
    const double gbs = bytes / t / 1e9;
    read_runs_.push_back({bps, gbs});
    ceiling_gbs_ = std::max(ceiling_gbs_, gbs);
    std::printf(
        "read ceiling: %2d blocks x 512 threads per SM: %7.0f GB/s (%.3f ms for %.1f GiB, median of %d)\n",
        bps, gbs, t * 1e3, bytes / 1073741824.0, reps);
  }
  const size_t half = bytes / 2;
  const double t = time_median(stream_, reps, [&] {
    BENCH_CHECK(
        cudaMemcpyAsync(static_cast<char*>(buf) + half, buf, half, cudaMemcpyDeviceToDevice, stream_));
  });
  copy_gbs_ = 2.0 * half / t / 1e9;
  std::printf("device-to-device copy of %.1f GiB: %.0f GB/s counting read + write (median of %d)\n",
              half / 1073741824.0, copy_gbs_, reps);
  BENCH_CHECK(cudaFree(sink));
  BENCH_CHECK(cudaFree(buf));
}

Acts& Bench::acts(int k) {
  auto it = acts_.find(k);
  if (it != acts_.end()) return it->second;
  Acts& a = acts_[k];
  a.alloc(k, stream_);
  return a;
}

GpuStatus Bench::launch(const Variant& v, const Weights& w, int copy, int m, bool pdl) {
  const Acts& x = acts(w.k);
  qc::gpu::GemvQ8Args a;
  a.w = w.copy(copy);
  a.x = x.in();
  a.x_f32 = x.f32;
  a.ld_x_f32 = x.k;
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

// Fused gate+up over copies (2i, 2i+1), writing the quantised input of the down projection.
GpuStatus Bench::launch_gateup(const TileTuning& t, const Weights& w, int pair, int m, bool pdl) {
  const Acts& x = acts(w.k);
  const Acts& out = acts(w.n);
  qc::gpu::GemvQ8GateUpArgs ga;
  ga.gate = w.copy(2 * pair);
  ga.up = w.copy(2 * pair + 1);
  ga.x = x.in();
  ga.out_q = out.out();
  ga.m = m;
  ga.tile = t;
  ga.pdl = pdl;
  return qc::gpu::gemv_q8_gateup(ga, stream_);
}

// Captures `launches` calls of body(i) in a graph and returns the median replay time (s), or < 0 on error.
double Bench::graph_time(int launches, const std::function<GpuStatus(int)>& body, std::string& err) {
  return qc::bench::graph_time(stream_, opt_.quick ? 5 : 9, launches, body, err);
}

Result Bench::finish(Result r, double t, int launches, double bytes) const {
  r.us = t / launches * 1e6;
  r.gbs = bytes / (t / launches) / 1e9;
  r.pct = ceiling_gbs_ > 0 ? 100.0 * r.gbs / ceiling_gbs_ : 0.0;
  return r;
}

// mode: "events" (L plain launches between two events), "graph" or "graph_pdl" (L launches captured once,
// the graph replayed). L rotates over the weight copies; a trial lasts >= ~1.5 ms.
Result Bench::measure(const Shape& s, const Variant& v, const Weights& w, int m, const char* mode) {
  Result r{s.name, v.label, mode, s.k, s.n, m, 0, 0, 0, {}};
  const double est_s = w.bytes() / 3.0e12;  // a pessimistic launch time
  const int L = std::clamp(static_cast<int>(std::ceil(1.5e-3 / est_s)), 4, 256);
  const bool pdl = std::strcmp(mode, "graph_pdl") == 0;
  double t = 0.0;
  if (std::strcmp(mode, "events") == 0) {
    const GpuStatus st = launch(v, w, 0, m, false);
    const cudaError_t e = st.ok() ? cudaStreamSynchronize(stream_) : cudaSuccess;
    if (!st.ok() || e != cudaSuccess) {
      r.error = st.ok() ? cudaGetErrorString(e) : st.describe();
      (void)cudaGetLastError();
      return r;
    }
    t = time_median(stream_, opt_.quick ? 5 : 9, [&] {
      for (int i = 0; i < L; ++i) (void)launch(v, w, i, m, false);
    });
  } else {
    t = graph_time(
        L, [&](int i) { return launch(v, w, i, m, pdl); }, r.error);
    if (t < 0) return r;
  }
  return finish(r, t, L, w.bytes());
}

void print_result(const char* prefix, const Result& r) {
  if (r.error.empty())
    std::printf("  %s%-26s %-9s M=%d %9.2f us %7.0f GB/s %5.1f%%\n", prefix, r.variant.c_str(),
                r.mode.c_str(), r.m, r.us, r.gbs, r.pct);
  else
    std::printf("  %s%-26s %-9s M=%d ERROR %s\n", prefix, r.variant.c_str(), r.mode.c_str(), r.m,
                r.error.c_str());
}

void Bench::shape_m1(const Shape& s) {
  Weights w;
  w.alloc(s.k, s.n, 256e6);
  std::printf("\n== %s: K=%d -> N=%d, %.1f MB of weights, %d copies rotated ==\n", s.name, s.k, s.n,
              w.bytes() / 1e6, w.copies);
  const std::vector<Variant> seeds = {{"h", GemvVariant::kH},
                                      {"hl", GemvVariant::kHL},
                                      {"hu", GemvVariant::kHU},
                                      {"hlu4", GemvVariant::kHLU4},
                                      {"h2", GemvVariant::kH2},
                                      {"hl2", GemvVariant::kHL2},
                                      {"sk4", GemvVariant::kSplitK, {}, 4},
                                      {"deq", GemvVariant::kDeq}};
  for (const Variant& v : seeds) {
    if (out_of_time(v.label.c_str())) break;
    results_.push_back(measure(s, v, w, 1, "graph_pdl"));
    print_result("", results_.back());
  }
  for (const Variant& v :
       {Variant{"tile", GemvVariant::kTile, auto_t()}, Variant{"tile_h", GemvVariant::kTileH, auto_t()}})
    for (const char* mode : {"events", "graph", "graph_pdl"}) {
      if (out_of_time(v.label.c_str())) break;
      results_.push_back(measure(s, v, w, 1, mode));
      print_result("", results_.back());
    }
  // The sweep (hl, graph + PDL).
  std::map<int, std::pair<double, TileTuning>> best;  // engine -> (us, schedule)
  for (const TileTuning& t : filtered(sweep_m1(opt_.quick, s.k))) {
    if (out_of_time("sweep")) break;
    Result r = measure(s, tile_variant(t), w, 1, "graph_pdl");
    print_result("sweep ", r);
    if (r.error.empty() && (!best.count(t.engine) || r.us < best[t.engine].first)) best[t.engine] = {r.us, t};
    sweep_.push_back(r);
  }
  // Explicit grid sizes around one and two blocks per SM for the best of engines 2 and 3: is an exactly even
  // split over fewer blocks than SMs (balanced_grid's choice) better than one block on every SM?
  const int sms = prop_.multiProcessorCount;
  for (int engine : {2, 3}) {
    if (!best.count(engine)) continue;
    for (int g : {sms - 4, sms, sms + 4, 2 * sms - 8, 2 * sms}) {
      if (out_of_time("grid")) break;
      TileTuning t = best[engine].second;
      t.grid = g;
      Result r = measure(s, tile_variant(t), w, 1, "graph_pdl");
      print_result("grid ", r);
      sweep_.push_back(r);
      if (r.error.empty() && r.us < best[engine].first) best[engine] = {r.us, t};
    }
  }
  // Each engine's best, also as plain launches and without PDL (the boundary overlap PDL buys).
  for (const auto& [engine, bt] : best) {
    for (const char* mode : {"events", "graph"}) {
      if (out_of_time("best modes")) break;
      Result r = measure(s, tile_variant(bt.second), w, 1, mode);
      print_result("best ", r);
      results_.push_back(r);
    }
    if (!best_us_.count(s.name) || bt.first < best_us_[s.name]) {
      best_us_[s.name] = bt.first;
      best_[s.name] = bt.second;
    }
  }
  w.release();
}

void Bench::gateup_section() {
  const Shape& s = shape_by_name("ffn gate/up");
  Weights w;
  w.alloc(s.k, s.n, 512e6);
  std::printf("\n== fused gate+up (+ quantised output) vs two launches: K=%d -> 2 x N=%d, %d copies ==\n",
              s.k, s.n, w.copies);
  const int L = 16;
  const double bytes = 2.0 * w.bytes();
  auto record = [&](const std::string& label, double t, const std::string& err) {
    Result r{s.name, label, "graph_pdl", s.k, 2 * s.n, 1, 0, 0, 0, err};
    if (t > 0) r = finish(r, t, L, bytes);
    print_result("", r);
    gateup_.push_back(r);
    return r;
  };
  const TileTuning best = best_.count(s.name) ? best_[s.name] : auto_t();
  for (const TileTuning& t : {best, auto_t()}) {
    std::string err;
    const Variant v = tile_variant(t);
    const double tt = graph_time(
        2 * L, [&](int i) { return launch(v, w, i, 1, true); }, err);
    record("2 launches " + v.label, tt, err);
  }
  double best_us = 1e30;
  for (const TileTuning& t : filtered(sweep_gateup())) {
    if (out_of_time("gate+up sweep")) break;
    std::string err;
    const double tt = graph_time(
        L, [&](int i) { return launch_gateup(t, w, i, 1, true); }, err);
    const Result r = record("fused " + tuning_label(t), tt, err);
    if (r.error.empty() && r.us < best_us) {
      best_us = r.us;
      best_gateup_ = t;
    }
  }
  w.release();
}

// Every Q8_0 GEMV of one 27B decode step, distinct weights, in one graph with PDL.
void Bench::token_section(int m, bool main) {
  struct Mat {
    const Shape* s;
    qc::gpu::Q8Weights w;
  };
  std::vector<Mat> mats;
  size_t qtot = 0, dtot = 0;
  std::vector<const Shape*> order;
  for (int l = 0; l < 64; ++l) {
    const bool attn = l % 4 == 3;
    order.push_back(&shape_by_name(attn ? "attn q+gate" : "gdn qkv+z"));
    order.push_back(&shape_by_name("attn/gdn out"));
    order.push_back(&shape_by_name("ffn gate/up"));  // gate
    order.push_back(&shape_by_name("ffn gate/up"));  // up
    order.push_back(&shape_by_name("ffn down"));
  }
  order.push_back(&shape_by_name("lm_head"));
  for (const Shape* s : order) {
    qtot += qc::gpu::q8_split_q_bytes(s->n, s->k);
    dtot += qc::gpu::q8_split_d_count(s->n, s->k);
  }
  int8_t* q = nullptr;
  uint16_t* d = nullptr;
  if (cudaMalloc(&q, qtot) != cudaSuccess || cudaMalloc(&d, dtot * 2) != cudaSuccess) {
    (void)cudaGetLastError();
    std::printf("!! token: could not allocate %.1f GB\n", (qtot + 2.0 * dtot) / 1e9);
    if (q) cudaFree(q);
    return;
  }
  fill(fill_int8, q, qtot, uint64_t{31337});
  fill(fill_scales, d, dtot, uint64_t{4242}, 1e-3f, 2e-2f);
  BENCH_CHECK(cudaDeviceSynchronize());
  size_t qo = 0, dof = 0;
  double bytes = 0;
  for (const Shape* s : order) {
    mats.push_back({s, qc::gpu::Q8Weights{q + qo, d + dof, s->n, s->k, qc::gpu::q8_row_stride(s->k)}});
    qo += qc::gpu::q8_split_q_bytes(s->n, s->k);
    dof += qc::gpu::q8_split_d_count(s->n, s->k);
    bytes += q8_bytes(s->n, s->k);
  }
  std::printf("\n== token, M=%d: %zu Q8_0 matrices, %.2f GB, one graph with PDL ==\n", m, mats.size(),
              bytes / 1e9);

  // tuning(s): schedule for a plain GEMV of shape s; gateup: fused schedule, or engine -1 = two launches.
  auto run = [&](const std::string& label, GemvVariant variant,
                 const std::function<TileTuning(const Shape&)>& tuning, bool fused, const TileTuning& gu) {
    if (out_of_time("token")) return;
    int launches = 0;
    auto body = [&](int) -> GpuStatus {
      launches = 0;
      for (size_t i = 0; i < mats.size(); ++i) {
        const Mat& mt = mats[i];
        const bool gate = std::strcmp(mt.s->name, "ffn gate/up") == 0 && i + 1 < mats.size() &&
                          std::strcmp(mats[i + 1].s->name, "ffn gate/up") == 0;
        if (gate && fused) {
          qc::gpu::GemvQ8GateUpArgs ga;
          ga.gate = mt.w;
          ga.up = mats[i + 1].w;
          ga.x = acts(mt.s->k).in();
          ga.out_q = acts(mt.s->n).out();
          ga.m = m;
          ga.tile = gu;
          ga.pdl = true;
          if (const GpuStatus st = qc::gpu::gemv_q8_gateup(ga, stream_); !st.ok()) return st;
          ++launches;
          ++i;
          continue;
        }
        qc::gpu::GemvQ8Args a;
        a.w = mt.w;
        a.x = acts(mt.s->k).in();
        a.y = y_;
        a.ld_y = mt.s->n;
        a.m = m;
        a.variant = variant;
        a.tile = tuning(*mt.s);
        a.pdl = true;
        if (const GpuStatus st = qc::gpu::gemv_q8(a, stream_); !st.ok()) return st;
        ++launches;
      }
      return GpuStatus::success();
    };
    std::string err;
    const double t = graph_time(1, body, err);
    Result r{"token", label, "graph_pdl", 0, static_cast<int>(mats.size()), m, 0, 0, 0, err};
    if (t > 0) r = finish(r, t, 1, bytes);
    if (r.error.empty())
      std::printf(
          "  token M=%d %-44s %8.3f ms %7.0f GB/s %5.1f%% of the read ceiling, %d launches -> %.0f tok/s "
          "(GEMVs only)\n",
          m, label.c_str(), r.us / 1e3, r.gbs, r.pct, launches, 1e6 / r.us);
    else
      std::printf("  token M=%d %-44s ERROR %s\n", m, label.c_str(), r.error.c_str());
    token_.push_back(r);
  };
  const auto autot = [&](const Shape&) { return auto_t(); };
  run("auto, fused gate+up", GemvVariant::kTile, autot, true, auto_t());
  if (main) {
    run("auto, gate and up separate", GemvVariant::kTile, autot, false, auto_t());
    run("auto tile_h, fused gate+up", GemvVariant::kTileH, autot, true, auto_t());
    const auto bestt = [&](const Shape& s) { return best_.count(s.name) ? best_[s.name] : auto_t(); };
    run("sweep best per shape, fused best", GemvVariant::kTile, bestt, true, best_gateup_);
    run("sweep best per shape, separate", GemvVariant::kTile, bestt, false, auto_t());
    run("seed hu, separate", GemvVariant::kHU, autot, false, auto_t());
  }
  BENCH_CHECK(cudaFree(q));
  BENCH_CHECK(cudaFree(d));
}

void Bench::mscale_section() {
  for (const Shape& s : kShapes) {
    if (out_of_time("M scaling")) break;
    Weights w;
    w.alloc(s.k, s.n, 256e6);
    std::printf("\n== M scaling, %s ==\n", s.name);
    for (int m = 2; m <= 4 && !out_of_time("M scaling"); ++m) {
      std::vector<TileTuning> list = filtered(sweep_mk());
      list.insert(list.begin(), auto_t());
      if (best_.count(s.name)) list.insert(list.begin() + 1, best_[s.name]);
      for (const TileTuning& t : list) {
        if (out_of_time("M scaling")) break;
        Result r = measure(s, tile_variant(t), w, m, "graph_pdl");
        print_result("", r);
        mscale_.push_back(r);
      }
    }
    w.release();
  }
}

// --variants: each named variant at M = 1..4 on every shape (graph + PDL), then one table. The tensor-core
// variants with each ring length instead ("mma/4", "mma/8": TileTuning::unroll, gemv_q8_mma.cu).
void Bench::variants_section() {
  std::vector<Variant> list;
  for (GemvVariant v : opt_.variants) {
    const std::string name = qc::gemv_variant_name(v);
    if (v != GemvVariant::kMma && v != GemvVariant::kMmaH) {
      list.push_back(Variant{name, v, qc::gemv_streaming(v) ? auto_t() : TileTuning{}});
      continue;
    }
    for (int ring : {4, 8}) {
      TileTuning t;
      t.unroll = ring;
      list.push_back(Variant{name + "/" + std::to_string(ring), v, t});
    }
  }
  std::vector<Result> rs;
  for (const Shape& s : kShapes) {
    if (out_of_time("variants")) break;
    Weights w;
    w.alloc(s.k, s.n, 256e6);
    std::printf("\n== %s: K=%d -> N=%d ==\n", s.name, s.k, s.n);
    for (const Variant& var : list)
      for (int m = 1; m <= 4; ++m) {
        rs.push_back(measure(s, var, w, m, "graph_pdl"));
        print_result("", rs.back());
      }
    w.release();
  }
  std::printf("\n==== variants: %% of the read ceiling (%.0f GB/s) at M = 1 / 2 / 3 / 4, and M's time over M = 1's\n",
              ceiling_gbs_);
  for (const Shape& s : kShapes)
    for (const Variant& var : list) {
      const Result* r1 = find(rs, s.name, var.label, "graph_pdl", 1);
      if (!r1) continue;
      std::printf("%-14s %-9s %7.2f us", s.name, var.label.c_str(), r1->us);
      for (int m = 1; m <= 4; ++m) {
        const Result* r = find(rs, s.name, var.label, "graph_pdl", m);
        if (r) std::printf("  M=%d %3.0f%% %.2fx", m, r->pct, r->us / r1->us);
      }
      std::printf("\n");
    }
  mscale_ = rs;
}

const Result* find(const std::vector<Result>& v, const std::string& shape, const std::string& variant,
                   const std::string& mode, int m) {
  for (const Result& r : v)
    if (r.shape == shape && r.variant == variant && r.mode == mode && r.m == m && r.error.empty()) return &r;
  return nullptr;
}

void Bench::print_table() {
  std::printf(
      "\n==== summary: %s, read ceiling %.0f GB/s, copy %.0f GB/s; GB/s (%% of read ceiling), M=1, "
      "graph+PDL ====\n",
      prop_.name, ceiling_gbs_, copy_gbs_);
  std::printf("%-13s %12s %12s %12s %12s %12s %12s  %s\n", "shape", "hu", "h2", "tile auto", "best e1",
              "best e2", "best e3", "best schedule");
  double token_s = 0.0, token_bytes = 0.0;
  bool complete = true;
  for (const Shape& s : kShapes) {
    std::printf("%-13s", s.name);
    for (const char* c : {"hu", "h2", "tile"}) {
      const Result* r = find(results_, s.name, c, "graph_pdl");
      if (r)
        std::printf(" %6.0f (%3.0f%%)", r->gbs, r->pct);
      else
        std::printf(" %12s", "-");
    }
    const Result* best = nullptr;
    for (const char* e : {"e1", "e2", "e3"}) {
      const Result* b = nullptr;
      for (const Result& r : sweep_)
        if (r.shape == s.name && r.m == 1 && r.error.empty() && r.variant.rfind(e, 0) == 0 &&
            (!b || r.us < b->us))
          b = &r;
      if (b)
        std::printf(" %6.0f (%3.0f%%)", b->gbs, b->pct);
      else
        std::printf(" %12s", "-");
      if (b && (!best || b->us < best->us)) best = b;
    }
    if (best) {
      std::printf("  %s\n", best->variant.c_str());
      token_s += s.per_token * best->us * 1e-6;
      token_bytes += s.per_token * q8_bytes(s.n, s.k);
    } else {
      std::printf("\n");
      complete = false;
    }
  }
  const Result* fb = nullptr;
  for (const Result& r : gateup_)
    if (r.error.empty() && r.variant.rfind("fused", 0) == 0 && (!fb || r.us < fb->us)) fb = &r;
  for (const Result& r : gateup_)
    if (r.error.empty() && (r.variant.rfind("2 launches", 0) == 0 || r.variant == "fused auto"))
      std::printf("gate+up pair: %-36s %8.2f us %6.0f GB/s (%3.0f%%)\n", r.variant.c_str(), r.us, r.gbs,
                  r.pct);
  if (fb)
    std::printf("gate+up pair: best %-31s %8.2f us %6.0f GB/s (%3.0f%%)\n", fb->variant.c_str(), fb->us,
                fb->gbs, fb->pct);
  if (complete && token_s > 0)
    std::printf(
        "sum of per-shape bests x launches per token (isolated shapes): %.3f ms for %.2f GB = %.0f%% of "
        "the read ceiling\n",
        token_s * 1e3, token_bytes / 1e9, 100.0 * token_bytes / token_s / 1e9 / ceiling_gbs_);
  for (const Result& r : token_)
    if (r.error.empty())
      std::printf(
          "token M=%d %-40s %8.3f ms  %5.0f GB/s (%4.1f%% of the read ceiling) -> %.0f tok/s GEMV-only\n",
          r.m, r.variant.c_str(), r.us / 1e3, r.gbs, r.pct, 1e6 / r.us);
  // M scaling: the auto choice and the best point per M, relative to the best M = 1.
  for (const Shape& s : kShapes) {
    if (!best_us_.count(s.name)) continue;
    std::printf("M scaling %-13s", s.name);
    for (int m = 2; m <= 4; ++m) {
      const Result* a = find(mscale_, s.name, "auto", "graph_pdl", m);
      const Result* b = nullptr;
      for (const Result& r : mscale_)
        if (r.shape == s.name && r.m == m && r.error.empty() && (!b || r.us < b->us)) b = &r;
      if (a && b)
        std::printf("  M=%d auto %.2fx best %.2fx (%s)", m, a->us / best_us_[s.name],
                    b->us / best_us_[s.name], b->variant.c_str());
    }
    std::printf("\n");
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
               "\"sm_clock_mhz\": %.0f, \"mem_clock_mhz\": %.0f, \"bus_bits\": %d},\n",
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
  dump("sweep", sweep_, false);
  dump("gate_up", gateup_, false);
  dump("token", token_, false);
  dump("m_scaling", mscale_, false);
  std::fprintf(f, "  \"seconds\": %.1f\n}\n", elapsed());
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
  if (!opt_.blocks.empty()) {
    (void)block_section(opt_.blocks, stream_, ceiling_gbs_, opt_.quick, opt_.block_forms, opt_.block_shapes);
    return 0;
  }
  BENCH_CHECK(cudaMalloc(&y_, static_cast<size_t>(4) * 248320 * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&scratch_, qc::gpu::gemv_q8_split_scratch_floats(16, 4, 248320) * sizeof(float)));
  if (!opt_.variants.empty()) {
    variants_section();
    write_json();
    return 0;
  }
  for (const Shape& s : kShapes) {
    if (out_of_time(s.name)) break;
    shape_m1(s);
  }
  if (!out_of_time("gate+up")) gateup_section();
  token_section(1, true);
  mscale_section();
  for (int m : {2, 4}) token_section(m, false);
  print_table();
  write_json();
  for (auto& [k, a] : acts_) a.release();
  BENCH_CHECK(cudaFree(y_));
  BENCH_CHECK(cudaFree(scratch_));
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
    else if (a == "--engines" && i + 1 < argc) {
      o.engines = 0;
      for (const char* c = argv[++i]; *c; ++c)
        if (*c >= '1' && *c <= '3') o.engines |= 1u << (*c - '0');
    } else if (a == "--blocks" && i + 1 < argc) {
      const std::string list = std::string(",") + argv[++i] + ",";
      for (qc::gpu::BlockType t : {qc::gpu::BlockType::kQ4_0, qc::gpu::BlockType::kQ5_0, qc::gpu::BlockType::kQ4_K,
                                   qc::gpu::BlockType::kQ5_K, qc::gpu::BlockType::kQ6_K}) {
        std::string name = qc::gpu::block_type_name(t);
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (list.find("," + name + ",") != std::string::npos) o.blocks.push_back(t);
      }
      if (o.blocks.empty()) {
        std::printf("--blocks: expected a list of q4_0, q5_0, q4_k, q5_k, q6_k, got %s\n", argv[i]);
        return 1;
      }
    } else if (a == "--variants" && i + 1 < argc) {
      const std::string list = argv[++i];
      size_t at = 0;
      while (at <= list.size()) {
        const size_t end = std::min(list.find(',', at), list.size());
        const auto v = qc::parse_gemv_variant(list.substr(at, end - at));
        if (!v) {
          std::printf("--variants: expected a list of %s, got %s\n", qc::gemv_variant_list().c_str(), argv[i]);
          return 1;
        }
        o.variants.push_back(*v);
        at = end + 1;
      }
    } else if (a == "--block-forms" && i + 1 < argc) {
      o.block_forms = argv[++i];
    } else if (a == "--block-shapes" && i + 1 < argc) {
      o.block_shapes = argv[++i];
    } else {
      std::printf(
          "usage: %s [--json PATH] [--budget SECONDS] [--quick] [--engines 1,2,3] [--blocks q4_k,q6_k,...]\n"
          "       [--block-forms hl1,hl1ps,...] [--block-shapes gateup,down,qkvz,out,qgate,lmhead]\n"
          "       [--variants tile,mma,...]\n",
          argv[0]);
      return a == "--help" || a == "-h" ? 0 : 1;
    }
  }
  Bench b(o);
  return b.run();
}
