// qwenchat-mkmodel: writes a qwen35 GGUF with seeded random weights of a named preset or explicit sizes,
// with a byte-level BPE vocabulary (trained on a built-in corpus) carrying the ChatML special tokens and
// a chat template. The build uses it to generate the default model in assets/ until a trained one ships.
#include <algorithm>
#include <cstdio>
#include <string>

#include "common/args.h"
#include "gguf/writer.h"
#include "model/quant_mix.h"
#include "model/row_parallel.h"
#include "model/synthetic.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/chat_format.h"

namespace {

using qc::app::Args;
using qc::app::OptionSpec;

const std::vector<OptionSpec> kOptions = {
    {"preset", true, "model shape: tiny, small, 0.8b, 2b, 4b, 9b, 27b"},
    {"seed", true, "random seed (default 0)"},
    {"out", true, "output GGUF path"},
    {"type", true,
     "2-D weight types: q8_0 (default), f16, bf16, f32, q4_0, q5_0, or a K-quant mix as llama-quantize "
     "picks it: q4_k_m, q4_k_s, q5_k_m, q5_k_s, q6_k"},
    {"threads", true,
     "threads generating and encoding each tensor (default: all hardware threads; same bytes)"},
    {"layers", true, "override the number of main layers"},
    {"embd", true, "override the hidden size"},
    {"ff", true, "override the FFN size"},
    {"vocab", true, "override the embedding rows (>= the trained vocabulary)"},
    {"no-mtp", false, "omit the MTP block"},
    {"untied", false, "write a separate output (lm_head) matrix"},
    {"quiet", false, "no progress output"},
    {"help", false, "this text"},
};

qc::Status run(const Args& args) {
  QC_ASSIGN(const std::string preset, args.require("preset"));
  QC_ASSIGN(const std::string out, args.require("out"));
  QC_ASSIGN(qc::ModelShape shape, qc::preset_shape(preset));
  QC_ASSIGN(const long long seed, args.get_int("seed", 0, 0, (1ll << 62)));
  QC_ASSIGN(const qc::QuantMix mix, qc::quant_mix_from_name(args.get_or("type", "q8_0"), "--type"));
  QC_ASSIGN(const long long threads, args.get_int("threads", qc::default_writer_threads(), 1, 1024));
  QC_ASSIGN(const long long layers, args.get_int("layers", shape.n_layer, 1, 512));
  QC_ASSIGN(const long long embd, args.get_int("embd", shape.n_embd, 32, 65536));
  QC_ASSIGN(const long long ff, args.get_int("ff", shape.n_ff, 32, 262144));
  QC_ASSIGN(const long long vocab_rows, args.get_int("vocab", shape.n_vocab, 300, 1 << 20));
  shape.n_layer = static_cast<int>(layers);
  shape.n_embd = static_cast<int>(embd);
  shape.n_ff = static_cast<int>(ff);
  shape.n_vocab = static_cast<int>(vocab_rows);
  if (args.has("no-mtp")) shape.n_mtp = 0;
  if (args.has("untied")) shape.tied_embeddings = false;
  QC_TRY(shape.validate());

  // Vocabulary: as many merges as fit below the embedding rows; the rest of the rows are unused padding
  // tokens, as in Qwen's padded 248320-row tables.
  qc::BpeTrainOptions train;
  train.n_merges = std::max(0, shape.n_vocab - 256 - static_cast<int>(train.special_tokens.size()));
  QC_ASSIGN(qc::BpeVocab vocab, qc::train_bpe(qc::builtin_training_corpus(), train));
  if (static_cast<int>(vocab.tokens.size()) > shape.n_vocab) {
    return qc::make_error("--vocab " + std::to_string(shape.n_vocab) +
                          " is below the trained vocabulary of " + std::to_string(vocab.tokens.size()) +
                          " tokens");
  }
  if (vocab.token_types.empty())
    vocab.token_types.assign(vocab.tokens.size(), static_cast<int32_t>(qc::TokenType::kNormal));
  for (int i = static_cast<int>(vocab.tokens.size()); i < shape.n_vocab; ++i) {
    vocab.tokens.push_back("<|pad_" + std::to_string(i) + "|>");
    vocab.token_types.push_back(static_cast<int32_t>(qc::TokenType::kUnused));
  }

  qc::SyntheticModelOptions o;
  o.shape = shape;
  o.seed = static_cast<uint64_t>(seed);
  o.mix = mix;
  o.n_threads = static_cast<int>(threads);
  o.out_path = out;
  o.extra_metadata = [&](qc::gguf::Writer& w) {
    qc::write_bpe_vocab_metadata(w, vocab, qc::chatml_jinja_template());
  };
  const bool quiet = args.has("quiet");
  o.progress = [quiet](size_t done, size_t total, const std::string& name) {
    if (!quiet && (done == total || done % 16 == 0)) {
      std::fprintf(stderr, "\r[%zu/%zu] %-40s", done, total, name.c_str());
      if (done == total) std::fprintf(stderr, "\n");
    }
  };
  QC_TRY(qc::write_synthetic_model(o));
  if (!quiet) {
    std::fprintf(stderr, "wrote %s: preset %s, %.1fM parameters, %zu tokens (%d rows)\n", out.c_str(),
                 preset.c_str(), static_cast<double>(shape.n_params()) / 1e6,
                 static_cast<size_t>(vocab.tokens.size()), shape.n_vocab);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return qc::app::run_tool("qwenchat-mkmodel",
                           "qwenchat-mkmodel --preset NAME --seed N --out FILE "
                           "[--type q8_0|f16|bf16|f32|q4_0|q5_0|q4_k_m|q4_k_s|q5_k_m|q5_k_s|q6_k]",
                           kOptions, argc, argv, run);
}
