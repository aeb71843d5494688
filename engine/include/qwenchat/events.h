// Events the worker thread sends back to the app (qwenchat/worker.h). Plain structs: the app drains
// them once per frame and never touches the engine; the worker never touches the UI.
//
// Order guarantees, per generation id: GenerationStarted (once the prompt is encoded and fits), then
// TokenDelta and StatsSnapshot interleaved (a token's snapshot follows its delta), then exactly one
// GenerationFinished. Every GenerateCommand gets its GenerationFinished, also when it fails before
// starting (no model loaded, prompt too long): then stop_reason is error and there is no Started.
// A load gives ModelLoading events (with a fraction while the CUDA backend uploads weights), then
// ModelLoaded or ModelLoadFailed. A backend switch or a
// settings change gives a WorkerNotice and, when it worked, a ModelLoaded with the new facts. A kernel
// config gives a WorkerNotice ("kernels") when it is applied (or refused) and a ModelLoaded.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "qwenchat/engine.h"
#include "qwenchat/kernel_config.h"
#include "qwenchat/result.h"
#include "qwenchat/sampling.h"
#include "qwenchat/session.h"
#include "qwenchat/stats.h"

namespace qc {

// What the model panel shows about a loaded model.
struct ModelFacts {
  std::string path;
  std::string name;          // general.name, may be empty
  std::string architecture;  // "qwen35"
  std::string summary;       // ModelConfig::summary()
  std::string quantization;  // the type holding most of the layer weights' bytes: "Q8_0"
  std::string tokenizer;     // "bpe/qwen35"
  uint64_t n_params = 0;     // elements of every tensor in the file
  uint64_t file_bytes = 0;
  uint64_t bytes_per_token = 0;  // weight bytes one decoded token reads (Model::bytes_per_token)
  int n_layer = 0;
  int n_embd = 0;
  int n_vocab = 0;
  int n_ctx_train = 0;
  int n_ctx = 0;                         // positions the backend holds
  int n_mtp = 0;                         // MTP layers; 0 = no MTP block
  bool remote = false;                   // an OpenAI-compatible endpoint runs the model (path = its URL)
  std::vector<bool> layer_is_recurrent;  // per main layer: true = Gated DeltaNet, false = attention
  BackendKind backend_kind = BackendKind::kCpu;
  BackendInfo backend;   // name, device, memory_bytes (CPU: state + scratch; CUDA: device weights + state)
  KernelConfig kernels;  // in use (meaningful on the CUDA backend)
  // The GEMV variant's name on the CUDA backend, empty on the CPU (which has no kernel variants).
  std::string kernel_variant() const {
    return backend_kind == BackendKind::kCuda ? gemv_variant_name(kernels.gemv) : std::string();
  }
  // The file mapping (host) plus what the backend allocated (host or device).
  uint64_t memory_bytes() const { return file_bytes + backend.memory_bytes; }
};

struct ModelLoading {
  std::string path;
  std::string stage;     // "opening", "building the cpu backend"
  double fraction = -1;  // 0..1, or -1 when the stage has no measurable progress
};
struct ModelLoaded {
  ModelFacts facts;
};
struct ModelLoadFailed {
  std::string path;
  Error error;
};

struct GenerationStarted {
  uint64_t id = 0;
  int prompt_tokens = 0;
  int prompt_reused = 0;  // of prompt_tokens, held by a kept state (not prefilled again)
  int n_ctx = 0;
  int dropped_messages = 0;  // earliest turns left out to fit the context
  std::string backend;       // BackendInfo::name
  std::string kernel;        // GEMV variant on the CUDA backend, empty on the CPU
};

// The text one token added, already split into the reply's thinking and content (parse_reply). Each part
// normally grows by appending `*_delta`; when a part changed otherwise (the "</think>" marker trims the
// thinking's trailing newlines) `*_replace` is true and the delta is the whole part.
struct TokenDelta {
  uint64_t id = 0;
  int index = 0;  // 0-based generated token
  std::string thinking_delta;
  std::string content_delta;
  bool thinking_replace = false;
  bool content_replace = false;
  bool in_thinking = false;  // the think block is still open
};

// Live figures after each token. Rates are measured by the worker from the token callbacks (the exact
// per-generation figures come with GenerationFinished).
struct StatsSnapshot {
  uint64_t id = 0;
  int prompt_tokens = 0;
  int prompt_reused = 0;  // of prompt_tokens, held by a kept state (runtime/prefix_cache.h)
  int generated_tokens = 0;
  double elapsed_s = 0;            // since the generation started
  double ttft_s = 0;               // time to the first token (prefill + first sample)
  double prefill_tok_per_s = 0;    // prefilled tokens (prompt_tokens - prompt_reused) / ttft
  double decode_tok_per_s = 0;     // tokens after the first / time since the first
  std::vector<float> layer_norms;  // per main layer, empty when probes are off
  int context_used = 0;            // backend position
  int context_size = 0;
  uint64_t memory_bytes = 0;  // mapped weights + backend state
  uint64_t bytes_per_token = 0;
  // MTP so far (mtp_draft_len 0: off): drafts made and accepted per draft position.
  int mtp_draft_len = 0;
  std::array<int64_t, kMaxDraftLen> mtp_drafted{};
  std::array<int64_t, kMaxDraftLen> mtp_accepted{};
};

struct GenerationFinished {
  uint64_t id = 0;
  StopReason stop_reason = StopReason::error;
  std::string error;  // when stop_reason == error
  // Why a generation failed before it started (no GenerationStarted): "no_model", "invalid_request"
  // (sampler, token limit, empty prompt), "context_length_exceeded"; empty otherwise. The API server
  // turns these into HTTP statuses.
  std::string error_kind;
  std::string note;   // e.g. MTP requested on a model without an MTP block
  std::string text;   // the whole reply as generated (control tokens hidden)
  ReplyParts parts;   // thinking / content split of `text`
  GenerationStats stats;
  bool mtp_used = false;
  std::string backend;  // BackendInfo::name
  std::string kernel;   // GEMV variant at the end of the reply (CUDA), empty on the CPU
  int context_used = 0;
  int context_size = 0;
};

// A command finished (backend switch, settings) or failed outside a generation or a load.
struct WorkerNotice {
  std::string what;  // "switch backend", "settings"
  bool ok = true;
  std::string message;
};

using WorkerEvent = std::variant<ModelLoading, ModelLoaded, ModelLoadFailed, GenerationStarted, TokenDelta,
                                 StatsSnapshot, GenerationFinished, WorkerNotice>;

}  // namespace qc
