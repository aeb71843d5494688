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

#include "gemv_bench.cuh"
#include "gemv_block_section.cuh"
#include "gemv_q8_sections.cuh"

namespace qc::gemv_bench {

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

}  // namespace qc::gemv_bench

using qc::gemv_bench::Bench;
using qc::gemv_bench::Options;

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
      for (qc::gpu::BlockType t :
           {qc::gpu::BlockType::kQ4_0, qc::gpu::BlockType::kQ5_0, qc::gpu::BlockType::kQ4_K,
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
          std::printf("--variants: expected a list of %s, got %s\n", qc::gemv_variant_list().c_str(),
                      argv[i]);
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
