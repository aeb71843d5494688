#include "chat_controller.h"

#include <algorithm>
#include <random>

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
                      {"n_ctx", s.n_ctx},
                      {"mtp", s.mtp},
                      {"mtp_draft", s.mtp_draft}};
  if (!setup.kernel.empty()) j["kernel"] = setup.kernel;
  return j;
}

Status ChatController::new_conversation(const std::string& model_path, const std::string& system_prompt) {
  QC_TRY(abandon_stream());
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
  QC_TRY(abandon_stream());
  QC_ASSIGN(chat::ChatTree t, store_.load_conversation(id));
  tree_ = std::move(t);
  return {};
}

void ChatController::close() {
  (void)abandon_stream();
  tree_.reset();
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
    QC_TRY(abandon_stream());
    tree_.reset();
  }
  QC_TRY(store_.delete_conversation(id));
  ++list_version_;
  return {};
}

Status ChatController::set_system_prompt(const std::string& prompt) {
  if (!tree_) return make_error("no conversation is open");
  tree_->conversation.system_prompt = prompt;
  tree_->conversation.updated_ms = chat::now_ms();
  return store_.update_conversation(tree_->conversation);
}

// Every operation that shows a new message writes it and its reply in one store transaction, and puts the
// tree back as it was when the write fails: the view never shows a message the store does not hold (a
// failed write used to leave an unsaved bubble whose id broke every later send with "FOREIGN KEY
// constraint failed"), and the caller keeps the draft.
Status ChatController::commit(chat::ChatTree before, const chat::TreeChange& change) {
  if (Status s = store_.apply(*tree_, change); !s.ok()) {
    *tree_ = std::move(before);
    return make_error("not saved: " + s.error().message,
                      s.error().hint.empty() ? "the text is kept: send it again when the database is writable"
                                             : s.error().hint);
  }
  return {};
}

Status ChatController::send(const std::string& text, const ReplySetup& setup) {
  if (streaming()) return make_error("a reply is still being written", "press Esc to stop it first");
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
  QC_TRY(commit(std::move(before), both));
  ++list_version_;
  return start_reply_generation(reply->message, setup, seed);
}

Status ChatController::regenerate(chat::MessageId assistant, const ReplySetup& setup) {
  if (!tree_) return make_error("no conversation is open");
  if (streaming()) return make_error("a reply is still being written", "press Esc to stop it first");
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
  QC_TRY(commit(std::move(before), *reply));
  return start_reply_generation(reply->message, setup, seed);
}

Status ChatController::edit_and_resend(chat::MessageId user, const std::string& text,
                                       const ReplySetup& setup) {
  if (!tree_) return make_error("no conversation is open");
  if (streaming()) return make_error("a reply is still being written", "press Esc to stop it first");
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
  QC_TRY(commit(std::move(before), both));
  return start_reply_generation(reply->message, setup, seed);
}

Status ChatController::delete_message(chat::MessageId id) {
  if (!tree_) return make_error("no conversation is open");
  QC_ASSIGN(chat::TreeChange ch, chat::delete_message(*tree_, id, chat::now_ms()));
  QC_TRY(store_.apply(*tree_, ch));
  ++list_version_;
  return {};
}

Status ChatController::select_sibling(chat::MessageId id, int delta) {
  if (!tree_) return make_error("no conversation is open");
  QC_ASSIGN(chat::TreeChange ch, chat::select_sibling(*tree_, id, delta));
  if (!ch.empty()) QC_TRY(store_.apply(*tree_, ch));
  return {};
}

Status ChatController::jump_to(chat::MessageId id) {
  if (!tree_) return make_error("no conversation is open");
  QC_ASSIGN(chat::TreeChange ch, chat::select_message(*tree_, id));
  if (!ch.empty()) QC_TRY(store_.apply(*tree_, ch));
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
  g.mtp = setup.settings.mtp_options();
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
  if (!stream_ || !tree_ || tree_->conversation.id != stream_->conversation) return {};
  if (throttle_.flush_now(now_ms)) return store_.update_streaming(*tree_, stream_->message);
  return {};
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
  QC_TRY(store_.apply(*tree_, ch));
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
