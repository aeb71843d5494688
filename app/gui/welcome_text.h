// What the welcome panel of an empty conversation says (#14), as plain data so it is tested without a
// window: the loaded model in a few facts, the bundled model's abilities, example prompts; the memory real
// Qwen3.5-family sizes take comes from the engine (qwenchat/model_sizes.h), computed from their shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qwenchat/events.h"
#include "qwenchat/model_sizes.h"

namespace qc::gui {

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
