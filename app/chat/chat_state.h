// Chat state: a conversation and its message tree as plain structs, changed only by the plain functions
// below (no window, no database, no clock: every timestamp is a parameter), so each operation is unit
// tested on its own.
//
// The tree: every message has a parent (0 = a root). Editing a user message or regenerating a reply adds
// a SIBLING and selects it; nothing later is ever overwritten or dropped. Each parent remembers which
// child the current branch follows (Message::selected_child; the conversation's selected_root for the
// roots), so "the current branch" is the path from the selected root following the selected child at
// each fork. A stale or zero selection means "the newest child" (highest id).
//
// Ids: message ids are unique WITHIN a conversation and allocated by the tree (ChatTree::next_id), so an
// operation can return the new message's id at once and the store persists it as (conversation id,
// message id). Every operation that changes the tree returns a TreeChange naming what it touched;
// Store::apply(tree, change) writes exactly that in one transaction. Typical GUI flow:
//
//   QC_ASSIGN(auto ch, chat::append_user(tree, {.content = text, .now_ms = now}));
//   QC_TRY(store.apply(tree, ch));
//   QC_ASSIGN(auto r, chat::start_reply(tree, {.parent_id = ch.message, .model = m, .now_ms = now}));
//   QC_TRY(store.apply(tree, r));
//   auto prompt = chat::prompt_history(tree, ch.message);        // -> qc::encode_chat
//   ... per token: chat::append_stream(tree, r.message, {...}); throttle.text_appended();
//   ... per token AND per frame: if (throttle.flush_now(now)) store.update_streaming(tree, r.message);
//   QC_ASSIGN(auto f, chat::finish_reply(tree, r.message, {.state = ..., .stats = ..., .now_ms = now}));
//   QC_TRY(store.apply(tree, f));
//
// Cost: find() is a binary search (messages sorted by id); children()/selected_child() scan the vector,
// so current_branch() is O(depth x messages): about 10^5 comparisons for a 500-message conversation,
// well under a millisecond. Cache the branch per TreeChange if a frame ever shows it. Not thread-safe:
// the GUI thread owns the tree (the worker gets copies of prompt_history).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "qwenchat/chat.h"  // qc::ChatMessage, what prompt_history returns
#include "qwenchat/result.h"

namespace qc::chat {

using MessageId = int64_t;       // unique within one conversation; 0 = none / "the root"
using ConversationId = int64_t;  // the store's id; 0 = not stored yet

enum class Role { kSystem, kUser, kAssistant };
const char* role_name(Role r);  // "system", "user", "assistant"
Result<Role> parse_role(std::string_view s);

// A reply is kStreaming while tokens arrive; kStopped when the user stopped it (content is what came);
// kError when generation failed (Message::error says why). A message found kStreaming after a restart
// was cut off by a crash or kill: Store::open marks such replies kStopped.
enum class MessageState { kComplete, kStreaming, kStopped, kError };
const char* state_name(MessageState s);  // "complete", "streaming", "stopped", "error"
Result<MessageState> parse_state(std::string_view s);

struct Message {
  MessageId id = 0;
  MessageId parent_id = 0;  // 0 = a root message
  Role role = Role::kUser;
  std::string content;
  std::string thinking;    // assistant reasoning (without <think> markers); empty for other roles
  int64_t created_ms = 0;  // Unix epoch milliseconds
  int64_t updated_ms = 0;
  std::string model;  // assistant: the model file that wrote it; empty otherwise
  nlohmann::json settings = nlohmann::json::object();  // assistant: sampling/engine settings used
  nlohmann::json stats = nlohmann::json::object();     // assistant: see stats keys below
  MessageState state = MessageState::kComplete;
  std::string error;             // kError: what went wrong (one line)
  MessageId selected_child = 0;  // the child the current branch follows; 0 or stale = the newest child
};

// Stats keys (an object; any may be absent, other keys are kept and exported as they are). The export's
// stats line knows these: "prompt_tokens", "generated_tokens" (int), "tok_per_s" (decode tok/s),
// "prefill_tok_per_s", "ttft_ms" (double), "mtp_acceptance" (0..1, overall accepted/drafted),
// "mtp_draft_len" (int), "backend" ("cpu", "cuda"), "kernel" (GEMV variant, e.g. "hlu4"),
// "stop_reason" (string), "logits_hash" (16 hex digits).

struct Conversation {
  ConversationId id = 0;
  std::string title;
  std::string system_prompt;                           // sent first as a system turn when non-empty
  std::string model_path;                              // the model last used (new replies default to it)
  nlohmann::json settings = nlohmann::json::object();  // the conversation's generation settings
  int64_t created_ms = 0;
  int64_t updated_ms = 0;       // last change of anything in it (list order, most recent first)
  MessageId selected_root = 0;  // the root the current branch starts at; 0 or stale = the newest root
};

struct ChatTree {
  Conversation conversation;
  std::vector<Message> messages;  // sorted by id (creation order); operations keep it so
  MessageId next_id = 1;          // the next id an operation hands out (> every id in messages)
};

// What an operation changed, for Store::apply. `message` is the message the operation created or acted
// on (the new user turn, the new reply, the newly selected sibling...), 0 when none.
struct TreeChange {
  MessageId message = 0;
  std::vector<MessageId> inserted;    // new messages, parents before children
  std::vector<MessageId> updated;     // rows whose fields changed (content, state, selected_child...)
  std::vector<MessageId> deleted;     // roots of removed subtrees (the store cascades to descendants)
  bool conversation_changed = false;  // selected_root / updated_ms / fields of the conversation
  bool empty() const {
    return inserted.empty() && updated.empty() && deleted.empty() && !conversation_changed;
  }
};

// `later` folded into `into`, for one Store::apply of two operations done one after the other on the same
// tree (a user turn and the reply started under it): inserts in order, updates of rows not inserted here
// (an insert writes the row as the tree holds it at apply time), deletes, the conversation flag;
// `message` becomes later's.
void merge_change(TreeChange& into, const TreeChange& later);

// Milliseconds since the Unix epoch (system clock): what callers pass as now_ms.
int64_t now_ms();

// ---- lookups ----
const Message* find(const ChatTree& tree, MessageId id);  // nullptr when absent
Message* find(ChatTree& tree, MessageId id);
std::vector<MessageId> children(const ChatTree& tree, MessageId parent);  // 0 = roots; by id ascending
MessageId selected_child(const ChatTree& tree, MessageId parent);         // 0 when no children
std::vector<MessageId> current_branch(const ChatTree& tree);              // root .. leaf along the selections
MessageId current_leaf(const ChatTree& tree);                        // last of current_branch; 0 when empty
std::vector<MessageId> path_to(const ChatTree& tree, MessageId id);  // root .. id; empty when id unknown
std::vector<MessageId> subtree(const ChatTree& tree, MessageId id);  // id and its descendants, pre-order
bool is_streaming(const ChatTree& tree);  // some message is kStreaming (one reply at a time)

// Navigator "< 2/3 >": index (0-based) among the siblings (same parent, by id) and their count.
struct SiblingInfo {
  int index = 0;
  int count = 0;  // 0 when the id is unknown
};
SiblingInfo sibling_info(const ChatTree& tree, MessageId id);

// The current branch with every message's sibling position, in one pass over the tree (O(n)): what the
// chat view draws each frame. current_branch() and sibling_info() per message made a frame O(n^3) (a
// 20,000-message conversation never drew a window).
struct BranchView {
  std::vector<MessageId> branch;
  std::vector<SiblingInfo> siblings;  // siblings[i] for branch[i]
};
BranchView branch_view(const ChatTree& tree);

// ---- operations (each returns what it changed; on error the tree is unchanged) ----
struct UserTurn {
  std::string content;
  MessageId parent_id = -1;  // -1 = after the current leaf; 0 = a new root; else that message
  int64_t now_ms = 0;
};
// Appends a user message and selects it. Errors: unknown parent, a reply still streaming.
Result<TreeChange> append_user(ChatTree& tree, const UserTurn& turn);

struct ReplyStart {
  MessageId parent_id = -1;  // -1 = after the current leaf; else that message (usually a user turn)
  std::string model;
  nlohmann::json settings = nlohmann::json::object();
  int64_t now_ms = 0;
};
// Adds an empty kStreaming assistant message under the parent and selects it. Errors: unknown parent,
// another reply still streaming.
Result<TreeChange> start_reply(ChatTree& tree, const ReplyStart& start);

struct StreamDelta {
  std::string content;   // appended to Message::content
  std::string thinking;  // appended to Message::thinking
  int64_t now_ms = 0;
};
// Appends streamed text to a kStreaming message (the hot path: no TreeChange; the caller flushes with
// Store::update_streaming on its own schedule). Errors: unknown id, message not streaming.
Status append_stream(ChatTree& tree, MessageId id, const StreamDelta& delta);

struct ReplyEnd {
  MessageState state = MessageState::kComplete;  // kComplete, kStopped or kError
  nlohmann::json stats = nlohmann::json::object();
  std::string error;              // kError: the message
  std::string content, thinking;  // final text when replace_text (e.g. re-parsed think split)
  bool replace_text = false;
  int64_t now_ms = 0;
};
// Ends a streaming reply. Errors: unknown id, not streaming, state kStreaming.
Result<TreeChange> finish_reply(ChatTree& tree, MessageId id, const ReplyEnd& end);

// Editing a user message adds a sibling user message (same parent) with the new text and selects it; the
// old message and everything after it stay, reachable with the navigator. The caller then starts a reply
// under change.message. Errors: unknown id, not a user message, a reply streaming.
Result<TreeChange> edit_user(ChatTree& tree, MessageId id, const std::string& new_content, int64_t now_ms);

// Regenerating a reply adds a sibling kStreaming assistant message (same parent) and selects it.
// `start.parent_id` is ignored. Errors: unknown id, not an assistant message, a reply streaming.
Result<TreeChange> regenerate(ChatTree& tree, MessageId assistant_id, const ReplyStart& start);

// Removes a message and its whole subtree. The parent's selection moves to the previous sibling (else
// the next, else none). Errors: unknown id, the subtree holds the streaming reply.
Result<TreeChange> delete_message(ChatTree& tree, MessageId id, int64_t now_ms);

// Selects the sibling `delta` steps away (-1 = "<", +1 = ">"), clamped to the first/last; the branch
// then follows that sibling's own selections. Returns an empty change when nothing moved.
Result<TreeChange> select_sibling(ChatTree& tree, MessageId id, int delta);

// Makes the current branch pass through `id` (selects every ancestor link down to it), e.g. to jump to
// a search hit. The branch continues below id along its selections.
Result<TreeChange> select_message(ChatTree& tree, MessageId id);

// ---- prompt ----
struct HistoryOptions {
  bool include_system_prompt = true;  // the conversation's system prompt first, as a system turn
  bool skip_errors = true;            // leave out kError replies (their text is not model output)
};
// The turns on the path from the root to `up_to` inclusive (0 = the current leaf, i.e. the current
// branch), as the engine's ChatMessage {role, content, thinking}. For a new reply R pass R.parent_id.
std::vector<ChatMessage> prompt_history(const ChatTree& tree, MessageId up_to,
                                        const HistoryOptions& options = {});

}  // namespace qc::chat
