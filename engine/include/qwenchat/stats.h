// What one generate() call measured: sizes, times, rates, MTP acceptance and a logits hash that catches
// non-determinism (two runs with the same prompt, settings and seed must print the same hash).
//
// Also what a reply's end and a backend report: StopReason (why the decode loop stopped) and BackendInfo
// (Backend::info(), engine/generate/backend.h). Plain structs the worker's events (qwenchat/events.h) carry.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "qwenchat/sampling.h"

namespace qc {

struct GenerationStats {
  int prompt_tokens = 0;
  // Of prompt_tokens, those a kept state already held (runtime/prefix_cache.h): not run again. The
  // generator itself sees only the rest (its prompt_tokens are those); the worker reports both.
  int prompt_reused = 0;
  int generated_tokens = 0;  // every emitted token, stop token included

  // Wall-clock (steady_clock) seconds. Prefill = the prompt's forward passes (and their MTP cache fill);
  // time to first token = prefill + the first sample; decode = from the first token to the last, so
  // decode tok/s counts the generated_tokens - 1 tokens that came after the first.
  double prefill_seconds = 0.0;
  double prefill_tok_per_s = 0.0;
  double time_to_first_token_s = 0.0;
  double decode_seconds = 0.0;
  double decode_tok_per_s = 0.0;

  // Passes of the main model: prefill chunks, decode/verification steps, and re-runs after a partially
  // rejected draft. decode_steps = decode/verification passes only (without re-runs).
  int64_t forward_passes = 0;
  int64_t decode_steps = 0;
  // Re-forwards of the accepted prefix after a partial rejection: only on backends without a speculative
  // forward (Backend::max_speculative_tokens() == 0); 0 where commit(m) rolls back without recomputation.
  int64_t rerun_passes = 0;
  int64_t mtp_passes = 0;    // calls of the MTP block (drafts and cache fills)

  // MTP, per draft position j (0 = the first draft after the sampled token): drafts proposed at j and
  // drafts accepted at j. accepted[j] <= drafted[j], accepted[j+1] <= accepted[j]. Without stops or
  // cancellation, generated_tokens = 1 + decode_steps + sum(accepted).
  int mtp_draft_len = 0;  // 0 = MTP off
  std::array<int64_t, kMaxDraftLen> mtp_drafted{};
  std::array<int64_t, kMaxDraftLen> mtp_accepted{};

  // FNV-1a 64 over the bytes (little-endian float32 bit patterns, in vocabulary order) of the logits row
  // the last token was sampled from, as 16 lower-case hex digits; empty when no token was sampled.
  std::string final_logits_hash;

  double mtp_acceptance(int j) const {
    return mtp_drafted[static_cast<size_t>(j)] == 0
               ? 0.0
               : static_cast<double>(mtp_accepted[static_cast<size_t>(j)]) /
                     static_cast<double>(mtp_drafted[static_cast<size_t>(j)]);
  }
};

// FNV-1a 64 over the float32 bit patterns of `row`, little-endian byte order, as 16 hex digits.
std::string logits_hash(std::span<const float> row);

enum class StopReason { stop_token, max_tokens, cancelled, context_full, error };
const char* to_string(StopReason r);

struct BackendInfo {
  std::string name;           // "cpu-f32", "cpu-f64", "cuda"
  std::string device;         // "2 threads", "NVIDIA H200"
  uint64_t memory_bytes = 0;  // state + scratch (+ weights when copied)
  // Read-only bandwidth of the device measured at load (cuda/read_ceiling.h); 0 = not measured (the CPU
  // backend, or a card with no room for the measurement).
  double read_ceiling_gbs = 0.0;
  // What the load decided that the user should know (e.g. a part left out to fit the memory); may be empty.
  std::string note;
};

}  // namespace qc
