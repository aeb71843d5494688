// OpenAI-compatible requests (POST /v1/chat/completions, POST /v1/completions) parsed into what the engine
// runs. Unknown fields are ignored (clients add their own); fields that would change the answer in a way
// this server cannot honour (n > 1, tools, logprobs, images, logit_bias, a JSON response format) are
// refused with a 400 that names the field, never silently dropped.
//
// Sampling: the published Qwen presets (SamplerParams::qwen_thinking / qwen_instruct, chosen by whether
// the reply thinks) for every field the request leaves out; temperature, top_p, presence_penalty, seed
// as OpenAI defines them, and top_k, min_p, repetition_penalty as the extensions vLLM and llama-server
// accept; `ignore_eos` as they accept it. No seed: a fresh random seed per request (OpenAI's behaviour); a seed gives the same reply
// for the same request on the same backend and kernels.
//
// Thinking: `chat_template_kwargs.enable_thinking` (the switch vLLM and SGLang use for Qwen3 models),
// default on for chat; the reasoning comes back separately as `reasoning_content`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "qwenchat/chat.h"
#include "qwenchat/sampling.h"
#include "server/api_error.h"

namespace qc::server {

// Bounds on one request beyond the body size (which the HTTP layer enforces).
struct RequestLimits {
  int max_messages = 4096;
  int max_stop_strings = 4;      // OpenAI's limit
  size_t max_stop_bytes = 256;   // per stop string
};

struct ApiRequest {
  bool chat = true;                   // chat completion; false: text completion of `prompt`
  std::vector<ChatMessage> messages;  // chat
  ChatRenderOptions render;           // chat: thinking on/off
  std::string prompt;                 // completion
  SamplerParams sampler;
  bool seeded = false;                // the request gave a seed
  int max_tokens = 0;                 // 0 = until a stop token or the context is full
  std::vector<std::string> stop;      // stop strings (not included in the reply)
  bool ignore_eos = false;            // extension (llama-server, vLLM): stop tokens do not end the reply
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage: a last chunk with the usage
  std::string model;                  // as the client sent it (this server has one model and answers with it)
};

using ParsedRequest = std::variant<ApiRequest, ApiError>;

// `random_seed` is used when the request has no seed (the caller draws it, so parsing stays pure).
ParsedRequest parse_chat_request(std::string_view body, uint64_t random_seed, const RequestLimits& limits = {});
ParsedRequest parse_completion_request(std::string_view body, uint64_t random_seed,
                                       const RequestLimits& limits = {});

}  // namespace qc::server
