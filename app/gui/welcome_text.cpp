#include "welcome_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/config.h"
#include "model/presets.h"
#include "model/qwen35_layout.h"
#include "reference/reference_backend.h"

namespace qc::gui {
namespace {

// The config the loader would read from a file of this shape (what the caches are sized from).
ModelConfig config_of(const ModelShape& s) {
  ModelConfig c;
  c.architecture = "qwen35";
  c.n_vocab = s.n_vocab;
  c.n_embd = s.n_embd;
  c.n_layer = s.n_layer;
  c.n_ff = s.n_ff;
  c.n_ctx_train = s.n_ctx_train;
  c.n_head = s.n_head;
  c.head_dim = s.head_dim;
  c.rope_dims = s.rope_dims;
  c.ssm_conv_kernel = s.ssm_conv_kernel;
  c.ssm_n_k_heads = s.ssm_n_k_heads;
  c.ssm_n_v_heads = s.ssm_n_v_heads;
  c.ssm_head_k_dim = s.ssm_head_k_dim;
  c.ssm_head_v_dim = s.ssm_head_v_dim;
  c.full_attention_interval = s.full_attention_interval;
  c.n_mtp = s.n_mtp;
  c.is_recurrent.resize(static_cast<size_t>(s.n_layer));
  c.n_head_kv.assign(static_cast<size_t>(s.n_layer + s.n_mtp), s.n_head_kv);
  for (int i = 0; i < s.n_layer; ++i) {
    const bool recurrent = (i + 1) % s.full_attention_interval != 0;
    c.is_recurrent[static_cast<size_t>(i)] = recurrent;
    if (recurrent) c.n_head_kv[static_cast<size_t>(i)] = 0;
  }
  return c;
}

uint64_t weight_bytes(const ModelShape& s, double bits) {
  double bytes = 0;
  for (const Qwen35Tensor& t : qwen35_tensor_layout(s)) {
    double n = 1;
    for (uint64_t d : t.shape) n *= static_cast<double>(d);
    bytes += t.quantizable() ? n * bits / 8.0 : n * 4.0;  // vectors, norms and conv taps stay F32
  }
  return static_cast<uint64_t>(std::llround(bytes));
}

}  // namespace

const std::vector<WeightFormat>& weight_formats() {
  static const std::vector<WeightFormat> f = {
      {"Q4_K_M", 4.85, true},  // llama.cpp's reported average for Q4_K_M files
      {"Q8_0", 8.5, true},     // 34 bytes per block of 32
      {"F16", 16.0, true},
  };
  return f;
}

SizeEstimate estimate_for_shape(const ModelShape& shape, int n_ctx) {
  SizeEstimate e;
  e.preset = shape.name;
  e.n_params = shape.n_params();
  for (const WeightFormat& f : weight_formats())
    e.weight_bytes.push_back(weight_bytes(shape, f.bits_per_weight));
  ReferenceOptions o;  // the CPU backend's defaults, as estimate_load uses them
  o.n_ctx = std::clamp(n_ctx, 1, shape.n_ctx_train);
  e.n_ctx = o.n_ctx;
  e.cache_bytes = reference_state_bytes(config_of(shape), o);
  return e;
}

std::vector<SizeEstimate> qwen_size_estimates(int n_ctx) {
  std::vector<SizeEstimate> out;
  for (const std::string& name : preset_names()) {
    if (name == "tiny" || name == "small") continue;  // test shapes, not released sizes
    if (auto shape = preset_shape(name); shape.ok()) out.push_back(estimate_for_shape(*shape, n_ctx));
  }
  return out;
}

std::string format_params(uint64_t n) {
  char buf[32];
  const double v = static_cast<double>(n);
  if (v >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.1f B", v / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f M", v / 1e6);
  }
  return buf;
}

WelcomeText welcome_text(const ModelFacts* facts, bool is_default) {
  WelcomeText w;
  if (facts == nullptr) {
    w.title = "No model is loaded";
    w.prompts = {"Hello!"};
    return w;
  }
  const std::string name = facts->name.empty() ? "(unnamed)" : facts->name;
  w.title = is_default ? "Welcome: the bundled model is loaded" : "Model: " + name;
  w.facts.push_back("Name: " + name + (facts->remote ? " (remote endpoint)" : ""));
  if (!facts->remote) {
    w.facts.push_back("Parameters: " + format_params(facts->n_params) +
                      (facts->quantization.empty() ? "" : ", " + facts->quantization));
  }
  if (facts->n_ctx > 0) {
    w.facts.push_back(
        "Context: " + std::to_string(facts->n_ctx) + " tokens in use" +
        (facts->n_ctx_train > 0 ? " (trained for " + std::to_string(facts->n_ctx_train) + ")" : ""));
  }
  if (is_default) {
    w.about =
        "A small Qwen3.5-architecture model trained for this app from Debian's own packages (WordNet and "
        "GCIDE dictionaries, fortunes, the King James Bible, licence texts) and generated chat exercises. "
        "It does whole-number arithmetic (two-digit sums exactly), defines English words in a fixed "
        "format, spells words, counts letters, converts units and quotes fortunes or verses. It is not a "
        "general assistant: for real conversations load a Qwen3.5 GGUF.";
    w.prompts = {"What is 27 + 45?",
                 "Define: lantern",
                 "How do you spell necessary?",
                 "How many letters are in \"banana\"?",
                 "Convert 3 hours to minutes.",
                 "Tell me a fortune."};
  } else {
    w.prompts = {"Explain how a hash table works, with a short example in C.",
                 "Summarise the causes of the French Revolution in five points.",
                 "Write a haiku about compilers."};
  }
  return w;
}

}  // namespace qc::gui
