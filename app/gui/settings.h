// The app's settings: one flat struct with defaults and range checks (STYLE.md), saved in the config file.
// Sampling, thinking and MTP travel with each GenerateCommand, so a change applies to the next reply;
// context length, threads and memory rebuild the backend (a worker command queued behind the reply in
// progress, so they also apply from the next reply on); kernels and probes switch at the next token.
// The JSON form keeps its flat keys ("n_ctx", "probes", "mtp_draft"...), so older config files load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "qwenchat/kernel_config.h"
#include "qwenchat/sampling.h"
#include "qwenchat/session.h"

namespace qc::gui {

struct Settings {
  // Sampling (SamplerParams; Qwen's published non-thinking preset by default).
  float temperature = 0.7f;
  int top_k = 20;
  float top_p = 0.8f;
  float min_p = 0.0f;
  float presence_penalty = 0.0f;
  float repetition_penalty = 1.0f;
  bool random_seed = true;  // a fresh seed per reply (stored with the reply, so it can be replayed)
  uint64_t seed = 0;        // used when random_seed is off
  int max_tokens = 1024;

  bool thinking = false;  // the reply opens a think block

  // The engine (context, threads, kept-state and GPU memory: a backend rebuild; kernels and probes: applied
  // live) in the engine's own type, so each of these settings has one home on its way to the backend.
  // Probes on by default here (the diagnostics panel shows the per-layer norms), off in the engine's own.
  EngineSettings engine{.kernels = KernelConfig{.probes = true}};

  // Speculative decoding with the model's MTP block, sent with each reply. On by default: greedy output is
  // unchanged and sampled output keeps its distribution (the verifier accepts or resamples), so it only
  // costs when acceptance is low, and the diagnostics panel shows that acceptance. Ignored for a model
  // without the block.
  MtpOptions mtp{.enabled = true, .draft_len = 1};

  // The OpenAI-compatible API on 127.0.0.1 (api_host.h), sharing the loaded model. Off by default: a
  // listening port is the user's decision.
  bool api_server = false;
  int api_port = 8080;  // 0: any free port

  // Appearance.
  float ui_scale = 1.0f;
  bool dark_theme = true;

  // Puts every field back in its range (a hand-edited config never breaks the app); returns one line per
  // field that was changed ("top_p 1.5 is outside [0.01, 1]: using 1").
  std::vector<std::string> clamp();

  SamplerParams sampler(uint64_t seed_for_reply) const;

  nlohmann::json to_json() const;
  // Missing keys keep their defaults; wrong types are reported in `warnings` and skipped.
  static Settings from_json(const nlohmann::json& j, std::vector<std::string>* warnings);

  // Field by field through the JSON form (KernelConfig has no operator==).
  bool operator==(const Settings& o) const { return to_json() == o.to_json(); }
};

// Presets for the sampling section (QWEN35.md section 7).
void apply_qwen_thinking_preset(Settings& s);
void apply_qwen_instruct_preset(Settings& s);
void apply_greedy_preset(Settings& s);

}  // namespace qc::gui
