// The decode loop: prefill a prompt on a Backend, sample tokens, stream their text, stop on a stop token,
// a token budget, cancellation or a full context, and optionally speculate with the MTP block (greedy
// with MTP gives exactly the tokens of greedy without it; sampled output keeps its distribution).
//
// Backend state contract: the prompt is appended at backend.position() (call backend.reset() first for
// a fresh context). When generate() returns without an error the backend holds the prompt and every
// generated token except the last one, i.e. position() == start + prompt + generated - 1 (the last
// token was sampled but never run; start + prompt when nothing was generated); a follow-up prompt that
// continues the conversation starts with that token. Exceptions: a cancellation during the prefill
// leaves only the chunks that ran; after StopReason::error the state is unspecified (it may even hold a
// pending speculative forward, which refuses every call but reset()): reset it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "generate/backend.h"
#include "generate/sampler.h"
#include "qwenchat/result.h"
#include "qwenchat/sampling.h"
#include "qwenchat/stats.h"

namespace qc {

class Tokenizer;

struct GenerateRequest {
  std::vector<int32_t> prompt;       // token ids, appended at backend.position(); not empty
  int max_new_tokens = 512;          // >= 0 (0 = prefill only)
  SamplerParams sampler;             // validated before any work
  std::vector<int32_t> stop_tokens;  // e.g. tokenizer.special().stop; the stop token is returned in
                                     // tokens but its text is not added
  MtpOptions mtp;
  // Penalties look at generated tokens only (vLLM semantics, which the published Qwen presence penalty
  // was tuned with); true also feeds the prompt into the penalty window (llama.cpp semantics).
  bool penalize_prompt = false;
  // 0 = none. In [1, prompt.size()): the prefill ends a chunk after prompt[checkpoint - 1] and calls
  // GenerateObserver::on_checkpoint there, while the backend holds exactly the tokens before
  // prompt[checkpoint] (a state worth keeping: runtime/prefix_cache.h keeps the one at a reply's turn
  // boundary, which a regenerated reply and the next message both start from). Costs one more forward
  // pass when it splits a chunk.
  int checkpoint = 0;
};

// One emitted token. `text` holds the complete UTF-8 characters this token finished (may be empty: a
// token that only starts a character, a control or a stop token); valid until the callback returns.
struct TokenEvent {
  int32_t token = 0;
  int index = 0;  // 0-based among the generated tokens
  std::string_view text;
  // The generation's counters so far (MTP drafted/accepted per position, passes), valid during the callback:
  // what lets a caller show MTP acceptance live.
  const GenerationStats* stats = nullptr;
};

// Everything the caller hears while generate() runs, on generate()'s own thread.
struct GenerateObserver {
  std::function<void(const TokenEvent&)> on_token;
  // End of the stream: bytes of an unfinished character come out as U+FFFD. Called only when non-empty.
  std::function<void(std::string_view)> on_text_tail;
  // Cancellation, consulted between prefill chunks and before every token (either may be unset).
  const std::atomic<bool>* cancel = nullptr;
  std::function<bool()> should_cancel;
  // GenerateRequest::checkpoint reached. `hidden` is the post-norm hidden state of the last position the
  // backend holds (what an MTP continuation from there needs, Generator::set_context_hidden); empty when
  // the backend returned none. Valid during the call.
  std::function<void(std::span<const float> hidden)> on_checkpoint;
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated ids, stop token included
  std::string text;             // == concatenation of every TokenEvent::text and the tail
  StopReason stop_reason = StopReason::max_tokens;
  int32_t stop_token = -1;  // the stop token hit, -1 otherwise
  std::string error;        // what failed when stop_reason == error
  bool mtp_used = false;
  std::string note;  // e.g. "MTP requested but the model has no MTP block: decoding without it"
  GenerationStats stats;
};

// What the generator needs from a tokenizer: a token's bytes (possibly a partial character) and whether
// it is a control token, whose text is never shown. A plain struct so tests need no full Tokenizer.
struct TokenText {
  std::function<std::string(int32_t)> bytes;
  std::function<bool(int32_t)> is_control;
  // Refers to `tokenizer`, which must outlive the result.
  static TokenText from(const Tokenizer& tokenizer);
};

struct GeneratorOptions {
  int prefill_chunk = 64;  // prompt tokens per forward pass (>= 1), capped by backend.max_batch()
};

class Generator {
 public:
  Generator(Backend& backend, TokenText text, GeneratorOptions options = {});
  Generator(Backend& backend, const Tokenizer& tokenizer, GeneratorOptions options = {});

  // Errors (returned before any backend call): invalid sampler params, max_new_tokens < 0, MTP draft
  // length out of range, empty prompt, a prompt token outside [0, n_vocab), a prompt that does not fit
  // the context, prefill_chunk < 1. Failures during the work end the result with StopReason::error.
  Result<GenerateResult> generate(const GenerateRequest& request, const GenerateObserver& observer = {});

  // The post-norm hidden state at position pos of the backend's context (the last one it holds): with
  // MTP, a prompt that continues at pos + 1 first writes the MTP cache entry at pos from it and the
  // prompt's first token. generate() keeps it up to date for the next call on this generator; a new
  // generator on a kept state (runtime/prefix_cache.h) is handed it here. Empty `hidden` forgets it.
  void set_context_hidden(int pos, std::vector<float> hidden);
  int context_hidden_pos() const { return last_hidden_pos_; }  // -1 = none
  const std::vector<float>& context_hidden() const { return last_hidden_; }

 private:
  struct Run;  // one call's state (generator.cpp)
  Status validate(const GenerateRequest& request) const;
  Status prefill(Run& run);
  Status prefill_path(Run& run);  // the backend's own prompt path (Backend::prefill)
  Status step(Run& run);
  Status fill_mtp(Run& run, int32_t token, std::span<const float> hidden, int pos);
  void emit(Run& run, int32_t token, std::span<const float> logits_row);
  bool cancelled(const Run& run) const;
  // Prompt tokens per forward pass: the option, capped by what the backend takes in one call.
  int prefill_chunk() const { return std::max(1, std::min(options_.prefill_chunk, backend_.max_batch())); }

  Backend& backend_;
  TokenText text_;
  GeneratorOptions options_;
  // Post-norm hidden state at position last_hidden_pos_, kept across calls so that a continuing prompt
  // can fill the MTP cache entry at start - 1 (its token is the prompt's first).
  std::vector<float> last_hidden_;
  int last_hidden_pos_ = -1;
};

}  // namespace qc
