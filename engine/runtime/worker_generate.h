// One generation as the worker runs it: fit the conversation into the context, prefill, stream token
// deltas split into thinking/content with live stats, finish with the generator's own figures.
#pragma once

#include <functional>

#include "qwenchat/events.h"
#include "qwenchat/session.h"
#include "runtime/engine.h"

namespace qc {
class PrefixCache;
}

namespace qc {

struct GenerationContext {
  Engine* engine = nullptr;               // null: no model loaded (the generation finishes with an error)
  const KernelConfig* kernels = nullptr;  // in use (reported with the stats); may change at a token boundary
  std::function<bool()> cancelled;
  std::function<void(WorkerEvent)> emit;
  std::function<void(int index)> at_token;  // after each token's events (kernel switches); may be empty
  // Kept states of this engine's backend (runtime/prefix_cache.h); null = every reply prefills its whole
  // prompt from a reset backend.
  PrefixCache* cache = nullptr;
};

// Emits GenerationStarted / TokenDelta / StatsSnapshot / GenerationFinished as events.h describes;
// never throws past its caller's catch (the worker converts exceptions into a GenerationFinished).
void run_generation(const GenerateCommand& command, const GenerationContext& context);

// Encodes `history`, leaving out the earliest turns (never a leading system message or the last turn)
// until the prompt plus `reserve` tokens fit in `n_ctx`; with `drop_oldest` false a prompt that does not
// fit is an error. Exposed for tests.
struct FittedPrompt {
  std::vector<int32_t> tokens;
  int dropped_messages = 0;
  // Tokens this prompt shares with the next one: the conversation up to the reply's "<|im_start|>"
  // (not further: the next turn renders the reply after "assistant\n" instead of the think markup, and
  // that text may tokenize differently next to it). A regenerated reply and the next message both start
  // from a state kept here (runtime/prefix_cache.h). A raw prompt: all but its last token.
  int turn_boundary = 0;
};
Result<FittedPrompt> fit_prompt(const Tokenizer& tokenizer, std::vector<ChatMessage> history,
                                const ChatRenderOptions& render, int n_ctx, int reserve, bool drop_oldest = true);
// A raw prompt (special-token text parsed) that must fit with `reserve` tokens to spare.
Result<FittedPrompt> fit_raw_prompt(const Tokenizer& tokenizer, const std::string& prompt, int n_ctx, int reserve);

// The change from `before` to `after` as a delta (append, or replace when `after` does not extend it).
void part_delta(const std::string& before, const std::string& after, std::string* delta, bool* replace);

}  // namespace qc
