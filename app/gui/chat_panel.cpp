#include "chat_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string_view>

#include "layout.h"
#include "widgets.h"

namespace qc::gui {

void ChatPanel::draw(UiContext& ctx) {
  // An edit box belongs to its conversation. Message ids are per conversation: left open, it came back on
  // another conversation's message of the same id with the first one's text (Save would have resent that
  // there), and after Ctrl+N it kept the message box from taking the focus, so the typed text went
  // nowhere (found by tests/gui/gui_random_input.sh).
  const chat::ConversationId open = ctx.chat.tree() ? ctx.chat.tree()->conversation.id : 0;
  if (open != edit_for_) {
    message_view_.cancel_edit();
    edit_for_ = open;
  }
  header(ctx);
  messages(ctx);
  input_box(ctx);
}

void ChatPanel::header(UiContext& ctx) {
  const chat::ChatTree* tree = ctx.chat.tree();
  ImGui::PushFont(ctx.fonts.h2);
  ImGui::TextUnformatted(tree ? tree->conversation.title.c_str() : "New chat");
  ImGui::PopFont();
  if (ctx.model.facts) {
    ImGui::SameLine();
    const std::string& name = ctx.model.facts->name.empty() ? ctx.model.facts->path : ctx.model.facts->name;
    ImGui::TextColored(ctx.theme.text_muted, "  %s · %s", name.c_str(),
                       ctx.model.facts->backend.name.c_str());
  } else if (ctx.model.loading) {
    ImGui::SameLine();
    ImGui::TextColored(ctx.theme.text_muted, "  loading the model…");
  } else {
    ImGui::SameLine();
    ImGui::TextColored(ctx.theme.warning, "  no model loaded: open one in the Model tab");
  }
  if (tree == nullptr) return;
  if (system_prompt_for_ != tree->conversation.id) {
    system_prompt_edit_ = tree->conversation.system_prompt;
    system_prompt_for_ = tree->conversation.id;
  }
  char label[96];
  std::snprintf(label, sizeof label, "System prompt%s###sysprompt",
                tree->conversation.system_prompt.empty() ? " (none)" : "");
  if (ImGui::CollapsingHeader(label)) {
    ImGui::InputTextMultiline("##system", &system_prompt_edit_, ImVec2(-1, ctx.em() * 4));
    if (ImGui::IsItemDeactivatedAfterEdit() && system_prompt_edit_ != tree->conversation.system_prompt) {
      if (ctx.notices.check(ctx.chat.set_system_prompt(system_prompt_edit_), "system prompt"))
        ctx.notices.info("system prompt saved; it applies from the next reply");
    }
    ImGui::TextColored(ctx.theme.text_muted, "Sent first in every reply of this conversation.");
  }
}

void ChatPanel::messages(UiContext& ctx) {
  // The message box grows with its (wrapped) lines, from 5.5 em to 40% of the panel.
  const int lines = 1 + static_cast<int>(std::count(shown_.begin(), shown_.end(), '\n'));
  const float want_h = static_cast<float>(lines + 1) * ImGui::GetTextLineHeight() +
                       ImGui::GetStyle().FramePadding.y * 2 + ImGui::GetStyle().ItemSpacing.y * 3;
  const float input_h = std::clamp(want_h, ctx.em() * 5.5f,
                                   std::max(ctx.em() * 5.5f, ImGui::GetContentRegionAvail().y * 0.4f));
  ImGui::BeginChild("messages", ImVec2(0, -input_h), false);
  const chat::ChatTree* tree = ctx.chat.tree();
  if (tree == nullptr || tree->messages.empty()) {
    // The welcome panel (welcome.h): the model, example prompts, how to load a real one.
    const ReadingColumn column = reading_column(ImGui::GetContentRegionAvail().x, ctx.config.settings.ui_scale);
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + column.offset);
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + column.width);
    if (welcome_.draw(ctx, input_, column.width)) focus_input_ = kFocusTries;
    ImGui::Spacing();
    ImGui::TextColored(ctx.theme.text_muted,
                       "Ctrl+N new chat · Ctrl+K search · Ctrl+E export · Ctrl+O open a model · "
                       "Esc stops a reply");
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    ImGui::EndChild();
    return;
  }
  if (cache_for_ != tree->conversation.id) {
    cache_.clear();
    heights_.clear();
    cache_for_ = tree->conversation.id;
  }
  // Follow the stream when the view is at the bottom (the user scrolled up: leave them there).
  const bool at_bottom = ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - ctx.em() * 2;
  const chat::BranchView& view = branch_.get(*tree);
  const chat::ChatTree* const drawn_tree = tree;
  const size_t n_before = tree->messages.size();
  const chat::MessageId next_before = tree->next_id;
  // The reading column: at most kReadingWidthPx x UI scale, centred (a table's middle column: its cells
  // bound every widget's width, headers and wrapping included).
  const ReadingColumn column = reading_column(ImGui::GetContentRegionAvail().x, ctx.config.settings.ui_scale);
  const bool centred = column.offset >= 1.0f;
  if (centred) {
    ImGui::BeginTable("reading", 3, ImGuiTableFlags_NoPadInnerX | ImGuiTableFlags_NoPadOuterX);
    ImGui::TableSetupColumn("left", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("text", ImGuiTableColumnFlags_WidthFixed, column.width);
    ImGui::TableSetupColumn("right", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(1);
  }
  const float width = ImGui::GetContentRegionAvail().x;
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  // The visible part, with a screen of margin either side (scrolling a little never shows a blank).
  const float screen = ImGui::GetWindowHeight();
  const float y0 = ImGui::GetCursorPosY();  // the first message's top
  const size_t n = view.branch.size();
  auto height_of = [&](const chat::Message& m) {
    const auto known = heights_.find(m.id);
    if (known != heights_.end() && known->second.width == width &&
        known->second.bytes == m.content.size() + m.thinking.size())
      return known->second.height;
    // Never drawn, or drawn at another width: a few lines per 100 characters until it is drawn.
    return ctx.em() * (4.0f + static_cast<float>(m.content.size()) / 100.0f);
  };
  if (!layout_.matches(branch_.key(), width, n)) {
    layout_.reset(branch_.key(), width, n, [&](size_t i) {
      const chat::Message* m = chat::find(*tree, view.branch[i]);
      return m ? height_of(*m) : 0.0f;
    });
  }
  // A message to scroll to: placed by its top (it may be far outside the drawn part).
  if (scroll_to_ != 0) {
    for (size_t i = 0; i < n; ++i)
      if (view.branch[i] == scroll_to_) ImGui::SetScrollY(y0 + layout_.top(i));
    scroll_to_ = 0;
  }
  const float scroll = ImGui::GetScrollY() - y0;
  const auto [first, last] = layout_.range(scroll - screen, scroll + 2 * screen);
  // Drawn: [first, last) and always the last message (the reply being written, the one to follow).
  auto blank = [&](float h) {
    if (h > 0.0f) ImGui::Dummy(ImVec2(1.0f, std::max(0.0f, h - spacing)));
  };
  blank(layout_.top(first));
  for (size_t i = first; i < n; ++i) {
    if (i >= last && i + 1 < n) {  // the rest up to the last message: one blank
      blank(layout_.top(n - 1) - layout_.top(i));
      i = n - 1;
    }
    const chat::MessageId id = view.branch[i];
    const chat::Message* m = chat::find(*tree, id);
    if (m == nullptr) continue;
    const float y = ImGui::GetCursorPosY();
    message_view_.draw(*m, view.siblings[i], ctx, cache_);
    tree = ctx.chat.tree();  // an action may have changed the tree: stop drawing the old branch
    if (tree != drawn_tree || tree == nullptr || tree->messages.size() != n_before || tree->next_id != next_before)
      break;
    const float h = ImGui::GetCursorPosY() - y;
    heights_[id] = {h, width, m->content.size() + m->thinking.size()};
    layout_.set_height(i, h);
  }
  if (ctx.chat.waiting_for_database()) {
    ImGui::TextColored(ctx.theme.warning,
                       "Not saved yet: another process holds the database. The message is sent once it is "
                       "saved (retried every frame).");
  }
  if (centred) ImGui::EndTable();
  const bool grew = view.branch.size() != last_message_count_;
  last_message_count_ = view.branch.size();
  // Follow while streaming, and once more on the frame the reply ends (its stats line appears then).
  const bool streaming = ctx.chat.streaming();
  if (((streaming || was_streaming_) && at_bottom) || grew) ImGui::SetScrollHereY(1.0f);
  was_streaming_ = streaming;
  ImGui::EndChild();
}

void ChatPanel::input_box(UiContext& ctx) {
  ImGui::Separator();
  // A message shown as waiting for the database that could not be saved after all: its text comes back.
  if (std::string back = ctx.chat.take_returned_draft(); !back.empty())
    input_ = input_.empty() ? std::move(back) : back + "\n\n" + input_;
  const bool streaming = ctx.chat.streaming();
  const float button_w = ctx.em() * 5;
  const ImGuiIO& io = ImGui::GetIO();
  const int enter = ImGui::GetKeyIndex(ImGuiKey_Enter);
  const int escape = ImGui::GetKeyIndex(ImGuiKey_Escape);
  // Enter sends, Shift+Enter adds a line: with CtrlEnterForNewLine, ImGui inserts the newline when Ctrl
  // is held, so Shift+Enter is presented to it as Ctrl+Enter for this one call.
  const int keypad_enter = ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter);
  const bool shift_enter = (io.KeyShift || ctx.key_shift_enter) &&
                           (ImGui::IsKeyPressed(enter, false) ||
                            (keypad_enter >= 0 && ImGui::IsKeyPressed(keypad_enter, false)));
  // ImGui reverts the text on Esc; Esc means "stop the reply" here, so the draft is kept.
  const std::string before = input_;
  const bool esc = ImGui::IsKeyPressed(escape);
  const bool want_focus = focus_input_ > 0 && !message_view_.editing() && !ImGui::IsAnyItemActive();
  if (want_focus) ImGui::SetKeyboardFocusHere();
  // KeyMods must change with KeyCtrl: InputText asserts that they agree (ImGui 1.86 aborted the app on
  // Shift+Enter when only KeyCtrl was set, losing the draft).
  const bool saved_ctrl = io.KeyCtrl;
  const ImGuiKeyModFlags saved_mods = io.KeyMods;
  if (shift_enter) {
    ImGui::GetIO().KeyCtrl = true;
    ImGui::GetIO().KeyMods |= ImGuiKeyModFlags_Ctrl;
  }
  const ImGuiInputTextFlags flags = ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CtrlEnterForNewLine |
                                    ImGuiInputTextFlags_CallbackEdit | ImGuiInputTextFlags_CallbackAlways;
  // Under the reading column, as wide as it; the text wrapped at its width (soft_wrap.h).
  const ReadingColumn column = reading_column(ImGui::GetContentRegionAvail().x, ctx.config.settings.ui_scale);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float box_w = column.width - button_w - style.ItemSpacing.x;
  ImFont* font = ImGui::GetFont();
  const SoftWrap::Measure measure = [font](std::string_view s) {
    return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
  };
  struct WrapCall {
    SoftWrap* wrap;
    float width;
    const SoftWrap::Measure* measure;
  } call{&wrap_, box_w - style.FramePadding.x * 2 - style.ScrollbarSize, &measure};
  if (!box_active_) {
    if (input_ != wrap_.typed()) {
      wrap_.set_typed(input_, call.width, measure);
      shown_ = wrap_.shown();
    } else if (wrap_.rewrap(call.width, measure)) {
      shown_ = wrap_.shown();
    }
  }
  // Every frame the box is active: an edit is mapped back to the draft and the copy wrapped again, written
  // over the box's buffer in place (same size, so the cursor and the selection stay where they were).
  auto on_box = [](ImGuiInputTextCallbackData* d) -> int {
    auto* w = static_cast<WrapCall*>(d->UserData);
    const std::string_view buf(d->Buf, static_cast<size_t>(d->BufTextLen));
    if (buf != w->wrap->shown())
      w->wrap->edited(buf, w->width, *w->measure);
    else
      w->wrap->rewrap(w->width, *w->measure);
    const std::string& next = w->wrap->shown();
    if (next.size() == buf.size() && next != buf) {
      std::copy(next.begin(), next.end(), d->Buf);
      d->BufDirty = true;
    }
    return 0;
  };
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + column.offset);
  // A held Enter is one press for the box: ImGui 1.86 repeats a key held past KeyRepeatDelay (0.25 s of
  // frame time), and a repeat of a Shift+Enter whose Shift was let go first sent the draft's first line
  // alone (gui_random_input under load: the Shift+Enter hold spanned two slow frames, and the next typed
  // key fell into the send). So the box sees Enter only on the frame it went down: a held key's duration
  // is shown to it as just under the repeat delay for this one call.
  ImGuiIO& wio = ImGui::GetIO();
  const int enter_keys[2] = {enter, keypad_enter};
  float saved_down[2] = {0.0f, 0.0f};
  for (int i = 0; i < 2; ++i) {
    if (enter_keys[i] < 0) continue;  // not mapped by the platform backend
    float& down = wio.KeysDownDuration[enter_keys[i]];
    saved_down[i] = down;
    if (down > 0.0f) down = std::min(down, 1e-3f);
  }
  const bool entered = ImGui::InputTextMultiline("##input", &shown_, ImVec2(box_w, -1), flags, on_box, &call);
  for (int i = 0; i < 2; ++i)
    if (enter_keys[i] >= 0) wio.KeysDownDuration[enter_keys[i]] = saved_down[i];
  ImGui::GetIO().KeyCtrl = saved_ctrl;
  ImGui::GetIO().KeyMods = saved_mods;
  if (shown_ != wrap_.shown()) {  // changed without a callback (ImGui's revert on Esc)
    wrap_.edited(shown_, call.width, measure);
    shown_ = wrap_.shown();
  }
  input_ = wrap_.typed();
  box_active_ = ImGui::IsItemActive();
  if (ImGui::IsItemActive()) {
    focus_input_ = 0;
  } else if (want_focus) {
    --focus_input_;
  }
  if (esc) input_ = before;
  if (entered && !shift_enter) {
    send(ctx);
    focus_input_ = kFocusTries;
  }
  if (input_.empty()) item_tooltip("Enter sends · Shift+Enter or Ctrl+Enter new line · Esc stops");
  ImGui::SameLine();
  if (streaming) {
    if (ImGui::Button("Stop", ImVec2(button_w, -1))) ctx.chat.stop();
  } else if (ImGui::Button("Send", ImVec2(button_w, -1))) {
    send(ctx);
    focus_input_ = kFocusTries;
  }
}

void ChatPanel::send(UiContext& ctx) {
  if (input_.find_first_not_of(" \t\r\n") == std::string::npos) return;
  if (ctx.notices.check(ctx.chat.send(input_, ctx.reply_setup()), "send")) input_.clear();
}

}  // namespace qc::gui
