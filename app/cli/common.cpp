#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "common/default_model.h"

namespace qc::cli {

std::vector<app::OptionSpec> engine_option_specs() {
  return {
      {"model", true, "GGUF model file (default: the model that ships with qwenchat)"},
      {"backend", true, "cpu (f32, default), cpu-f64 (the double-precision oracle) or cuda"},
      {"ctx", true, "context length to allocate (default 4096)"},
      {"threads", true, "CPU threads (default: all cores)"},
      {"gpu-memory", true, "cuda: GiB of device memory to plan the load against (default: what is free); "
                           "simulates a smaller card"},
      {"gemv", true, "cuda: Q8_0 GEMV variant: " + gemv_variant_list() + " (default tile)"},
      {"splitk", true, "cuda: K chunks of the sk variant, 2..16 (default 4)"},
      {"block-engine", true, "cuda: engine of the K-quant / Q4_0 / Q5_0 GEMV: " + block_engine_list() +
                                 " (default auto)"},
      {"graph", true, "cuda: on|off: replay each decode step as one captured CUDA graph (default on)"},
      {"fuse", true, "cuda: on|off: fused norm+quantise and gate+up+SwiGLU kernels (default on)"},
      {"pdl", true, "cuda: on|off: programmatic dependent launch on Hopper (default on)"},
      {"probes", true, "on|off: per-layer hidden-state L2 norms (default off)"},
  };
}

namespace {

Result<bool> on_off(const app::Args& args, const std::string& name, bool fallback) {
  const auto v = args.get(name);
  if (!v) return fallback;
  if (*v == "on") return true;
  if (*v == "off") return false;
  return make_error("--" + name + ": expected on or off, got \"" + *v + "\"");
}

}  // namespace

Result<KernelConfig> kernel_config(const app::Args& args) {
  KernelConfig k;
  if (const auto g = args.get("gemv")) {
    const auto v = parse_gemv_variant(*g);
    if (!v)
      return make_error("--gemv: unknown variant \"" + *g + "\": expected one of " + gemv_variant_list());
    k.gemv = *v;
  }
  if (const auto e = args.get("block-engine")) {
    const auto v = parse_block_engine(*e);
    if (!v)
      return make_error("--block-engine: unknown engine \"" + *e + "\": expected one of " + block_engine_list());
    k.block_engine = *v;
  }
  QC_ASSIGN(const long long sk, args.get_int("splitk", k.split_k, 2, 16));
  k.split_k = static_cast<int>(sk);
  QC_ASSIGN(k.cuda_graph, on_off(args, "graph", k.cuda_graph));
  QC_ASSIGN(const bool fuse, on_off(args, "fuse", true));
  k.fuse_residual_norm_quant = fuse;
  k.fuse_gate_up = fuse;
  QC_ASSIGN(k.programmatic_launch, on_off(args, "pdl", k.programmatic_launch));
  QC_ASSIGN(k.probes, on_off(args, "probes", false));
  if (const std::string bad = k.validate(); !bad.empty()) return make_error("kernel config: " + bad);
  return k;
}

void report_context_cap(const Engine& engine) {
  const int asked = engine.options().n_ctx;
  const int held = engine.backend().n_ctx();
  if (held < asked) {
    std::fprintf(stderr, "qwenchat-cli: --ctx %d is above the model's training context: using %d\n", asked, held);
  }
}

Result<std::string> model_path(const app::Args& args) {
  if (auto m = args.get("model")) return *m;
  return app::default_model_path();
}

Result<EngineOptions> engine_options(const app::Args& args) {
  EngineOptions o;
  QC_ASSIGN(o.model_path, model_path(args));
  QC_ASSIGN(o.backend, parse_backend_kind(args.get_or("backend", "cpu")));
  QC_ASSIGN(const long long ctx, args.get_int("ctx", 4096, 16, 1 << 20));
  QC_ASSIGN(const long long threads, args.get_int("threads", 0, 0, 1024));
  o.n_ctx = static_cast<int>(ctx);
  o.n_threads = static_cast<int>(threads);
  QC_ASSIGN(o.gpu_memory_limit, args.get_gib("gpu-memory", 0.25, 4096.0));
  QC_ASSIGN(o.kernels, kernel_config(args));
  if (o.backend == BackendKind::kCuda) {
    o.load_progress = [last = -10](uint64_t done, uint64_t total, const std::string&) mutable {
      const int pct = total ? static_cast<int>(100 * done / total) : 100;
      if (pct / 10 == last / 10) return;  // one line update per 10%
      last = pct;
      std::fprintf(stderr, "\rloading weights to the GPU: %3d%%%s", pct, pct == 100 ? "\n" : "");
    };
  }
  return o;
}

Result<app::Args> parse_or_help(int argc, char** argv, const std::string& usage_line,
                                const std::vector<app::OptionSpec>& specs, bool* help_shown) {
  std::vector<app::OptionSpec> all = specs;
  all.push_back({"help", false, "this text"});
  QC_ASSIGN(app::Args args, app::Args::parse(argc, argv, 2, all));
  *help_shown = args.has("help");
  if (*help_shown) std::printf("usage: %s\n%s", usage_line.c_str(), app::Args::usage(all).c_str());
  if (!args.positional().empty()) return make_error("unexpected argument \"" + args.positional()[0] + "\"");
  return args;
}

}  // namespace qc::cli
