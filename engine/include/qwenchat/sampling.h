// Per-reply decoding options the app chooses: how tokens are sampled (SamplerParams; the Sampler that
// follows them is engine/generate/sampler.h) and whether the MTP block speculates (MtpOptions; the decode
// loop is engine/generate/generator.h). Plain structs that GenerateCommand (qwenchat/session.h) carries.
#pragma once

#include <cstdint>

#include "qwenchat/result.h"

namespace qc {

struct SamplerParams {
  float temperature = 0.7f;         // 0 = greedy
  int top_k = 20;                   // 0 = off
  float top_p = 0.8f;               // 1 = off
  float min_p = 0.0f;               // 0 = off
  float presence_penalty = 0.0f;    // subtracted once from the logit of every distinct token in the window
  float repetition_penalty = 1.0f;  // llama.cpp/CTRL rule: logit>0 ? logit/r : logit*r for seen tokens
  int penalty_last_n = 256;         // window of recent tokens the penalties look at (0 = none, -1 = all)
  uint64_t seed = 0;

  // Range checks with messages ("sampler top_p must be in (0, 1], got 1.5").
  Status validate() const;
  bool is_greedy() const { return temperature == 0.0f; }

  static SamplerParams greedy();  // temperature 0, every filter and penalty off
  // Published Qwen3.5 defaults (QWEN35.md section 7).
  static SamplerParams qwen_thinking();  // 1.0 / top_p 0.95 / top_k 20 / min_p 0 / presence 1.5
  static SamplerParams qwen_instruct();  // 0.7 / top_p 0.8 / top_k 20 / min_p 0 / presence 1.5
};

inline constexpr int kMaxDraftLen = 3;  // MTP draft tokens per verification pass

struct MtpOptions {
  bool enabled = false;  // used only when backend.has_mtp(); otherwise the result says it was skipped
  int draft_len = 1;     // 1..kMaxDraftLen tokens drafted per verification pass
};

}  // namespace qc
