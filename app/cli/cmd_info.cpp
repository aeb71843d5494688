// `info`: what a model file holds: config, tensors with types and bytes, bytes read per token, MTP block.
#include <cstdio>
#include <map>

#include "commands.h"
#include "model/model.h"

namespace qc::cli {

Status cmd_info(int argc, char** argv) {
  bool help = false;
  QC_ASSIGN(app::Args args, parse_or_help(argc, argv, "qwenchat-cli info --model FILE [--tensors]",
                                          {{"model", true, "GGUF model file (default: the shipped model)"},
                                           {"tensors", false, "list every tensor"}},
                                          &help));
  if (help) return {};
  QC_ASSIGN(const std::string path, model_path(args));
  QC_ASSIGN(auto model, Model::load(path));
  const ModelConfig& c = model->config();
  const gguf::File& f = model->file();
  std::printf("file:          %s (GGUF v%u, %.2f GB)\n", path.c_str(), f.version(), static_cast<double>(f.file_size()) / 1e9);
  std::printf("name:          %s\n", c.name.c_str());
  std::printf("config:        %s\n", c.summary().c_str());
  std::printf("rope:          theta %.0f, %d of %d dims rotated\n", static_cast<double>(c.rope_theta), c.rope_dims,
              c.head_dim);
  std::printf("context:       %d (training)\n", c.n_ctx_train);
  std::printf("MTP block:     %s\n", c.n_mtp > 0 ? "present (speculative decoding available)" : "absent");
  std::printf("lm_head:       %s\n", model->weights().tied_embeddings ? "tied to token_embd" : "separate");
  std::map<std::string, std::pair<int, uint64_t>> by_type;
  for (const gguf::TensorInfo& t : f.tensors()) {
    auto& e = by_type[std::string(gguf::type_name(t.type))];
    e.first += 1;
    e.second += t.nbytes;
  }
  std::printf("tensors:       %zu", f.tensors().size());
  for (const auto& [type, e] : by_type) {
    std::printf("  %s: %d (%.1f MB)", type.c_str(), e.first, static_cast<double>(e.second) / 1e6);
  }
  std::printf("\nbytes/token:   %.1f MB of weights read per decoded token (all but the embedding table)\n",
              static_cast<double>(model->bytes_per_token()) / 1e6);
  if (const gguf::Value* m = f.find("tokenizer.ggml.model")) {
    std::printf("tokenizer:     %s", m->str.c_str());
    if (const gguf::Value* p = f.find("tokenizer.ggml.pre")) std::printf(" (pre: %s)", p->str.c_str());
    if (const gguf::Value* t = f.find("tokenizer.ggml.tokens")) std::printf(", %zu tokens", t->array.size());
    std::printf("\n");
  }
  if (args.has("tensors")) {
    for (const gguf::TensorInfo& t : f.tensors()) {
      std::printf("  %-44s %-5s [", t.name.c_str(), std::string(gguf::type_name(t.type)).c_str());
      for (uint32_t d = 0; d < t.n_dims; ++d) std::printf("%s%llu", d ? "," : "", static_cast<unsigned long long>(t.ne[d]));
      std::printf("] %llu bytes\n", static_cast<unsigned long long>(t.nbytes));
    }
  }
  return {};
}

}  // namespace qc::cli
