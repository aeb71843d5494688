// The CPU reference backend: the executable specification of the qwen35 forward pass (QWEN35.md sections
// 2-4 and 6) that every GPU result is checked against, and the CPU fallback for small models.
//
// Precision: kDouble is the oracle (every activation, norm and recurrent state in f64); kFloat is the same
// code in f32, fast enough to chat with a small model on two cores. Weights are decoded from their storage
// format (F32, F16, BF16, Q8_0) into the chosen precision before use; both decodings are exact.
// Threads: matrix rows (and GDN / attention heads) are split over a pool owned by the backend; every
// output value is computed by exactly one thread with the same code, so logits are bit-identical for any
// thread count.
#pragma once

#include <cstdint>
#include <memory>

#include "generate/backend.h"
#include "model/config.h"
#include "model/weights.h"
#include "qwenchat/result.h"

namespace qc {

enum class RefPrecision { kFloat, kDouble };

struct ReferenceOptions {
  RefPrecision precision = RefPrecision::kFloat;
  int n_threads = 0;    // threads including the caller; 0 = std::thread::hardware_concurrency()
  int n_ctx = 4096;     // positions the KV caches hold (main model and MTP block)
  int max_batch = 32;   // most tokens one forward() call takes: sizes the logits buffer [max_batch][n_vocab]
  // Most tokens forward_speculative() takes (MTP verification: the pending token + up to 3 drafts), capped
  // at max_batch; 0 = no speculative forward (the generator then restores a snapshot and re-runs). Costs
  // speculative_tokens - 1 copies of every GDN state and conv window.
  int speculative_tokens = 4;
};

// forward_speculative()'s limit for the options: speculative_tokens capped at max_batch.
inline int speculative_token_limit(const ReferenceOptions& o) {
  return o.speculative_tokens < o.max_batch ? o.speculative_tokens : o.max_batch;
}

// Checks that the weights match the config (every tensor present, shapes, Q8_0 row lengths) so the
// forward pass can index without further checks. Errors name the tensor, expected and actual shape.
Status validate_reference_model(const ModelConfig& config, const ModelWeights& weights);

// Builds the backend. It keeps references to `config` and `weights`, which must outlive it (the caller
// keeps the Model alive); all state and scratch is allocated here, none per token.
Result<std::unique_ptr<Backend>> make_reference_backend(const ModelConfig& config,
                                                        const ModelWeights& weights,
                                                        const ReferenceOptions& options);

// Bytes the backend allocates for the given options: KV caches, GDN states, conv windows, output buffers
// and scratch (weights are not copied). For the GUI's memory display and to pick n_ctx. Exact when the
// weights carry an MTP block iff config.n_mtp > 0 (info().memory_bytes always reports the allocation).
uint64_t reference_state_bytes(const ModelConfig& config, const ReferenceOptions& options);

}  // namespace qc
