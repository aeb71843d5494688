// What the real Qwen3.5-family sizes take in memory, computed from their shapes (engine/model/presets.cpp)
// rather than typed: the parameters, the weights' bytes in each file format this engine reads, and the
// caches for a context (the CPU backend's exact allocation rule). The GUI's welcome panel shows it as a
// table before any model is loaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qc {

// A number format for the table: bits per weight of the 2-D weights (norms and other vectors stay F32,
// as llama.cpp writes them).
struct WeightFormat {
  const char* name;
  double bits_per_weight;
  bool loadable;  // this app's engine reads it (all three now; Q4_K_M on the CPU backend only)
};
// Q4_K_M (4.85 bits: the average llama.cpp reports for its Q4_K_M files), Q8_0 (34 bytes per 32
// weights = 8.5 bits), F16 (16 bits).
const std::vector<WeightFormat>& weight_formats();

struct SizeEstimate {
  std::string preset;                  // "0.8b", "27b"
  uint64_t n_params = 0;               // the shape's parameters, MTP block included
  std::vector<uint64_t> weight_bytes;  // per weight_formats() entry
  uint64_t cache_bytes = 0;  // KV caches, Gated DeltaNet states and scratch for n_ctx (CPU backend, f32)
  int n_ctx = 0;             // the context the caches are for (capped at the shape's training context)
};
// Every real size among the presets (0.8b .. 27b), for a context of n_ctx positions.
std::vector<SizeEstimate> qwen_size_estimates(int n_ctx);

}  // namespace qc
