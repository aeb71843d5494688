// The current branch of a chat tree, recomputed only when the tree's shape changes. branch_view() builds
// children lists in hash maps: O(n) with a large constant (about 10 ms at 50,000 messages on the 2-core
// VM), which a frame should not pay every time. The shape is what a branch depends on: the ids, parents and
// selections of the messages and the conversation's selected root; text that streams in leaves it alone.
// A fingerprint of those (one plain pass over the messages, no allocation) decides whether the kept view
// still holds.
#pragma once

#include <cstdint>

#include "chat/chat_state.h"

namespace qc::chat {

class BranchViewCache {
 public:
  const BranchView& get(const ChatTree& tree);
  uint64_t key() const { return key_; }  // the fingerprint of the tree the kept view belongs to

 private:
  uint64_t key_ = 0;
  bool valid_ = false;
  BranchView view_;
};

// The shape fingerprint the cache compares: a 64-bit multiply-xorshift hash over the conversation id, the
// selected root, the message count and each message's id, parent and selected child, in order.
uint64_t tree_shape_fingerprint(const ChatTree& tree);

}  // namespace qc::chat
