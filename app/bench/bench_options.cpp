#include "bench_options.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <utility>
#include <sstream>

namespace qc::bench_app {
namespace {

const std::vector<qc::app::OptionSpec> kSpecs = {
    {"preset", true, "model shapes with weights generated on the GPU (default 27b)"},
    {"model", true, "a GGUF file instead of a preset"},
    {"json", true, "write the results as JSON here"},
    {"variants", true, "comma-separated GEMV variants (default: all)"},
    {"block-engines", true,
     "comma-separated engines of the K-quant GEMV, each with every variant (default auto; a row is labelled "
     "variant+engine where the engine is not auto)"},
    {"contexts", true, "comma-separated context lengths (default 0,4096,32768)"},
    {"tokens", true, "tokens per measurement (default 32)"},
    {"budget", true, "seconds after which the remaining measurements are skipped (default 200)"},
    {"quick", false, "fewer repetitions"},
    {"passes", false,
     "also time every decode row's M = 2, 3, 4-token passes at the first context (MTP verification; by "
     "default only the default and the fastest variant's), and with --model run the MTP generation with every "
     "listed variant (by default the default one)"},
    {"prefill", true, "comma-separated prompt lengths for the prefill rate (default 512,2048,8192)"},
    {"reuse", true, "HISTORY,MESSAGE tokens for the time to first token with state reuse (default 8000,100)"},
    {"only-prefill", false, "only the prefill and reuse measurements"},
    {"prefill-gemm", true, "the prompt path's GEMM: auto (default), f16 (cuBLASLt) or int8 (gemm_q8)"},
    {"prefill-weights", true,
     "the f16 GEMM's weights: auto (default: resident when a quarter of the card stays free), resident, per-chunk"},
    {"prefill-rows", true, "tokens per prompt chunk (default 2048)"},
    {"attention-rows", true, "query rows per block of the prompt path's attention kernel: 64 or 128 (default: "
     "the engine's)"},
    {"gdn-scan", true,
     "the prompt path's GDN scan: token, group (4 positions a step), chunked (64 on "
     "tensor cores) or scaled (the decay as a scale per head) (default: the engine's; kernels/gdn_prefill.h)"},
    {"kv-ahead", true,
     "K / V positions a warp of the decode attention loads a batch: 1 or 4 (default: the kernel's, "
     "kernels/attention.cu kKvAheadDefault; the same bits either way)"},
    {"memory-limit", true, "GiB of device memory to plan the load against (simulates a smaller card)"},
    {"weights", true,
     "the preset's weights as llama-quantize would write the file: q8_0 (default), f32, q4_0, q5_0, q4_k_s, "
     "q4_k_m, q5_k_s, q5_k_m, q6_k (each tensor's type by llama.cpp's rules)"},
    {"help", false, "this text"},
};

// One of a few named values of an option: --NAME VALUE with VALUE among `choices` (in the order the error
// lists them).
template <typename T>
qc::Result<T> choice(const std::string& option, const std::string& value,
                     std::initializer_list<std::pair<const char*, T>> choices) {
  std::string names;  // "a, b or c"
  size_t i = 0;
  for (const auto& [name, v] : choices) {
    if (value == name) return v;
    names += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(name);
    ++i;
  }
  return qc::make_error("--" + option + ": expected " + names + ", got \"" + value + "\"");
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

const std::vector<qc::app::OptionSpec>& bench_option_specs() { return kSpecs; }

Result<Options> parse_bench_options(int argc, char** argv, bool* help) {
  QC_ASSIGN(const qc::app::Args a, qc::app::Args::parse(argc, argv, 1, kSpecs));
  *help = a.has("help");
  Options o;
  o.preset = a.get_or("preset", o.preset);
  o.model = a.get_or("model", "");
  o.json_path = a.get_or("json", "");
  if (const auto v = a.get("variants")) {
    for (const std::string& name : split(*v)) {
      const auto g = qc::parse_gemv_variant(name);
      if (!g)
        return qc::make_error("--variants: unknown \"" + name + "\": expected " + qc::gemv_variant_list());
      o.variants.push_back(*g);
    }
  } else {
    for (int i = 0; i < qc::kGemvVariantCount; ++i) o.variants.push_back(static_cast<GemvVariant>(i));
  }
  if (const auto e = a.get("block-engines")) {
    o.block_engines.clear();
    for (const std::string& name : split(*e)) {
      const auto g = qc::parse_block_engine(name);
      if (!g)
        return qc::make_error("--block-engines: unknown \"" + name + "\": expected " + qc::block_engine_list());
      o.block_engines.push_back(*g);
    }
    if (o.block_engines.empty()) return qc::make_error("--block-engines: expected at least one engine");
  }
  if (const auto c = a.get("contexts")) {
    o.contexts.clear();
    for (const std::string& x : split(*c)) o.contexts.push_back(std::max(0, std::atoi(x.c_str())));
  }
  QC_ASSIGN(const long long t, a.get_int("tokens", o.tokens, 1, 4096));
  o.tokens = static_cast<int>(t);
  QC_ASSIGN(o.budget_s, a.get_double("budget", o.budget_s, 1.0, 1e5));
  o.quick = a.has("quick");
  o.passes = a.has("passes");
  o.only_prefill = a.has("only-prefill");
  QC_ASSIGN(o.memory_limit, a.get_gib("memory-limit", 0.25, 4096.0));
  if (const auto w = a.get("weights")) {
    // llama.cpp's file types by name; the plain ones (f32, q8_0) fill every matrix with their type, the
    // others are generated in llama.cpp's per-tensor mix (quant_mix.h) as a real file of that name would be.
    QC_ASSIGN(const qc::QuantMix m, qc::quant_mix_from_name(*w, "--weights"));
    if (m == qc::QuantMix::kF16 || m == qc::QuantMix::kBF16)
      return qc::make_error("--weights: " + *w + " is not generated on the GPU (f32, q8_0, q4_0, q5_0, q4_k_s, "
                            "q4_k_m, q5_k_s, q5_k_m, q6_k)");
    o.weights = qc::quant_mix_default_type(m);
    if (m != qc::QuantMix::kF32 && m != qc::QuantMix::kQ8_0) o.mix = m;
  }
  if (const auto c = a.get("prefill")) {
    o.prefill.prefill.clear();
    for (const std::string& x : split(*c)) o.prefill.prefill.push_back(std::max(1, std::atoi(x.c_str())));
  }
  if (const auto c = a.get("reuse")) {
    const std::vector<std::string> hm = split(*c);
    if (hm.size() != 2) return qc::make_error("--reuse: expected HISTORY,MESSAGE, got \"" + *c + "\"");
    o.prefill.history = std::max(1, std::atoi(hm[0].c_str()));
    o.prefill.message = std::max(1, std::atoi(hm[1].c_str()));
  }
  using qc::cuda::PrefillGemm, qc::cuda::PrefillWeights;
  if (const auto g = a.get("gdn-scan")) {
    QC_ASSIGN(o.gdn_scan, choice<qc::gpu::GdnScan>("gdn-scan", *g,
                                                   {{"token", qc::gpu::GdnScan::kToken},
                                                    {"group", qc::gpu::GdnScan::kGroup},
                                                    {"chunked", qc::gpu::GdnScan::kChunked},
                                                    {"scaled", qc::gpu::GdnScan::kScaled}}));
  }
  if (const auto g = a.get("prefill-gemm")) {
    QC_ASSIGN(o.prefill_gemm, choice<PrefillGemm>("prefill-gemm", *g,
                                                  {{"auto", PrefillGemm::kAuto},
                                                   {"f16", PrefillGemm::kF16},
                                                   {"int8", PrefillGemm::kInt8}}));
  }
  if (const auto w = a.get("prefill-weights")) {
    QC_ASSIGN(o.prefill_weights, choice<PrefillWeights>("prefill-weights", *w,
                                                        {{"auto", PrefillWeights::kAuto},
                                                         {"resident", PrefillWeights::kResident},
                                                         {"per-chunk", PrefillWeights::kPerChunk}}));
  }
  QC_ASSIGN(const long long pr, a.get_int("prefill-rows", o.prefill_rows, 1, qc::gpu::kMaxRows));
  o.prefill_rows = static_cast<int>(pr);
  if (const auto r = a.get("attention-rows")) {
    QC_ASSIGN(o.attention_rows, choice<int>("attention-rows", *r, {{"64", 64}, {"128", 128}}));
  }
  if (const auto r = a.get("kv-ahead")) {
    QC_ASSIGN(o.kv_ahead, choice<int>("kv-ahead", *r, {{"1", 1}, {"4", 4}}));
  }
  if (o.quick) o.tokens = std::min(o.tokens, 8);
  return o;
}

}  // namespace qc::bench_app
