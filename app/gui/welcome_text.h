// What the welcome panel of an empty conversation says (#14), as plain data so it is tested without a
// window: the loaded model in a few facts, the bundled model's abilities, example prompts, and the memory
// real Qwen3.5-family sizes take, computed from their shapes (engine/model/presets.cpp) rather than typed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/presets.h"
#include "qwenchat/events.h"

namespace qc::gui {

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
// One shape (tested against a file of the tiny shape that the engine writes and reads).
SizeEstimate estimate_for_shape(const ModelShape& shape, int n_ctx);

// "Qwen3.5 27b" style label and "27.4 B" parameter text.
std::string format_params(uint64_t n);

struct WelcomeText {
  std::string title;                 // "The bundled model is loaded" / "Model: <name>"
  std::vector<std::string> facts;    // name, parameters, context, format
  std::string about;                 // what it is and what it can do (the bundled model), else empty
  std::vector<std::string> prompts;  // examples that fill the message box
};
// For the loaded model (nullptr: none), `is_default`: it is the bundled model (app/common/default_model.h).
WelcomeText welcome_text(const ModelFacts* facts, bool is_default);

}  // namespace qc::gui
