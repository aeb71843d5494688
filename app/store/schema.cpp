// Migration steps (see schema.h). Message ids are per conversation, so messages are keyed by
// (conversation_id, id) and the parent link is a composite foreign key; a root has parent_id NULL (the
// chat structs use 0), which SQLite's foreign keys never check.
#include "store/schema.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>

#include <string>

namespace qc::store::schema {
namespace {

struct Step {
  int version;
  const char* what;
  const char* sql;
};

// v1: the first schema: conversations and their message tree.
// v2: branch selections persist (messages.selected_child, conversations.selected_root), replies keep
//     their error text, and the sidebar's ORDER BY updated_ms gets an index.
constexpr Step kSteps[] = {
    {1, "v1: conversations and messages",
     R"sql(
CREATE TABLE conversations (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL DEFAULT '',
  system_prompt TEXT NOT NULL DEFAULT '',
  model_path TEXT NOT NULL DEFAULT '',
  settings TEXT NOT NULL DEFAULT '{}',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE messages (
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  id INTEGER NOT NULL,
  parent_id INTEGER,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content TEXT NOT NULL DEFAULT '',
  thinking TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  settings TEXT NOT NULL DEFAULT '{}',
  stats TEXT NOT NULL DEFAULT '{}',
  state TEXT NOT NULL DEFAULT 'complete' CHECK (state IN ('complete', 'streaming', 'stopped', 'error')),
  PRIMARY KEY (conversation_id, id),
  FOREIGN KEY (conversation_id, parent_id) REFERENCES messages(conversation_id, id) ON DELETE CASCADE
);
-- The child key of the parent link: without it every cascade step scans the whole table.
CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id);
)sql"},
    {2, "v2: branch selections, error text, list index",
     R"sql(
ALTER TABLE messages ADD COLUMN selected_child INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN error TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN selected_root INTEGER NOT NULL DEFAULT 0;
CREATE INDEX conversations_by_updated ON conversations(updated_ms);
)sql"},
};

}  // namespace

Result<int> version(SQLite::Database& db) {
  try {
    return db.execAndGet("PRAGMA user_version").getInt();
  } catch (const std::exception& e) {
    return make_error(std::string("read the schema version: ") + e.what());
  }
}

Status migrate(SQLite::Database& db, int target) {
  int at = 0;
  const char* doing = "read the schema version";
  try {
    at = db.execAndGet("PRAGMA user_version").getInt();
    const int app_id = db.execAndGet("PRAGMA application_id").getInt();
    if (app_id != 0 && app_id != kApplicationId) {
      return make_error("not a qwenchat database: application_id is " + std::to_string(app_id) +
                        ", expected " + std::to_string(kApplicationId));
    }
    if (at > target) {
      return make_error("the database has schema version " + std::to_string(at) +
                            ", newer than this build's " + std::to_string(target),
                        "it was written by a newer qwenchat; update qwenchat to open it");
    }
    if (at == 0 && db.execAndGet("SELECT count(*) FROM sqlite_master").getInt() != 0) {
      return make_error("not a qwenchat database: it holds tables but no qwenchat schema version");
    }
    for (const Step& step : kSteps) {
      if (step.version <= at || step.version > target) continue;
      doing = step.what;
      SQLite::Transaction tx(db);
      db.exec(step.sql);
      db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
      db.exec("PRAGMA user_version = " + std::to_string(step.version));
      tx.commit();
      at = step.version;
    }
  } catch (const std::exception& e) {
    return make_error(std::string("migrate the schema (") + doing + ", from version " + std::to_string(at) +
                      "): " + e.what());
  }
  return {};
}

}  // namespace qc::store::schema
