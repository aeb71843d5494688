// A stored message whose parent chain does not lead to a root (a damaged or hand-edited database:
// written with foreign keys off, or parent links that loop) is exported, in a section of its own, never
// left out without a word. Before, every format dropped such messages silently.
#include <SQLiteCpp/Database.h>

#include <string>

#include <gtest/gtest.h>

#include "export/export.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::exporter {
namespace {

using test::must;

// A conversation with a healthy branch (1 -> 2) and, written behind the store's back, an orphan (10,
// whose parent 99 does not exist) and a two-message cycle (20 <-> 21).
struct DamagedDb {
  test::TempDir dir;
  std::string path = dir.file("damaged.db");
  chat::ConversationId id = 0;

  DamagedDb() {
    store::Store st = must(store::Store::open(path));
    chat::ChatTree t;
    t.conversation.title = "Damaged";
    EXPECT_TRUE(chat::append_user(t, {.content = "reachable question", .now_ms = 1}).ok());
    EXPECT_TRUE(chat::start_reply(t, {.now_ms = 2}).ok());
    id = test::store_tree(st, t).conversation.id;
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA foreign_keys = OFF");
    const std::string c = std::to_string(id);
    raw.exec(
        "INSERT INTO messages (conversation_id, id, parent_id, role, content, created_ms, updated_ms)"
        " VALUES (" +
        c +
        ", 10, 99, 'user', 'orphan text', 3, 3),"
        " (" +
        c +
        ", 20, 21, 'user', 'cycle text A', 4, 4),"
        " (" +
        c + ", 21, 20, 'assistant', 'cycle text B', 5, 5)");
  }
};

TEST(ExportUnreachable, WholeTreeExportsListThemAndSayWhy) {
  DamagedDb db;
  store::Store st = must(store::Store::open(db.path, {.read_only = true}));
  const std::string md = must(export_from_store(st, {db.id}, {Format::kMarkdown, Branches::kAll}));
  EXPECT_NE(md.find("reachable question"), std::string::npos);
  for (const char* text : {"orphan text", "cycle text A", "cycle text B"}) {
    EXPECT_NE(md.find(text), std::string::npos) << text << " is missing from:\n" << md;
  }
  EXPECT_NE(md.find("whole tree (2), and 3 no root reaches (listed at the end)"), std::string::npos) << md;
  EXPECT_NE(md.find("## Unreachable messages (3)"), std::string::npos) << md;
  EXPECT_NE(md.find("a parent is missing from the conversation or the parent links form a cycle"),
            std::string::npos);
  EXPECT_NE(md.find("### User #10 (reply to #99)"), std::string::npos) << md;
  // The section comes after the healthy tree.
  EXPECT_LT(md.find("reachable question"), md.find("## Unreachable messages"));

  const std::string txt = must(export_from_store(st, {db.id}, {Format::kText, Branches::kAll}));
  EXPECT_NE(txt.find("=== unreachable messages (3) ==="), std::string::npos) << txt;
  for (const char* text : {"orphan text", "cycle text A", "cycle text B"})
    EXPECT_NE(txt.find(text), std::string::npos) << text;

  // JSON: apart from "messages", which stays a tree that imports.
  const std::string js = must(export_from_store(st, {db.id}, {Format::kJson, Branches::kAll}));
  const nlohmann::json doc = nlohmann::json::parse(js);
  const nlohmann::json& conv = doc["conversations"][0];
  ASSERT_EQ(conv["messages"].size(), 2u);
  ASSERT_EQ(conv["unreachable_messages"].size(), 3u);
  EXPECT_EQ(conv["unreachable_messages"][0]["id"], 10);
  EXPECT_EQ(conv["unreachable_messages"][0]["parent_id"], 99);
  EXPECT_EQ(conv["unreachable_messages"][2]["content"], "cycle text B");
  EXPECT_TRUE(parse_export_json(js).ok()) << parse_export_json(js).error().describe();
}

TEST(ExportUnreachable, AHealthyConversationHasNoSuchSection) {
  test::TempDir dir;
  store::Store st = must(store::Store::open(dir.file("ok.db")));
  chat::ChatTree t;
  ASSERT_TRUE(chat::append_user(t, {.content = "q", .now_ms = 1}).ok());
  const chat::ConversationId id = test::store_tree(st, t).conversation.id;
  const std::string md = must(export_from_store(st, {id}, {Format::kMarkdown, Branches::kAll}));
  EXPECT_EQ(md.find("Unreachable"), std::string::npos) << md;
  EXPECT_NE(md.find("whole tree (1)\n"), std::string::npos) << md;
  const std::string js = must(export_from_store(st, {id}, {Format::kJson, Branches::kAll}));
  EXPECT_EQ(js.find("unreachable_messages"), std::string::npos);
}

}  // namespace
}  // namespace qc::exporter
