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

 private:
  void header(const chat::Message& m, const chat::SiblingInfo& sib, UiContext& ctx);
  void actions(const chat::Message& m, UiContext& ctx);
  void edit_box(const chat::Message& m, UiContext& ctx);
  void stats_line(const chat::Message& m, UiContext& ctx);

  chat::MessageId editing_ = 0;
  std::string edit_text_;
  chat::MessageId confirm_delete_ = 0;
};

}  // namespace qc::gui
