#include "chat_controller.h"

#include <algorithm>
#include <random>
#include <utility>

#include "chat/stats_json.h"

namespace qc::gui {
namespace {

constexpr const char* kDefaultTitle = "New chat";

uint64_t pick_seed(const Settings& s) {
  if (!s.random_seed) return s.seed;
  std::random_device rd;
  // 53 bits: a seed that survives a round trip through JSON doubles in other tools.
  return ((static_cast<uint64_t>(rd()) << 32) | rd()) & ((uint64_t{1} << 53) - 1);
}

chat::MessageState state_for(StopReason r) {
  switch (r) {
    case StopReason::cancelled:
      return chat::MessageState::kStopped;
    case StopReason::error:
      return chat::MessageState::kError;
    default:
      return chat::MessageState::kComplete;
  }
}

nlohmann::json finished_stats(const GenerationFinished& f, const std::string& kernel) {
  chat::StatsExtras extras;
  extras.backend = f.backend;
  extras.kernel = kernel;
  extras.stop_reason = to_string(f.stop_reason);
  nlohmann::json j = chat::stats_to_json(f.stats, extras);
  if (f.stats.mtp_draft_len > 0) {
    nlohmann::json per = nlohmann::json::array();
    for (int k = 0; k < f.stats.mtp_draft_len; ++k) per.push_back(f.stats.mtp_acceptance(k));
    j["mtp_acceptance_per_position"] = per;
  }
  j["context_used"] = f.context_used;
  j["context_size"] = f.context_size;
  if (!f.note.empty()) j["note"] = f.note;
  return j;
}

}  // namespace

std::string title_from_message(const std::string& text, size_t max_bytes) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' && !out.empty()) break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
    out = out.substr(0, cut) + "…";
  }
  return out.empty() ? kDefaultTitle : out;
}

nlohmann::json reply_settings_json(const ReplySetup& setup, uint64_t seed) {
  const Settings& s = setup.settings;
  nlohmann::json j = {{"temperature", s.temperature},
                      {"top_k", s.top_k},
                      {"top_p", s.top_p},
                      {"min_p", s.min_p},
                      {"presence_penalty", s.presence_penalty},
                      {"repetition_penalty", s.repetition_penalty},
                      {"seed", seed},
                      {"max_tokens", s.max_tokens},
                      {"thinking", s.thinking},
                      {"n_ctx", s.engine.n_ctx},
                      {"mtp", s.mtp.enabled},
                      {"mtp_draft", s.mtp.draft_len}};
  if (!setup.kernel.empty()) j["kernel"] = setup.kernel;
  return j;
}

Status ChatController::new_conversation(const std::string& model_path, const std::string& system_prompt) {
  QC_TRY(leave());
  store::NewConversation nc;
  nc.title = kDefaultTitle;
  nc.system_prompt = system_prompt;
  nc.model_path = model_path;
  nc.now_ms = chat::now_ms();
  QC_ASSIGN(chat::Conversation c, store_.create_conversation(nc));
  tree_ = chat::ChatTree{};
  tree_->conversation = std::move(c);
  ++list_version_;
  return {};
}

Status ChatController::open(chat::ConversationId id) {
  if (tree_ && tree_->conversation.id == id) return {};
  const Status left = leave();
  // Writes of this conversation still waiting for the database: the tree as it was left is newer than
  // the store's (and loading the store's would hand out the waiting messages' ids again).
  const auto d = std::find_if(detached_.begin(), detached_.end(),
                              [&](const Detached& x) { return x.tree.conversation.id == id; });
  if (d != detached_.end()) {
    tree_ = std::move(d->tree);
    unsaved_ = std::move(d->change);
    detached_.erase(d);
    return left;
  }
  QC_ASSIGN(chat::ChatTree t, store_.load_conversation(id));
  tree_ = std::move(t);
  return left;
}

void ChatController::close() {
  (void)leave();
  tree_.reset();
}

Status ChatController::leave() {
  Status out = abandon_stream();
  if (!tree_) return out;
  if (waiting_) {
    // Its reply never started: stored as an error that says so (Regenerate answers it), so the
    // conversation is not left with a reply that looks like it is still being written.
    chat::ReplyEnd end;
    end.state = chat::MessageState::kError;
    end.error = "not answered: the database was busy when this was sent";
    end.now_ms = chat::now_ms();
    const chat::MessageId reply = waiting_->reply;
    waiting_.reset();
    if (auto ch = chat::finish_reply(*tree_, reply, end); ch.ok()) chat::merge_change(unsaved_, *ch);
  }
  if (unsaved_.empty()) return out;
  if (Status s = store_.apply(*tree_, unsaved_); s.ok()) {
    unsaved_ = {};
  } else if (store_.last_error_was_busy()) {
    detached_.push_back({*tree_, std::exchange(unsaved_, chat::TreeChange{})});
  } else {
    unsaved_ = {};
    if (out.ok()) out = make_error("not saved: " + s.error().message);
  }
  return out;
}

Status ChatController::refuse_while_waiting() const {
  if (!waiting_) return {};
  return make_error("the last message is waiting for the database (another process holds it)",
                    "it is sent as soon as the database is free; this text stays in the box");
}

Status ChatController::rename(chat::ConversationId id, const std::string& title) {
  const int64_t now = chat::now_ms();
  QC_TRY(store_.rename_conversation(id, title, now));
  if (tree_ && tree_->conversation.id == id) {
    tree_->conversation.title = title;
    tree_->conversation.updated_ms = now;
  }
  ++list_version_;
  return {};
}

Status ChatController::remove(chat::ConversationId id) {
  if (tree_ && tree_->conversation.id == id) {
    QC_TRY(leave());
    tree_.reset();
  }
  QC_TRY(store_.delete_conversation(id));
  // Its waiting writes would now fail (no such conversation).
  std::erase_if(detached_, [&](const Detached& d) { return d.tree.conversation.id == id; });
  ++list_version_;
  return {};
}

Status ChatController::set_system_prompt(const std::string& prompt) {
  if (!tree_) return make_error("no conversation is open");
  tree_->conversation.system_prompt = prompt;
  tree_->conversation.updated_ms = chat::now_ms();
  chat::TreeChange ch;
  ch.conversation_changed = true;
  QC_ASSIGN(Saved saved, save(nullptr, ch));
  (void)saved;  // waiting: saved by tick() once the database is free
  return {};
}

// Every operation that shows a new message writes it and its reply in one store transaction, and puts the
// tree back as it was when the write fails: the view never shows a message the store does not hold (a
// failed write used to leave an unsaved bubble whose id broke every later send with "FOREIGN KEY
// constraint failed"), and the caller keeps the draft. A lock held by another process is not a failure:
// the write waits in unsaved_ (retried by tick()) and the view marks it as waiting.
Result<ChatController::Saved> ChatController::save(chat::ChatTree* before, const chat::TreeChange& change) {
  chat::TreeChange all = unsaved_;
  chat::merge_change(all, change);
  if (all.empty()) return Saved::kStored;
  const Status s = store_.apply(*tree_, all);
  if (s.ok()) {
    unsaved_ = {};
    return Saved::kStored;
  }
  if (store_.last_error_was_busy()) {
    unsaved_ = std::move(all);
    return Saved::kWaiting;
  }
  if (before != nullptr) *tree_ = std::move(*before);
  return make_error("not saved: " + s.error().message,
                    s.error().hint.empty() ? "the text is kept: send it again when the database is writable"
                                           : s.error().hint);
}

Status ChatController::commit_and_reply(chat::ChatTree before, const chat::TreeChange& change,
                                        const ReplySetup& setup, uint64_t seed, chat::MessageId user_message,
                                        const std::string& draft) {
  chat::TreeChange unsaved_before = unsaved_;
  QC_ASSIGN(Saved saved, save(&before, change));  // `before` is consumed only on failure
  if (saved == Saved::kWaiting) {
    waiting_ = WaitingReply{change.message, user_message, setup, seed, std::move(before),
                            std::move(unsaved_before), draft};
    return {};
  }
  return start_reply_generation(change.message, setup, seed);
}

Status ChatController::send(const std::string& text, const ReplySetup& setup) {
  if (streaming()) return make_error("a reply is still being written", "press Esc to stop it first");
  QC_TRY(refuse_while_waiting());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return make_error("the message is empty");
  if (!tree_) QC_TRY(new_conversation(setup.model_path));
  chat::ChatTree before = *tree_;
  const int64_t now = chat::now_ms();
  auto user = chat::append_user(*tree_, {.content = text, .parent_id = -1, .now_ms = now});
  if (!user.ok()) {
    *tree_ = std::move(before);
    return user.error();
  }
  if (tree_->conversation.title == kDefaultTitle) {  // the first message names the conversation
    tree_->conversation.title = title_from_message(text);
    user->conversation_changed = true;
  }
  const uint64_t seed = pick_seed(setup.settings);
  auto reply = chat::start_reply(*tree_, {.parent_id = user->message,
                                         .model = setup.model_path,
                                         .settings = reply_settings_json(setup, seed),
                                         .now_ms = now});
  if (!reply.ok()) {
    *tree_ = std::move(before);
    return reply.error();
  }
  chat::TreeChange both = *user;
  chat::merge_change(both, *reply);
  ++list_version_;  // the title and the order change (also while waiting: the tree shows the message)
  return commit_and_reply(std::move(before), both, setup, seed, user->message, text);
}

Status ChatController::regenerate(chat::MessageId assistant, const ReplySetup& setup) {
  if (!tree_) return make_error("no conversation is open");
  if (streaming()) return make_error("a reply is still being written", "press Esc to stop it first");
  QC_TRY(refuse_while_waiting());
  chat::ChatTree before = *tree_;
  const uint64_t seed = pick_seed(setup.settings);
  auto reply = chat::regenerate(*tree_, assistant,
                                {.parent_id = -1,
                                 .model = setup.model_path,
                                 .settings = reply_settings_json(setup, seed),
                                 .now_ms = chat::now_ms()});
  if (!reply.ok()) {
    *tree_ = std::move(before);
    return reply.error();
  }
  return commit_and_reply(std::move(before), *reply, setup, seed, 0, {});
}

Status ChatController::edit_and_resend(chat::MessageId user, const std::string& text,
                                       const ReplySetup& setup) {
  if (!tree_) return make_error("no conversation is open");
  if (streaming()) return make_error("a reply is still being written", "press Esc to stop it first");
  QC_TRY(refuse_while_waiting());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return make_error("the message is empty");
  chat::ChatTree before = *tree_;
  const int64_t now = chat::now_ms();
  auto edited = chat::edit_user(*tree_, user, text, now);
  if (!edited.ok()) {
    *tree_ = std::move(before);
    return edited.error();
  }
  const uint64_t seed = pick_seed(setup.settings);
  auto reply = chat::start_reply(*tree_, {.parent_id = edited->message,
                                         .model = setup.model_path,
                                         .settings = reply_settings_json(setup, seed),
                                         .now_ms = now});
  if (!reply.ok()) {
    *tree_ = std::move(before);
    return reply.error();
  }
  chat::TreeChange both = *edited;
  chat::merge_change(both, *reply);
  return commit_and_reply(std::move(before), both, setup, seed, edited->message, text);
}

Status ChatController::delete_message(chat::MessageId id) {
  if (!tree_) return make_error("no conversation is open");
  // A waiting insert of a message deleted before it was stored could never be written.
  QC_TRY(refuse_while_waiting());
  QC_ASSIGN(chat::TreeChange ch, chat::delete_message(*tree_, id, chat::now_ms()));
  QC_TRY(save(nullptr, ch));
  ++list_version_;
  return {};
}

Status ChatController::select_sibling(chat::MessageId id, int delta) {
  if (!tree_) return make_error("no conversation is open");
  QC_ASSIGN(chat::TreeChange ch, chat::select_sibling(*tree_, id, delta));
  if (!ch.empty()) QC_TRY(save(nullptr, ch));
  return {};
}

Status ChatController::jump_to(chat::MessageId id) {
  if (!tree_) return make_error("no conversation is open");
  QC_ASSIGN(chat::TreeChange ch, chat::select_message(*tree_, id));
  if (!ch.empty()) QC_TRY(save(nullptr, ch));
  return {};
}

Status ChatController::start_reply_generation(chat::MessageId reply, const ReplySetup& setup, uint64_t seed) {
  const chat::Message* m = chat::find(*tree_, reply);
  if (m == nullptr) return make_error("internal: reply " + std::to_string(reply) + " is not in the tree");
  GenerateCommand g;
  g.id = next_generation_++;
  g.conversation = static_cast<uint64_t>(tree_->conversation.id);
  g.history = chat::prompt_history(*tree_, m->parent_id);  // system prompt included as a system turn
  g.render.thinking = setup.settings.thinking;
  g.sampler = setup.settings.sampler(seed);
  g.max_new_tokens = setup.settings.max_tokens;
  g.mtp = setup.settings.mtp;
  g.reserve_tokens = std::min(setup.settings.max_tokens, 256);
  stream_ = Stream{tree_->conversation.id, reply, g.id, setup.kernel};
  throttle_.reset();
  worker_.post(std::move(g));
  return {};
}

Status ChatController::on_event(const WorkerEvent& event, int64_t now_ms) {
  if (!stream_ || !tree_ || tree_->conversation.id != stream_->conversation) return {};
  if (const auto* d = std::get_if<TokenDelta>(&event)) {
    if (d->id != stream_->generation) return {};
    chat::Message* m = chat::find(*tree_, stream_->message);
    if (m == nullptr)
      return make_error("the streaming reply " + std::to_string(stream_->message) + " is gone");
    // Appends go through the chat-state function; a part that changed otherwise (the think marker
    // trimmed it) is set directly: the streaming flush writes both text columns either way.
    if (d->thinking_replace) m->thinking = d->thinking_delta;
    if (d->content_replace) m->content = d->content_delta;
    chat::StreamDelta sd;
    sd.content = d->content_replace ? std::string() : d->content_delta;
    sd.thinking = d->thinking_replace ? std::string() : d->thinking_delta;
    sd.now_ms = now_ms;
    QC_TRY(chat::append_stream(*tree_, stream_->message, sd));
    throttle_.text_appended();
    return tick(now_ms);
  }
  if (const auto* f = std::get_if<GenerationFinished>(&event)) {
    if (f->id != stream_->generation) return {};
    return finish_stream(f, now_ms);
  }
  return {};
}

Status ChatController::tick(int64_t now_ms) {
  Status out = retry_detached();
  if (Status s = retry_unsaved(); !s.ok() && out.ok()) out = s;
  if (!stream_ || !tree_ || tree_->conversation.id != stream_->conversation) return out;
  if (throttle_.flush_now(now_ms)) {
    Status s = store_.update_streaming(*tree_, stream_->message);
    if (!s.ok() && store_.last_error_was_busy()) {
      throttle_.text_appended();  // the text waits in the tree; the next due frame tries again
    } else if (!s.ok() && out.ok()) {
      out = s;
    }
  }
  return out;
}

Status ChatController::retry_unsaved() {
  if (unsaved_.empty() || !tree_) return {};
  const Status s = store_.apply(*tree_, unsaved_);
  if (s.ok()) {
    unsaved_ = {};
    if (!waiting_) return {};
    const WaitingReply w = std::move(*waiting_);
    waiting_.reset();
    return start_reply_generation(w.reply, w.setup, w.seed);
  }
  if (store_.last_error_was_busy()) return {};  // still held: the next frame tries again
  // Another failure (a full disk): retrying will not help. A waiting message goes away from the view and
  // its text back to the message box; other changes stay in this window only, and the error says so.
  if (waiting_) {
    *tree_ = std::move(waiting_->before);
    unsaved_ = std::move(waiting_->unsaved_before);
    returned_draft_ = std::move(waiting_->draft);
    waiting_.reset();
    ++list_version_;
    return make_error("not saved: " + s.error().message,
                      returned_draft_.empty() ? "the reply was not started"
                                              : "the text is back in the message box: send it again when "
                                                "the database is writable");
  }
  unsaved_ = {};
  return make_error("not saved: " + s.error().message, "the change is shown in this window only");
}

Status ChatController::retry_detached() {
  Status out;
  for (auto it = detached_.begin(); it != detached_.end();) {
    const Status s = store_.apply(it->tree, it->change);
    if (!s.ok() && store_.last_error_was_busy()) {
      ++it;
      continue;
    }
    if (!s.ok() && out.ok()) out = make_error("not saved: " + s.error().message);
    it = detached_.erase(it);
    ++list_version_;
  }
  return out;
}

Status ChatController::finish_stream(const GenerationFinished* f, int64_t now_ms) {
  const Stream s = *stream_;
  stream_.reset();
  chat::ReplyEnd end;
  end.now_ms = now_ms;
  if (f != nullptr) {
    end.state = state_for(f->stop_reason);
    end.error = f->error;
    end.stats = finished_stats(*f, f->kernel.empty() ? s.kernel : f->kernel);
    end.content = f->parts.content;
    end.thinking = f->parts.thinking;
    // A generation that failed before its first token has no text to replace the (empty) stream with.
    end.replace_text = f->stop_reason != StopReason::error || !f->text.empty();
  } else {
    end.state = chat::MessageState::kStopped;
  }
  QC_ASSIGN(chat::TreeChange ch, chat::finish_reply(*tree_, s.message, end));
  QC_TRY(save(nullptr, ch));  // waiting for the database: tick() writes it
  ++list_version_;
  return {};
}

Status ChatController::abandon_stream() {
  if (!stream_) return {};
  worker_.cancel(stream_->generation);
  if (!tree_ || tree_->conversation.id != stream_->conversation) {
    stream_.reset();
    return {};
  }
  return finish_stream(nullptr, chat::now_ms());
}

}  // namespace qc::gui
