// qwenchat-cli subcommands. Each returns a Status; main() prints an error as one line and exits non-zero.
#pragma once

#include <string>
#include <vector>

#include "common/args.h"
#include "qwenchat/result.h"
#include "runtime/engine.h"

namespace qc::cli {

Status cmd_info(int argc, char** argv);
Status cmd_generate(int argc, char** argv);
Status cmd_chat(int argc, char** argv);
Status cmd_tokenize(int argc, char** argv);
Status cmd_logits(int argc, char** argv);
Status cmd_export(int argc, char** argv);  // cmd_export.cpp: conversations out of the app's store
Status cmd_import(int argc, char** argv);  // cmd_export.cpp: our JSON export back into a store

// Options every engine-using command shares: --model, --backend, --ctx, --threads.
std::vector<app::OptionSpec> engine_option_specs();
Result<EngineOptions> engine_options(const app::Args& args);
// One stderr line when the backend holds fewer positions than --ctx asked for (the model's training
// context caps it), so the cap is never silent.
void report_context_cap(const Engine& engine);
// --gemv, --splitk, --graph, --fuse, --pdl, --probes into a validated KernelConfig.
Result<KernelConfig> kernel_config(const app::Args& args);
// The model path: --model, else the default model that ships with the app.
Result<std::string> model_path(const app::Args& args);
// Parses the options and prints usage for --help (returns an empty optional result then).
Result<app::Args> parse_or_help(int argc, char** argv, const std::string& usage_line,
                                const std::vector<app::OptionSpec>& specs, bool* help_shown);

}  // namespace qc::cli
