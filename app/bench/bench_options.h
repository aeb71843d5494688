// qwenchat-bench's command line: the options, their help text and the parser (main.cpp runs them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/args.h"
#include "cuda/cuda_backend.h"
#include "model/quant_mix.h"
#include "prefill_reuse.h"
#include "qwenchat/kernel_config.h"

namespace qc::bench_app {

struct Options {
  std::string preset = "27b";
  std::string model;
  std::string json_path;
  std::vector<GemvVariant> variants;
  std::vector<BlockEngine> block_engines = {BlockEngine::kAuto};  // the decode rows run variants x engines
  std::vector<int> contexts = {0, 4096, 32768};
  int tokens = 32;
  double budget_s = 200.0;
  bool quick = false;
  bool passes = false;  // --passes: M = 2..4 pass times for every decode row (Bench::measure_variants)
  PrefillReuseOptions prefill;
  bool only_prefill = false;  // skip the decode sections (1-5 but the ceilings)
  qc::cuda::PrefillGemm prefill_gemm = qc::cuda::PrefillGemm::kAuto;
  qc::cuda::PrefillWeights prefill_weights = qc::cuda::PrefillWeights::kAuto;
  int prefill_rows = qc::cuda::CudaBackendOptions{}.prefill_rows;
  qc::gpu::GdnScan gdn_scan = qc::cuda::CudaBackendOptions{}.gdn_scan;
  int attention_rows = 0;    // CudaBackendOptions::attention_rows
  int kv_ahead = 0;          // CudaBackendOptions::attention_kv_ahead
  qc::DType weights = qc::DType::kQ8_0;  // the preset's matrix type
  std::optional<qc::QuantMix> mix;       // or a mix: each tensor's type as llama.cpp's quantizer picks it
  uint64_t memory_limit = 0;             // --memory-limit GiB (CudaBackendOptions::memory_limit)
};

// The option table (for --help).
const std::vector<qc::app::OptionSpec>& bench_option_specs();

// Parses argv; *help is set when --help was given.
Result<Options> parse_bench_options(int argc, char** argv, bool* help);

}  // namespace qc::bench_app
