// The SQLite store: open (folders, pragmas), conversations, trees through Store::apply, streaming flushes,
// selections, cascades, search.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "chat_fixture.h"
#include "store/snippet.h"
#include "store/store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::store {
namespace {

using test::must;
using test::must_ok;
using Ids = std::vector<chat::MessageId>;

// Everything a tree holds, to compare a loaded tree with the one written.
nlohmann::json tree_json(const chat::ChatTree& t) {
  nlohmann::json j;
  const chat::Conversation& c = t.conversation;
  j["c"] = {c.title, c.system_prompt, c.model_path, c.settings, c.created_ms, c.updated_ms, c.selected_root};
  j["next"] = t.next_id;
  j["m"] = nlohmann::json::array();
  for (const chat::Message& m : t.messages) {
    j["m"].push_back({m.id, m.parent_id, chat::role_name(m.role), m.content, m.thinking, m.created_ms,
                      m.updated_ms, m.model, m.settings, m.stats, chat::state_name(m.state), m.error,
                      m.selected_child});
  }
  return j;
}

TEST(StoreBasic, OpenCreatesFoldersAndSetsPragmas) {
  test::TempDir dir;
  const std::string path = dir.file("a/b/c/chat.db");
  {
    Store st = must(Store::open(path));
    EXPECT_EQ(path, st.path());
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ("wal", test::sql_text(path, "PRAGMA journal_mode"));  // persistent in the file
  EXPECT_EQ(Store::schema_version(), test::sql_int(path, "PRAGMA user_version"));
  EXPECT_EQ(0x51434854, test::sql_int(path, "PRAGMA application_id"));
  // Reopening an up-to-date database is a no-op.
  EXPECT_TRUE(Store::open(path).ok());
}

TEST(StoreBasic, OpenErrors) {
  test::TempDir dir;
  const std::string missing = dir.file("missing.db");
  auto r = Store::open(missing, {.read_only = true});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("no such database file")) << r.error().message;
  EXPECT_FALSE(Store::open(missing, {.create = false}).ok());
  EXPECT_FALSE(std::filesystem::exists(missing));

  // Not a database at all.
  const std::string junk = dir.file("junk.db");
  {
    std::FILE* f = std::fopen(junk.c_str(), "wb");
    std::fputs("this is not an SQLite file, just some text that is long enough", f);
    std::fclose(f);
  }
  r = Store::open(junk);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find(junk)) << r.error().message;

  // Someone else's SQLite database.
  const std::string other = dir.file("other.db");
  {
    SQLite::Database db(other, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE t(x)");
  }
  r = Store::open(other);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("not a qwenchat database")) << r.error().message;

  // A database from a newer qwenchat.
  const std::string newer = dir.file("newer.db");
  { Store st = must(Store::open(newer)); }
  {
    SQLite::Database db(newer, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA user_version = 99");
  }
  r = Store::open(newer);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("newer")) << r.error().message;
  EXPECT_FALSE(r.error().hint.empty());
}

TEST(StoreBasic, DefaultPathFollowsXdg) {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  setenv("XDG_DATA_HOME", "/data/x", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ("/data/x/qwenchat/qwenchat.db", *default_db_path());
  setenv("XDG_DATA_HOME", "relative/is/ignored", 1);
  EXPECT_EQ("/home/u/.local/share/qwenchat/qwenchat.db", *default_db_path());
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ("/home/u/.local/share/qwenchat/qwenchat.db", *default_db_path());
  unsetenv("HOME");
  EXPECT_FALSE(default_db_path().ok());
  if (old_xdg) setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

TEST(StoreBasic, ConversationsCreateListRenameDelete) {
  test::TempDir dir;
  Store st = must(Store::open(dir.file("c.db")));
  const chat::Conversation a = must(st.create_conversation({.title = "first",
                                                            .system_prompt = "be brief",
                                                            .model_path = "m.gguf",
                                                            .settings = {{"seed", 3}},
                                                            .now_ms = 1000}));
  const chat::Conversation b = must(st.create_conversation({.title = "second", .now_ms = 2000}));
  EXPECT_NE(a.id, b.id);
  std::vector<ConversationSummary> list = must(st.list_conversations());
  ASSERT_EQ(2u, list.size());
  EXPECT_EQ(b.id, list[0].id);  // most recent first
  EXPECT_EQ("first", list[1].title);
  EXPECT_EQ("m.gguf", list[1].model_path);

  must_ok(st.rename_conversation(a.id, "renamed", 3000));
  list = must(st.list_conversations());
  EXPECT_EQ(a.id, list[0].id);  // renaming touches updated_ms
  EXPECT_EQ("renamed", list[0].title);
  const chat::ChatTree ta = must(st.load_conversation(a.id));
  EXPECT_EQ("be brief", ta.conversation.system_prompt);
  EXPECT_EQ(3, ta.conversation.settings["seed"].get<int>());
  EXPECT_EQ(1, ta.next_id);

  chat::Conversation edited = ta.conversation;
  edited.system_prompt = "be verbose";
  edited.settings = {{"temperature", 0.1}};
  must_ok(st.update_conversation(edited));
  EXPECT_EQ("be verbose", must(st.load_conversation(a.id)).conversation.system_prompt);

  must_ok(st.delete_conversation(b.id));
  EXPECT_EQ(1u, must(st.list_conversations()).size());
  EXPECT_FALSE(st.delete_conversation(b.id).ok());
  EXPECT_FALSE(st.rename_conversation(b.id, "x", 1).ok());
  EXPECT_FALSE(st.load_conversation(b.id).ok());
  edited.id = 999;
  EXPECT_FALSE(st.update_conversation(edited).ok());
}

// Builds the fixture through the GUI's path: every chat operation followed by Store::apply; the loaded
// tree must equal the in-memory one, field by field.
TEST(StoreBasic, ApplyPersistsEveryOperation) {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  Store st = must(Store::open(path));
  const chat::ChatTree fixture = test::branchy_conversation();
  chat::ChatTree t;
  t.conversation = must(st.create_conversation({.title = "Prime numbers", .now_ms = test::kFixtureT0}));
  auto step = [&](Result<chat::TreeChange> r) {
    ASSERT_TRUE(r.ok()) << r.error().describe();
    must_ok(st.apply(t, *r));
    EXPECT_EQ(tree_json(t), tree_json(must(st.load_conversation(t.conversation.id))));
  };
  step(chat::append_user(t, {.content = "q1", .now_ms = 1}));
  step(chat::start_reply(t, {.model = "m", .settings = {{"seed", 1}}, .now_ms = 2}));
  ASSERT_TRUE(chat::append_stream(t, 2, {.content = "partial", .thinking = "th", .now_ms = 3}).ok());
  must_ok(st.update_streaming(t, 2));
  {
    chat::ChatTree loaded = must(st.load_conversation(t.conversation.id));
    EXPECT_EQ("partial", chat::find(loaded, 2)->content);
    EXPECT_EQ("th", chat::find(loaded, 2)->thinking);
    EXPECT_EQ(chat::MessageState::kStreaming, chat::find(loaded, 2)->state);
  }
  {
    // Another open (the next start of the app) finds it still streaming: that reply was cut off.
    Store again = must(Store::open(path));
    EXPECT_EQ(chat::MessageState::kStopped,
              chat::find(must(again.load_conversation(t.conversation.id)), 2)->state);
    Store ro = must(Store::open(path, {.read_only = true}));
    EXPECT_EQ(chat::MessageState::kStopped,
              chat::find(must(ro.load_conversation(t.conversation.id)), 2)->state);
  }
  // (this test's own tree still streams: put the state back as the running app has it)
  must_ok(st.update_message(t.conversation.id, *chat::find(t, 2)));
  step(chat::finish_reply(
      t, 2, {.state = chat::MessageState::kComplete, .stats = {{"tok_per_s", 12.5}}, .now_ms = 4}));
  step(chat::append_user(t, {.content = "q2", .now_ms = 5}));
  step(chat::edit_user(t, 3, "q2 edited", 6));
  step(chat::start_reply(t, {.now_ms = 7}));
  step(chat::finish_reply(t, 5, {.state = chat::MessageState::kError, .error = "oom", .now_ms = 8}));
  step(chat::regenerate(t, 5, {.now_ms = 9}));
  step(chat::finish_reply(t, 6, {.state = chat::MessageState::kStopped, .now_ms = 10}));
  step(chat::select_sibling(t, 4, -1));
  step(chat::select_message(t, 5));
  step(chat::edit_user(t, 1, "q1 edited", 11));  // a new root: selected_root moves
  step(chat::delete_message(t, 4, 12));          // cascades to 5 and 6
  EXPECT_EQ(0, test::sql_int(path, "SELECT count(*) FROM messages WHERE id IN (4, 5, 6)"));
  step(chat::delete_message(t, 1, 13));  // cascades to the rest of that root
  EXPECT_EQ(1, test::sql_int(path, "SELECT count(*) FROM messages"));
  EXPECT_EQ("ok", test::sql_text(path, "PRAGMA integrity_check"));
  EXPECT_EQ(0, test::sql_int(path, "SELECT count(*) FROM pragma_foreign_key_check"));
  (void)fixture;
}

TEST(StoreBasic, InsertTreeAndMessageLevelCalls) {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  Store st = must(Store::open(path));
  chat::ChatTree t = test::store_tree(st, test::branchy_conversation());
  chat::ChatTree loaded = must(st.load_conversation(t.conversation.id));
  EXPECT_EQ(tree_json(t), tree_json(loaded));
  EXPECT_EQ((Ids{1, 2, 6, 7}), chat::current_branch(loaded));

  const chat::ConversationId cid = t.conversation.id;
  must_ok(st.set_selected_child(cid, 2, 3));
  must_ok(st.set_selected_child(cid, 0, 1));
  EXPECT_EQ((Ids{1, 2, 3, 5}), chat::current_branch(must(st.load_conversation(cid))));
  EXPECT_FALSE(st.set_selected_child(cid, 99, 1).ok());

  chat::Message extra = *chat::find(t, 7);
  extra.id = 20;
  extra.parent_id = 7;
  extra.content = "follow-up";
  must_ok(st.insert_message(cid, extra));
  EXPECT_FALSE(st.insert_message(cid, extra).ok());  // the same key twice
  extra.id = 21;
  extra.parent_id = 777;  // no such parent: the foreign key refuses it
  auto bad = st.insert_message(cid, extra);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string::npos, bad.error().message.find("FOREIGN KEY")) << bad.error().message;

  extra.id = 20;
  extra.parent_id = 7;
  extra.content = "follow-up, edited";
  must_ok(st.update_message(cid, extra));
  must_ok(st.update_streaming(cid, 20, "streamed", "", 5));
  extra.content = "final";
  extra.state = chat::MessageState::kStopped;
  extra.stats = {{"generated_tokens", 3}};
  must_ok(st.finish_message(cid, extra));
  loaded = must(st.load_conversation(cid));
  EXPECT_EQ("final", chat::find(loaded, 20)->content);
  EXPECT_EQ(3, chat::find(loaded, 20)->stats["generated_tokens"].get<int>());
  EXPECT_EQ(21, loaded.next_id);
  EXPECT_FALSE(st.update_streaming(cid, 99, "x", "", 1).ok());
  EXPECT_FALSE(st.finish_message(cid, chat::Message{.id = 99}).ok());

  must_ok(st.delete_message(cid, 2));  // the whole tree hangs under 2 except the root
  EXPECT_EQ(1, test::sql_int(path, "SELECT count(*) FROM messages"));
  EXPECT_FALSE(st.delete_message(cid, 2).ok());
  must_ok(st.delete_conversation(cid));
  EXPECT_EQ(0, test::sql_int(path, "SELECT count(*) FROM messages"));
}

TEST(StoreBasic, InsertTreeRefusesOrphans) {
  test::TempDir dir;
  Store st = must(Store::open(dir.file("t.db")));
  chat::ChatTree t = test::branchy_conversation();
  chat::find(t, 6)->parent_id = 66;
  auto r = st.insert_tree(t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("not reachable")) << r.error().message;
  EXPECT_TRUE(must(st.list_conversations()).empty());
}

TEST(StoreBasic, ReadOnlyStoreReportsWriteErrors) {
  test::TempDir dir;
  const std::string path = dir.file("ro.db");
  chat::ConversationId cid = 0;
  {
    Store st = must(Store::open(path));
    cid = test::store_tree(st, test::branchy_conversation()).conversation.id;
  }
  Store ro = must(Store::open(path, {.read_only = true}));
  EXPECT_EQ(1u, must(ro.list_conversations()).size());
  chat::ChatTree t = must(ro.load_conversation(cid));
  EXPECT_EQ(8u, t.messages.size());
  auto s = ro.update_streaming(cid, 7, "x", "", 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string::npos, s.error().message.find("readonly")) << s.error().message;
  EXPECT_NE(std::string::npos, s.error().message.find("update streaming message 7")) << s.error().message;
  EXPECT_FALSE(ro.create_conversation({.title = "x"}).ok());
  auto ch = chat::append_user(t, {.content = "x"});
  ASSERT_TRUE(ch.ok());
  EXPECT_FALSE(ro.apply(t, *ch).ok());
  EXPECT_FALSE(ro.delete_conversation(cid).ok());
}

TEST(StoreBasic, SearchTitlesAndContents) {
  test::TempDir dir;
  Store st = must(Store::open(dir.file("s.db")));
  const chat::ChatTree t = test::store_tree(st, test::branchy_conversation());
  chat::ChatTree other;
  other.conversation.title = "Cooking rice";
  other.conversation.updated_ms = test::kFixtureT0 + 999999;  // newer: listed first
  ASSERT_TRUE(
      chat::append_user(other, {.content = "How long do I cook 100% brown rice? Is it PRIME_time?"}).ok());
  const chat::ConversationId oid = must(st.insert_tree(other));

  std::vector<SearchHit> hits = must(st.search("prime"));
  // "PRIME_time"; then the fixture: its title, messages 1, 5, 7 (message 2 says "prime" only in its
  // thinking, which is not searched).
  ASSERT_EQ(5u, hits.size());
  EXPECT_EQ(oid, hits[0].conversation_id);
  EXPECT_EQ(1, hits[0].message_id);
  EXPECT_EQ(t.conversation.id, hits[1].conversation_id);
  EXPECT_EQ(0, hits[1].message_id);  // the title hit comes first within a conversation
  EXPECT_EQ("Prime numbers", hits[1].snippet);
  EXPECT_EQ("Prime", hits[1].snippet.substr(hits[1].match_begin, hits[1].match_length));
  EXPECT_EQ(1, hits[2].message_id);
  EXPECT_EQ(chat::Role::kUser, hits[2].role);
  EXPECT_EQ(5, hits[3].message_id);
  EXPECT_EQ(chat::Role::kAssistant, hits[3].role);
  EXPECT_EQ("prime", hits[3].snippet.substr(hits[3].match_begin, hits[3].match_length));
  EXPECT_EQ(7, hits[4].message_id);
  EXPECT_EQ(0u, hits[4].snippet.find("Yes, 101 is prime. Checked")) << hits[4].snippet;  // newlines folded
  // LIKE wildcards in the query are literal characters.
  hits = must(st.search("100%"));
  ASSERT_EQ(1u, hits.size());
  EXPECT_EQ(1u, must(st.search("prime_time")).size());
  EXPECT_TRUE(must(st.search("prime time")).empty());
  EXPECT_TRUE(must(st.search("")).empty());
  EXPECT_EQ(2u, must(st.search("prime", {.limit = 2})).size());
  // Non-ASCII matches exactly.
  EXPECT_EQ(1u, must(st.search("7 × 13")).size());
}

TEST(StoreSnippet, CutsAtCharacterBoundariesAroundTheMatch) {
  const std::string text = "αβγδε ζηθ needle ικλμν ξοπρσ";
  Snippet s = make_snippet(text, "NEEDLE", 6);
  EXPECT_EQ("…ηθ needle ικ…", s.text);  // 3 characters each side, the spaces included
  EXPECT_EQ("needle", s.text.substr(s.match_begin, s.match_length));
  s = make_snippet("short needle", "needle", 80);
  EXPECT_EQ("short needle", s.text);
  s = make_snippet("no match here", "zzz", 4);
  EXPECT_EQ("no m…", s.text);
  EXPECT_EQ(0u, s.match_length);
  EXPECT_EQ(std::string::npos, find_ascii_nocase("abc", ""));
  EXPECT_EQ(2u, find_ascii_nocase("xXAbC", "abc"));
  EXPECT_EQ(std::string::npos, find_ascii_nocase("ÄBC", "äbc"));  // like LIKE: non-ASCII is case-sensitive
}

TEST(StoreBasic, FlushThrottle) {
  FlushThrottle th(250);
  EXPECT_TRUE(th.due(1000));
  EXPECT_FALSE(th.due(1100));
  EXPECT_FALSE(th.due(1249));
  EXPECT_TRUE(th.due(1250));
  EXPECT_FALSE(th.due(1251));
  th.reset();
  EXPECT_TRUE(th.due(1252));
}

TEST(StoreBasic, FlushThrottleWithPendingText) {
  FlushThrottle th(250);
  EXPECT_FALSE(th.flush_now(0));  // nothing appended yet
  th.text_appended();
  EXPECT_TRUE(th.flush_now(10));
  EXPECT_FALSE(th.flush_now(20));  // nothing new
  th.text_appended();
  EXPECT_FALSE(th.flush_now(100));  // too soon
  EXPECT_TRUE(th.flush_now(260));   // the per-frame call catches it with no new delta
  EXPECT_FALSE(th.flush_now(1000));
}

}  // namespace
}  // namespace qc::store
