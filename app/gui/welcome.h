// The welcome panel of an empty conversation (#14): the loaded model in a few facts (for the bundled one,
// what it was trained on and can do), example prompts that fill the message box, how to load a real
// Qwen3.5 GGUF (Open a model file…, drag and drop) with the memory each size and format takes, computed
// from the shapes (welcome_text.h).
#pragma once

#include <string>
#include <vector>

#include "ui_context.h"
#include "welcome_text.h"

namespace qc::gui {

class WelcomePanel {
 public:
  // Draws into the chat's message area, `width` wide (the reading column); an example prompt clicked
  // replaces `composer`: returns true then (the chat panel focuses its input).
  bool draw(UiContext& ctx, std::string& composer, float width);

 private:
  bool is_default(const ModelFacts& f);
  void size_table(UiContext& ctx, float width);

  std::string default_for_;  // the path is_default_ was computed for
  bool is_default_ = false;
  int estimates_ctx_ = -1;  // the context the estimates are for
  std::vector<SizeEstimate> estimates_;
};

}  // namespace qc::gui
