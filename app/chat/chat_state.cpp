// Chat state operations (see chat_state.h). Every operation checks everything first and only then
// mutates, so an error leaves the tree unchanged.
#include "chat/chat_state.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

namespace qc::chat {

const char* role_name(Role r) {
  switch (r) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
  }
  return "user";
}

Result<Role> parse_role(std::string_view s) {
  if (s == "system") return Role::kSystem;
  if (s == "user") return Role::kUser;
  if (s == "assistant") return Role::kAssistant;
  return make_error("role: expected \"system\", \"user\" or \"assistant\", got \"" + std::string(s) + "\"");
}

const char* state_name(MessageState s) {
  switch (s) {
    case MessageState::kComplete:
      return "complete";
    case MessageState::kStreaming:
      return "streaming";
    case MessageState::kStopped:
      return "stopped";
    case MessageState::kError:
      return "error";
  }
  return "complete";
}

Result<MessageState> parse_state(std::string_view s) {
  if (s == "complete") return MessageState::kComplete;
  if (s == "streaming") return MessageState::kStreaming;
  if (s == "stopped") return MessageState::kStopped;
  if (s == "error") return MessageState::kError;
  return make_error("state: expected \"complete\", \"streaming\", \"stopped\" or \"error\", got \"" +
                    std::string(s) + "\"");
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- lookups ----

// messages is sorted by id, so a binary search finds one.
const Message* find(const ChatTree& tree, MessageId id) {
  auto it = std::lower_bound(tree.messages.begin(), tree.messages.end(), id,
                             [](const Message& m, MessageId v) { return m.id < v; });
  return it != tree.messages.end() && it->id == id ? &*it : nullptr;
}

Message* find(ChatTree& tree, MessageId id) {
  return const_cast<Message*>(find(static_cast<const ChatTree&>(tree), id));
}

void merge_change(TreeChange& into, const TreeChange& later) {
  auto has = [](const std::vector<MessageId>& v, MessageId id) { return std::find(v.begin(), v.end(), id) != v.end(); };
  for (MessageId id : later.inserted) into.inserted.push_back(id);
  for (MessageId id : later.updated)
    if (!has(into.inserted, id) && !has(into.updated, id)) into.updated.push_back(id);
  std::erase_if(into.updated, [&](MessageId id) { return has(into.inserted, id); });
  for (MessageId id : later.deleted) into.deleted.push_back(id);
  into.conversation_changed = into.conversation_changed || later.conversation_changed;
  into.message = later.message;
}

std::vector<MessageId> children(const ChatTree& tree, MessageId parent) {
  std::vector<MessageId> out;
  for (const Message& m : tree.messages) {
    if (m.parent_id == parent && m.id != parent) out.push_back(m.id);
  }
  return out;
}

MessageId selected_child(const ChatTree& tree, MessageId parent) {
  MessageId wanted = 0;
  if (parent == 0) {
    wanted = tree.conversation.selected_root;
  } else if (const Message* p = find(tree, parent)) {
    wanted = p->selected_child;
  } else {
    return 0;
  }
  MessageId newest = 0;
  for (const Message& m : tree.messages) {
    if (m.parent_id != parent || m.id == parent) continue;
    if (m.id == wanted) return wanted;
    newest = m.id;  // sorted by id: the last child seen is the newest
  }
  return newest;
}

BranchView branch_view(const ChatTree& tree) {
  // Children per parent in id order (messages are sorted by id), and each message's selection.
  std::unordered_map<MessageId, std::vector<MessageId>> kids;
  std::unordered_map<MessageId, MessageId> wanted;
  kids.reserve(tree.messages.size());
  for (const Message& m : tree.messages) {
    if (m.id != m.parent_id) kids[m.parent_id].push_back(m.id);
    wanted[m.id] = m.selected_child;
  }
  wanted[0] = tree.conversation.selected_root;
  // selected_child(): the wanted child when it is one, else the newest.
  auto pick = [&](MessageId parent, SiblingInfo* where) -> MessageId {
    auto it = kids.find(parent);
    if (it == kids.end() || it->second.empty()) return 0;
    const std::vector<MessageId>& c = it->second;
    const MessageId w = wanted[parent];
    size_t i = c.size() - 1;
    for (size_t j = 0; j < c.size(); ++j)
      if (c[j] == w) i = j;
    *where = {static_cast<int>(i), static_cast<int>(c.size())};
    return c[i];
  };
  BranchView v;
  SiblingInfo sib;
  // A stored tree could hold a cycle only through corruption; the bound keeps the walk finite anyway.
  for (MessageId at = pick(0, &sib); at != 0 && v.branch.size() < tree.messages.size(); at = pick(at, &sib)) {
    v.branch.push_back(at);
    v.siblings.push_back(sib);
  }
  return v;
}

std::vector<MessageId> current_branch(const ChatTree& tree) {
  return branch_view(tree).branch;
}

MessageId current_leaf(const ChatTree& tree) {
  const std::vector<MessageId> branch = current_branch(tree);
  return branch.empty() ? 0 : branch.back();
}

std::vector<MessageId> path_to(const ChatTree& tree, MessageId id) {
  std::vector<MessageId> out;
  for (const Message* m = find(tree, id); m != nullptr && out.size() <= tree.messages.size();
       m = m->parent_id == 0 ? nullptr : find(tree, m->parent_id)) {
    out.push_back(m->id);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<MessageId> subtree(const ChatTree& tree, MessageId id) {
  if (find(tree, id) == nullptr) return {};
  std::unordered_map<MessageId, std::vector<MessageId>> kids;
  for (const Message& m : tree.messages) {
    if (m.id != m.parent_id) kids[m.parent_id].push_back(m.id);
  }
  std::vector<MessageId> out;
  std::vector<MessageId> stack{id};
  while (!stack.empty() && out.size() <= tree.messages.size()) {
    const MessageId at = stack.back();
    stack.pop_back();
    out.push_back(at);
    auto it = kids.find(at);
    if (it == kids.end()) continue;
    for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) stack.push_back(*c);  // pre-order by id
  }
  return out;
}

bool is_streaming(const ChatTree& tree) {
  return std::any_of(tree.messages.begin(), tree.messages.end(),
                     [](const Message& m) { return m.state == MessageState::kStreaming; });
}

SiblingInfo sibling_info(const ChatTree& tree, MessageId id) {
  const Message* m = find(tree, id);
  if (m == nullptr) return {};
  const std::vector<MessageId> sibs = children(tree, m->parent_id);
  const auto it = std::find(sibs.begin(), sibs.end(), id);
  return {static_cast<int>(it - sibs.begin()), static_cast<int>(sibs.size())};
}

// ---- operations ----
namespace {

void note_updated(TreeChange& change, MessageId id) {
  if (std::find(change.updated.begin(), change.updated.end(), id) == change.updated.end()) {
    change.updated.push_back(id);
  }
}

// Points parent's selection at child (parent 0 = the conversation's root selection). The parent must exist.
void set_selection(ChatTree& tree, MessageId parent, MessageId child, TreeChange& change) {
  if (parent == 0) {
    tree.conversation.selected_root = child;
    change.conversation_changed = true;
  } else {
    find(tree, parent)->selected_child = child;
    note_updated(change, parent);
  }
}

void touch(ChatTree& tree, int64_t now_ms, TreeChange& change) {
  tree.conversation.updated_ms = std::max(tree.conversation.updated_ms, now_ms);
  change.conversation_changed = true;
}

Status check_not_streaming(const ChatTree& tree, const char* what) {
  if (is_streaming(tree))
    return make_error(std::string(what) + ": a reply is still streaming (stop it first)");
  return {};
}

Result<MessageId> resolve_parent(const ChatTree& tree, MessageId parent_id, const char* what) {
  if (parent_id == -1) return current_leaf(tree);
  if (parent_id != 0 && find(tree, parent_id) == nullptr) {
    return make_error(std::string(what) + ": parent message " + std::to_string(parent_id) +
                      " does not exist");
  }
  return parent_id;
}

// Appends a new message (ids grow, so messages stays sorted) and selects it under its parent.
TreeChange add_message(ChatTree& tree, Message m, int64_t now_ms) {
  TreeChange change;
  m.id = std::max<MessageId>(tree.next_id, tree.messages.empty() ? 1 : tree.messages.back().id + 1);
  tree.next_id = m.id + 1;
  m.created_ms = now_ms;
  m.updated_ms = now_ms;
  const MessageId parent = m.parent_id;
  const MessageId id = m.id;
  tree.messages.push_back(std::move(m));
  change.message = id;
  change.inserted.push_back(id);
  set_selection(tree, parent, id, change);
  touch(tree, now_ms, change);
  return change;
}

Message new_reply(MessageId parent, const ReplyStart& start) {
  Message m;
  m.parent_id = parent;
  m.role = Role::kAssistant;
  m.model = start.model;
  m.settings = start.settings.is_null() ? nlohmann::json::object() : start.settings;
  m.state = MessageState::kStreaming;
  return m;
}

}  // namespace

Result<TreeChange> append_user(ChatTree& tree, const UserTurn& turn) {
  QC_TRY(check_not_streaming(tree, "append user message"));
  QC_ASSIGN(const MessageId parent, resolve_parent(tree, turn.parent_id, "append user message"));
  Message m;
  m.parent_id = parent;
  m.role = Role::kUser;
  m.content = turn.content;
  return add_message(tree, std::move(m), turn.now_ms);
}

Result<TreeChange> start_reply(ChatTree& tree, const ReplyStart& start) {
  QC_TRY(check_not_streaming(tree, "start reply"));
  QC_ASSIGN(const MessageId parent, resolve_parent(tree, start.parent_id, "start reply"));
  return add_message(tree, new_reply(parent, start), start.now_ms);
}

Status append_stream(ChatTree& tree, MessageId id, const StreamDelta& delta) {
  Message* m = find(tree, id);
  if (m == nullptr)
    return make_error("append streamed text: message " + std::to_string(id) + " does not exist");
  if (m->state != MessageState::kStreaming) {
    return make_error("append streamed text: message " + std::to_string(id) + " is " + state_name(m->state) +
                      ", expected streaming");
  }
  m->content += delta.content;
  m->thinking += delta.thinking;
  m->updated_ms = std::max(m->updated_ms, delta.now_ms);
  return {};
}

Result<TreeChange> finish_reply(ChatTree& tree, MessageId id, const ReplyEnd& end) {
  Message* m = find(tree, id);
  if (m == nullptr) return make_error("finish reply: message " + std::to_string(id) + " does not exist");
  if (m->state != MessageState::kStreaming) {
    return make_error("finish reply: message " + std::to_string(id) + " is " + state_name(m->state) +
                      ", expected streaming");
  }
  if (end.state == MessageState::kStreaming) {
    return make_error("finish reply: the final state must be complete, stopped or error, got streaming");
  }
  m->state = end.state;
  m->stats = end.stats.is_null() ? nlohmann::json::object() : end.stats;
  m->error = end.error;
  if (end.replace_text) {
    m->content = end.content;
    m->thinking = end.thinking;
  }
  m->updated_ms = std::max(m->updated_ms, end.now_ms);
  TreeChange change;
  change.message = id;
  change.updated.push_back(id);
  touch(tree, end.now_ms, change);
  return change;
}

Result<TreeChange> edit_user(ChatTree& tree, MessageId id, const std::string& new_content, int64_t now_ms) {
  QC_TRY(check_not_streaming(tree, "edit message"));
  const Message* old = find(tree, id);
  if (old == nullptr) return make_error("edit message: message " + std::to_string(id) + " does not exist");
  if (old->role != Role::kUser) {
    return make_error("edit message: message " + std::to_string(id) + " is a " + role_name(old->role) +
                      " message, expected a user message");
  }
  Message m;
  m.parent_id = old->parent_id;
  m.role = Role::kUser;
  m.content = new_content;
  return add_message(tree, std::move(m), now_ms);
}

Result<TreeChange> regenerate(ChatTree& tree, MessageId assistant_id, const ReplyStart& start) {
  QC_TRY(check_not_streaming(tree, "regenerate"));
  const Message* old = find(tree, assistant_id);
  if (old == nullptr)
    return make_error("regenerate: message " + std::to_string(assistant_id) + " does not exist");
  if (old->role != Role::kAssistant) {
    return make_error("regenerate: message " + std::to_string(assistant_id) + " is a " +
                      role_name(old->role) + " message, expected an assistant reply");
  }
  return add_message(tree, new_reply(old->parent_id, start), start.now_ms);
}

Result<TreeChange> delete_message(ChatTree& tree, MessageId id, int64_t now_ms) {
  const Message* m = find(tree, id);
  if (m == nullptr) return make_error("delete message: message " + std::to_string(id) + " does not exist");
  const std::vector<MessageId> doomed = subtree(tree, id);
  for (MessageId d : doomed) {
    if (find(tree, d)->state == MessageState::kStreaming) {
      return make_error("delete message: message " + std::to_string(d) +
                        " is still streaming (stop it first)");
    }
  }
  const MessageId parent = m->parent_id;
  TreeChange change;
  if (selected_child(tree, parent) == id) {
    const std::vector<MessageId> sibs = children(tree, parent);
    const size_t at = static_cast<size_t>(std::find(sibs.begin(), sibs.end(), id) - sibs.begin());
    MessageId next = 0;
    if (at > 0) {
      next = sibs[at - 1];
    } else if (at + 1 < sibs.size()) {
      next = sibs[at + 1];
    }
    set_selection(tree, parent, next, change);
  }
  // One pass over the vector keeps it sorted; doomed is small, so a sorted lookup is plenty.
  std::vector<MessageId> sorted = doomed;
  std::sort(sorted.begin(), sorted.end());
  std::erase_if(tree.messages,
                [&](const Message& x) { return std::binary_search(sorted.begin(), sorted.end(), x.id); });
  change.message = parent;
  change.deleted.push_back(id);
  touch(tree, now_ms, change);
  return change;
}

Result<TreeChange> select_sibling(ChatTree& tree, MessageId id, int delta) {
  const Message* m = find(tree, id);
  if (m == nullptr) return make_error("select sibling: message " + std::to_string(id) + " does not exist");
  const MessageId parent = m->parent_id;
  const std::vector<MessageId> sibs = children(tree, parent);
  const long at = static_cast<long>(std::find(sibs.begin(), sibs.end(), id) - sibs.begin());
  const long to = std::clamp<long>(at + delta, 0, static_cast<long>(sibs.size()) - 1);
  const MessageId target = sibs[static_cast<size_t>(to)];
  TreeChange change;
  change.message = target;
  if (selected_child(tree, parent) != target) set_selection(tree, parent, target, change);
  return change;
}

Result<TreeChange> select_message(ChatTree& tree, MessageId id) {
  if (find(tree, id) == nullptr)
    return make_error("select message: message " + std::to_string(id) + " does not exist");
  const std::vector<MessageId> path = path_to(tree, id);
  TreeChange change;
  change.message = id;
  MessageId parent = 0;
  for (MessageId at : path) {
    if (selected_child(tree, parent) != at) set_selection(tree, parent, at, change);
    parent = at;
  }
  return change;
}

std::vector<ChatMessage> prompt_history(const ChatTree& tree, MessageId up_to,
                                        const HistoryOptions& options) {
  std::vector<ChatMessage> out;
  if (options.include_system_prompt && !tree.conversation.system_prompt.empty()) {
    out.push_back({"system", tree.conversation.system_prompt, ""});
  }
  const std::vector<MessageId> path = up_to == 0 ? current_branch(tree) : path_to(tree, up_to);
  for (MessageId id : path) {
    const Message& m = *find(tree, id);
    if (options.skip_errors && m.state == MessageState::kError) continue;
    out.push_back({role_name(m.role), m.content, m.thinking});
  }
  return out;
}

}  // namespace qc::chat
