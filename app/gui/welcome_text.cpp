#include "welcome_text.h"

#include <cstdio>

namespace qc::gui {

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
