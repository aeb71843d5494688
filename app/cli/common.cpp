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
  };
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
