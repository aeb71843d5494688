// qwenchat-bench: whole-token decode speed of the CUDA backend against the bandwidth floor measured in the
// same run (design PERFORMANCE.md "Method").
//
//   qwenchat-bench [--preset 27b | --model FILE] [--json PATH] [--variants tile,hu,...]
//                  [--contexts 0,4096,32768] [--tokens 32] [--budget 200] [--quick] [--passes]
//                  [--prefill 512,2048,8192] [--reuse 8000,100] [--only-prefill]
//                  [--prefill-gemm auto|f16|int8] [--prefill-weights auto|resident|per-chunk] [--prefill-rows 2048]
//                  [--gdn-scan token|group|chunked|scaled] [--attention-rows 64|128]
//
// 1. Ceilings: read-only stream and device-to-device copy (kernels/bench/bench_util.cuh).
// 2. The model: a preset's real shapes with Q8_0 weights generated in GPU memory (random_weights.h), or a
//    GGUF file uploaded like the app does.
// 3. Per GEMV variant and context (KV caches and GDN states filled with random data, position set): the
//    device time of one decode step (the captured graph replayed back to back) and the time of a whole
//    forward() call as the generator sees it (token upload, graph, logits copy, synchronisation).
//    Bytes per token = weights + KV cache read; the floor = bytes / read ceiling; ratio = floor / time.
// 4. The default variant: kernel boundaries per token (kernel nodes of the graph), the per-kernel time
//    breakdown (events around every call in an eager pass), graph / PDL / fusion switched off one at a
//    time, and the MTP-style pass of M = 1..4 tokens in one weight pass, with the MTP draft step's time
//    and the projected speed-up at acceptance 0.6 / 0.7 / 0.8 (project_mtp states the model).
// 5. With --model and an MTP block: greedy generation on a few prompts without MTP and with draft
//    lengths 1..3: measured acceptance per draft position and the measured speed-up.
// 6. Prefill rate at --prefill prompt lengths and the time to first token of a message after a long
//    conversation with and without the kept state (prefill_reuse.h); where a 2048-token prompt's and
//    the message's time goes, phase by phase, with the GEMM algorithms (prefill_breakdown.h).
// A compact table comes last; --json writes everything.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_options.h"
#include "common/args.h"
#include "common/version.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_probe.h"
#include "device_fill.h"
#include "generate/generator.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "model/presets.h"
#include "model/quant_mix.h"
#include "model/qwen35_layout.h"
#include "model/synthetic.h"
#include "prefill_breakdown.h"
#include "prefill_reuse.h"
#include "random_weights.h"
#include "tokenizer/tokenizer.h"

namespace {

using qc::GemvVariant;
using qc::KernelConfig;
using qc::Result;
using qc::Status;
using qc::bench_app::Options;
using qc::cuda::CudaProbe;
using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

const char* gdn_scan_name(qc::gpu::GdnScan s) {
  switch (s) {
    case qc::gpu::GdnScan::kToken:
      return "token";
    case qc::gpu::GdnScan::kGroup:
      return "group";
    case qc::gpu::GdnScan::kChunked:
      return "chunked";
    case qc::gpu::GdnScan::kScaled:
      return "scaled";
  }
  return "?";
}

// The config reader applied to the metadata a preset's file would carry (a tensor-less GGUF in /tmp).
Result<qc::ModelConfig> preset_config(const qc::ModelShape& shape) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("qwenchat-bench-" + std::to_string(::getpid()) + ".gguf"))
          .string();
  qc::gguf::Writer w;
  for (qc::gguf::KeyValue& kv : qc::qwen35_metadata(shape, qc::DType::kQ8_0))
    w.set(std::move(kv.key), std::move(kv.value));
  QC_TRY(w.begin(path));
  QC_TRY(w.finish());
  auto file = qc::gguf::File::open(path);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!file.ok()) return file.error();
  QC_ASSIGN(qc::ModelConfig c, qc::read_config(**file));
  c.n_vocab = shape.n_vocab;
  return c;
}

struct Row {
  std::string variant;
  int ctx = 0;
  int kernels = 0;
  double device_s = 0.0, forward_s = 0.0;
  double weight_bytes = 0.0, kv_bytes = 0.0, state_bytes = 0.0;
  double floor_s = 0.0;  // (weights + KV) / read ceiling
  std::string error;
};

class Bench {
 public:
  explicit Bench(Options o) : opt_(std::move(o)), t0_(Clock::now()) {}
  int run();

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  bool out_of_time(const std::string& what) {
    if (elapsed() < opt_.budget_s) return false;
    if (!budget_note_)
      std::printf("!! time budget of %.0f s reached: skipping the rest (first: %s)\n", opt_.budget_s,
                  what.c_str());
    budget_note_ = true;
    return true;
  }
  Status build_model();
  Result<double> forward_seconds(int ctx, int n);
  void measure_variants();
  // Breakdown, switches and M-token passes for one configuration (the default, then the fastest variant).
  void measure_config(const KernelConfig& base, const std::string& tag);
  void measure_passes(const std::string& label);
  GemvVariant fastest_variant() const;
  // The decode rows: every variant with every K-quant GEMV engine asked for, engine by engine.
  std::vector<std::pair<GemvVariant, qc::BlockEngine>> decode_configs() const {
    std::vector<std::pair<GemvVariant, qc::BlockEngine>> out;
    for (qc::BlockEngine e : opt_.block_engines)
      for (GemvVariant v : opt_.variants) out.emplace_back(v, e);
    return out;
  }
  static std::string row_label(GemvVariant v, qc::BlockEngine e) {
    return std::string(qc::gemv_variant_name(v)) +
           (e == qc::BlockEngine::kAuto ? "" : std::string("+") + qc::block_engine_name(e));
  }
  // Projected MTP speed-up from measured pass times (random weights make acceptance meaningless).
  json project_mtp(const std::array<double, 5>& pass_s);
  // Measured acceptance and speed-up of greedy generation with MTP on a model file that has the block.
  void measure_mtp_generation();
  void measure_mtp_generation(GemvVariant variant);
  void profile_prefill(int tokens, int after = 0);  // prefill_breakdown.h, under this run's setup
  void print_table();
  void write_json();

  Options opt_;
  Clock::time_point t0_;
  bool budget_note_ = false;
  cudaStream_t stream_ = nullptr;
  std::string device_;
  int sms_ = 0;
  qc::bench_app::CeilingResult ceil_;
  std::unique_ptr<qc::Model> file_model_;
  std::unique_ptr<qc::cuda::CudaBackend> be_;
  std::string model_desc_;
  double load_s_ = 0.0;
  std::vector<Row> rows_;
  json extra_ = json::object();
};

Status Bench::build_model() {
  const int max_ctx = *std::max_element(opt_.contexts.begin(), opt_.contexts.end());
  qc::cuda::CudaBackendOptions bo;
  bo.n_ctx = max_ctx + opt_.tokens + 64;
  for (int n : opt_.prefill.prefill) bo.n_ctx = std::max(bo.n_ctx, n + 64);
  bo.n_ctx = std::max(bo.n_ctx, opt_.prefill.history + 2 * opt_.prefill.message + 64);
  bo.max_batch = 4;
  bo.prefill_gemm = opt_.prefill_gemm;
  bo.prefill_weights = opt_.prefill_weights;
  bo.prefill_rows = opt_.prefill_rows;
  bo.gdn_scan = opt_.gdn_scan;
  bo.attention_rows = opt_.attention_rows;
  bo.attention_kv_ahead = opt_.kv_ahead;
  bo.measure_ceiling = false;  // measured here, in the same run, with more repetitions (measure_ceilings)
  bo.memory_limit = opt_.memory_limit;
  const auto t = Clock::now();
  if (!opt_.model.empty()) {
    QC_ASSIGN(file_model_, qc::Model::load(opt_.model));
    const qc::ModelConfig& c = file_model_->config();
    if (c.n_ctx_train > 0) bo.n_ctx = std::min(bo.n_ctx, c.n_ctx_train);
    bo.progress = [last = -10](uint64_t done, uint64_t total, const std::string&) mutable {
      const int pct = total ? static_cast<int>(100 * done / total) : 100;
      if (pct / 10 == last / 10) return;
      last = pct;
      std::printf("  upload %3d%%\n", pct);
    };
    QC_ASSIGN(be_, qc::cuda::CudaBackend::create(c, file_model_->weights(), bo));
    model_desc_ = opt_.model + ": " + c.summary();
  } else {
    QC_ASSIGN(const qc::ModelShape shape, qc::preset_shape(opt_.preset));
    QC_ASSIGN(const qc::ModelConfig c, preset_config(shape));
    std::map<std::string, qc::DType> per_tensor;
    if (opt_.mix) {
      const std::vector<qc::Qwen35Tensor> layout = qc::qwen35_tensor_layout(shape);
      QC_ASSIGN(const std::vector<qc::DType> types, qc::qwen35_tensor_types(shape, layout, *opt_.mix));
      for (size_t i = 0; i < layout.size(); ++i) per_tensor[layout[i].name] = types[i];
    }
    const qc::ModelWeights described = qc::cuda::describe_generated_weights(c, opt_.weights, shape.tied_embeddings,
                                                                            opt_.mix ? &per_tensor : nullptr);
    qc::bench_app::RandomWeights source(20261202);
    QC_ASSIGN(be_, CudaProbe::create_generated(c, described, source, bo));
    model_desc_ = "preset " + opt_.preset + " (" +
                  (opt_.mix ? std::string(qc::quant_mix_name(*opt_.mix)) : std::string(qc::dtype_name(opt_.weights))) +
                  " weights generated on the GPU): " + c.summary();
  }
  load_s_ = std::chrono::duration<double>(Clock::now() - t).count();
  QC_TRY(qc::bench_app::fill_state_random(CudaProbe::state_regions(*be_), 7, stream_));
  return Status::success();
}

// Seconds per token of n single-token forward() calls from position ctx (what the generator pays).
Result<double> Bench::forward_seconds(int ctx, int n) {
  QC_TRY(CudaProbe::set_position_unchecked(*be_, ctx));
  const int V = be_->config().n_vocab;
  std::vector<int32_t> tok(1);
  tok[0] = 11 % V;
  if (auto w = be_->forward(tok, ctx); !w.ok()) return w.error();  // warm-up
  QC_TRY(CudaProbe::set_position_unchecked(*be_, ctx));
  const auto t = Clock::now();
  for (int i = 0; i < n; ++i) {
    tok[0] = (1 + 7919 * i) % V;
    auto r = be_->forward(tok, ctx + i);
    if (!r.ok()) return r.error();
  }
  return std::chrono::duration<double>(Clock::now() - t).count() / n;
}

void Bench::measure_variants() {
  const double W = static_cast<double>(CudaProbe::weight_bytes_per_token(*be_));
  const double S = static_cast<double>(CudaProbe::recurrent_bytes_per_step(*be_));
  std::printf(
      "\n== decode, one token per step: device time (graph replayed back to back) and forward() time%s ==\n",
      opt_.kv_ahead ? (", attention K/V batch " + std::to_string(opt_.kv_ahead)).c_str() : "");
  std::printf("%-14s %6s %7s %10s %10s %9s %9s %8s %9s %9s\n", "variant", "ctx", "kernels", "device ms",
              "fwd ms", "tok/s", "dev tok/s", "GB/s", "floor", "% floor");
  for (const auto& [v, engine] : decode_configs()) {
    KernelConfig k;
    k.gemv = v;
    k.block_engine = engine;
    const std::string label = row_label(v, engine);
    if (!be_->set_kernel_config(k).ok()) continue;
    int nodes = 0;
    if (CudaProbe::set_position_unchecked(*be_, 0).ok()) {
      auto n = CudaProbe::graph_kernel_nodes(*be_, 1);
      nodes = n.ok() ? *n : -1;
    }
    for (int ctx : opt_.contexts) {
      if (out_of_time(label + " ctx " + std::to_string(ctx))) return;
      Row r;
      r.variant = label;
      r.ctx = ctx;
      r.kernels = nodes;
      r.weight_bytes = W;
      r.kv_bytes = static_cast<double>(CudaProbe::kv_bytes_per_token(*be_, ctx + opt_.tokens / 2));
      r.state_bytes = S;
      r.floor_s = (r.weight_bytes + r.kv_bytes) / (ceil_.read_gbs * 1e9);
      Status st = CudaProbe::set_position_unchecked(*be_, ctx);
      if (st.ok()) {
        auto d = CudaProbe::time_steps(*be_, 1, opt_.tokens, opt_.quick ? 1 : 3);
        if (d.ok())
          r.device_s = *d;
        else
          r.error = d.error().describe();
      } else {
        r.error = st.error().describe();
      }
      if (r.error.empty()) {
        auto f = forward_seconds(ctx, opt_.tokens);
        if (f.ok())
          r.forward_s = *f;
        else
          r.error = f.error().describe();
      }
      if (r.error.empty())
        std::printf("%-14s %6d %7d %10.3f %10.3f %9.1f %9.1f %8.0f %7.3fms %8.1f%%\n", r.variant.c_str(), ctx,
                    r.kernels, r.device_s * 1e3, r.forward_s * 1e3, 1.0 / r.forward_s, 1.0 / r.device_s,
                    (r.weight_bytes + r.kv_bytes) / r.device_s / 1e9, r.floor_s * 1e3,
                    100.0 * r.floor_s / r.device_s);
      else
        std::printf("%-14s %6d ERROR %s\n", r.variant.c_str(), ctx, r.error.c_str());
      rows_.push_back(r);
    }
    if (opt_.passes) measure_passes(label);
  }
}

// --passes: the M-token passes of the configuration set now (device time, graph replayed), at the first
// context, as multiples of its one-token step; M >= 2 as the generator's verification pass runs them
// (forward_speculative, keeping the states of every position), then the MTP projection from those.
void Bench::measure_passes(const std::string& label) {
  const int ctx = opt_.contexts.front();
  std::array<double, 5> t{};
  std::printf("%-14s %6d passes:", label.c_str(), ctx);
  for (int m = 1; m <= 4; ++m) {
    if (out_of_time(label + " passes") || !CudaProbe::set_position_unchecked(*be_, ctx).ok()) break;
    const bool verify = m > 1 && be_->max_speculative_tokens() >= m;
    auto d = CudaProbe::time_steps(*be_, m, opt_.tokens, opt_.quick ? 1 : 3, verify);
    if (!d.ok()) {
      std::printf(" M=%d ERROR %s", m, d.error().describe().c_str());
      break;
    }
    t[static_cast<size_t>(m)] = *d;
    std::printf(" M=%d %.3f ms (%.2fx)", m, *d * 1e3, *d / t[1]);
  }
  std::printf("\n");
  if (t[2] > 0.0)
    extra_["passes"][label] = {{"ctx", ctx},
                               {"ms", {t[1] * 1e3, t[2] * 1e3, t[3] * 1e3, t[4] * 1e3}},
                               {"mtp_projection", project_mtp(t)}};
}

GemvVariant Bench::fastest_variant() const {
  GemvVariant best = KernelConfig{}.gemv;
  double best_s = 1e30;
  for (const Row& r : rows_) {
    if (!r.error.empty() || r.ctx != opt_.contexts.front() || r.device_s <= 0.0 || r.device_s >= best_s)
      continue;
    const auto v = qc::parse_gemv_variant(r.variant);  // rows of another engine ("tile+segments") are not
    if (!v) continue;                                   // a variant of the default engine
    best_s = r.device_s;
    best = *v;
  }
  return best;
}

void Bench::measure_config(const KernelConfig& base, const std::string& tag) {
  const std::string vname = qc::gemv_variant_name(base.gemv);
  json out = json::object();
  out["variant"] = vname;
  // Per-kernel breakdown of one eager step (events around every call).
  json breakdown = json::array();
  for (int ctx : {opt_.contexts.front(), opt_.contexts.back()}) {
    if (out_of_time("breakdown")) break;
    if (!be_->set_kernel_config(base).ok() || !CudaProbe::set_position_unchecked(*be_, ctx).ok()) break;
    auto e = CudaProbe::profile_step(*be_, 1);
    if (!e.ok()) {
      std::printf("!! breakdown: %s\n", e.error().describe().c_str());
      break;
    }
    auto entries = *e;
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
    double total = 0.0;
    for (const auto& x : entries) total += x.ms;
    std::printf(
        "\n== per-call time of one eager decode step (%s, ctx %d; events around every call break the\n"
        "   PDL overlap, so the sum exceeds the graph's time) ==\n",
        vname.c_str(), ctx);
    json list = json::array();
    for (const auto& x : entries) {
      std::printf("  %-18s %8.3f ms %5.1f%%  %4d calls  %7.2f us/call\n", x.label.c_str(), x.ms,
                  100.0 * x.ms / total, x.calls, 1e3 * x.ms / std::max(x.calls, 1));
      list.push_back({{"label", x.label}, {"ms", x.ms}, {"calls", x.calls}});
    }
    std::printf("  %-18s %8.3f ms\n", "sum", total);
    breakdown.push_back({{"ctx", ctx}, {"sum_ms", total}, {"calls", list}});
  }
  out["breakdown"] = breakdown;

  // The switches, one at a time, at the first context.
  struct Alt {
    const char* label;
    KernelConfig k;
  };
  std::vector<Alt> alts = {{"default (graph, PDL, fused)", base}};
  KernelConfig k = base;
  k.programmatic_launch = false;
  alts.push_back({"no PDL", k});
  k = base;
  k.cuda_graph = false;
  alts.push_back({"no graph (eager launches)", k});
  k = base;
  k.fuse_gate_up = false;
  alts.push_back({"gate+up unfused", k});
  k = base;
  k.fuse_residual_norm_quant = false;
  alts.push_back({"norm+quantise unfused", k});
  std::printf("\n== switches (%s, ctx %d, device time per token) ==\n", vname.c_str(), opt_.contexts.front());
  json sw = json::array();
  for (const Alt& a : alts) {
    if (out_of_time(a.label)) break;
    if (!be_->set_kernel_config(a.k).ok() ||
        !CudaProbe::set_position_unchecked(*be_, opt_.contexts.front()).ok())
      break;
    auto n = CudaProbe::graph_kernel_nodes(*be_, 1);
    auto t = CudaProbe::time_steps(*be_, 1, opt_.tokens, opt_.quick ? 1 : 3);
    if (!t.ok()) {
      std::printf("  %-30s ERROR %s\n", a.label, t.error().describe().c_str());
      continue;
    }
    std::printf("  %-30s %8.3f ms  %5d kernels  %6.1f tok/s\n", a.label, *t * 1e3, n.ok() ? *n : -1,
                1.0 / *t);
    sw.push_back({{"config", a.label}, {"ms", *t * 1e3}, {"kernels", n.ok() ? *n : -1}});
  }
  out["switches"] = sw;

  // MTP-style verification: M tokens in one weight pass.
  std::printf("\n== M tokens in one weight pass (MTP verification), %s ==\n", vname.c_str());
  json mt = json::array();
  for (int ctx : {opt_.contexts.front(), opt_.contexts.back()}) {
    double t1 = 0.0;
    std::array<double, 5> pass_s{};  // [m]: seconds of an m-token pass
    for (int m = 1; m <= 4; ++m) {
      if (out_of_time("mtp passes")) break;
      if (!be_->set_kernel_config(base).ok() || !CudaProbe::set_position_unchecked(*be_, ctx).ok()) break;
      auto t = CudaProbe::time_steps(*be_, m, opt_.tokens, opt_.quick ? 1 : 3);
      if (!t.ok()) {
        std::printf("  M=%d ERROR %s\n", m, t.error().describe().c_str());
        break;
      }
      if (m == 1) t1 = *t;
      std::printf("  ctx %6d M=%d %8.3f ms per pass (%.2fx of M=1; %.3f ms per token)", ctx, m, *t * 1e3,
                  *t / t1, *t * 1e3 / m);
      json row = {{"ctx", ctx}, {"m", m}, {"ms", *t * 1e3}, {"x_of_m1", *t / t1}};
      pass_s[static_cast<size_t>(m)] = *t;
      // The verification pass as the generator runs it (forward_speculative: the GDN states after every
      // position written to the history as well); the projection uses this time when there is one.
      if (m > 1 && be_->max_speculative_tokens() >= m) {
        auto v = CudaProbe::time_steps(*be_, m, opt_.tokens, opt_.quick ? 1 : 3, /*keep_states=*/true);
        if (v.ok()) {
          std::printf("; keeping states %.3f ms (%.2fx)", *v * 1e3, *v / t1);
          row["verify_ms"] = *v * 1e3;
          row["verify_x_of_m1"] = *v / t1;
          pass_s[static_cast<size_t>(m)] = *v;
        } else {
          std::printf("; keeping states ERROR %s", v.error().describe().c_str());
        }
      }
      std::printf("\n");
      mt.push_back(row);
    }
    if (ctx == opt_.contexts.front()) out["mtp_projection"] = project_mtp(pass_s);
  }
  out["mtp_passes"] = mt;
  extra_[tag] = out;
}

// Model of a speculative step with draft length k (engine/generate/generator.cpp): the MTP block runs k
// times to draft, the main model verifies k+1 tokens in one pass, and the block runs once more for every
// accepted draft to fill its KV cache (m-1 calls for m emitted tokens). With the same acceptance a at
// every position and independent positions, a step emits E = 1 + a + ... + a^k tokens on average and
// costs T = t(k+1) + (k + E - 1) t_mtp; the speed-up over plain decoding is E t(1) / T. t(k+1) is the
// verification pass that keeps every position's state (commit(m) then needs no second pass; its copy of
// one history slot, ~70 us at the 27B shapes, is left out).
json Bench::project_mtp(const std::array<double, 5>& pass_s) {
  json out = json::object();
  if (!be_->has_mtp()) {
    std::printf("  (no MTP block: no projection)\n");
    return out;
  }
  auto tm = CudaProbe::time_mtp_steps(*be_, opt_.tokens, opt_.quick ? 1 : 3);
  if (!tm.ok()) {
    std::printf("  MTP draft step ERROR %s\n", tm.error().describe().c_str());
    return out;
  }
  const double t_mtp = *tm, t1 = pass_s[1];
  std::printf("  MTP draft step %.3f ms (%.3fx of M=1)\n", t_mtp * 1e3, t_mtp / t1);
  std::printf("  projected speed-up over plain decoding (acceptance a per draft position):\n");
  std::printf("  %6s %12s %12s %12s\n", "draft", "a = 0.6", "a = 0.7", "a = 0.8");
  out["mtp_step_ms"] = t_mtp * 1e3;
  json rows = json::array();
  for (int k = 1; k <= 3; ++k) {
    if (pass_s[static_cast<size_t>(k) + 1] <= 0.0) break;
    std::printf("  %6d", k);
    json row = {{"draft", k}};
    for (const double a : {0.6, 0.7, 0.8}) {
      double e = 0.0, p = 1.0;
      for (int j = 0; j <= k; ++j, p *= a) e += p;
      const double t = pass_s[static_cast<size_t>(k) + 1] + (k + e - 1.0) * t_mtp;
      const double speedup = e * t1 / t;
      std::printf(" %7.2fx %4.0f", speedup, speedup / t1);
      row["a" + std::to_string(static_cast<int>(a * 10 + 0.5))] = {{"speedup", speedup},
                                                                   {"tok_per_s", speedup / t1}};
    }
    std::printf("  (speed-up, tok/s)\n");
    rows.push_back(row);
  }
  out["rows"] = rows;
  return out;
}

// With --passes also for every listed variant (the M-token passes' cost decides the speed-up).
void Bench::measure_mtp_generation() {
  if (!file_model_ || !be_->has_mtp()) return;
  std::vector<GemvVariant> variants = {KernelConfig{}.gemv};
  if (opt_.passes)
    for (GemvVariant v : opt_.variants)
      if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
  for (GemvVariant v : variants) measure_mtp_generation(v);
}

void Bench::measure_mtp_generation(GemvVariant variant) {
  KernelConfig config;
  config.gemv = variant;
  const std::string vname = qc::gemv_variant_name(variant);
  std::printf("\n== MTP on the model file (%s): greedy generation, measured acceptance and speed-up ==\n",
              vname.c_str());
  auto tok = qc::load_tokenizer(file_model_->file());
  if (!tok.ok()) {
    std::printf("  tokenizer: %s\n", tok.error().describe().c_str());
    return;
  }
  // Prompts of the kinds the default model was trained on, and one free text.
  const std::vector<std::string> prompts = {
      "<|im_start|>user\nWhat is 17 + 25?<|im_end|>\n<|im_start|>assistant\n",
      "<|im_start|>user\nDefine the word \"lantern\".<|im_end|>\n<|im_start|>assistant\n",
      "In the beginning", "The quick brown fox"};
  const int n_new = opt_.quick ? 64 : 160;
  json runs = json::array();
  double base_s = 0.0;
  long long base_tokens = 0;
  for (int draft = 0; draft <= 3; ++draft) {
    if (out_of_time("mtp generation")) break;
    if (!be_->set_kernel_config(config).ok()) break;
    qc::GenerationStats total;
    total.mtp_draft_len = draft;
    double seconds = 0.0;
    long long tokens = 0;
    std::string error;
    for (const std::string& text : prompts) {
      auto ids = (*tok)->encode(text, /*parse_special=*/true);
      if (!ids.ok() || ids->empty()) continue;
      be_->reset();
      qc::Generator gen(*be_, **tok);
      qc::GenerateRequest req;
      req.prompt = *ids;
      req.max_new_tokens = n_new;
      req.sampler.temperature = 0.0f;
      req.mtp.enabled = draft > 0;
      req.mtp.draft_len = std::max(draft, 1);
      auto r = gen.generate(req, {});
      if (!r.ok()) {
        error = r.error().describe();
        break;
      }
      seconds += r->stats.decode_seconds;
      tokens += r->stats.generated_tokens;
      for (size_t j = 0; j < total.mtp_drafted.size(); ++j) {
        total.mtp_drafted[j] += r->stats.mtp_drafted[j];
        total.mtp_accepted[j] += r->stats.mtp_accepted[j];
      }
    }
    if (!error.empty()) {
      std::printf("  draft %d ERROR %s\n", draft, error.c_str());
      break;
    }
    const double tps = seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
    if (draft == 0) {
      base_s = seconds;
      base_tokens = tokens;
    }
    const double base_tps = base_s > 0 ? static_cast<double>(base_tokens) / base_s : 0.0;
    std::printf("  %s: %lld tokens, %.1f tok/s (%.2fx)", draft ? ("draft " + std::to_string(draft)).c_str() : "no MTP ",
                tokens, tps, base_tps > 0 ? tps / base_tps : 0.0);
    json acc = json::array();
    for (int j = 0; j < draft; ++j) {
      std::printf("%s%.2f", j ? "/" : "  acceptance ", total.mtp_acceptance(j));
      acc.push_back(total.mtp_acceptance(j));
    }
    std::printf("\n");
    runs.push_back({{"draft", draft}, {"tokens", tokens}, {"tok_per_s", tps},
                    {"speedup", base_tps > 0 ? tps / base_tps : 0.0}, {"acceptance", acc}});
  }
  extra_[variant == KernelConfig{}.gemv ? std::string("mtp_generation") : "mtp_generation_" + vname] = runs;
}

void Bench::print_table() {
  std::printf(
      "\n==== summary: %s, read ceiling %.0f GB/s, copy %.0f GB/s; decode tok/s (forward() calls) and %% of "
      "the floor (device time) ====\n",
      device_.c_str(), ceil_.read_gbs, ceil_.copy_gbs);
  std::printf("model: %s\n", model_desc_.c_str());
  std::printf("weights read per token %.2f GB; floor at the ceiling %.1f tok/s (ctx 0)\n",
              CudaProbe::weight_bytes_per_token(*be_) / 1e9,
              ceil_.read_gbs * 1e9 / CudaProbe::weight_bytes_per_token(*be_));
  std::printf("%-14s %7s", "variant", "kernels");
  for (int ctx : opt_.contexts) std::printf("  %17s", ("ctx " + std::to_string(ctx)).c_str());
  std::printf("\n");
  for (const auto& [v, engine] : decode_configs()) {
    const std::string name = row_label(v, engine);
    bool any = false;
    for (const Row& r : rows_) any = any || r.variant == name;
    if (!any) continue;
    int kernels = 0;
    for (const Row& r : rows_)
      if (r.variant == name) kernels = r.kernels;
    std::printf("%-14s %7d", name.c_str(), kernels);
    for (int ctx : opt_.contexts) {
      const Row* row = nullptr;
      for (const Row& r : rows_)
        if (r.variant == name && r.ctx == ctx && r.error.empty()) row = &r;
      if (row)
        std::printf("  %6.1f tok/s %3.0f%%", 1.0 / row->forward_s, 100.0 * row->floor_s / row->device_s);
      else
        std::printf("  %17s", "-");
    }
    std::printf("\n");
  }
  std::printf("total bench time %.1f s (model load %.1f s)\n", elapsed(), load_s_);
}

void Bench::profile_prefill(int tokens, int after) {
  const std::string setup =
      std::string("GEMM ") + CudaProbe::prefill_gemm(*be_) + ", chunks of " +
      std::to_string(be_->prefill_rows()) + ", GDN " + gdn_scan_name(opt_.gdn_scan) + " scan" +
      (opt_.attention_rows ? ", attention rows " + std::to_string(opt_.attention_rows) : "");
  json r = qc::bench_app::profile_prefill(*be_, tokens, after, setup);
  if (!r.is_null()) extra_[after ? "prefill_breakdown_after_history" : "prefill_breakdown"] = std::move(r);
}

void Bench::write_json() {
  if (opt_.json_path.empty()) return;
  json j;
  j["device"] = device_;
  j["read_ceiling_gbs"] = ceil_.read_gbs;
  j["copy_gbs"] = ceil_.copy_gbs;
  j["model"] = model_desc_;
  j["load_seconds"] = load_s_;
  j["memory"] = CudaProbe::memory(*be_).describe();
  j["prefill_gemm"] = CudaProbe::prefill_gemm(*be_);
  j["prefill_weights"] = CudaProbe::prefill_weights(*be_);
  j["prefill_rows"] = be_->prefill_rows();
  j["gdn_scan"] = gdn_scan_name(opt_.gdn_scan);
  j["attention_rows"] = opt_.attention_rows;
  j["kv_ahead"] = opt_.kv_ahead;
  json rows = json::array();
  for (const Row& r : rows_)
    rows.push_back({{"variant", r.variant},
                    {"ctx", r.ctx},
                    {"kernels_per_token", r.kernels},
                    {"device_ms", r.device_s * 1e3},
                    {"forward_ms", r.forward_s * 1e3},
                    {"tok_per_s", r.forward_s > 0 ? 1.0 / r.forward_s : 0.0},
                    {"device_tok_per_s", r.device_s > 0 ? 1.0 / r.device_s : 0.0},
                    {"weight_bytes", r.weight_bytes},
                    {"kv_bytes", r.kv_bytes},
                    {"state_bytes", r.state_bytes},
                    {"floor_ms", r.floor_s * 1e3},
                    {"pct_of_floor_device", r.device_s > 0 ? 100.0 * r.floor_s / r.device_s : 0.0},
                    {"pct_of_floor_forward", r.forward_s > 0 ? 100.0 * r.floor_s / r.forward_s : 0.0},
                    {"error", r.error}});
  j["decode"] = rows;
  for (auto& [key, value] : extra_.items()) j[key] = value;
  j["seconds"] = elapsed();
  std::ofstream f(opt_.json_path);
  f << j.dump(2) << "\n";
  std::printf("wrote %s\n", opt_.json_path.c_str());
}

int Bench::run() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("qwenchat-bench: no CUDA device (%s); nothing to measure\n",
                cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("qwenchat-bench: cannot use device 0\n");
    return 1;
  }
  device_ = prop.name;
  sms_ = prop.multiProcessorCount;
  std::printf("device: %s, cc %d.%d, %d SMs, %.1f GiB\n", prop.name, prop.major, prop.minor, sms_,
              prop.totalGlobalMem / 1073741824.0);
  ceil_ = qc::bench_app::measure_ceilings(stream_, sms_, opt_.quick ? 5 : 10);
  if (const Status st = build_model(); !st.ok()) {
    std::printf("qwenchat-bench: %s\n", st.error().describe().c_str());
    return 1;
  }
  std::printf("model: %s\nloaded in %.1f s; device memory %s\n", model_desc_.c_str(), load_s_,
              CudaProbe::memory(*be_).describe().c_str());
  std::printf("prompt path: chunks of %d, GEMM %s, weights %s, GDN %s scan%s%s\n", be_->prefill_rows(),
              CudaProbe::prefill_gemm(*be_), CudaProbe::prefill_weights(*be_), gdn_scan_name(opt_.gdn_scan),
              be_->info().note.empty() ? "" : "; load note: ", be_->info().note.c_str());
  std::printf(
      "bytes per token: weights %.3f GB, GDN state read+write %.3f GB (not counted in the floor), KV %.1f KB "
      "per "
      "position\n",
      CudaProbe::weight_bytes_per_token(*be_) / 1e9, CudaProbe::recurrent_bytes_per_step(*be_) / 1e9,
      (CudaProbe::kv_bytes_per_token(*be_, 1) - CudaProbe::kv_bytes_per_token(*be_, 0)) / 1e3);
  if (!opt_.only_prefill) {
    measure_variants();
    measure_config(KernelConfig{}, "default_config");
    const GemvVariant best = fastest_variant();
    if (best != KernelConfig{}.gemv) {
      KernelConfig k;
      k.gemv = best;
      measure_config(k, "fastest_variant");
    }
    measure_mtp_generation();
  }
  if (be_->set_kernel_config(KernelConfig{}).ok())
    extra_["prefill_reuse"] = qc::bench_app::measure_prefill_and_reuse(
        *be_, opt_.prefill, [this](const std::string& what) { return out_of_time(what); });
  if (be_->prefill_rows() > 0 && !out_of_time("prefill breakdown")) profile_prefill(2048);
  if (be_->prefill_rows() > 0 && !out_of_time("prefill breakdown after a history"))
    profile_prefill(opt_.prefill.message, opt_.prefill.history);
  extra_["weight_bytes_per_token"] = static_cast<double>(CudaProbe::weight_bytes_per_token(*be_));
  print_table();
  write_json();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (qc::app::print_version_if_asked("qwenchat-bench", argc, argv)) return 0;
  bool help = false;
  auto o = qc::bench_app::parse_bench_options(argc, argv, &help);
  if (!o.ok()) {
    std::fprintf(stderr, "qwenchat-bench: %s\n", o.error().describe().c_str());
    return 1;
  }
  if (help) {
    std::printf("usage: qwenchat-bench [options]\n%s", qc::app::Args::usage(qc::bench_app::bench_option_specs()).c_str());
    return 0;
  }
  Bench b(std::move(o).value());
  return b.run();
}
