// Upgrades keep data: every past schema version's database, as that version wrote it
// (tests/golden/store/schema_vN.sql, frozen), opens with today's store, migrated to the current version
// with every row kept; a database of a newer version (a downgrade) is refused with a clear message and
// left byte for byte as it was.
#include <SQLiteCpp/Database.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/schema.h"
#include "store/store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::store {
namespace {

namespace fs = std::filesystem;
using test::must;
using Ids = std::vector<chat::MessageId>;

std::string fixture_path(int version) {
  return std::string(QWENCHAT_SOURCE_DIR) + "/tests/golden/store/schema_v" + std::to_string(version) + ".sql";
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fixture's SQL run into a new file, as the old version's store would have left it (rollback journal,
// the old version's user_version and application_id).
void load_fixture(int version, const std::string& db_path) {
  const std::string sql = read_all(fixture_path(version));
  ASSERT_FALSE(sql.empty()) << fixture_path(version);
  SQLite::Database db(db_path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(sql);
}

TEST(StoreFixtures, EveryPastSchemaVersionHasAFixture) {
  for (int v = 1; v <= schema::kCurrentVersion; ++v) {
    EXPECT_TRUE(fs::exists(fixture_path(v))) << "schema version " << v << " has no fixture: add "
                                             << fixture_path(v) << " (a database as that version writes it)";
  }
}

TEST(StoreFixtures, EachVersionOpensMigratesAndKeepsEveryRow) {
  for (int v = 1; v <= schema::kCurrentVersion; ++v) {
    SCOPED_TRACE("schema v" + std::to_string(v));
    test::TempDir dir;
    const std::string path = dir.file("old.db");
    load_fixture(v, path);
    ASSERT_EQ(v, test::sql_int(path, "PRAGMA user_version"));
    {
      Store st = must(Store::open(path));
      const std::vector<ConversationSummary> list = must(st.list_conversations());
      ASSERT_EQ(2u, list.size());
      EXPECT_EQ(6, list[0].id);  // newest first
      EXPECT_EQ("ünïcödé ✓ and 'quotes'", list[0].title);
      EXPECT_EQ(5, list[1].message_count);

      const chat::ChatTree a = must(st.load_conversation(5));
      EXPECT_EQ("You are terse.", a.conversation.system_prompt);
      EXPECT_EQ("/models/old.gguf", a.conversation.model_path);
      EXPECT_EQ(0.7, a.conversation.settings["temperature"].get<double>());
      ASSERT_EQ(5u, a.messages.size());
      EXPECT_EQ("17 + 25 = 42.", chat::find(a, 2)->content);
      EXPECT_EQ("add the tens", chat::find(a, 2)->thinking);
      EXPECT_EQ(33.5, chat::find(a, 2)->stats["tok_per_s"].get<double>());
      EXPECT_EQ(chat::MessageState::kStopped, chat::find(a, 3)->state);
      EXPECT_EQ(1764000310000, chat::find(a, 5)->created_ms);
      // v1 stored no branch selection (the newest reply is current: 3, a leaf); v2 stored reply 2.
      EXPECT_EQ(v >= 2 ? (Ids{1, 2, 4, 5}) : (Ids{1, 3}), chat::current_branch(a));

      const chat::ChatTree b = must(st.load_conversation(6));
      EXPECT_EQ("Zeilen\nüber zwei Zeilen 日本語", chat::find(b, 1)->content);
      EXPECT_EQ(chat::MessageState::kError, chat::find(b, 2)->state);
      EXPECT_EQ(v >= 2 ? "the model file went away" : "", chat::find(b, 2)->error);

      // The migrated file takes today's writes.
      ASSERT_TRUE(st.set_selected_child(5, 1, 3).ok());
      EXPECT_EQ((Ids{1, 3}), chat::current_branch(must(st.load_conversation(5))));
    }
    EXPECT_EQ(schema::kCurrentVersion, test::sql_int(path, "PRAGMA user_version"));
    EXPECT_EQ(7, test::sql_int(path, "SELECT count(*) FROM messages"));
    EXPECT_EQ("ok", test::sql_text(path, "PRAGMA integrity_check"));
  }
}

TEST(StoreFixtures, ANewerSchemaIsRefusedAndTheFileIsLeftAsItWas) {
  test::TempDir dir;
  const std::string path = dir.file("newer.db");
  load_fixture(schema::kCurrentVersion, path);
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA user_version = " + std::to_string(schema::kCurrentVersion + 1));
  }
  const std::string before = read_all(path);
  const auto st = Store::open(path);
  ASSERT_FALSE(st.ok()) << "a database of a newer schema must not open";
  const std::string msg = st.error().describe();
  EXPECT_NE(msg.find("newer than this build's " + std::to_string(schema::kCurrentVersion)), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("update qwenchat"), std::string::npos) << msg;
  EXPECT_EQ(before, read_all(path)) << "the refused file was modified";
  EXPECT_FALSE(fs::exists(path + "-wal")) << "the refused file was switched to WAL";
}

}  // namespace
}  // namespace qc::store
