// Store: opening, conversations, loading a tree, search (see store.h). Message writes are in
// store_messages.cpp.
#include "store/store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "store/instance_lock.h"
#include "store/schema.h"
#include "store/snippet.h"
#include "store/store_internal.h"

namespace qc::store {

using detail::guarded;

Result<std::string> default_db_path() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/qwenchat/qwenchat.db";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.local/share/qwenchat/qwenchat.db";
  return make_error("no default database path: neither XDG_DATA_HOME (absolute) nor HOME is set",
                    "pass --db PATH");
}

Store::Store(std::string path, std::unique_ptr<SQLite::Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

int Store::schema_version() {
  return schema::kCurrentVersion;
}

namespace {

// No -wal file beside the database and its folder not writable (mode bits, or a read-only file system).
bool cannot_hold_a_writer(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path + "-wal", ec)) return false;
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return ::access(dir.c_str(), W_OK) != 0;
}

// "file:/a/b.db?immutable=1", the path's URI-special characters percent-encoded.
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Result<Store> Store::open(const std::string& path, const OpenOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (!exists && (options.read_only || !options.create)) {
    return make_error("store: open " + path + ": no such database file");
  }
  if (!exists) {
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty()) {
      fs::create_directories(dir, ec);
      if (ec) return make_error("store: create the folder " + dir.string() + ": " + ec.message());
    }
  }
  return guarded(path, "open", [&]() -> Result<Store> {
    const int flags =
        options.read_only ? SQLite::OPEN_READONLY : (SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    // Another process holding a lock briefly: wait up to the timeout instead of failing (0 = never wait).
    auto db = std::make_unique<SQLite::Database>(path, flags, std::max(0, options.busy_timeout_ms));
    db->exec("PRAGMA foreign_keys = ON");
    if (options.read_only && !schema::version(*db).ok() && cannot_hold_a_writer(path)) {
      // A WAL database in a folder nobody can write (a read-only file system, a backup) cannot create its
      // -shm file, which even a reader needs: reading it as immutable needs nothing written anywhere.
      // Safe because without a -wal file every commit is in the main file, and with the folder read-only
      // no qwenchat can be writing to it (a writer needs the -wal there).
      db = std::make_unique<SQLite::Database>(immutable_uri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    }
    if (options.read_only) {
      const Result<int> version = schema::version(*db);
      if (!version.ok()) return make_error("store: open " + path + ": " + version.error().message);
      const int v = *version;
      if (v != schema::kCurrentVersion) {
        // An older database can be migrated by this build; a newer one only by the newer qwenchat that
        // wrote it (this build refuses to write to it).
        return make_error("store: open " + path + " read-only: schema version " + std::to_string(v) +
                              ", expected " + std::to_string(schema::kCurrentVersion),
                          v < schema::kCurrentVersion
                              ? "open it once with this version of the app to migrate it"
                              : "it was written by a newer qwenchat: use that version (this one cannot read it)");
      }
    } else {
      // A database of a newer schema is refused before anything is written to it (the WAL switch below
      // rewrites the file header): the newer qwenchat that wrote it finds it as it left it.
      const Result<int> version = schema::version(*db);
      if (!version.ok())
        return make_error("store: open " + path + ": " + version.error().message,
                          "it is not a qwenchat database, or it is damaged; it was left unchanged: move it away "
                          "(the app then starts a new one there) or open another with --db PATH");
      if (*version > schema::kCurrentVersion) {
        return make_error("store: open " + path + ": the database has schema version " +
                              std::to_string(*version) + ", newer than this build's " +
                              std::to_string(schema::kCurrentVersion) + "; it was left unchanged",
                          "it was written by a newer qwenchat: open it with that version, or update qwenchat");
      }
      const std::string mode = db->execAndGet("PRAGMA journal_mode = WAL").getString();
      if (mode != "wal") {
        return make_error("store: open " + path + ": journal_mode WAL refused (got \"" + mode + "\")");
      }
      db->exec("PRAGMA synchronous = NORMAL");
      const Status migrated = schema::migrate(*db);
      if (!migrated.ok())
        return make_error("store: open " + path + ": " + migrated.error().message, migrated.error().hint);
      // Still "streaming" in the file = an earlier run died mid-reply (what was flushed is all there is),
      // unless an app holds the instance lock: then it may be that app's live reply.
      const bool recover =
          options.recover_interrupted == Recover::kAlways ||
          (options.recover_interrupted == Recover::kUnlessAppRunning && !InstanceLock::held(path));
      if (recover) db->exec("UPDATE messages SET state = 'stopped' WHERE state = 'streaming'");
    }
    return Store(path, std::move(db));
  });
}

// ---- conversations ----

Result<std::vector<ConversationSummary>> Store::list_conversations() const {
  return guarded(path_, "list conversations", [&]() -> Result<std::vector<ConversationSummary>> {
    SQLite::Statement q(*db_,
                        "SELECT c.id, c.title, c.model_path, c.created_ms, c.updated_ms,"
                        " (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)"
                        " FROM conversations c ORDER BY c.updated_ms DESC, c.id DESC");
    std::vector<ConversationSummary> out;
    while (q.executeStep()) {
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                     q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), q.getColumn(5).getInt64()});
    }
    return out;
  });
}

Result<std::vector<ConversationId>> Store::conversation_ids() const {
  return guarded(path_, "list conversation ids", [&]() -> Result<std::vector<ConversationId>> {
    SQLite::Statement q(*db_, "SELECT id FROM conversations ORDER BY updated_ms DESC, id DESC");
    std::vector<ConversationId> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).getInt64());
    return out;
  });
}

Result<chat::Conversation> Store::create_conversation(const NewConversation& params) {
  return guarded(path_, "create a conversation", [&]() -> Result<chat::Conversation> {
    chat::Conversation c;
    c.title = params.title;
    c.system_prompt = params.system_prompt;
    c.model_path = params.model_path;
    c.settings = params.settings.is_null() ? nlohmann::json::object() : params.settings;
    c.created_ms = params.now_ms;
    c.updated_ms = params.now_ms;
    c.id = detail::write_conversation(*db_, c, /*insert=*/true);
    return c;
  });
}

Status Store::rename_conversation(ConversationId id, const std::string& title, int64_t now_ms) {
  const std::string what = "rename conversation " + std::to_string(id);
  return guarded(path_, what, [&]() -> Status {
    SQLite::Statement q(*db_,
                        "UPDATE conversations SET title = ?, updated_ms = max(updated_ms, ?) WHERE id = ?");
    q.bind(1, title);
    q.bind(2, now_ms);
    q.bind(3, id);
    if (q.exec() != 1) return make_error("store: " + what + " in " + path_ + ": no such conversation");
    return {};
  });
}

Status Store::update_conversation(const chat::Conversation& c) {
  return guarded(
      path_, "update conversation " + std::to_string(c.id),
      [&]() -> Status {
        detail::write_conversation(*db_, c, /*insert=*/false);
        return {};
      },
      &busy_);
}

Status Store::set_page_limit(int64_t pages) {
  return guarded(path_, "set the page limit", [&]() -> Status {
    db_->execAndGet("PRAGMA max_page_count = " + std::to_string(pages));
    return {};
  });
}

Status Store::delete_conversation(ConversationId id) {
  const std::string what = "delete conversation " + std::to_string(id);
  return guarded(path_, what, [&]() -> Status {
    SQLite::Statement q(*db_, "DELETE FROM conversations WHERE id = ?");
    q.bind(1, id);
    if (q.exec() != 1) return make_error("store: " + what + " in " + path_ + ": no such conversation");
    return {};
  });
}

Result<chat::ChatTree> Store::load_conversation(ConversationId id) const {
  const std::string what = "load conversation " + std::to_string(id);
  return guarded(path_, what, [&]() -> Result<chat::ChatTree> {
    // One read transaction: the conversation row and its messages are one consistent snapshot.
    SQLite::Transaction tx(*db_);
    chat::ChatTree tree;
    {
      SQLite::Statement q(*db_,
                          "SELECT id, title, system_prompt, model_path, settings, created_ms, updated_ms,"
                          " selected_root FROM conversations WHERE id = ?");
      q.bind(1, id);
      if (!q.executeStep()) return make_error("store: " + what + " in " + path_ + ": no such conversation");
      chat::Conversation& c = tree.conversation;
      c.id = q.getColumn(0).getInt64();
      c.title = q.getColumn(1).getString();
      c.system_prompt = q.getColumn(2).getString();
      c.model_path = q.getColumn(3).getString();
      QC_ASSIGN(c.settings, detail::parse_json_column(q.getColumn(4).getString(), "conversation settings"));
      c.created_ms = q.getColumn(5).getInt64();
      c.updated_ms = q.getColumn(6).getInt64();
      c.selected_root = q.getColumn(7).getInt64();
    }
    SQLite::Statement q(
        *db_,
        "SELECT id, coalesce(parent_id, 0), role, content, thinking, created_ms, updated_ms, model,"
        " settings, stats, state, selected_child, error FROM messages"
        " WHERE conversation_id = ? ORDER BY id");
    q.bind(1, id);
    while (q.executeStep()) {
      chat::Message m;
      m.id = q.getColumn(0).getInt64();
      const std::string name = "message " + std::to_string(m.id);
      m.parent_id = q.getColumn(1).getInt64();
      QC_ASSIGN(m.role, chat::parse_role(q.getColumn(2).getString()));
      m.content = q.getColumn(3).getString();
      m.thinking = q.getColumn(4).getString();
      m.created_ms = q.getColumn(5).getInt64();
      m.updated_ms = q.getColumn(6).getInt64();
      m.model = q.getColumn(7).getString();
      QC_ASSIGN(m.settings, detail::parse_json_column(q.getColumn(8).getString(), name + " settings"));
      QC_ASSIGN(m.stats, detail::parse_json_column(q.getColumn(9).getString(), name + " stats"));
      QC_ASSIGN(m.state, chat::parse_state(q.getColumn(10).getString()));
      m.selected_child = q.getColumn(11).getInt64();
      m.error = q.getColumn(12).getString();
      tree.messages.push_back(std::move(m));
    }
    tree.next_id = tree.messages.empty() ? 1 : tree.messages.back().id + 1;
    tx.commit();
    return tree;
  });
}

// ---- search ----

namespace {

// LIKE pattern for a substring: %, _ and the escape character itself are escaped with '\'.
std::string like_pattern(const std::string& query) {
  std::string p = "%";
  for (char c : query) {
    if (c == '%' || c == '_' || c == '\\') p.push_back('\\');
    p.push_back(c);
  }
  p.push_back('%');
  return p;
}

}  // namespace

Result<std::vector<SearchHit>> Store::search(const std::string& query, const SearchOptions& options) const {
  return guarded(path_, "search", [&]() -> Result<std::vector<SearchHit>> {
    std::vector<SearchHit> out;
    if (query.empty() || options.limit <= 0) return out;
    // Title hits first within a conversation (message_id 0), conversations most recent first.
    SQLite::Statement q(*db_,
                        "SELECT id, title, 0, 'user', title, updated_ms FROM conversations"
                        " WHERE title LIKE ?1 ESCAPE '\\'"
                        " UNION ALL "
                        "SELECT m.conversation_id, c.title, m.id, m.role, m.content, c.updated_ms"
                        " FROM messages m JOIN conversations c ON c.id = m.conversation_id"
                        " WHERE m.content LIKE ?1 ESCAPE '\\'"
                        " ORDER BY 6 DESC, 1 DESC, 3 ASC LIMIT ?2");
    q.bind(1, like_pattern(query));
    q.bind(2, options.limit);
    while (q.executeStep()) {
      SearchHit h;
      h.conversation_id = q.getColumn(0).getInt64();
      h.conversation_title = q.getColumn(1).getString();
      h.message_id = q.getColumn(2).getInt64();
      auto role = chat::parse_role(q.getColumn(3).getString());
      h.role = role.ok() ? *role : chat::Role::kUser;
      Snippet s = make_snippet(q.getColumn(4).getString(), query, options.snippet_chars);
      h.snippet = std::move(s.text);
      h.match_begin = s.match_begin;
      h.match_length = s.match_length;
      h.updated_ms = q.getColumn(5).getInt64();
      out.push_back(std::move(h));
    }
    return out;
  });
}

}  // namespace qc::store
