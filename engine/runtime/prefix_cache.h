// Conversation state reuse: a reply prefills only the tokens that no kept state already holds.
//
// What is kept, for one backend:
//   - the live state: the tokens the backend holds after the last generation (its prompt and reply but
//     the last token), and the post-norm hidden state of its last position (the MTP continuation);
//   - snapshots of the recurrent state (GDN states, conv windows) taken at each reply's turn boundary
//     (the prompt up to the reply's "<|im_start|>", runtime/worker_generate.h FittedPrompt): a
//     regenerated reply restarts there, and so does the next message, whose template renders the
//     previous reply without the generation prompt's think markup (and without its thinking).
// A prompt reuses the live state when it extends it; else the longest snapshot that is a prefix of the
// prompt and lies within the prompt's common prefix with the live state (the KV caches hold the live
// tokens' entries: a snapshot restores only the recurrent state, so its positions' KV entries must be the
// prompt's); else the backend is reset. At least the prompt's last token always runs (its logits are the
// first reply token's). Entries a reset made unusable (the backend's epoch) are dropped.
//
// Bits: a reply after reuse equals the reply after a fresh prefill when the backend's per-position
// results do not depend on how the positions are grouped into calls (both backends: the CPU reference by
// construction, CUDA since attention splits by position only and its prompt path computes every row on
// its own, tests/unit/test_prefix_reuse_cuda). A backend with a prompt path of its own (prefill_rows() > 0:
// CUDA) computes prompt positions with other kernels than decoded ones, so a state that decoded tokens
// reached is never continued: the next message restarts at the previous reply's turn boundary and
// prefills that reply again (at prompt speed: ~0.1 s for 500 tokens on the 27B, docs/PERFORMANCE.md).
// MTP cache entries are part of the state: a state built without MTP is not reused by a reply with MTP.
//
// Memory: snapshots live where the backend keeps its state (device memory for CUDA); their total stays
// within budget_bytes (oldest use evicted first; 0 = live state only). One 27B-shape snapshot is
// 48 GDN layers x 48 heads x 128 x 128 x 4 bytes + conv windows, about 151 MB.
//
// Conversations: when a reply belongs to another conversation than the last one (GenerateCommand::
// conversation, 0 = unknown), the one left is parked: its latest turn-boundary state with its KV entries
// (Backend::snapshot_context(), host memory), so that switching back restores it instead of prefilling
// the whole conversation again. Parked states share the budget (oldest use evicted first).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "generate/backend.h"
#include "generate/generator.h"

namespace qc {

struct PrefixCacheStats {
  int snapshots = 0;              // turn-boundary snapshots (recurrent state)
  int parked = 0;                 // parked conversations (with their KV entries)
  uint64_t snapshot_bytes = 0;    // both
  int live_tokens = 0;
};

class PrefixCache {
 public:
  explicit PrefixCache(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // Brings `backend` to the longest kept prefix of `prompt` (which must not be empty) and hands the
  // generator the hidden state that goes with it. Returns the prompt tokens the backend now holds
  // (0: it was reset), always < prompt.size(). `mtp`: the reply will use the MTP block. `conversation`:
  // the reply's conversation (0 = unknown); a change parks the previous one (unless it was 0).
  Result<int> prepare(Backend& backend, Generator& generator, std::span<const int32_t> prompt, bool mtp,
                      uint64_t conversation = 0);

  // During the prefill (GenerateObserver::on_checkpoint): the backend holds exactly `tokens`.
  void checkpoint(const Backend& backend, std::span<const int32_t> tokens, std::span<const float> hidden);

  // After generate() returned (`ok` = without StopReason::error and without an exception): the backend
  // holds (prompt + generated)[0, backend.position()). Not ok: the state is unknown, everything is
  // dropped and the backend reset.
  void finish(Backend& backend, const Generator& generator, std::span<const int32_t> prompt,
              std::span<const int32_t> generated, bool ok);

  // Forgets every kept state (a kernel switch changes bits; a new backend has other states). Called
  // while a reply runs (a kernel switch at a token boundary), it also keeps that reply's state out.
  void clear();
  PrefixCacheStats stats() const;
  uint64_t budget_bytes() const { return budget_; }

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    std::unique_ptr<StateSnapshot> snap;
    std::vector<float> hidden;  // post-norm hidden at tokens.size() - 1 (empty: none)
    bool mtp = false;           // MTP cache entries written for every position
    uint64_t last_use = 0;
    uint64_t conversation = 0;  // parked ones
  };
  void evict_to(uint64_t bytes_needed);
  // Keeps the live conversation's latest turn-boundary state with its KV entries in parked_.
  void park(Backend& backend);

  uint64_t budget_;
  uint64_t clock_ = 0;
  std::vector<Entry> entries_;
  std::vector<Entry> parked_;  // snapshot_context() copies: restorable whatever the caches hold
  uint64_t conversation_ = 0;  // of the live state
  // The live state (valid while live_valid_): tokens at positions 0 .. live_.size()-1.
  bool live_valid_ = false;
  std::vector<int32_t> live_;
  std::vector<float> live_hidden_;
  bool live_mtp_ = false;
  // The live state holds decoded positions and the backend has a prompt path of its own, whose bits differ
  // from the decode step's: continuing it would give other bits than a fresh prefill, so the next prompt
  // restarts from the last turn-boundary snapshot (which only prefills wrote) instead.
  bool live_decoded_ = false;
  bool run_mtp_ = false;  // the reply being generated: MTP entries complete for everything it adds
  bool cleared_in_run_ = false;  // clear() since prepare(): finish() keeps nothing
};

}  // namespace qc
