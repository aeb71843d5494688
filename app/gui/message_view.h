// One message of the current branch: role and branch navigator ("< 2/3 >"), actions (copy, edit and
// resend, regenerate, delete with confirmation), the thinking section (collapsed), the Markdown content
// (or, in Select text, its plain text in a read-only box), and under replies a stats line (tokens, tok/s,
// TTFT, MTP acceptance, backend/kernel).
#pragma once

#include <string>

#include "chat/chat_state.h"
#include "markdown_view.h"
#include "ui_context.h"

namespace qc::gui {

class MessageView {
 public:
  // Draws `m` (`siblings`: its place among its parent's children, from chat::branch_view); any action
  // runs through ctx.chat (errors go to ctx.notices).
  void draw(const chat::Message& m, const chat::SiblingInfo& siblings, UiContext& ctx, MarkdownCache& cache);

  bool editing() const { return editing_ != 0; }
  void cancel_edit() { editing_ = 0; }

 private:
  void header(const chat::Message& m, const chat::SiblingInfo& sib, UiContext& ctx);
  // text_end: screen x where the header's text ends (the buttons go right of it).
  void actions(const chat::Message& m, UiContext& ctx, float text_end);
  void edit_box(const chat::Message& m, UiContext& ctx);
  void stats_line(const chat::Message& m, UiContext& ctx);
  // "Select text": the message's plain text in a read-only text box (select_text.h).
  void select_box(const chat::Message& m, UiContext& ctx, MarkdownCache& cache);

  chat::MessageId editing_ = 0;
  std::string edit_text_;
  chat::MessageId confirm_delete_ = 0;
  float right_ = 0;  // screen x of the current bubble's inner right edge
  // "Copied" replaces "Copy" on the button for a moment after a click.
  static constexpr double kCopiedShown_s = 1.5;
  chat::MessageId copied_id_ = 0;
  double copied_at_s_ = -1e9;
  // Select text (double-click a message, or right-click > Select text); Esc or a click outside ends it.
  chat::MessageId selecting_ = 0;
  int select_frames_ = 0;     // frames since it began (the box takes the keyboard focus on the first)
  std::string select_text_;   // the message's plain text
  std::string select_shown_;  // the same bytes, wrapped to the box (spaces turned into line breaks)
  float select_width_ = 0;    // the width select_shown_ was wrapped for
};

}  // namespace qc::gui
