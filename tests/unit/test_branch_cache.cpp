// chat::BranchViewCache (app/chat/branch_cache.h): the kept branch equals branch_view() after every kind of
// change to the tree's shape (a new message, another selected child, another selected root, a deletion,
// another conversation), and text that streams in does not change the fingerprint.
#include <gtest/gtest.h>

#include "chat/branch_cache.h"

namespace qc::chat {
namespace {

Message msg(MessageId id, MessageId parent, Role role) {
  Message m;
  m.id = id;
  m.parent_id = parent;
  m.role = role;
  m.content = "m" + std::to_string(id);
  return m;
}

// 1 -> 2 -> {3, 5}; 3 -> 4; a second root 6 -> 7.
ChatTree sample() {
  ChatTree t;
  t.conversation.id = 9;
  for (const Message& m : {msg(1, 0, Role::kUser), msg(2, 1, Role::kAssistant), msg(3, 2, Role::kUser),
                           msg(4, 3, Role::kAssistant), msg(5, 2, Role::kUser), msg(6, 0, Role::kUser),
                           msg(7, 6, Role::kAssistant)})
    t.messages.push_back(m);
  t.next_id = 8;
  return t;
}

void expect_same(const BranchView& got, const ChatTree& t) {
  const BranchView want = branch_view(t);
  EXPECT_EQ(got.branch, want.branch);
  ASSERT_EQ(got.siblings.size(), want.siblings.size());
  for (size_t i = 0; i < want.siblings.size(); ++i) {
    EXPECT_EQ(got.siblings[i].index, want.siblings[i].index) << i;
    EXPECT_EQ(got.siblings[i].count, want.siblings[i].count) << i;
  }
}

TEST(BranchViewCache, FollowsEveryChangeOfShape) {
  BranchViewCache cache;
  ChatTree t = sample();
  t.conversation.selected_root = 1;
  expect_same(cache.get(t), t);
  t.messages[1].selected_child = 3;  // 2 -> 3 instead of the newest, 5
  expect_same(cache.get(t), t);
  t.messages.push_back(msg(8, 5, Role::kAssistant));
  t.next_id = 9;
  t.messages[1].selected_child = 5;
  expect_same(cache.get(t), t);
  t.conversation.selected_root = 6;
  expect_same(cache.get(t), t);
  t.messages.erase(t.messages.begin() + 5, t.messages.begin() + 7);  // the second root's subtree (6, 7)
  expect_same(cache.get(t), t);
  ChatTree other = sample();
  other.conversation.id = 10;
  expect_same(cache.get(other), other);
}

TEST(BranchViewCache, StreamedTextKeepsTheFingerprint) {
  ChatTree t = sample();
  const uint64_t before = tree_shape_fingerprint(t);
  t.messages[3].content += " and more text";
  t.messages[3].state = MessageState::kStreaming;
  EXPECT_EQ(tree_shape_fingerprint(t), before);
  t.messages[3].selected_child = 99;
  EXPECT_NE(tree_shape_fingerprint(t), before);
}

}  // namespace
}  // namespace qc::chat
