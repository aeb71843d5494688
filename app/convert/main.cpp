// qwenchat-convert: converts a Hugging Face Qwen3.5 checkpoint folder (config.json, *.safetensors,
// tokenizer.json or tokenizer.model, tokenizer_config.json) into a qwen35 GGUF in llama.cpp's layout,
// streaming tensor by tensor. Q8_0 by default; f16/bf16/f32, q4_0/q5_0, or a K-quant mix (q4_k_m, q4_k_s,
// q5_k_m, q5_k_s, q6_k) whose per-tensor types follow llama.cpp's quantizer (model/quant_mix.h). Norms, conv
// taps, ssm_a, dt bias, ssm_alpha/ssm_beta stay F32. Rows are encoded on --threads threads.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common/args.h"
#include "import/convert.h"
#include "model/quant_mix.h"
#include "model/row_parallel.h"

namespace {

using qc::app::Args;
using qc::app::OptionSpec;

const std::vector<OptionSpec> kOptions = {
    {"outtype", true,
     "2-D weight types: q8_0 (default), f16, bf16, f32, q4_0, q5_0, or a K-quant mix as llama-quantize "
     "picks it: q4_k_m, q4_k_s, q5_k_m, q5_k_s, q6_k"},
    {"threads", true, "threads encoding each tensor (default: all hardware threads; same bytes for any)"},
    {"name", true, "general.name (default: the folder's name)"},
    {"no-mtp", false, "leave the MTP block out even when the checkpoint has it"},
    {"allow-unused", false, "convert even when text-model tensors have no place in the layout"},
    {"quiet", false, "no progress output"},
    {"help", false, "this text"},
};

qc::Status run(const Args& args) {
  if (args.positional().size() != 2) {
    return qc::make_error("expected two arguments, CHECKPOINT_DIR and OUT.gguf, got " +
                              std::to_string(args.positional().size()),
                          "usage: qwenchat-convert CHECKPOINT_DIR OUT.gguf "
                          "[--outtype q8_0|f16|bf16|f32|q4_0|q5_0|q4_k_m|q4_k_s|q5_k_m|q5_k_s|q6_k]");
  }
  qc::ConvertOptions o;
  o.input_dir = args.positional()[0];
  o.out_path = args.positional()[1];
  QC_ASSIGN(o.import.mix, qc::quant_mix_from_name(args.get_or("outtype", "q8_0"), "--outtype"));
  QC_ASSIGN(const long long threads, args.get_int("threads", qc::default_writer_threads(), 1, 1024));
  o.n_threads = static_cast<int>(threads);
  o.import.include_mtp = !args.has("no-mtp");
  o.import.allow_unused = args.has("allow-unused");
  o.name = args.get_or("name", "");
  const bool quiet = args.has("quiet");
  o.notice = [](const std::string& s) { std::fprintf(stderr, "qwenchat-convert: note: %s\n", s.c_str()); };
  // On a terminal one line is rewritten in place; into a log, a line per tenth of the bytes.
  const bool tty = isatty(STDERR_FILENO) != 0;
  int last_tenth = -1;
  o.progress = [quiet, tty, &last_tenth](const qc::ConvertProgress& p) {
    if (quiet) return;
    const int tenth = p.bytes_total ? static_cast<int>(10 * p.bytes_done / p.bytes_total) : 10;
    if (!tty && tenth == last_tenth && p.done != p.total) return;
    last_tenth = tenth;
    std::fprintf(stderr, "%s[%zu/%zu] %-40s %8.1f / %.1f MiB%s", tty ? "\r" : "", p.done, p.total,
                 p.tensor.c_str(), static_cast<double>(p.bytes_done) / (1 << 20),
                 static_cast<double>(p.bytes_total) / (1 << 20), tty && p.done != p.total ? "" : "\n");
  };
  QC_ASSIGN(const qc::ConvertSummary s, qc::convert_hf_checkpoint(o));
  if (!quiet) {
    std::fprintf(stderr,
                 "wrote %s: %zu tensors, %.1f MiB, %.1fM parameters, %d layers (interval %d), MTP %s, "
                 "%zu tokens, chat template %s\n",
                 o.out_path.c_str(), s.n_tensors, static_cast<double>(s.tensor_bytes) / (1 << 20),
                 static_cast<double>(s.shape.n_params()) / 1e6, s.shape.n_layer,
                 s.shape.full_attention_interval, s.shape.n_mtp > 0 ? "yes" : "no", s.n_tokens,
                 s.template_source.empty() ? "none" : ("from " + s.template_source).c_str());
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return qc::app::run_tool("qwenchat-convert", "qwenchat-convert CHECKPOINT_DIR OUT.gguf [options]", kOptions,
                           argc, argv, run);
}
