// One message of the current branch: role and branch navigator ("< 2/3 >"), actions (copy, edit and
// resend, regenerate, delete with confirmation), the thinking section (collapsed), the Markdown content,
// and under replies a stats line (tokens, tok/s, TTFT, MTP acceptance, backend/kernel).
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

  chat::MessageId editing_ = 0;
  std::string edit_text_;
  chat::MessageId confirm_delete_ = 0;
  float right_ = 0;  // screen x of the current bubble's inner right edge
  // "Copied" replaces "Copy" on the button for a moment after a click.
  static constexpr double kCopiedShown_s = 1.5;
  chat::MessageId copied_id_ = 0;
  double copied_at_s_ = -1e9;
};

}  // namespace qc::gui
