// A model behind an OpenAI-compatible endpoint, as the worker runs it: connect (GET /v1/models: reachable,
// key accepted, model listed), then each GenerateCommand becomes a streamed POST /v1/chat/completions
// whose server-sent events turn into the same worker events a local generation sends (events.h), so the
// chat view, history, export and diagnostics work unchanged. Thinking arrives as reasoning_content
// (qwenchat-server, llama-server, older vLLM) or reasoning (newer vLLM).
//
// What is measured here, not reported by the remote: time to first token and decode tokens/s (from the
// arrival of the chunks, so they include the network); the token counts come from the remote's usage.
// Per-layer norms, MTP counters and bytes per token do not exist for a remote model.
#pragma once

#include <string>

#include "qwenchat/events.h"
#include "qwenchat/result.h"
#include "qwenchat/session.h"
#include "runtime/worker_generate.h"

namespace qc {

struct RemoteModel {
  RemoteEndpoint endpoint;
  std::string origin;     // "http://host:port"
  std::string base_path;  // "/v1"
  std::string model_id;   // the model requests name
  int n_ctx = 0;          // max_model_len when the server lists it (vLLM, qwenchat-server), else 0
};

bool remote_endpoints_compiled();  // false when the build has no HTTP client (cpp-httplib)

// Errors name the URL and what went wrong: refused, timed out, the key refused (401/403), not an
// OpenAI-compatible server, the model not served.
Result<RemoteModel> connect_remote(const RemoteEndpoint& endpoint);
ModelFacts describe_remote(const RemoteModel& model);
// Emits GenerationStarted, TokenDelta/StatsSnapshot per chunk and one GenerationFinished, like
// run_generation; cancellation (ctx.cancelled) closes the connection within one chunk.
void run_remote_generation(const GenerateCommand& command, const RemoteModel& model, const GenerationContext& ctx);

}  // namespace qc
