// Schema migrations: a database written by the first schema (v1) opens with the current build, keeps
// its data, gains the new columns with their defaults, and a failed step leaves the last version.
#include <SQLiteCpp/Database.h>

#include <gtest/gtest.h>

#include "store/schema.h"
#include "store/store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::store {
namespace {

using test::must;
using Ids = std::vector<chat::MessageId>;

// A v1 database as qwenchat v1 wrote it: the v1 step only, rows through v1's columns.
void write_v1(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec("PRAGMA foreign_keys = ON");
  ASSERT_TRUE(schema::migrate(db, 1).ok());
  ASSERT_EQ(1, *schema::version(db));
  db.exec(
      "INSERT INTO conversations (id, title, system_prompt, model_path, settings, created_ms, updated_ms)"
      " VALUES (5, 'old chat', 'sys', 'old.gguf', '{\"seed\":9}', 100, 200);"
      "INSERT INTO messages (conversation_id, id, parent_id, role, content, thinking, created_ms, updated_ms,"
      " model, settings, stats, state) VALUES"
      " (5, 1, NULL, 'user', 'question', '', 110, 110, '', '{}', '{}', 'complete'),"
      " (5, 2, 1, 'assistant', 'answer one', 'hmm', 120, 130, 'old.gguf', '{\"seed\":9}',"
      "  '{\"tok_per_s\":33.5}', 'complete'),"
      " (5, 3, 1, 'assistant', 'answer two', '', 140, 150, 'old.gguf', '{}', '{}', 'stopped');");
}

TEST(StoreMigration, V1DatabaseOpensAndKeepsItsData) {
  test::TempDir dir;
  const std::string path = dir.file("v1.db");
  write_v1(path);
  {
    Store st = must(Store::open(path));
    std::vector<ConversationSummary> list = must(st.list_conversations());
    ASSERT_EQ(1u, list.size());
    EXPECT_EQ(5, list[0].id);
    EXPECT_EQ("old chat", list[0].title);
    EXPECT_EQ(3, list[0].message_count);
    chat::ChatTree t = must(st.load_conversation(5));
    EXPECT_EQ("sys", t.conversation.system_prompt);
    EXPECT_EQ(9, t.conversation.settings["seed"].get<int>());
    EXPECT_EQ(0, t.conversation.selected_root);  // new v2 column, default
    ASSERT_EQ(3u, t.messages.size());
    EXPECT_EQ("hmm", chat::find(t, 2)->thinking);
    EXPECT_EQ(33.5, chat::find(t, 2)->stats["tok_per_s"].get<double>());
    EXPECT_EQ("", chat::find(t, 3)->error);
    EXPECT_EQ(chat::MessageState::kStopped, chat::find(t, 3)->state);
    // No stored selection: the newest reply is on the branch, and the v2 columns work.
    EXPECT_EQ((Ids{1, 3}), chat::current_branch(t));
    ASSERT_TRUE(st.set_selected_child(5, 1, 2).ok());
    EXPECT_EQ((Ids{1, 2}), chat::current_branch(must(st.load_conversation(5))));
    // v1's cascade still holds after the migration.
    ASSERT_TRUE(st.delete_message(5, 1).ok());
    EXPECT_EQ(0, test::sql_int(path, "SELECT count(*) FROM messages"));
  }
  EXPECT_EQ(Store::schema_version(), test::sql_int(path, "PRAGMA user_version"));
  EXPECT_EQ(
      1, test::sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'conversations_by_updated'"));
  EXPECT_EQ("ok", test::sql_text(path, "PRAGMA integrity_check"));
}

TEST(StoreMigration, ANewDatabaseEqualsAMigratedOne) {
  // Running every step on an empty file and migrating a v1 file give the same schema.
  test::TempDir dir;
  const std::string fresh = dir.file("fresh.db"), old = dir.file("old.db");
  { Store st = must(Store::open(fresh)); }
  {
    SQLite::Database db(old, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    ASSERT_TRUE(schema::migrate(db, 1).ok());
  }
  { Store st = must(Store::open(old)); }
  const std::string q =
      "SELECT group_concat(type || ':' || name || ':' || sql, '\n') FROM"
      " (SELECT * FROM sqlite_master ORDER BY name)";
  EXPECT_EQ(test::sql_text(fresh, q), test::sql_text(old, q));
}

TEST(StoreMigration, AFailingStepKeepsTheLastVersion) {
  test::TempDir dir;
  const std::string path = dir.file("half.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    ASSERT_TRUE(schema::migrate(db, 1).ok());
    // Something v2 wants to create already exists: the v2 step fails as a whole.
    db.exec("CREATE INDEX conversations_by_updated ON conversations(created_ms)");
  }
  auto r = Store::open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("v2")) << r.error().message;
  EXPECT_EQ(1, test::sql_int(path, "PRAGMA user_version"));
  // The v2 column was rolled back with the rest of the step.
  EXPECT_EQ(0, test::sql_int(
                   path, "SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'selected_child'"));
}

TEST(StoreMigration, ReadOnlyOpenOfAnOldDatabaseAsksForAMigration) {
  test::TempDir dir;
  const std::string path = dir.file("v1.db");
  write_v1(path);
  auto r = Store::open(path, {.read_only = true});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("schema version 1")) << r.error().message;
  EXPECT_EQ(1, test::sql_int(path, "PRAGMA user_version"));  // untouched
}

}  // namespace
}  // namespace qc::store
