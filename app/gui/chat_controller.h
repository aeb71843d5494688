// The conversation the chat view shows, kept in step with the store and the worker: sending a message,
// editing, regenerating, deleting, branch navigation, and streaming a reply into the tree. No ImGui: the
// GUI thread calls it from the panels and feeds it the worker's events; tests drive it without a window.
//
// One reply streams at a time. Its text is flushed to SQLite at most every 250 ms (store::FlushThrottle)
// and once more when it ends, so a crash loses at most a quarter of a second of text. Opening another
// conversation (or deleting this one) while a reply streams stops the reply and keeps what came as
// kStopped; the generation's later events are ignored.
//
// A database another process holds: the GUI's store fails at once instead of waiting for the lock
// (Store::open with busy_timeout_ms 0), so no call here ever blocks the frame loop. A write that meets
// the lock is kept (the tree already holds it) and tick() retries it every frame:
// - send / regenerate / edit: the new message shows with "waiting for the database" and its reply is
//   generated only once both are stored; meanwhile another send is refused (the draft stays in the box).
//   When the retry fails for another reason (a full disk), the tree goes back to how it was and the
//   text comes back through take_returned_draft(): nothing is shown that the store does not hold, and no
//   typed text is lost.
// - the streaming flush, the reply's end, selections, the system prompt: retried the same way.
// - leaving the conversation with writes still waiting: they go on being retried in the background (a
//   reply that never started is stored as an error "not answered"; Regenerate answers it); reopening the
//   conversation takes them back.
// Any other failure (a full disk, a read-only file) is an error at once: "not saved: ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chat/chat_state.h"
#include "qwenchat/events.h"
#include "qwenchat/worker.h"
#include "settings.h"
#include "store/store.h"

namespace qc::gui {

// What a new reply is generated with (recorded in the reply's settings).
struct ReplySetup {
  Settings settings;
  std::string model_path;  // the loaded model (empty: none; the reply then fails with a clear message)
  std::string kernel;      // GEMV variant in use, empty on the CPU
};

class ChatController {
 public:
  ChatController(store::Store& store, Worker& worker) : store_(store), worker_(worker) {}

  // ---- conversations ----
  Status new_conversation(const std::string& model_path, const std::string& system_prompt = {});
  Status open(chat::ConversationId id);
  void close();  // shows no conversation (the next send creates one)
  Status rename(chat::ConversationId id, const std::string& title);
  Status remove(chat::ConversationId id);
  Status set_system_prompt(const std::string& prompt);
  const chat::ChatTree* tree() const { return tree_ ? &*tree_ : nullptr; }
  // Bumped whenever the conversation list changes (titles, order, additions): the sidebar reloads.
  uint64_t list_version() const { return list_version_; }

  // ---- messages ----
  Status send(const std::string& text, const ReplySetup& setup);
  Status regenerate(chat::MessageId assistant, const ReplySetup& setup);
  Status edit_and_resend(chat::MessageId user, const std::string& text, const ReplySetup& setup);
  Status delete_message(chat::MessageId id);
  Status select_sibling(chat::MessageId id, int delta);
  Status jump_to(chat::MessageId id);  // makes the current branch pass through id (search hits)

  // Cancels this window's reply only (an API client's generation on the same worker goes on).
  void stop() {
    if (stream_) worker_.cancel(stream_->generation);
  }
  bool streaming() const { return stream_.has_value(); }
  chat::MessageId streaming_message() const { return stream_ ? stream_->message : 0; }
  uint64_t streaming_generation() const { return stream_ ? stream_->generation : 0; }

  // Applies a worker event that belongs to the streaming reply (others are ignored). `now_ms` is the
  // wall clock (a parameter so tests control the flush schedule).
  Status on_event(const WorkerEvent& event, int64_t now_ms);
  // Once per frame: retries writes that met another process's lock (see the top), and flushes text that
  // arrived since the last flush once 250 ms have passed, so a slow token (a long prefill chunk, a pause
  // in thinking) cannot hold text back from the database.
  Status tick(int64_t now_ms);

  // Writes the store does not hold yet because another process holds the database (retried by tick()).
  bool has_unsaved() const { return !unsaved_.empty() || !detached_.empty(); }
  // The open conversation's last message waits for the database before its reply starts.
  bool waiting_for_database() const { return waiting_.has_value(); }
  chat::MessageId waiting_message() const { return waiting_ ? waiting_->user_message : 0; }
  chat::MessageId waiting_reply() const { return waiting_ ? waiting_->reply : 0; }  // its empty reply
  // Text of a message that could not be saved after it was shown as waiting: the chat panel puts it back
  // into the message box (empty when none; taking it clears it).
  std::string take_returned_draft() { return std::exchange(returned_draft_, std::string()); }

  // The generation ids this controller hands out start here (tests use distinct ranges).
  void set_first_generation_id(uint64_t id) { next_generation_ = id; }

 private:
  struct Stream {
    chat::ConversationId conversation = 0;
    chat::MessageId message = 0;
    uint64_t generation = 0;
    std::string kernel;  // recorded in the reply's stats
  };
  // A reply whose generation waits until its messages are stored (the database was busy at send).
  struct WaitingReply {
    chat::MessageId reply = 0;
    chat::MessageId user_message = 0;  // the new user turn (0 for a regenerate)
    ReplySetup setup;
    uint64_t seed = 0;
    chat::ChatTree before;            // the tree before the operation (restored when the write fails)
    chat::TreeChange unsaved_before;  // unsaved_ before the operation
    std::string draft;                // the typed text (returned when the write fails)
  };
  // Unsaved writes of a conversation that is no longer open, with its tree as it was left.
  struct Detached {
    chat::ChatTree tree;
    chat::TreeChange change;
  };
  enum class Saved { kStored, kWaiting };

  Status start_reply_generation(chat::MessageId reply, const ReplySetup& setup, uint64_t seed);
  Status finish_stream(const GenerationFinished* finished, int64_t now_ms);
  Status abandon_stream();  // stop + keep what came, ignore the generation's later events
  // Writes `change` (the tree already holds it) with every write still waiting. kWaiting: another process
  // holds the database, the change joins unsaved_. Any other failure: an error "not saved", and the tree
  // becomes *before again when before is given.
  Result<Saved> save(chat::ChatTree* before, const chat::TreeChange& change);
  // send / regenerate / edit after their tree operations: saves both changes, then starts the reply, or
  // leaves it waiting for the database.
  Status commit_and_reply(chat::ChatTree before, const chat::TreeChange& change, const ReplySetup& setup,
                          uint64_t seed, chat::MessageId user_message, const std::string& draft);
  Status retry_unsaved();   // tick's part for the open conversation
  Status retry_detached();  // tick's part for conversations left with writes waiting
  Status leave();           // before another conversation (or none) is shown
  Status refuse_while_waiting() const;

  store::Store& store_;
  Worker& worker_;
  std::optional<chat::ChatTree> tree_;
  std::optional<Stream> stream_;
  store::FlushThrottle throttle_{250};
  chat::TreeChange unsaved_;  // changes of tree_ the store does not hold yet (another process held it)
  std::optional<WaitingReply> waiting_;
  std::vector<Detached> detached_;
  std::string returned_draft_;
  uint64_t next_generation_ = 1;
  uint64_t list_version_ = 1;
};

// "Hello, how do I ..." -> a title: the first line, whitespace folded, cut at a character boundary.
std::string title_from_message(const std::string& text, size_t max_bytes = 48);

// The JSON a reply stores as its settings (what it was generated with).
nlohmann::json reply_settings_json(const ReplySetup& setup, uint64_t seed);

}  // namespace qc::gui
