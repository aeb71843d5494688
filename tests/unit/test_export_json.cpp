// JSON export/import: export -> import into a store -> export gives the same JSON apart from the
// conversation ids; the parser refuses bad documents with an error naming the path; atomic writes.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "chat_fixture.h"
#include "export/export.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::exporter {
namespace {

using test::must;

// The document with every conversation id set to 0 (ids are what an import renews).
nlohmann::json without_conversation_ids(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  for (auto& c : j["conversations"]) c["id"] = 0;
  return j;
}

TEST(ExportJson, RoundTripThroughAStore) {
  test::TempDir dir;
  chat::ChatTree second;
  second.conversation.id = 3;
  second.conversation.title = "Second, with a new root";
  second.conversation.created_ms = 5;
  second.conversation.updated_ms = 6;
  ASSERT_TRUE(chat::append_user(second, {.content = "a", .now_ms = 5}).ok());
  ASSERT_TRUE(chat::append_user(second, {.content = "b (another root)", .parent_id = 0, .now_ms = 6}).ok());
  const std::vector<chat::ChatTree> trees = {test::branchy_conversation(), second};

  for (Branches b : {Branches::kAll, Branches::kCurrent}) {
    const ExportOptions opt{Format::kJson, b};
    const std::string first = export_trees(trees, opt);
    store::Store st =
        must(store::Store::open(dir.file(std::string("rt") + (b == Branches::kAll ? "all" : "cur") + ".db")));
    // Something already in the store: the imported conversations must get new ids.
    must(st.create_conversation({.title = "existing"}));
    must(st.create_conversation({.title = "existing 2"}));
    must(st.create_conversation({.title = "existing 3"}));
    const std::vector<chat::ConversationId> ids = must(import_json(st, first));
    ASSERT_EQ(2u, ids.size());
    EXPECT_NE(7, ids[0]);  // new ids, not the exported ones
    const std::string again = must(export_from_store(st, ids, opt));
    EXPECT_EQ(without_conversation_ids(first), without_conversation_ids(again));
    EXPECT_NE(first, again);  // ...and the ids did change
    // The imported tree behaves like the original: same current branch, same navigator.
    const chat::ChatTree t = must(st.load_conversation(ids[0]));
    EXPECT_EQ(chat::current_branch(trees[0]), chat::current_branch(t));
    if (b == Branches::kAll) {
      EXPECT_EQ(2, chat::sibling_info(t, 7).count);
    }
  }
}

TEST(ExportJson, ImportIntoANewStoreAndExportAll) {
  test::TempDir dir;
  const std::string doc = export_tree(test::branchy_conversation(), {Format::kJson, Branches::kAll});
  store::Store st = must(store::Store::open(dir.file("n.db")));
  must(import_json(st, doc));
  must(import_json(st, doc));  // twice: two conversations
  EXPECT_EQ(2u, must(st.list_conversations()).size());
  const std::string md = must(export_from_store(st, {}, {Format::kMarkdown, Branches::kCurrent}));
  size_t titles = 0;
  for (size_t at = md.find("# Prime numbers\n"); at != std::string::npos;
       at = md.find("# Prime numbers\n", at + 1))
    ++titles;
  EXPECT_EQ(2u, titles);
  EXPECT_NE(std::string::npos, md.find("\n---\n\n# Prime numbers\n"));  // the second one after a rule
  EXPECT_FALSE(export_from_store(st, {424242}, {}).ok());
}

struct BadDoc {
  const char* name;
  std::string text;
  const char* expected;  // a piece of the error message
};

TEST(ExportJson, ParserRefusesBadDocuments) {
  const std::string good = export_tree(test::branchy_conversation(), {Format::kJson, Branches::kAll});
  auto edit = [&](auto f) {
    nlohmann::json j = nlohmann::json::parse(good);
    f(j);
    return j.dump();
  };
  const std::vector<BadDoc> cases = {
      {"not JSON", "{\"format\": ", "not valid JSON"},
      // nlohmann throws out_of_range, not parse_error, for a number no double holds (import_fuzz found it).
      {"number overflow", "{\"format\": \"qwenchat-export\", \"version\": 17145648E01000}",
       "not valid JSON"},
      {"array", "[]", "expected a JSON object"},
      {"other format", edit([](auto& j) { j["format"] = "chatgpt"; }),
       "format: expected \"qwenchat-export\", got \"chatgpt\""},
      {"no format", edit([](auto& j) { j.erase("format"); }), "format: expected"},
      {"newer version", edit([](auto& j) { j["version"] = 2; }), "version: expected 1, got 2"},
      {"no conversations", edit([](auto& j) { j.erase("conversations"); }),
       "conversations: expected an array"},
      {"no messages", edit([](auto& j) { j["conversations"][0].erase("messages"); }),
       "conversations[0].messages: missing"},
      {"title type", edit([](auto& j) { j["conversations"][0]["title"] = 5; }),
       "conversations[0].title: expected a string, got number"},
      {"bad role", edit([](auto& j) { j["conversations"][0]["messages"][1]["role"] = "tool"; }),
       "conversations[0].messages[1].role"},
      {"bad state", edit([](auto& j) { j["conversations"][0]["messages"][1]["state"] = "done"; }),
       "messages[1].state"},
      {"id zero", edit([](auto& j) { j["conversations"][0]["messages"][2]["id"] = 0; }),
       "messages[2].id: expected an integer in [1, 9007199254740992], got 0"},
      // INT64_MAX once imported, and no message could follow it (the next id wrapped).
      {"id INT64_MAX", edit([](auto& j) { j["conversations"][0]["messages"][2]["id"] = INT64_MAX; }),
       "messages[2].id: expected an integer in [1, 9007199254740992], got 9223372036854775807"},
      {"parent above the ids", edit([](auto& j) { j["conversations"][0]["messages"][2]["parent_id"] = -1; }),
       "messages[2].parent_id: expected an integer in [0, 9007199254740992], got -1"},
      // 2^64-1 once became -1 silently.
      {"timestamp 2^64-1", edit([](auto& j) { j["conversations"][0]["messages"][1]["created_ms"] = UINT64_MAX; }),
       "messages[1].created_ms: expected an integer in [0, 253402300799999], got 18446744073709551615"},
      {"negative timestamp", edit([](auto& j) { j["conversations"][0]["updated_ms"] = -5; }),
       "conversations[0].updated_ms: expected an integer in [0, 253402300799999], got -5"},
      {"selected root", edit([](auto& j) { j["conversations"][0]["selected_root"] = UINT64_MAX; }),
       "conversations[0].selected_root: expected an integer in [0, 9007199254740992]"},
      {"duplicate id", edit([](auto& j) { j["conversations"][0]["messages"][2]["id"] = 1; }),
       "message 1 appears twice"},
      {"missing parent", edit([](auto& j) { j["conversations"][0]["messages"][3]["parent_id"] = 99; }),
       "messages[3].parent_id: message 99 is not in the conversation"},
      {"cycle", edit([](auto& j) { j["conversations"][0]["messages"][0]["parent_id"] = 2; }), "cycle"},
      {"stats type", edit([](auto& j) { j["conversations"][0]["messages"][1]["stats"] = "fast"; }),
       "messages[1].stats: expected an object"},
  };
  for (const BadDoc& c : cases) {
    auto r = parse_export_json(c.text);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(std::string::npos, r.error().message.find(c.expected)) << c.name << ": " << r.error().message;
  }
  EXPECT_TRUE(parse_export_json(good).ok());
}

TEST(ExportJson, MinimalHandWrittenDocumentImports) {
  // Only ids, roles and content are required; the rest defaults.
  const std::string doc =
      R"({"format":"qwenchat-export","version":1,"conversations":[{"title":"hand","messages":[
      {"id":1,"role":"user","content":"hi"},{"id":2,"parent_id":1,"role":"assistant","content":"hello"}]}]})";
  const std::vector<chat::ChatTree> trees = must(parse_export_json(doc));
  ASSERT_EQ(1u, trees.size());
  EXPECT_EQ(2u, trees[0].messages.size());
  EXPECT_EQ((std::vector<chat::MessageId>{1, 2}), chat::current_branch(trees[0]));
  EXPECT_EQ(3, trees[0].next_id);
}

TEST(ExportFormats, Names) {
  EXPECT_EQ(Format::kMarkdown, *parse_format("md"));
  EXPECT_EQ(Format::kText, *parse_format("txt"));
  EXPECT_EQ(Format::kJson, *parse_format("json"));
  EXPECT_FALSE(parse_format("html").ok());
  EXPECT_EQ(Branches::kAll, *parse_branches("all"));
  EXPECT_FALSE(parse_branches("some").ok());
  EXPECT_STREQ("md", format_extension(Format::kMarkdown));
}

TEST(ExportFile, AtomicWrite) {
  test::TempDir dir;
  const std::string path = dir.file("out.md");
  ASSERT_TRUE(write_file_atomic(path, "first").ok());
  ASSERT_TRUE(write_file_atomic(path, "second").ok());
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ("second", s);
  auto bad = write_file_atomic(dir.file("no/such/folder/out.md"), "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string::npos, bad.error().message.find("export to " + dir.file("no/such/folder/out.md") + " failed"))
      << bad.error().message;
  // The target is a folder: the rename fails, the temporary file is cleaned up.
  std::filesystem::create_directories(dir.file("adir/inner"));
  EXPECT_FALSE(write_file_atomic(dir.file("adir"), "x").ok());
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"adir", "out.md"}));  // no temporary file left
}

}  // namespace
}  // namespace qc::exporter
