// Store: message writes, Store::apply for chat-state changes, whole-tree insert (import).
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <set>

#include "qwenchat/json_depth.h"
#include "store/store.h"
#include "store/store_internal.h"

namespace qc::store {

using detail::guarded;

namespace detail {

std::string json_text(const nlohmann::json& j) {
  return j.is_null() ? "{}" : j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<nlohmann::json> parse_json_column(const std::string& text, const std::string& what) {
  QC_TRY(check_json_depth(text, what));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error(what + ": not valid JSON: " + text.substr(0, 60));
  return j;
}

void write_message(SQLite::Database& db, chat::ConversationId conversation, const chat::Message& m,
                   bool insert) {
  SQLite::Statement q(
      db, insert ? "INSERT INTO messages (parent_id, role, content, thinking, created_ms, updated_ms,"
                   " model, settings, stats, state, selected_child, error, conversation_id, id)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                 : "UPDATE messages SET parent_id = ?, role = ?, content = ?, thinking = ?,"
                   " created_ms = ?, updated_ms = ?, model = ?, settings = ?, stats = ?, state = ?,"
                   " selected_child = ?, error = ? WHERE conversation_id = ? AND id = ?");
  if (m.parent_id == 0) {
    q.bind(1);  // NULL: a root (the foreign key is not checked)
  } else {
    q.bind(1, m.parent_id);
  }
  q.bind(2, chat::role_name(m.role));
  q.bind(3, m.content);
  q.bind(4, m.thinking);
  q.bind(5, m.created_ms);
  q.bind(6, m.updated_ms);
  q.bind(7, m.model);
  q.bind(8, json_text(m.settings));
  q.bind(9, json_text(m.stats));
  q.bind(10, chat::state_name(m.state));
  q.bind(11, m.selected_child);
  q.bind(12, m.error);
  q.bind(13, conversation);
  q.bind(14, m.id);
  if (q.exec() != 1) {
    throw SQLite::Exception("message " + std::to_string(m.id) + " of conversation " +
                            std::to_string(conversation) + " does not exist");
  }
}

chat::ConversationId write_conversation(SQLite::Database& db, const chat::Conversation& c, bool insert) {
  SQLite::Statement q(db, insert ? "INSERT INTO conversations (title, system_prompt, model_path, settings,"
                                   " created_ms, updated_ms, selected_root) VALUES (?, ?, ?, ?, ?, ?, ?)"
                                 : "UPDATE conversations SET title = ?, system_prompt = ?, model_path = ?,"
                                   " settings = ?, created_ms = ?, updated_ms = ?, selected_root = ? WHERE id = ?");
  q.bind(1, c.title);
  q.bind(2, c.system_prompt);
  q.bind(3, c.model_path);
  q.bind(4, json_text(c.settings));
  q.bind(5, c.created_ms);
  q.bind(6, c.updated_ms);
  q.bind(7, c.selected_root);
  if (!insert) q.bind(8, c.id);
  if (q.exec() != 1) throw SQLite::Exception("conversation " + std::to_string(c.id) + " does not exist");
  return insert ? db.getLastInsertRowid() : c.id;
}

}  // namespace detail

namespace {

std::string message_name(ConversationId c, MessageId m) {
  return "message " + std::to_string(m) + " of conversation " + std::to_string(c);
}

}  // namespace

Status Store::insert_message(ConversationId conversation, const chat::Message& message) {
  return guarded(path_, "insert " + message_name(conversation, message.id), [&]() -> Status {
    detail::write_message(*db_, conversation, message, /*insert=*/true);
    return {};
  });
}

Status Store::update_message(ConversationId conversation, const chat::Message& message) {
  return guarded(path_, "update " + message_name(conversation, message.id), [&]() -> Status {
    detail::write_message(*db_, conversation, message, /*insert=*/false);
    return {};
  });
}

Status Store::update_streaming(const chat::ChatTree& tree, MessageId id) {
  const chat::Message* m = chat::find(tree, id);
  if (m == nullptr) {
    return make_error("store: update streaming " + message_name(tree.conversation.id, id) +
                      ": not in the tree");
  }
  return update_streaming(tree.conversation.id, id, m->content, m->thinking, m->updated_ms);
}

Status Store::update_streaming(ConversationId conversation, MessageId id, const std::string& content,
                               const std::string& thinking, int64_t updated_ms) {
  return guarded(path_, "update streaming " + message_name(conversation, id), [&]() -> Status {
    // Autocommit: one statement = one WAL transaction; no fsync at synchronous=NORMAL.
    SQLite::Statement q(*db_,
                        "UPDATE messages SET content = ?, thinking = ?, updated_ms = ?"
                        " WHERE conversation_id = ? AND id = ?");
    q.bind(1, content);
    q.bind(2, thinking);
    q.bind(3, updated_ms);
    q.bind(4, conversation);
    q.bind(5, id);
    if (q.exec() != 1)
      return make_error("store: update streaming " + message_name(conversation, id) + " in " + path_ +
                        ": no such message");
    return {};
  }, &busy_);
}

Status Store::finish_message(ConversationId conversation, const chat::Message& m) {
  return guarded(path_, "finish " + message_name(conversation, m.id), [&]() -> Status {
    SQLite::Statement q(
        *db_,
        "UPDATE messages SET content = ?, thinking = ?, state = ?, stats = ?, error = ?, updated_ms = ?"
        " WHERE conversation_id = ? AND id = ?");
    q.bind(1, m.content);
    q.bind(2, m.thinking);
    q.bind(3, chat::state_name(m.state));
    q.bind(4, detail::json_text(m.stats));
    q.bind(5, m.error);
    q.bind(6, m.updated_ms);
    q.bind(7, conversation);
    q.bind(8, m.id);
    if (q.exec() != 1)
      return make_error("store: finish " + message_name(conversation, m.id) + " in " + path_ +
                        ": no such message");
    return {};
  });
}

Status Store::set_selected_child(ConversationId conversation, MessageId parent, MessageId child) {
  return guarded(path_, "select child " + std::to_string(child) + " of " + message_name(conversation, parent),
                 [&]() -> Status {
                   SQLite::Statement q(*db_, parent == 0
                                                 ? "UPDATE conversations SET selected_root = ?1 WHERE id = ?2"
                                                 : "UPDATE messages SET selected_child = ?1"
                                                   " WHERE conversation_id = ?2 AND id = ?3");
                   q.bind(1, child);
                   q.bind(2, conversation);
                   if (parent != 0) q.bind(3, parent);
                   if (q.exec() != 1) {
                     return make_error("store: select child in " + path_ + ": " +
                                       message_name(conversation, parent) + " does not exist");
                   }
                   return {};
                 });
}

Status Store::delete_message(ConversationId conversation, MessageId id) {
  return guarded(path_, "delete " + message_name(conversation, id), [&]() -> Status {
    SQLite::Statement q(*db_, "DELETE FROM messages WHERE conversation_id = ? AND id = ?");
    q.bind(1, conversation);
    q.bind(2, id);
    if (q.exec() != 1)
      return make_error("store: delete " + message_name(conversation, id) + " in " + path_ +
                        ": no such message");
    return {};
  });
}

Status Store::apply(const chat::ChatTree& tree, const chat::TreeChange& change) {
  const ConversationId cid = tree.conversation.id;
  return guarded(path_, "save changes to conversation " + std::to_string(cid), [&]() -> Status {
    if (change.empty()) return {};
    SQLite::Transaction tx(*db_);
    for (MessageId id : change.deleted) {
      SQLite::Statement q(*db_, "DELETE FROM messages WHERE conversation_id = ? AND id = ?");
      q.bind(1, cid);
      q.bind(2, id);
      q.exec();  // already gone (a parent's cascade took it) is fine
    }
    const std::set<MessageId> inserted(change.inserted.begin(), change.inserted.end());
    for (MessageId id : change.inserted) {
      const chat::Message* m = chat::find(tree, id);
      if (m == nullptr)
        return make_error("store: save changes: inserted " + message_name(cid, id) + " is not in the tree");
      detail::write_message(*db_, cid, *m, /*insert=*/true);
    }
    for (MessageId id : change.updated) {
      const chat::Message* m = chat::find(tree, id);
      if (m == nullptr || inserted.count(id) != 0) continue;  // deleted since, or written whole just above
      detail::write_message(*db_, cid, *m, /*insert=*/false);
    }
    // The conversation row carries updated_ms (list order) and the root selection: written on every change.
    detail::write_conversation(*db_, tree.conversation, /*insert=*/false);
    tx.commit();
    return {};
  }, &busy_);
}

Result<ConversationId> Store::insert_tree(const chat::ChatTree& tree) {
  // Parents before children (the parent link is checked per statement): pre-order from the roots. A
  // message unreachable from a root (its parent missing, or a cycle) is an error.
  std::vector<MessageId> order;
  for (MessageId root : chat::children(tree, 0)) {
    for (MessageId id : chat::subtree(tree, root)) order.push_back(id);
  }
  if (order.size() != tree.messages.size()) {
    return make_error("store: insert conversation \"" + tree.conversation.title + "\": " +
                      std::to_string(tree.messages.size() - std::min(order.size(), tree.messages.size())) +
                      " messages are not reachable from a root (missing parent or a cycle)");
  }
  return guarded(path_, "insert conversation \"" + tree.conversation.title + "\"",
                 [&]() -> Result<ConversationId> {
                   SQLite::Transaction tx(*db_);
                   const ConversationId id = detail::write_conversation(*db_, tree.conversation, /*insert=*/true);
                   for (MessageId mid : order)
                     detail::write_message(*db_, id, *chat::find(tree, mid), /*insert=*/true);
                   tx.commit();
                   return id;
                 });
}

}  // namespace qc::store
