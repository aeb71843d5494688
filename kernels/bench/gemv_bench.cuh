// qwenchat-gemv-bench's shared declarations: options, the 27B shapes, weights and activations on the
// device, one measurement's result, and the Bench driver, defined in gemv_bench.cu (set-up, the read ceiling,
// measurement, tables, JSON) and gemv_q8_sections.cuh (the sections that measure shapes). One translation
// unit: the bench utilities (bench_util.cuh) define kernels and functions, so each is included once.
#pragma once

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include "block_quant.h"
#include "gemv_bench_util.cuh"
#include "gemv_q8/gemv_q8.h"
#include "norm_quant.h"

namespace qc::gemv_bench {

using namespace qc::bench;
using qc::GemvVariant;
using qc::gpu::GpuStatus;
using qc::gpu::TileTuning;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string json;
  double budget_s = 200.0;
  bool quick = false;
  unsigned engines = 0xe;                  // bit e: engine e may run
  std::vector<qc::gpu::BlockType> blocks;  // --blocks: only the read ceiling and gemv_block on these types
  std::string block_forms, block_shapes;   // --block-forms, --block-shapes: subsets of the gemv_block sweep
  std::vector<GemvVariant> variants;       // --variants: only these at M = 1..4 (variants_section)
};

struct Shape {
  const char* name;
  int k, n;
  int per_token;  // launches of this shape per 27B token (64 layers: 48 GDN + 16 attention)
};
inline const Shape kShapes[] = {
    {"ffn gate/up", 5120, 17408, 128}, {"ffn down", 17408, 5120, 64},    {"gdn qkv+z", 5120, 16384, 48},
    {"attn/gdn out", 6144, 5120, 64},  {"attn q+gate", 5120, 12288, 16}, {"lm_head", 5120, 248320, 1},
};
inline const Shape& shape_by_name(const char* name) {
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
inline Variant tile_variant(const TileTuning& t) {
  return Variant{tuning_label(t), GemvVariant::kTile, t};
}

using Weights = Q8Copies;  // bench_util.cuh

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
inline std::vector<TileTuning> sweep_m1(bool quick, int k) {
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
inline std::vector<TileTuning> sweep_mk() {
  std::vector<TileTuning> v{e1(2, 4, 2),       e1(1, 4, 4),        e1(1, 8, 0),
                            e1(1, 8, 3),       e3(8, 1, 8, 2, 2),  e3(8, 2, 4, 2, 2),
                            e3(8, 2, 4, 3, 2), e3(16, 2, 4, 1, 2), e3(4, 2, 4, 4, 2)};
  for (int c : {2, 4, 8})
    for (int r : {1, 2, 4})
      for (int st : {2, 3}) v.push_back(e2(c, r, 64, st, 1, 2));
  return v;
}
inline std::vector<TileTuning> sweep_gateup() {
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

void print_result(const char* prefix, const Result& r);

}  // namespace qc::gemv_bench
