// ChatController: the chat view's operations against a real store and a real worker on the tiny model,
// without a window. The loop `pump` plays the GUI's frame loop: it drains the worker and feeds every
// event to the controller.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "chat_controller.h"
#include "diagnostics_state.h"
#include "model_status.h"
#include "store_test_util.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::gui {
namespace {

class GuiController : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("tiny.gguf");
    ASSERT_TRUE(test::write_tiny_chat_model(model_).ok());
    // As the app opens it: a write never waits for another process's lock (the controller retries).
    auto s = store::Store::open(dir_.file("chat.db"), {.busy_timeout_ms = 0});
    ASSERT_TRUE(s.ok()) << s.error().describe();
    store_.emplace(std::move(*s));
    worker_ = std::make_unique<Worker>(worker_options_);
    chat_ = std::make_unique<ChatController>(*store_, *worker_);
    LoadModelCommand c;
    c.path = model_;
    c.settings.n_ctx = 512;
    c.settings.n_threads = 1;
    c.settings.kernels.probes = true;
    worker_->post(c);
    const auto ev = test::collect_load(*worker_);
    ASSERT_NE(test::find_event<ModelLoaded>(ev), nullptr);
    for (const auto& e : ev) status_.on_event(e, 0.0);
  }

  ReplySetup setup(int max_tokens = 8) const {
    ReplySetup r;
    r.settings.random_seed = false;
    r.settings.seed = 5;
    r.settings.max_tokens = max_tokens;
    r.model_path = model_;
    return r;
  }

  // Feeds worker events to the controller until the streaming reply ends (or the hang guard).
  void pump() {
    const auto deadline = std::chrono::steady_clock::now() + test::kWorkerHangGuard;
    while (chat_->streaming() && std::chrono::steady_clock::now() < deadline) {
      if (auto e = worker_->wait_event(std::chrono::milliseconds(200))) {
        diag_.on_event(*e);
        ASSERT_TRUE(chat_->on_event(*e, chat::now_ms()).ok());
      }
    }
    ASSERT_FALSE(chat_->streaming()) << "the reply did not finish within the hang guard";
  }

  chat::ChatTree reload() const {
    auto t = store_->load_conversation(chat_->tree()->conversation.id);
    EXPECT_TRUE(t.ok());
    return t.ok() ? *t : chat::ChatTree{};
  }

  test::TempDir dir_;
  std::string model_;
  std::optional<store::Store> store_;
  WorkerOptions worker_options_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<ChatController> chat_;
  ModelStatus status_;
  DiagnosticsState diag_;
};

TEST_F(GuiController, SendStreamsTheReplyIntoTheStore) {
  ASSERT_TRUE(chat_->send("Hello there, how are you today?", setup()).ok());
  EXPECT_TRUE(chat_->streaming());
  pump();
  const chat::ChatTree t = reload();
  EXPECT_EQ(t.conversation.title, "Hello there, how are you today?");
  const auto branch = chat::current_branch(t);
  ASSERT_EQ(branch.size(), 2u);
  const chat::Message* reply = chat::find(t, branch[1]);
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->role, chat::Role::kAssistant);
  EXPECT_EQ(reply->state, chat::MessageState::kComplete);
  EXPECT_EQ(reply->model, model_);
  // The store holds what the worker finished with, and what the tree in memory shows.
  ASSERT_TRUE(diag_.finished.has_value());
  EXPECT_EQ(reply->stats.value("generated_tokens", -1), diag_.finished->stats.generated_tokens);
  EXPECT_EQ(reply->stats.value("backend", ""), "cpu-f32");
  EXPECT_EQ(reply->settings.value("seed", 0), 5);
  EXPECT_EQ(reply->content, chat::find(*chat_->tree(), branch[1])->content);
  EXPECT_FALSE(diag_.decode_tok_per_s.empty());
  ASSERT_TRUE(diag_.last.has_value());
  EXPECT_EQ(diag_.last->layer_norms.size(), 8u);
}

TEST_F(GuiController, RegenerateAndEditMakeBranches) {
  ASSERT_TRUE(chat_->send("first question", setup()).ok());
  pump();
  const chat::MessageId user = chat::current_branch(*chat_->tree())[0];
  const chat::MessageId reply = chat::current_branch(*chat_->tree())[1];
  ASSERT_TRUE(chat_->regenerate(reply, setup()).ok());
  pump();
  const auto after_regen = chat::current_branch(reload());
  ASSERT_EQ(after_regen.size(), 2u);
  EXPECT_NE(after_regen[1], reply);
  EXPECT_EQ(chat::sibling_info(reload(), after_regen[1]).count, 2);
  // Navigating back selects the first reply, in the store too.
  ASSERT_TRUE(chat_->select_sibling(after_regen[1], -1).ok());
  EXPECT_EQ(chat::current_branch(reload())[1], reply);

  ASSERT_TRUE(chat_->edit_and_resend(user, "edited question", setup()).ok());
  pump();
  const chat::ChatTree t = reload();
  const auto branch = chat::current_branch(t);
  ASSERT_EQ(branch.size(), 2u);
  EXPECT_EQ(chat::find(t, branch[0])->content, "edited question");
  EXPECT_EQ(chat::sibling_info(t, branch[0]).count, 2);
  EXPECT_EQ(chat::find(t, branch[1])->state, chat::MessageState::kComplete);
  // Deleting the edited turn removes its reply with it and falls back to the original branch.
  ASSERT_TRUE(chat_->delete_message(branch[0]).ok());
  EXPECT_EQ(chat::current_branch(reload())[0], user);
}

TEST_F(GuiController, StopKeepsThePartialReplyAsStopped) {
  // Rebuild the worker with a hook that stops at the third token.
  worker_options_.on_event = [this](const WorkerEvent& e) {
    if (const auto* d = std::get_if<TokenDelta>(&e); d && d->index == 2) worker_->stop();
  };
  chat_.reset();
  worker_ = std::make_unique<Worker>(worker_options_);
  chat_ = std::make_unique<ChatController>(*store_, *worker_);
  LoadModelCommand c;
  c.path = model_;
  c.settings.n_ctx = 512;
  c.settings.n_threads = 1;
  worker_->post(c);
  ASSERT_NE(test::find_event<ModelLoaded>(test::collect_load(*worker_)), nullptr);
  ReplySetup s = setup(200);
  s.settings.temperature = 1.0f;
  s.settings.top_k = 0;
  s.settings.top_p = 1.0f;
  ASSERT_TRUE(chat_->send("Tell me a long story", s).ok());
  pump();
  const chat::ChatTree t = reload();
  const chat::Message* reply = chat::find(t, chat::current_branch(t)[1]);
  EXPECT_EQ(reply->state, chat::MessageState::kStopped);
  EXPECT_EQ(reply->stats.value("generated_tokens", -1), 3);
  EXPECT_EQ(reply->stats.value("stop_reason", ""), "cancelled");
}

TEST_F(GuiController, SwitchingConversationMidReplyKeepsWhatCame) {
  ASSERT_TRUE(chat_->send("one", setup(400)).ok());
  const chat::ConversationId first = chat_->tree()->conversation.id;
  ASSERT_TRUE(chat_->new_conversation(model_).ok());
  EXPECT_FALSE(chat_->streaming());
  auto t = store_->load_conversation(first);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(chat::find(*t, chat::current_branch(*t)[1])->state, chat::MessageState::kStopped);
  // The abandoned generation's events change nothing in the new conversation.
  for (int i = 0; i < 50; ++i) {
    if (auto e = worker_->wait_event(std::chrono::milliseconds(20))) {
      ASSERT_TRUE(chat_->on_event(*e, chat::now_ms()).ok());
    }
  }
  EXPECT_TRUE(chat_->tree()->messages.empty());
}

TEST_F(GuiController, StreamingTextIsFlushedAtMostEvery250msAndOnFrames) {
  // Events are fed by hand with a controlled clock; the worker's own events for this generation are
  // never drained (the generation id is the controller's, the text is ours).
  ASSERT_TRUE(chat_->send("flush test", setup(1)).ok());
  const uint64_t gen = chat_->streaming_generation();
  const chat::MessageId id = chat_->streaming_message();
  auto stored = [&] {
    auto t = store::Store::open(store_->path(), {.read_only = true});
    EXPECT_TRUE(t.ok());
    auto tree = t->load_conversation(chat_->tree()->conversation.id);
    return chat::find(*tree, id)->content;
  };
  auto delta = [&](int index, const char* text, int64_t now) {
    TokenDelta d;
    d.id = gen;
    d.index = index;
    d.content_delta = text;
    ASSERT_TRUE(chat_->on_event(d, now).ok());
  };
  delta(0, "a", 1000);  // first delta: flushed
  EXPECT_EQ(stored(), "a");
  delta(1, "b", 1100);
  delta(2, "c", 1249);
  EXPECT_EQ(stored(), "a");  // within 250 ms of the last flush
  delta(3, "d", 1250);
  EXPECT_EQ(stored(), "abcd");
  delta(4, "e", 1300);
  EXPECT_EQ(stored(), "abcd");
  ASSERT_TRUE(chat_->tick(1400).ok());  // no new delta, but a frame: still within 250 ms
  EXPECT_EQ(stored(), "abcd");
  ASSERT_TRUE(chat_->tick(1500).ok());  // the frame flushes what waited, without another token
  EXPECT_EQ(stored(), "abcde");
  ASSERT_TRUE(chat_->tick(2000).ok());  // nothing new: no write (the content stays)
  EXPECT_EQ(stored(), "abcde");
  GenerationFinished f;
  f.id = gen;
  f.stop_reason = StopReason::stop_token;
  f.parts.content = "abcdef";
  f.text = "abcdef";
  ASSERT_TRUE(chat_->on_event(f, 2010).ok());
  EXPECT_EQ(stored(), "abcdef");  // the finish always writes
  EXPECT_FALSE(chat_->streaming());
}

TEST_F(GuiController, FailuresAreErrorsNotCrashes) {
  EXPECT_FALSE(chat_->send("   \n", setup()).ok());
  EXPECT_FALSE(chat_->regenerate(12345, setup()).ok());
  ASSERT_TRUE(chat_->send("x", setup()).ok());
  const Status busy = chat_->send("y", setup());
  ASSERT_FALSE(busy.ok());
  EXPECT_NE(busy.error().message.find("still being written"), std::string::npos);
  pump();
  // No model: the reply ends as an error message in the conversation.
  worker_->post(UnloadModelCommand{});
  ASSERT_TRUE(chat_->send("z", setup()).ok());
  pump();
  const chat::ChatTree t = reload();
  const chat::Message* last = chat::find(t, chat::current_leaf(t));
  EXPECT_EQ(last->state, chat::MessageState::kError);
  EXPECT_NE(last->error.find("no model is loaded"), std::string::npos) << last->error;
}

// How many messages of the open conversation another connection (another process) sees stored.
int64_t stored_count(SQLite::Database& db, chat::ConversationId id) {
  SQLite::Statement q(db, "SELECT count(*) FROM messages WHERE conversation_id = ?");
  q.bind(1, id);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// Another process holds the database's write lock while the user sends: the send returns at once (while
// the lock is still held: the GUI thread never waits on it; it used to wait the 2 s busy timeout and
// then fail), the message is shown as waiting but not sent, nothing else can be sent meanwhile, and once
// the lock goes the next frames store it and start its reply. Nothing is shown as sent that the store
// does not hold, and ids stay in step (the next send works).
TEST_F(GuiController, ALockedDatabaseNeverBlocksASendAndTheMessageIsStoredAfter) {
  ASSERT_TRUE(chat_->send("first question", setup()).ok());
  pump();
  const chat::ChatTree shown = *chat_->tree();
  const chat::ConversationId cid = shown.conversation.id;
  const chat::MessageId first_reply = chat::current_leaf(shown);
  SQLite::Database other(dir_.file("chat.db"), SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");
  ASSERT_TRUE(chat_->send("while the database is locked", setup()).ok());
  // Back here with the lock still held (the transaction above is open until the ROLLBACK below).
  EXPECT_TRUE(chat_->waiting_for_database());
  EXPECT_TRUE(chat_->has_unsaved());
  EXPECT_FALSE(chat_->streaming()) << "a reply started for a message the store does not hold";
  EXPECT_EQ(stored_count(other, cid), 2);
  const chat::Message* waiting = chat::find(*chat_->tree(), chat_->waiting_message());
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(waiting->content, "while the database is locked");
  // Frames pass; the lock is still held: still waiting, nothing blocks, nothing else goes out.
  for (int frame = 0; frame < 3; ++frame) EXPECT_TRUE(chat_->tick(chat::now_ms()).ok());
  EXPECT_TRUE(chat_->waiting_for_database());
  const Status again = chat_->send("a second message", setup());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("waiting for the database"), std::string::npos)
      << again.error().message;
  EXPECT_FALSE(chat_->regenerate(first_reply, setup()).ok());
  EXPECT_EQ(stored_count(other, cid), 2);
  other.exec("ROLLBACK");

  ASSERT_TRUE(chat_->tick(chat::now_ms()).ok());  // the next frame: stored, and the reply starts
  EXPECT_FALSE(chat_->waiting_for_database());
  EXPECT_FALSE(chat_->has_unsaved());
  EXPECT_TRUE(chat_->streaming());
  pump();
  ASSERT_TRUE(chat_->send("after the lock", setup()).ok());
  pump();
  const chat::ChatTree stored = reload();
  ASSERT_EQ(stored.messages.size(), 6u);
  ASSERT_EQ(stored.messages.size(), chat_->tree()->messages.size());
  for (const chat::Message& m : chat_->tree()->messages) {
    const chat::Message* in_store = chat::find(stored, m.id);
    ASSERT_NE(in_store, nullptr) << "message " << m.id << " is shown but not stored";
    EXPECT_EQ(in_store->content, m.content);
    EXPECT_EQ(in_store->state, m.state);
  }
  EXPECT_EQ(chat::find(stored, 3)->content, "while the database is locked");
  EXPECT_EQ(chat::find(stored, 4)->state, chat::MessageState::kComplete);
}

// A reply streaming while another process takes the lock: flushes and the reply's end wait and are
// retried per frame, never blocking; after the lock the store holds the whole reply.
TEST_F(GuiController, AReplyEndingWhileLockedIsStoredAfterTheLock) {
  ASSERT_TRUE(chat_->send("question", setup(12)).ok());
  SQLite::Database other(dir_.file("chat.db"), SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");
  pump();  // the whole reply streams and ends under the lock
  EXPECT_TRUE(chat_->has_unsaved());
  EXPECT_TRUE(chat_->tick(chat::now_ms()).ok());
  other.exec("ROLLBACK");
  ASSERT_TRUE(chat_->tick(chat::now_ms()).ok());
  EXPECT_FALSE(chat_->has_unsaved());
  const chat::ChatTree stored = reload();
  const chat::Message* shown = chat::find(*chat_->tree(), chat::current_leaf(*chat_->tree()));
  const chat::Message* kept = chat::find(stored, shown->id);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->state, chat::MessageState::kComplete);
  EXPECT_EQ(kept->content, shown->content);
  EXPECT_EQ(kept->stats, shown->stats);
}

// The disk is full (a page quota on the store's connection: SQLite then fails as on a full disk). A send
// fails as a whole at once: nothing shown that is not stored, the caller keeps the draft. A message
// that was waiting for a lock and then meets the full disk goes from the view and its text comes back
// whole for the message box.
TEST_F(GuiController, AFullDiskShowsNothingUnsavedAndKeepsTheText) {
  ASSERT_TRUE(chat_->send("first question", setup()).ok());
  pump();
  const chat::ChatTree shown = *chat_->tree();
  const int64_t pages = test::sql_int(dir_.file("chat.db"), "PRAGMA page_count");
  ASSERT_TRUE(store_->set_page_limit(pages).ok());
  const std::string big(256 * 1024, 'x');  // needs new pages

  const Status s = chat_->send(big, setup());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("not saved"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("database or disk is full"), std::string::npos) << s.error().message;
  EXPECT_EQ(chat_->tree()->messages.size(), shown.messages.size());
  EXPECT_EQ(chat_->tree()->next_id, shown.next_id);
  EXPECT_FALSE(chat_->streaming());
  EXPECT_FALSE(chat_->has_unsaved());

  const std::string typed = "held by a lock, then the disk is full\n" + big;
  SQLite::Database other(dir_.file("chat.db"), SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");
  ASSERT_TRUE(chat_->send(typed, setup()).ok());
  ASSERT_TRUE(chat_->waiting_for_database());
  other.exec("ROLLBACK");
  const Status retry = chat_->tick(chat::now_ms());
  ASSERT_FALSE(retry.ok());
  EXPECT_NE(retry.error().message.find("database or disk is full"), std::string::npos)
      << retry.error().message;
  EXPECT_FALSE(chat_->waiting_for_database());
  EXPECT_FALSE(chat_->has_unsaved());
  EXPECT_EQ(chat_->take_returned_draft(), typed);
  EXPECT_EQ(chat_->take_returned_draft(), "");  // once
  EXPECT_EQ(chat_->tree()->messages.size(), shown.messages.size());
  EXPECT_EQ(chat_->tree()->next_id, shown.next_id);

  ASSERT_TRUE(store_->set_page_limit(1 << 30).ok());  // space again: the next send works
  ASSERT_TRUE(chat_->send("after the disk was freed", setup()).ok());
  pump();
  EXPECT_EQ(reload().messages.size(), 4u);
}

// Leaving a conversation whose message waits for the lock: nothing is lost. The message is stored once
// the lock goes (its reply as "not answered", which Regenerate answers), even though another
// conversation is open by then.
TEST_F(GuiController, LeavingWhileWaitingStoresTheMessageLater) {
  ASSERT_TRUE(chat_->send("first question", setup()).ok());
  pump();
  const chat::ConversationId cid = chat_->tree()->conversation.id;
  SQLite::Database other(dir_.file("chat.db"), SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");
  ASSERT_TRUE(chat_->send("sent, then the window moved on", setup()).ok());
  ASSERT_TRUE(chat_->waiting_for_database());
  chat_->close();
  EXPECT_TRUE(chat_->has_unsaved());
  other.exec("ROLLBACK");
  ASSERT_TRUE(chat_->tick(chat::now_ms()).ok());
  EXPECT_FALSE(chat_->has_unsaved());
  ASSERT_TRUE(chat_->open(cid).ok());
  const chat::ChatTree stored = reload();
  ASSERT_EQ(stored.messages.size(), 4u);
  EXPECT_EQ(chat::find(stored, 3)->content, "sent, then the window moved on");
  EXPECT_EQ(chat::find(stored, 4)->state, chat::MessageState::kError);
  EXPECT_NE(chat::find(stored, 4)->error.find("not answered"), std::string::npos);
  ASSERT_TRUE(chat_->regenerate(4, setup()).ok());
  pump();
}

TEST_F(GuiController, ModelStatusFollowsLoadsAndFailures) {
  EXPECT_TRUE(status_.facts.has_value());
  EXPECT_FALSE(status_.loading);
  LoadModelCommand bad;
  bad.path = dir_.file("missing.gguf");
  worker_->post(bad);
  for (const auto& e : test::collect_load(*worker_)) status_.on_event(e, 1.0);
  ASSERT_TRUE(status_.error.has_value());
  EXPECT_NE(status_.error->message.find("missing.gguf: no such file"), std::string::npos);
  EXPECT_TRUE(status_.facts.has_value());  // the loaded model stays
  EXPECT_EQ(status_.error_path, bad.path);
}

TEST_F(GuiController, UnloadLeavesNoModel) {
  ASSERT_TRUE(status_.facts.has_value());
  worker_->post(UnloadModelCommand{});
  for (const auto& e : test::collect_until(*worker_, [](const WorkerEvent& e) {
         const auto* n = std::get_if<WorkerNotice>(&e);
         return n != nullptr && n->what == "unload";
       }))
    status_.on_event(e, 1.0);
  EXPECT_FALSE(status_.facts.has_value());
  EXPECT_FALSE(status_.error.has_value());
}

}  // namespace
}  // namespace qc::gui
