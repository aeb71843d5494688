// The chat window: the conversation's title and system prompt, the messages of the current branch
// (streaming reply included), and the input box (Enter sends, Shift+Enter adds a line, Esc stops).
#pragma once

#include <unordered_map>

#include <string>

#include "branch_layout.h"
#include "chat/branch_cache.h"
#include "markdown_view.h"
#include "message_view.h"
#include "soft_wrap.h"
#include "ui_context.h"
#include "welcome.h"

namespace qc::gui {

class ChatPanel {
 public:
  void draw(UiContext& ctx);
  void focus_input() { focus_input_ = kFocusTries; }
  void scroll_to(chat::MessageId id) { scroll_to_ = id; }
  // Text typed but not sent (kept when switching conversations).
  const std::string& draft() const { return input_; }

 private:
  void header(UiContext& ctx);
  void messages(UiContext& ctx);
  void input_box(UiContext& ctx);
  void send(UiContext& ctx);

  std::string input_;  // the draft, as typed
  SoftWrap wrap_;      // the draft and its wrapped copy (soft_wrap.h)
  std::string shown_;  // the box's buffer: the wrapped copy
  // The box was being edited last frame: then only its callback touches wrap_ (ImGui keeps its own copy
  // of the buffer while editing; a copy wrapped again outside it would read as an edit of every soft break).
  bool box_active_ = false;
  std::string system_prompt_edit_;
  chat::ConversationId system_prompt_for_ = -1;
  // Frames left to try focusing the input: on the first frames a window may not take keyboard focus yet.
  static constexpr int kFocusTries = 5;
  int focus_input_ = kFocusTries;
  chat::MessageId scroll_to_ = 0;
  size_t last_message_count_ = 0;
  bool was_streaming_ = false;
  MessageView message_view_;
  WelcomePanel welcome_;  // an empty conversation's content
  chat::ConversationId edit_for_ = 0;  // the conversation an open edit box belongs to
  MarkdownCache cache_;
  chat::ConversationId cache_for_ = -1;
  // Virtualised drawing: each message's height when it was last drawn (with the width and text size it
  // was drawn at). The messages outside the visible part are blanks of those heights (an estimate for one
  // never drawn), found through layout_, so a frame costs the visible messages whatever the length.
  struct Drawn {
    float height = 0, width = 0;
    size_t bytes = 0;
  };
  std::unordered_map<chat::MessageId, Drawn> heights_;
  chat::BranchViewCache branch_;  // the branch, recomputed when the tree's shape changes
  BranchLayout layout_;           // where its messages sit: the visible ones by binary search
};

}  // namespace qc::gui
