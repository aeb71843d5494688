// Chat-state operations as plain functions: append, stream, finish, edit (branch), regenerate, delete,
// navigator, selection, prompt history; and that a failed operation leaves the tree unchanged.
#include <gtest/gtest.h>

#include "chat/chat_state.h"
#include "chat_fixture.h"

namespace qc::chat {
namespace {

using Ids = std::vector<MessageId>;

template <class T>
T must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.error().describe();
  return std::move(r).value();
}

// A snapshot of everything the operations may touch, to check "unchanged on error".
std::string dump(const ChatTree& t) {
  nlohmann::json j;
  j["sel_root"] = t.conversation.selected_root;
  j["updated"] = t.conversation.updated_ms;
  j["next"] = t.next_id;
  for (const Message& m : t.messages) {
    j["m"].push_back(
        {m.id, m.parent_id, m.content, m.thinking, state_name(m.state), m.selected_child, m.updated_ms});
  }
  return j.dump();
}

TEST(ChatState, AppendStreamFinish) {
  ChatTree t;
  const TreeChange u = must(append_user(t, {.content = "hi", .now_ms = 100}));
  EXPECT_EQ(1, u.message);
  EXPECT_EQ(Ids{1}, u.inserted);
  EXPECT_TRUE(u.conversation_changed);  // selected_root + updated_ms
  EXPECT_EQ(1, t.conversation.selected_root);
  EXPECT_EQ(100, t.conversation.updated_ms);

  const TreeChange r = must(start_reply(t, {.model = "m.gguf", .settings = {{"seed", 1}}, .now_ms = 200}));
  EXPECT_EQ(2, r.message);
  EXPECT_EQ(Ids{2}, r.inserted);
  EXPECT_EQ(Ids{1}, r.updated);  // the parent's selected_child
  EXPECT_EQ(1, find(t, 2)->parent_id);
  EXPECT_EQ(MessageState::kStreaming, find(t, 2)->state);
  EXPECT_TRUE(is_streaming(t));
  EXPECT_FALSE(append_user(t, {.content = "too early", .now_ms = 250}).ok());  // one reply at a time

  ASSERT_TRUE(append_stream(t, 2, {.content = "Hel", .thinking = "hmm", .now_ms = 300}).ok());
  ASSERT_TRUE(append_stream(t, 2, {.content = "lo", .now_ms = 400}).ok());
  EXPECT_EQ("Hello", find(t, 2)->content);
  EXPECT_EQ("hmm", find(t, 2)->thinking);
  EXPECT_EQ(400, find(t, 2)->updated_ms);

  const TreeChange f = must(
      finish_reply(t, 2, {.state = MessageState::kComplete, .stats = {{"tok_per_s", 9.5}}, .now_ms = 500}));
  EXPECT_EQ(Ids{2}, f.updated);
  EXPECT_EQ(MessageState::kComplete, find(t, 2)->state);
  EXPECT_EQ(9.5, find(t, 2)->stats["tok_per_s"].get<double>());
  EXPECT_FALSE(append_stream(t, 2, {.content = "x"}).ok());  // finished: no more text
  EXPECT_FALSE(finish_reply(t, 2, {}).ok());
  EXPECT_EQ((Ids{1, 2}), current_branch(t));
  EXPECT_EQ(2, current_leaf(t));
}

TEST(ChatState, FinishCanReplaceTextAndRecordErrors) {
  ChatTree t;
  must(append_user(t, {.content = "q"}));
  const MessageId r = must(start_reply(t, {})).message;
  ASSERT_TRUE(append_stream(t, r, {.content = "<think>a</think>b"}).ok());
  EXPECT_FALSE(finish_reply(t, r, {.state = MessageState::kStreaming}).ok());
  must(finish_reply(t, r,
                    {.state = MessageState::kError,
                     .error = "boom",
                     .content = "b",
                     .thinking = "a",
                     .replace_text = true}));
  EXPECT_EQ("b", find(t, r)->content);
  EXPECT_EQ("a", find(t, r)->thinking);
  EXPECT_EQ("boom", find(t, r)->error);
}

TEST(ChatState, EditMakesASiblingBranchAndKeepsTheOld) {
  ChatTree t = test::branchy_conversation();
  // 6 is the edit of 3: same parent, both kept, 3's replies (4, 5) still there.
  EXPECT_EQ(find(t, 3)->parent_id, find(t, 6)->parent_id);
  EXPECT_EQ((Ids{3, 6}), children(t, 2));
  EXPECT_EQ((Ids{4, 5}), children(t, 3));
  EXPECT_EQ(8u, t.messages.size());

  const TreeChange e = must(edit_user(t, 1, "Is 93 prime?", test::kFixtureT0 + 50000));
  EXPECT_EQ(9, e.message);
  EXPECT_EQ(Ids{9}, e.inserted);
  EXPECT_TRUE(e.conversation_changed);  // a root edit moves selected_root
  EXPECT_EQ((Ids{1, 9}), children(t, 0));
  EXPECT_EQ(Ids{9}, current_branch(t));  // the new branch has no reply yet
  EXPECT_EQ(9u, t.messages.size());
  // Back to the old root: its whole branch is intact, with its own selections.
  must(select_sibling(t, 9, -1));
  EXPECT_EQ((Ids{1, 2, 6, 7}), current_branch(t));

  EXPECT_FALSE(edit_user(t, 2, "x", 0).ok());   // not a user message
  EXPECT_FALSE(edit_user(t, 99, "x", 0).ok());  // unknown
}

TEST(ChatState, RegenerateMakesASiblingReply) {
  ChatTree t = test::branchy_conversation();
  const TreeChange g = must(regenerate(t, 7, {.model = "m2", .now_ms = test::kFixtureT0 + 60000}));
  EXPECT_EQ(9, g.message);
  EXPECT_EQ(Ids{6}, g.updated);  // 6 now selects 9
  EXPECT_EQ(6, find(t, 9)->parent_id);
  EXPECT_EQ("m2", find(t, 9)->model);
  EXPECT_EQ(MessageState::kStreaming, find(t, 9)->state);
  EXPECT_EQ((Ids{7, 8, 9}), children(t, 6));
  EXPECT_EQ((Ids{1, 2, 6, 9}), current_branch(t));
  EXPECT_EQ("Yes, 101 is prime.\n\nChecked divisors: 2, 3, 5, 7 — none divides 101.\n", find(t, 7)->content);
  EXPECT_FALSE(regenerate(t, 7, {}).ok());  // 9 still streaming
  must(finish_reply(t, 9, {.state = MessageState::kStopped}));
  EXPECT_FALSE(regenerate(t, 6, {}).ok());  // a user message
}

TEST(ChatState, NavigatorInfoAndSelection) {
  ChatTree t = test::branchy_conversation();
  EXPECT_EQ(2, sibling_info(t, 7).count);  // 7, 8 under 6
  EXPECT_EQ(0, sibling_info(t, 7).index);
  EXPECT_EQ(1, sibling_info(t, 8).index);
  EXPECT_EQ(2, sibling_info(t, 6).count);
  EXPECT_EQ(1, sibling_info(t, 6).index);
  EXPECT_EQ(1, sibling_info(t, 1).count);
  EXPECT_EQ(0, sibling_info(t, 99).count);

  // "<" on 6 goes to 3 and the branch follows 3's own selection (5, the regenerated reply).
  TreeChange c = must(select_sibling(t, 6, -1));
  EXPECT_EQ(3, c.message);
  EXPECT_EQ(Ids{2}, c.updated);
  EXPECT_EQ((Ids{1, 2, 3, 5}), current_branch(t));
  // Clamped at the first: nothing moves, nothing to save.
  c = must(select_sibling(t, 3, -1));
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(3, c.message);
  // select_message: jump to a search hit deep in another branch.
  c = must(select_message(t, 8));
  EXPECT_EQ((Ids{1, 2, 6, 8}), current_branch(t));
  EXPECT_EQ((Ids{2, 6}), c.updated);
  EXPECT_FALSE(select_message(t, 42).ok());
}

TEST(ChatState, StaleSelectionFallsBackToNewestChild) {
  ChatTree t = test::branchy_conversation();
  find(t, 6)->selected_child = 0;
  EXPECT_EQ(8, selected_child(t, 6));
  find(t, 6)->selected_child = 12345;
  EXPECT_EQ(8, selected_child(t, 6));
  t.conversation.selected_root = 0;
  EXPECT_EQ(1, selected_child(t, 0));
  EXPECT_EQ(0, selected_child(t, 8));  // a leaf
}

TEST(ChatState, DeleteRemovesTheSubtreeAndMovesTheSelection) {
  ChatTree t = test::branchy_conversation();
  EXPECT_EQ((Ids{6, 7, 8}), subtree(t, 6));
  const TreeChange d = must(delete_message(t, 6, test::kFixtureT0 + 70000));
  EXPECT_EQ(Ids{6}, d.deleted);
  EXPECT_EQ(Ids{2}, d.updated);  // 2's selection moves to the previous sibling, 3
  EXPECT_EQ(5u, t.messages.size());
  EXPECT_EQ(nullptr, find(t, 7));
  EXPECT_EQ((Ids{1, 2, 3, 5}), current_branch(t));
  // Deleting a non-selected sibling leaves the selection alone.
  const TreeChange d2 = must(delete_message(t, 4, test::kFixtureT0 + 70001));
  EXPECT_TRUE(d2.updated.empty());
  EXPECT_EQ((Ids{1, 2, 3, 5}), current_branch(t));
  // Deleting the first of several selects the next.
  must(regenerate(t, 5, {}));
  must(finish_reply(t, 9, {}));
  must(select_sibling(t, 9, -1));
  must(delete_message(t, 5, 0));
  EXPECT_EQ((Ids{1, 2, 3, 9}), current_branch(t));
  // Everything.
  must(delete_message(t, 1, 0));
  EXPECT_TRUE(t.messages.empty());
  EXPECT_EQ(0, t.conversation.selected_root);
  EXPECT_TRUE(current_branch(t).empty());
  // Ids are never reused, even after deletes.
  EXPECT_EQ(10, must(append_user(t, {.content = "again"})).message);
}

TEST(ChatState, DeleteRefusesAStreamingSubtree) {
  ChatTree t = test::branchy_conversation();
  must(regenerate(t, 7, {}));
  const std::string before = dump(t);
  EXPECT_FALSE(delete_message(t, 6, 0).ok());
  EXPECT_FALSE(delete_message(t, 1, 0).ok());
  EXPECT_EQ(before, dump(t));
  EXPECT_TRUE(delete_message(t, 3, 0).ok());  // another branch is fine
}

TEST(ChatState, FailedOperationsLeaveTheTreeUnchanged) {
  ChatTree t = test::branchy_conversation();
  const std::string before = dump(t);
  EXPECT_FALSE(append_user(t, {.content = "x", .parent_id = 77}).ok());
  EXPECT_FALSE(start_reply(t, {.parent_id = 77}).ok());
  EXPECT_FALSE(append_stream(t, 7, {.content = "x"}).ok());
  EXPECT_FALSE(finish_reply(t, 7, {}).ok());
  EXPECT_FALSE(edit_user(t, 7, "x", 1).ok());
  EXPECT_FALSE(regenerate(t, 1, {}).ok());
  EXPECT_FALSE(delete_message(t, 77, 1).ok());
  EXPECT_FALSE(select_sibling(t, 77, 1).ok());
  EXPECT_EQ(before, dump(t));
}

TEST(ChatState, AppendUnderAChosenParent) {
  ChatTree t = test::branchy_conversation();
  const TreeChange c = must(append_user(t, {.content = "new root", .parent_id = 0, .now_ms = 1}));
  EXPECT_EQ(0, find(t, c.message)->parent_id);
  EXPECT_EQ(Ids{c.message}, current_branch(t));
  const TreeChange c2 = must(append_user(t, {.content = "under 5", .parent_id = 5, .now_ms = 2}));
  EXPECT_EQ((Ids{1, 2, 3, 5, c2.message}), path_to(t, c2.message));
  EXPECT_TRUE(path_to(t, 99).empty());
}

TEST(ChatState, PromptHistoryFollowsTheBranch) {
  ChatTree t = test::branchy_conversation();
  std::vector<ChatMessage> h = prompt_history(t, 0);
  ASSERT_EQ(5u, h.size());
  EXPECT_EQ("system", h[0].role);
  EXPECT_EQ("You are a concise assistant.", h[0].content);
  EXPECT_EQ("user", h[1].role);
  EXPECT_EQ("Is 91 prime?", h[1].content);
  EXPECT_EQ("assistant", h[2].role);
  EXPECT_EQ("91 = 7 × 13, so it has divisors other than 1 and itself.", h[2].thinking);
  EXPECT_EQ("And 101?", h[3].content);
  EXPECT_EQ("assistant", h[4].role);

  // Up to a message: the path to it, wherever the selection is. For a new reply under 6: 1, 2, 6.
  h = prompt_history(t, 6, {.include_system_prompt = false});
  ASSERT_EQ(3u, h.size());
  EXPECT_EQ("And 101?", h[2].content);
  // Error replies are left out by default.
  h = prompt_history(t, 8);
  EXPECT_EQ(4u, h.size());
  h = prompt_history(t, 8, {.skip_errors = false});
  EXPECT_EQ(5u, h.size());
}

TEST(ChatState, NamesRoundTrip) {
  for (Role r : {Role::kSystem, Role::kUser, Role::kAssistant}) EXPECT_EQ(r, *parse_role(role_name(r)));
  for (MessageState s :
       {MessageState::kComplete, MessageState::kStreaming, MessageState::kStopped, MessageState::kError}) {
    EXPECT_EQ(s, *parse_state(state_name(s)));
  }
  EXPECT_FALSE(parse_role("tool").ok());
  EXPECT_FALSE(parse_state("done").ok());
}

}  // namespace
}  // namespace qc::chat
