// The conversation store: one SQLite database (through SQLiteCpp) holding conversations and their
// message trees (app/chat/chat_state.h).
//
// Settings applied on open: WAL journal (readers never block the writer, a commit is one append to the
// -wal file), foreign keys ON (deleting a conversation or a message cascades to its messages/subtree),
// synchronous=NORMAL (in WAL mode a commit survives a killed process; only an OS crash or power loss can
// lose the last commits, never corrupt the file), busy_timeout 2 s (OpenOptions::busy_timeout_ms; the
// GUI uses 0, see "Locks" below). The schema has a version (PRAGMA user_version) and migrations in code
// (store/schema.h); open() brings an older database up to date and refuses a newer one.
//
// Streaming: update_streaming() is one UPDATE of two text columns in its own transaction (a WAL append,
// no fsync at synchronous=NORMAL): measured 0.25 ms for a 4 KB reply on this project's dev VM disk. The
// GUI calls it at most every 250 ms while a reply grows (FlushThrottle below), so a kill loses at most
// that much text (tests/unit/test_store_kill.cpp kills a writer flushing every 50 ms: worst lag 35 ms).
//
// Errors: SQLiteCpp throws; every public function catches at this boundary and returns an Error that
// names the operation and the database ("store: insert message 7 of conversation 3 in
// /home/u/.local/share/qwenchat/qwenchat.db: database or disk is full"). A full disk or a read-only
// database is an error, never a termination.
//
// Threads: a Store is used from ONE thread (the GUI thread); it is movable, not copyable. Another
// process (qwenchat-cli export) may read the same file concurrently thanks to WAL.
//
// Locks: a write while another connection holds the write lock waits up to the busy timeout, then fails
// with "database is locked" and last_error_was_busy() true. The GUI opens with busy_timeout_ms = 0 so its
// frame loop never waits on another process's lock: the chat controller keeps such a write and retries
// it every frame (app/gui/chat_controller.h). In WAL mode reads never wait for a writer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat/chat_state.h"
#include "qwenchat/result.h"

namespace SQLite {
class Database;
}

namespace qc::store {

using chat::ConversationId;
using chat::MessageId;

// $XDG_DATA_HOME/qwenchat/qwenchat.db, else $HOME/.local/share/qwenchat/qwenchat.db. Error when neither
// variable is set (or XDG_DATA_HOME is relative, which the XDG spec says to ignore).
Result<std::string> default_db_path();

// What Store::open does with replies still marked streaming (OpenOptions::recover_interrupted).
enum class Recover {
  // Mark them stopped only when no app holds the database's instance lock (InstanceLock::held, a
  // non-blocking probe): they were cut off when an earlier run died. While an app runs, one of them may
  // be its live reply, so they are left alone (qwenchat-cli import beside the app, #13 item 5).
  kUnlessAppRunning,
  // Always: the caller holds the instance lock itself (the app at start-up, before any reply of its own).
  kAlways,
  kNever,
};

struct OpenOptions {
  // Open for reading only (export); the file must exist. Writes nothing anywhere: a database in a folder
  // that cannot be written (a read-only file system) and without a -wal file is read as immutable.
  bool read_only = false;
  bool create = true;  // create the file and its folders when missing (ignored when read_only)
  // Replies still marked streaming were cut off when an earlier run died: mark them stopped (see Recover).
  // Only when opened read-write; the app opens its store once at start-up.
  Recover recover_interrupted = Recover::kUnlessAppRunning;
  // How long a statement waits for another connection's lock before failing with "database is locked".
  // 2 s suits the CLI (an import waits out the app's short writes); the GUI passes 0 and retries.
  int busy_timeout_ms = 2000;
};

// One row of the conversation list (sidebar).
struct ConversationSummary {
  ConversationId id = 0;
  std::string title;
  std::string model_path;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t message_count = 0;
};

struct NewConversation {
  std::string title;
  std::string system_prompt;
  std::string model_path;
  nlohmann::json settings = nlohmann::json::object();
  int64_t now_ms = 0;
};

struct SearchOptions {
  int limit = 50;          // hits returned at most (newest conversations first)
  int snippet_chars = 80;  // context around the match, in characters (UTF-8 code points), each side / 2
};

// One search result. message_id 0 = the title matched. The snippet is a piece of the title or the
// message content around the first match (whitespace runs folded to one space, "…" where cut);
// [match_begin, match_begin + match_length) are byte offsets of the match inside snippet (highlight).
struct SearchHit {
  ConversationId conversation_id = 0;
  std::string conversation_title;
  MessageId message_id = 0;
  chat::Role role = chat::Role::kUser;  // of the message (meaningless for a title hit)
  std::string snippet;
  size_t match_begin = 0;
  size_t match_length = 0;
  int64_t updated_ms = 0;  // the conversation's
};

class Store {
 public:
  // Opens (creating the folders and the file unless read_only / !create), applies the pragmas, migrates
  // the schema and recovers interrupted replies (OpenOptions). Errors: unreadable / not a qwenchat
  // database, a newer schema than this build knows.
  static Result<Store> open(const std::string& path, const OpenOptions& options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  const std::string& path() const { return path_; }
  static int schema_version();  // the version this build writes

  // ---- conversations ----
  Result<std::vector<ConversationSummary>> list_conversations() const;  // most recent (updated) first
  Result<chat::Conversation> create_conversation(const NewConversation& params);  // id + timestamps set
  Status rename_conversation(ConversationId id, const std::string& title, int64_t now_ms);
  // Writes every field of the conversation (title, system prompt, model, settings, selected root,
  // updated_ms). Error when the id does not exist.
  Status update_conversation(const chat::Conversation& conversation);
  Status delete_conversation(ConversationId id);  // cascades to its messages
  // The whole tree, messages sorted by id, next_id = max id + 1, states as stored (a reply of this
  // process that is still growing reads kStreaming). Error when the id does not exist.
  Result<chat::ChatTree> load_conversation(ConversationId id) const;
  Result<std::vector<ConversationId>> conversation_ids() const;  // most recent first (export --all)

  // ---- messages (conversation id + message id) ----
  // Persists what a chat-state operation changed, in one transaction: inserts, full-row updates,
  // subtree deletes, and the conversation row (when conversation_changed or anything changed: updated_ms
  // is written from tree.conversation). The tree must be the one the operation was applied to.
  Status apply(const chat::ChatTree& tree, const chat::TreeChange& change);

  Status insert_message(ConversationId conversation, const chat::Message& message);  // parent must exist
  Status update_message(ConversationId conversation, const chat::Message& message);  // every field
  // The cheap streaming flush: content, thinking and updated_ms of one message (taken from the tree).
  Status update_streaming(const chat::ChatTree& tree, MessageId id);
  Status update_streaming(ConversationId conversation, MessageId id, const std::string& content,
                          const std::string& thinking, int64_t updated_ms);
  // Final content/thinking, state, stats and error of a reply (what finish_reply changed).
  Status finish_message(ConversationId conversation, const chat::Message& message);
  Status set_selected_child(ConversationId conversation, MessageId parent,
                            MessageId child);                        // parent 0 = root
  Status delete_message(ConversationId conversation, MessageId id);  // cascades to the subtree

  // Writes a whole tree as a NEW conversation (import): a fresh conversation id, message ids kept
  // (they are per conversation). One transaction. Returns the new id.
  Result<ConversationId> insert_tree(const chat::ChatTree& tree);

  // ---- search (Ctrl+K) ----
  // Case-insensitive (ASCII letters; other characters match exactly) substring search over titles and
  // message contents (not thinking). An empty query gives no hits. A LIKE scan of every message:
  // measured 56 ms over 10 MB of text (5000 messages of 2 KB) on the dev VM, so the GUI should search
  // when the query changes (debounced), never per frame; an FTS5 index is the next step if histories
  // grow past that.
  Result<std::vector<SearchHit>> search(const std::string& query, const SearchOptions& options = {}) const;

  // ---- failures ----
  // Whether the last failed write (apply, update_streaming, update_conversation) failed only because
  // another connection held the lock (SQLITE_BUSY/LOCKED): the same write may succeed later. Any other
  // failure (a full disk, a read-only file, a missing row) is false: retrying will not help.
  bool last_error_was_busy() const { return busy_; }
  // A size quota for this connection (PRAGMA max_page_count; never below the current size): a write that
  // would grow the file past it fails with "database or disk is full", exactly as on a full disk. Tests
  // use it to make a write fail that way without filling a disk.
  Status set_page_limit(int64_t pages);

 private:
  Store(std::string path, std::unique_ptr<SQLite::Database> db);
  std::string path_;
  std::unique_ptr<SQLite::Database> db_;
  bool busy_ = false;
};

// When to flush a growing reply. Two ways to use it:
// - due(now): true on the first call and then once `interval_ms` has passed since the last true.
// - text_appended() on every streamed delta, and flush_now(now) on every delta AND once per frame:
//   true when text arrived since the last flush and the interval has passed. The per-frame call matters:
//   with due() alone, text that arrives just after a flush waits for the NEXT delta, which may come
//   seconds later (a slow token, a long think), and a kill then loses more than the interval.
// The GUI uses 250 ms (at most that much text lost on a kill) and always flushes on finish
// (finish_reply + apply).
class FlushThrottle {
 public:
  explicit FlushThrottle(int64_t interval_ms = 250) : interval_ms_(interval_ms) {}
  bool due(int64_t now_ms) {
    if (has_last_ && now_ms - last_ms_ < interval_ms_) return false;
    last_ms_ = now_ms;
    has_last_ = true;
    return true;
  }
  void text_appended() { dirty_ = true; }
  bool flush_now(int64_t now_ms) {
    if (!dirty_ || !due(now_ms)) return false;
    dirty_ = false;
    return true;
  }
  void reset() {
    has_last_ = false;
    dirty_ = false;
  }

 private:
  int64_t interval_ms_;
  int64_t last_ms_ = 0;
  bool has_last_ = false;
  bool dirty_ = false;
};

}  // namespace qc::store
