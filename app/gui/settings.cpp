#include "settings.h"

#include <algorithm>
#include <cstdio>

namespace qc::gui {
namespace {

template <class T>
void clamp_field(std::vector<std::string>& notes, const char* name, T& v, T lo, T hi) {
  if (v >= lo && v <= hi) return;  // NaN fails both comparisons and is reset below
  const T fixed = v < lo ? lo : (v > hi ? hi : lo);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %g is outside [%g, %g]: using %g", name, static_cast<double>(v),
                static_cast<double>(lo), static_cast<double>(hi), static_cast<double>(fixed));
  notes.emplace_back(buf);
  v = fixed;
}

template <class T>
void read(const nlohmann::json& j, const char* key, T& out, std::vector<std::string>* warnings) {
  const auto it = j.find(key);
  if (it == j.end()) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    if (warnings)
      warnings->push_back(std::string("settings.") + key + ": expected a " +
                          (std::is_same_v<T, bool> ? "boolean" : "number") + ", got " + it->dump());
  }
}

}  // namespace

std::vector<std::string> Settings::clamp() {
  std::vector<std::string> n;
  clamp_field(n, "temperature", temperature, 0.0f, 5.0f);
  clamp_field(n, "top_k", top_k, 0, 1 << 20);
  clamp_field(n, "top_p", top_p, 0.01f, 1.0f);
  clamp_field(n, "min_p", min_p, 0.0f, 1.0f);
  clamp_field(n, "presence_penalty", presence_penalty, -2.0f, 2.0f);
  clamp_field(n, "repetition_penalty", repetition_penalty, 0.5f, 2.0f);
  clamp_field(n, "max_tokens", max_tokens, 1, 1 << 20);
  // The engine's own ranges (EngineSettings::validate), so a clamped file always passes the engine's check.
  clamp_field(n, "n_ctx", engine.n_ctx, EngineSettings::kMinCtx, EngineSettings::kMaxCtx);
  clamp_field(n, "n_threads", engine.n_threads, 0, EngineSettings::kMaxThreads);
  clamp_field(n, "state_cache_mb", engine.state_cache_mb, 0, EngineSettings::kMaxStateCacheMb);
  clamp_field(n, "gpu_memory_mb", engine.gpu_memory_mb, 0, EngineSettings::kMaxGpuMemoryMb);
  clamp_field(n, "mtp_draft", mtp.draft_len, 1, kMaxDraftLen);
  clamp_field(n, "ui_scale", ui_scale, 0.5f, 3.0f);
  clamp_field(n, "api_port", api_port, 0, 65535);  // 0: any free port (Settings shows which)
  if (const std::string bad = engine.kernels.validate(); !bad.empty()) {
    n.push_back("kernels: " + bad + ": using the defaults");
    engine.kernels = KernelConfig{.probes = engine.kernels.probes};
  }
  return n;
}

SamplerParams Settings::sampler(uint64_t seed_for_reply) const {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  p.presence_penalty = presence_penalty;
  p.repetition_penalty = repetition_penalty;
  p.seed = seed_for_reply;
  return p;
}

nlohmann::json Settings::to_json() const {
  return {{"temperature", temperature},
          {"top_k", top_k},
          {"top_p", top_p},
          {"min_p", min_p},
          {"presence_penalty", presence_penalty},
          {"repetition_penalty", repetition_penalty},
          {"random_seed", random_seed},
          {"seed", seed},
          {"max_tokens", max_tokens},
          {"thinking", thinking},
          {"n_ctx", engine.n_ctx},
          {"n_threads", engine.n_threads},
          {"probes", engine.kernels.probes},
          {"state_cache_mb", engine.state_cache_mb},
          {"gpu_memory_mb", engine.gpu_memory_mb},
          {"mtp", mtp.enabled},
          {"mtp_draft", mtp.draft_len},
          {"api_server", api_server},
          {"api_port", api_port},
          {"ui_scale", ui_scale},
          {"dark_theme", dark_theme},
          {"kernels",
           {{"gemv", gemv_variant_name(engine.kernels.gemv)},
            {"split_k", engine.kernels.split_k},
            {"tile_rows_per_warp", engine.kernels.tile_rows_per_warp},
            {"tile_unroll", engine.kernels.tile_unroll},
            {"tile_blocks_per_sm", engine.kernels.tile_blocks_per_sm},
            {"block_engine", block_engine_name(engine.kernels.block_engine)},
            {"fuse_residual_norm_quant", engine.kernels.fuse_residual_norm_quant},
            {"fuse_gate_up", engine.kernels.fuse_gate_up},
            {"cuda_graph", engine.kernels.cuda_graph},
            {"programmatic_launch", engine.kernels.programmatic_launch}}}};
}

Settings Settings::from_json(const nlohmann::json& j, std::vector<std::string>* warnings) {
  Settings s;
  if (!j.is_object()) {
    if (warnings) warnings->push_back("settings: expected an object, got " + j.dump());
    return s;
  }
  read(j, "temperature", s.temperature, warnings);
  read(j, "top_k", s.top_k, warnings);
  read(j, "top_p", s.top_p, warnings);
  read(j, "min_p", s.min_p, warnings);
  read(j, "presence_penalty", s.presence_penalty, warnings);
  read(j, "repetition_penalty", s.repetition_penalty, warnings);
  read(j, "random_seed", s.random_seed, warnings);
  read(j, "seed", s.seed, warnings);
  read(j, "max_tokens", s.max_tokens, warnings);
  read(j, "thinking", s.thinking, warnings);
  read(j, "n_ctx", s.engine.n_ctx, warnings);
  read(j, "n_threads", s.engine.n_threads, warnings);
  read(j, "probes", s.engine.kernels.probes, warnings);
  read(j, "state_cache_mb", s.engine.state_cache_mb, warnings);
  read(j, "gpu_memory_mb", s.engine.gpu_memory_mb, warnings);
  read(j, "mtp", s.mtp.enabled, warnings);
  read(j, "mtp_draft", s.mtp.draft_len, warnings);
  read(j, "api_server", s.api_server, warnings);
  read(j, "api_port", s.api_port, warnings);
  read(j, "ui_scale", s.ui_scale, warnings);
  read(j, "dark_theme", s.dark_theme, warnings);
  if (const auto k = j.find("kernels"); k != j.end() && k->is_object()) {
    if (const auto g = k->find("gemv"); g != k->end()) {
      const auto v = g->is_string() ? parse_gemv_variant(g->get<std::string>()) : std::nullopt;
      if (v) {
        s.engine.kernels.gemv = *v;
      } else if (warnings) {
        warnings->push_back("settings.kernels.gemv: expected one of " + gemv_variant_list() + ", got " +
                            g->dump());
      }
    }
    if (const auto e = k->find("block_engine"); e != k->end()) {
      const auto v = e->is_string() ? parse_block_engine(e->get<std::string>()) : std::nullopt;
      if (v) {
        s.engine.kernels.block_engine = *v;
      } else if (warnings) {
        warnings->push_back("settings.kernels.block_engine: expected one of " + block_engine_list() + ", got " +
                            e->dump());
      }
    }
    read(*k, "split_k", s.engine.kernels.split_k, warnings);
    read(*k, "tile_rows_per_warp", s.engine.kernels.tile_rows_per_warp, warnings);
    read(*k, "tile_unroll", s.engine.kernels.tile_unroll, warnings);
    read(*k, "tile_blocks_per_sm", s.engine.kernels.tile_blocks_per_sm, warnings);
    read(*k, "fuse_residual_norm_quant", s.engine.kernels.fuse_residual_norm_quant, warnings);
    read(*k, "fuse_gate_up", s.engine.kernels.fuse_gate_up, warnings);
    read(*k, "cuda_graph", s.engine.kernels.cuda_graph, warnings);
    read(*k, "programmatic_launch", s.engine.kernels.programmatic_launch, warnings);
  }
  for (std::string& n : s.clamp()) {
    if (warnings) warnings->push_back("settings: " + n);
  }
  return s;
}

namespace {

// The sampling fields of a preset; seed, max tokens and the rest are the user's and stay.
void apply_sampler_fields(Settings& s, const SamplerParams& p) {
  s.temperature = p.temperature;
  s.top_k = p.top_k;
  s.top_p = p.top_p;
  s.min_p = p.min_p;
  s.presence_penalty = p.presence_penalty;
  s.repetition_penalty = p.repetition_penalty;
}

}  // namespace

void apply_qwen_thinking_preset(Settings& s) {
  apply_sampler_fields(s, SamplerParams::qwen_thinking());
  s.thinking = true;
}

void apply_qwen_instruct_preset(Settings& s) {
  apply_sampler_fields(s, SamplerParams::qwen_instruct());
  s.thinking = false;
}

void apply_greedy_preset(Settings& s) { apply_sampler_fields(s, SamplerParams::greedy()); }

}  // namespace qc::gui
