// qwenchat-cli import beside a running app (#13 item 5): the import opens the database read-write, and an
// open used to mark every reply still "streaming" as stopped, the running app's live reply included. Now
// it recovers them only when no app holds the database's instance lock (store::Recover).
//
// A forked child plays the app: it takes the instance lock, opens the store as the app does
// (Recover::kAlways), and writes a reply that is still streaming. The parent runs the CLI's import path
// (exporter::import_json_into) on the same database: the reply stays streaming, and the app goes on
// writing it. Once the app has ended, the next import recovers it as before (a reply cut off by a death).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "export/export.h"
#include "store/instance_lock.h"
#include "store/store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace qc::store {
namespace {

using test::must;

// An export document with one short conversation to import.
std::string export_document(const test::TempDir& dir) {
  Store src = must(Store::open(dir.file("source.db")));
  chat::ChatTree t;
  t.conversation = must(src.create_conversation({.title = "imported"}));
  auto u = chat::append_user(t, {.content = "an imported question"});
  EXPECT_TRUE(u.ok());
  test::must_ok(src.apply(t, *u));
  return must(exporter::export_from_store(src, {}, {.format = exporter::Format::kJson}));
}

std::string state_of(const std::string& db, chat::MessageId id) {
  return test::sql_text(db, "SELECT state FROM messages WHERE id = " + std::to_string(id) +
                                " AND conversation_id = (SELECT min(id) FROM conversations)");
}

// The app: lock, store, a streaming reply "part one"; reports the reply's id, waits for the word, then
// appends " part two" to its reply (its store still works after the import) and ends.
[[noreturn]] void app_main(const std::string& db, int ready_fd, int go_fd) {
  auto lock = InstanceLock::acquire(db);
  if (!lock.ok()) _exit(3);
  auto st = Store::open(db, {.recover_interrupted = Recover::kAlways, .busy_timeout_ms = 0});
  if (!st.ok()) _exit(4);
  chat::ChatTree t;
  auto c = st->create_conversation({.title = "live"});
  if (!c.ok()) _exit(5);
  t.conversation = *c;
  auto u = chat::append_user(t, {.content = "a question"});
  if (!u.ok() || !st->apply(t, *u).ok()) _exit(6);
  auto r = chat::start_reply(t, {.parent_id = u->message});
  if (!r.ok() || !st->apply(t, *r).ok()) _exit(7);
  if (!st->update_streaming(t.conversation.id, r->message, "part one", "", 1).ok()) _exit(8);
  const chat::MessageId id = r->message;
  if (write(ready_fd, &id, sizeof id) != static_cast<ssize_t>(sizeof id)) _exit(9);
  char x;
  if (read(go_fd, &x, 1) != 1) _exit(10);
  if (!st->update_streaming(t.conversation.id, id, "part one part two", "", 2).ok()) _exit(11);
  _exit(0);
}

TEST(ImportBesideApp, TheRunningAppsReplyStaysStreamingAndAnEndedOnesIsRecovered) {
  test::TempDir dir;
  const std::string doc = export_document(dir);
  const std::string db = dir.file("chat.db");
  int ready[2], go[2];
  ASSERT_EQ(0, pipe(ready));
  ASSERT_EQ(0, pipe(go));
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    close(go[1]);
    app_main(db, ready[1], go[0]);
  }
  close(ready[1]);
  close(go[0]);
  chat::MessageId reply = 0;
  ASSERT_EQ(static_cast<ssize_t>(sizeof reply), read(ready[0], &reply, sizeof reply))
      << "the app did not start";
  ASSERT_TRUE(InstanceLock::held(db));
  ASSERT_EQ("streaming", state_of(db, reply));

  // The import while the app runs: the conversation comes in, the live reply is left alone.
  const auto ids = must(exporter::import_json_into(db, doc));
  EXPECT_EQ(1u, ids.size());
  EXPECT_EQ(1, test::sql_int(db, "SELECT count(*) FROM messages WHERE content = 'an imported question'"));
  EXPECT_EQ("streaming", state_of(db, reply)) << "the import marked the running app's reply";

  // The app goes on writing its reply and ends without finishing it (as a killed app would).
  ASSERT_EQ(1, write(go[1], "g", 1));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the app failed at step " << WEXITSTATUS(status);
  close(ready[0]);
  close(go[1]);
  EXPECT_EQ("part one part two", test::sql_text(db, "SELECT content FROM messages WHERE id = " +
                                                        std::to_string(reply) + " AND conversation_id = 1"));
  EXPECT_EQ("streaming", state_of(db, reply));

  // No app holds the lock now: the next import recovers the cut-off reply as before.
  EXPECT_FALSE(InstanceLock::held(db));
  must(exporter::import_json_into(db, doc));
  EXPECT_EQ("stopped", state_of(db, reply));
  EXPECT_EQ(2, test::sql_int(db, "SELECT count(*) FROM messages WHERE content = 'an imported question'"));
}

// The app's own start-up: it holds the lock itself and still recovers a reply left streaming by a run that
// died (Recover::kAlways); the default open in the same situation leaves it (the lock is held).
TEST(ImportBesideApp, TheAppRecoversAtItsOwnStartUnderItsOwnLock) {
  test::TempDir dir;
  const std::string db = dir.file("chat.db");
  chat::ConversationId cid = 0;
  chat::MessageId reply = 0;
  {
    Store st = must(Store::open(db));
    chat::ChatTree t;
    t.conversation = must(st.create_conversation({.title = "died mid-reply"}));
    auto u = chat::append_user(t, {.content = "q"});
    ASSERT_TRUE(u.ok());
    test::must_ok(st.apply(t, *u));
    auto r = chat::start_reply(t, {.parent_id = u->message});
    ASSERT_TRUE(r.ok());
    test::must_ok(st.apply(t, *r));
    cid = t.conversation.id;
    reply = r->message;
  }
  const std::string sql = "SELECT state FROM messages WHERE conversation_id = " + std::to_string(cid) +
                          " AND id = " + std::to_string(reply);
  ASSERT_EQ("streaming", test::sql_text(db, sql));
  {
    InstanceLock lock = must(InstanceLock::acquire(db));
    { Store st = must(Store::open(db)); }  // a lock holder exists (this process): left alone
    EXPECT_EQ("streaming", test::sql_text(db, sql));
    { Store st = must(Store::open(db, {.recover_interrupted = Recover::kAlways})); }
    EXPECT_EQ("stopped", test::sql_text(db, sql));
  }
  // Never: even without any holder.
  {
    Store st = must(Store::open(db));
    chat::ChatTree t = must(st.load_conversation(cid));
    auto r = chat::start_reply(t, {.parent_id = chat::find(t, reply)->parent_id});
    ASSERT_TRUE(r.ok());
    test::must_ok(st.apply(t, *r));
    reply = r->message;
  }
  const std::string sql2 = "SELECT state FROM messages WHERE conversation_id = " + std::to_string(cid) +
                           " AND id = " + std::to_string(reply);
  { Store st = must(Store::open(db, {.recover_interrupted = Recover::kNever})); }
  EXPECT_EQ("streaming", test::sql_text(db, sql2));
  { Store st = must(Store::open(db)); }
  EXPECT_EQ("stopped", test::sql_text(db, sql2));
}

}  // namespace
}  // namespace qc::store
