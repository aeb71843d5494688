// OpenAI-compatible response bodies: whole completions, streaming chunks (each one server-sent event),
// the model list. Text is written with invalid UTF-8 replaced by U+FFFD (the generator only emits whole
// characters, so this is a guard, never a silent change of a valid reply).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "qwenchat/stats.h"

namespace qc::server {

struct ResponseIds {
  std::string id;     // "chatcmpl-..." or "cmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};

struct Usage {
  int prompt_tokens = 0;
  int cached_tokens = 0;  // of prompt_tokens, reused from a kept state (runtime/prefix_cache.h)
  int completion_tokens = 0;
};

// The end of a reply: "stop" (a stop token or stop string) or "length" (max_tokens, or the context is
// full), the usage, and the generator's figures, sent as `timings` with llama-server's field names (so
// tools that read those work) plus ttft_ms and the MTP acceptance per draft position.
struct Finish {
  std::string reason;
  Usage usage;
  GenerationStats stats;
};

// Whole responses.
std::string chat_completion_json(const ResponseIds& ids, const std::string& reasoning, const std::string& content,
                                 const Finish& finish);
std::string text_completion_json(const ResponseIds& ids, const std::string& text, const Finish& finish);

// One streaming chunk as a server-sent event ("data: {...}\n\n"). Chat: a delta with the role (first
// chunk), reasoning_content and/or content; `finish` set: the final chunk with finish_reason.
std::string chat_chunk_event(const ResponseIds& ids, bool first, const std::string& reasoning,
                             const std::string& content, const Finish* finish);
std::string text_chunk_event(const ResponseIds& ids, const std::string& text, const Finish* finish);
// The usage chunk (stream_options.include_usage): empty choices and the usage.
std::string usage_event(const ResponseIds& ids, bool chat, const Finish& finish);
// An error inside a stream that already started.
std::string error_event(const std::string& message);
inline const char* done_event() { return "data: [DONE]\n\n"; }

std::string models_json(const std::string& model, int64_t created, int n_ctx);

}  // namespace qc::server
