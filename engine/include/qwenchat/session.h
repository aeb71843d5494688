// Commands the app sends to the worker thread (qwenchat/worker.h): load a model, generate a reply
// to a conversation, switch the backend, change engine settings. Plain structs with value semantics: a
// command is copied into the worker's queue, so the caller's data may change right after post().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "qwenchat/chat.h"
#include "qwenchat/engine.h"
#include "qwenchat/kernel_config.h"
#include "qwenchat/sampling.h"

namespace qc {

// Engine settings that need the backend rebuilt (context size, threads, memory). Applied between
// generations: a command posted while a reply streams waits in the queue until that reply ends.
struct EngineSettings {
  // The ranges validate() accepts; the app's config file is clamped to the same ones.
  static constexpr int kMinCtx = 16, kMaxCtx = 1 << 20;
  static constexpr int kMaxThreads = 1024;
  static constexpr int kMaxStateCacheMb = 1 << 20;
  static constexpr int kMaxGpuMemoryMb = 1 << 22;

  int n_ctx = 4096;      // positions of context (clamped to the model's training context)
  int n_threads = 0;     // CPU backend threads; 0 = all cores
  // Kernels and probes at load time (later changes: SetKernelConfigCommand, no rebuild).
  KernelConfig kernels;
  // Memory for kept conversation states (runtime/prefix_cache.h: recurrent-state snapshots at turn
  // boundaries, in device memory on the CUDA backend), in MiB; 0 = keep only the live state. 1024 holds
  // six 27B-shape snapshots (151 MB each) or thousands of small-model ones.
  int state_cache_mb = 1024;
  // CUDA backend: device memory to plan the load against in MiB, at most what is free; 0 = the free memory
  // (EngineOptions::gpu_memory_limit).
  int gpu_memory_mb = 0;

  // Range checks: "n_ctx must be in [16, 1048576], got 3".
  Status validate() const;
};

// An OpenAI-compatible server that runs the model instead of this process (qwenchat-server, vLLM,
// SGLang, llama-server: a model on several GPUs, or on another machine).
struct RemoteEndpoint {
  std::string url;      // "http://host:port/v1" (a URL without a path gets /v1)
  std::string api_key;  // sent as "Authorization: Bearer KEY" when not empty
  std::string model;    // the id to request; empty = the first one GET /v1/models lists
};

// Opens a GGUF (or, with `remote` set, connects to an endpoint instead); the loaded engine replaces the
// current one only when the load succeeds.
struct LoadModelCommand {
  std::string path;
  BackendKind backend = BackendKind::kCpu;
  EngineSettings settings;
  std::optional<RemoteEndpoint> remote;
};

// Generates the assistant's reply to `history` (the whole conversation, oldest first, ending with the
// user turn to answer). The worker re-encodes the conversation each time and prefills only what no kept
// state holds (runtime/prefix_cache.h: the template drops earlier thinking, so a new prompt is not
// always an extension of the previous context).
struct GenerateCommand {
  uint64_t id = 0;  // chosen by the caller; every event of this generation carries it
  // The conversation it belongs to (the app's id; 0 = none, e.g. an API request): switching to another
  // one parks this one's kept state with its KV entries (runtime/prefix_cache.h).
  uint64_t conversation = 0;
  std::vector<ChatMessage> history;
  ChatRenderOptions render;  // system prompt, thinking on/off
  SamplerParams sampler;
  int max_new_tokens = 512;
  MtpOptions mtp;
  // Earliest turns are dropped (never the system prompt or the last turn) until the prompt leaves room
  // for this many new tokens; a GenerationStarted note says how many were dropped.
  int reserve_tokens = 256;
  // false: a conversation that does not fit fails with an error instead (an API client sent exactly
  // these messages and must hear that they do not fit, not get an answer to fewer of them).
  bool drop_oldest_turns = true;
  // Set: the prompt is this text as is (special-token text in it becomes special tokens, as a raw
  // completion API expects), `history` and `render` are ignored and the whole reply is content.
  std::optional<std::string> raw_prompt;
  // true: the model's stop tokens do not end the reply (benchmarks, and llama-server's / vLLM's
  // `ignore_eos`); max_new_tokens or the context still do.
  bool ignore_stop_tokens = false;
};

// Replaces the backend of the loaded model (the context is emptied).
struct SwitchBackendCommand {
  BackendKind backend = BackendKind::kCpu;
};

// Rebuilds the engine with new settings (same model file and backend).
struct UpdateSettingsCommand {
  EngineSettings settings;
};

// Unloads the model (frees its memory).
struct UnloadModelCommand {};

// Kernel variants (GEMV family, fusions, CUDA graph, PDL). Does not wait in the queue: a reply in progress
// switches at its next token boundary (Backend::set_kernel_config applies at the next forward call, the
// CUDA backend re-captures its graph there); otherwise it applies before the next queued command. A later
// load or rebuild uses the kernels its own command carries. The CPU backends accept any valid config and
// change nothing.
struct SetKernelConfigCommand {
  KernelConfig kernels;
};

using WorkerCommand = std::variant<LoadModelCommand, GenerateCommand, SwitchBackendCommand,
                                   UpdateSettingsCommand, UnloadModelCommand, SetKernelConfigCommand>;

}  // namespace qc
