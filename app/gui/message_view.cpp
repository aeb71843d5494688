#include "message_view.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>

#include "format.h"
#include "layout.h"
#include "select_text.h"
#include "widgets.h"

namespace qc::gui {
void MessageView::draw(const chat::Message& m, const chat::SiblingInfo& siblings, UiContext& ctx,
                       MarkdownCache& cache) {
  ImGui::PushID(static_cast<int>(m.id));
  const bool user = m.role == chat::Role::kUser;
  const ImVec4 bg = user ? ctx.theme.user_bg : ctx.theme.assistant_bg;
  const ImVec2 start = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->ChannelsSplit(2);  // background behind the content, whose height is known only after drawing it
  dl->ChannelsSetCurrent(1);
  const float pad = ctx.em() * 0.5f;
  ImGui::SetCursorScreenPos(ImVec2(start.x + pad, start.y + pad));
  ImGui::BeginGroup();
  right_ = start.x + width - pad;  // the bubble's inner right edge (screen x): the buttons end there
  ImGui::PushTextWrapPos(start.x + width - pad - ImGui::GetWindowPos().x + ImGui::GetScrollX());
  ImGui::PushItemWidth(width - 2 * pad);
  header(m, siblings, ctx);
  if (editing_ == m.id) {
    edit_box(m, ctx);
  } else {
    if (!m.thinking.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, ctx.theme.thinking_text);
      const bool live = m.state == chat::MessageState::kStreaming && m.content.empty();
      char label[96];
      std::snprintf(label, sizeof label, "Thinking%s (%zu characters)###thinking", live ? "…" : "",
                    m.thinking.size());
      if (ImGui::CollapsingHeader(label)) {
        MarkdownStyle st{&ctx.fonts, &ctx.theme, ctx.theme.thinking_text};
        draw_markdown(cache.get(-m.id, m.thinking), st);
      }
      ImGui::PopStyleColor();
    }
    MarkdownStyle st{&ctx.fonts, &ctx.theme, ImGui::GetStyleColorVec4(ImGuiCol_Text)};
    const ReplyPlaceholder ph =
        user ? ReplyPlaceholder{} : reply_placeholder(chat::state_name(m.state), m.content, m.thinking, m.stats);
    if (selecting_ == m.id) {
      select_box(m, ctx, cache);
    } else if (m.content.find_first_not_of(" \t\r\n") != std::string::npos) {
      draw_markdown(cache.get(m.id, m.content), st);
    } else if (!user && m.state == chat::MessageState::kStreaming && m.id == ctx.chat.waiting_reply()) {
      // Not generating yet: its question is not stored (another process holds the database).
      text_wrapped_colored(ctx.theme.warning, "%s", "not started: waiting for the database to save the message");
    } else if (!ph.text.empty()) {
      // Never an empty bubble: white space that streamed in, or a reply that ended inside its thinking.
      text_wrapped_colored(ph.warning ? ctx.theme.warning : ctx.theme.text_muted, "%s", ph.text.c_str());
      if (!ph.advice.empty()) text_wrapped_colored(ctx.theme.text_muted, "%s", ph.advice.c_str());
    }
    if (m.state == chat::MessageState::kError) {
      ImGui::PushStyleColor(ImGuiCol_Text, ctx.theme.error);
      ImGui::TextWrapped("Error: %s", m.error.c_str());
      ImGui::PopStyleColor();
    }
    if (!user) stats_line(m, ctx);
  }
  ImGui::PopItemWidth();
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  const float bottom = ImGui::GetItemRectMax().y + pad;
  // Double-click on the message (not on a button or a box): Select text; right-click: a small menu.
  const bool over = ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) && !ImGui::IsAnyItemHovered() &&
                    ImGui::IsMouseHoveringRect(start, ImVec2(start.x + width, bottom));
  // Not while a reply is written: Esc there stops the reply (App::shortcuts) and would leave both.
  if (over && editing_ != m.id && selecting_ != m.id && !m.content.empty() && !ctx.chat.streaming()) {
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
      selecting_ = m.id;
      select_frames_ = 0;
    } else if (ImGui::IsMouseReleased(ImGuiMouseButton_Right)) {
      ImGui::OpenPopup("message menu");
    }
  }
  if (ImGui::BeginPopup("message menu")) {
    if (ImGui::MenuItem("Select text", nullptr, false, !ctx.chat.streaming())) {
      selecting_ = m.id;
      select_frames_ = 0;
    }
    if (ImGui::MenuItem("Copy the message")) {
      ImGui::SetClipboardText(m.content.c_str());
      copied_id_ = m.id;
      copied_at_s_ = ctx.now_s;
    }
    ImGui::EndPopup();
  }
  dl->ChannelsSetCurrent(0);
  dl->AddRectFilled(start, ImVec2(start.x + width, bottom), ImGui::GetColorU32(bg), ctx.em() * 0.4f);
  dl->ChannelsMerge();
  ImGui::SetCursorScreenPos(ImVec2(start.x, bottom));
  ImGui::Dummy(ImVec2(width, ctx.em() * 0.4f));
  ImGui::PopID();
}

void MessageView::header(const chat::Message& m, const chat::SiblingInfo& sib, UiContext& ctx) {
  const bool user = m.role == chat::Role::kUser;
  ImGui::PushFont(ctx.fonts.bold);
  ImGui::TextUnformatted(user ? "You" : m.role == chat::Role::kAssistant ? "Assistant" : "System");
  ImGui::PopFont();
  if (sib.count > 1) {
    ImGui::SameLine();
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left))
      ctx.notices.check(ctx.chat.select_sibling(m.id, -1), "branch");
    ImGui::SameLine();
    ImGui::Text("%d/%d", sib.index + 1, sib.count);
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right))
      ctx.notices.check(ctx.chat.select_sibling(m.id, +1), "branch");
  }
  if (m.state == chat::MessageState::kStopped) {
    ImGui::SameLine();
    ImGui::TextColored(ctx.theme.warning, "(stopped)");
  }
  actions(m, ctx, ImGui::GetItemRectMax().x);
}

void MessageView::actions(const chat::Message& m, UiContext& ctx, float text_end) {
  const bool streaming = m.state == chat::MessageState::kStreaming;
  if (streaming || editing_ == m.id) return;
  const bool user = m.role == chat::Role::kUser;
  const bool busy = ctx.chat.streaming();
  // Right-aligned small buttons, placed from the text widths so they never run into the role label
  // (at a large UI scale they go on a line of their own instead).
  const bool copied = copied_id_ == m.id && ctx.now_s - copied_at_s_ < kCopiedShown_s;
  const char* labels_user[] = {"Copied", "Edit", "Delete"};  // the widest of Copy/Copied: no jump
  const char* labels_reply[] = {"Copied", "Regenerate", "Delete"};
  const char** labels = user ? labels_user : labels_reply;
  const ImGuiStyle& style = ImGui::GetStyle();
  float w = 0;
  for (int i = 0; i < 3; ++i) w += ImGui::CalcTextSize(labels[i]).x + style.FramePadding.x * 2;
  w += style.ItemSpacing.x * 2;
  const float x = buttons_x(text_end, right_, w, style.ItemSpacing.x);
  if (x >= 0) {
    ImGui::SameLine();
    ImGui::SetCursorScreenPos(ImVec2(x, ImGui::GetCursorScreenPos().y));
  } else {
    ImGui::SetCursorScreenPos(ImVec2(std::max(right_ - w, ImGui::GetCursorScreenPos().x),
                                     ImGui::GetCursorScreenPos().y));
  }
  const float copy_w = ImGui::CalcTextSize("Copied").x + style.FramePadding.x * 2;
  ImGui::PushStyleVar(ImGuiStyleVar_ButtonTextAlign, ImVec2(0.5f, 0.5f));
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(style.FramePadding.x, 0.0f));
  const bool copy = ImGui::ButtonEx(copied ? "Copied###copy" : "Copy###copy", ImVec2(copy_w, 0),
                                    ImGuiButtonFlags_AlignTextBaseLine);  // a SmallButton of fixed width
  ImGui::PopStyleVar(2);
  if (copy) {
    ImGui::SetClipboardText(m.content.c_str());
    copied_id_ = m.id;
    copied_at_s_ = ctx.now_s;
  }
  if (copied) item_tooltip("the message's Markdown source is on the clipboard");
  ImGui::SameLine();
  ImGui::BeginDisabled(busy);
  if (user) {
    if (ImGui::SmallButton("Edit")) {
      editing_ = m.id;
      edit_text_ = m.content;
    }
  } else {
    if (ImGui::SmallButton("Regenerate"))
      ctx.notices.check(ctx.chat.regenerate(m.id, ctx.reply_setup()), "regenerate");
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Delete")) confirm_delete_ = m.id;
  ImGui::EndDisabled();
  if (confirm_delete_ == m.id) {
    ImGui::OpenPopup("Delete message?");
    confirm_delete_ = 0;
  }
  if (ImGui::BeginPopupModal("Delete message?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("Delete this message and every reply below it on all branches?");
    if (ImGui::Button("Delete")) {
      ctx.notices.check(ctx.chat.delete_message(m.id), "delete message");
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void MessageView::edit_box(const chat::Message& m, UiContext& ctx) {
  ImGui::InputTextMultiline("##edit", &edit_text_, ImVec2(-1, ctx.em() * 6));
  if (ImGui::Button("Save and resend")) {
    if (ctx.notices.check(ctx.chat.edit_and_resend(m.id, edit_text_, ctx.reply_setup()), "edit"))
      editing_ = 0;
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) editing_ = 0;
  ImGui::SameLine();
  ImGui::TextColored(ctx.theme.text_muted, "the original stays as branch 1");
}

void MessageView::select_box(const chat::Message& m, UiContext& ctx, MarkdownCache& cache) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float box_w = std::max(right_ - ImGui::GetCursorScreenPos().x, ctx.em() * 4);
  std::string text = message_plain_text(cache.get(m.id, m.content));
  const float wrap_w = box_w - style.FramePadding.x * 2 - style.ScrollbarSize;
  if (text != select_text_ || wrap_w != select_width_) {
    select_text_ = std::move(text);
    select_width_ = wrap_w;
    ImFont* font = ImGui::GetFont();
    select_shown_ = wrap_at_spaces(select_text_, wrap_w, [font](std::string_view s) {
      return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
    });
  }
  const int lines = 1 + static_cast<int>(std::count(select_shown_.begin(), select_shown_.end(), '\n'));
  const float box_h = lines * ImGui::GetFontSize() + style.FramePadding.y * 2 + 2;
  if (select_frames_ == 0) ImGui::SetKeyboardFocusHere();
  // The box shows and takes the focus over the next frames: run them now, not at the idle tick (0.5 s).
  if (select_frames_++ < 3) glfwPostEmptyEvent();
  ImGui::InputTextMultiline("##select", &select_shown_, ImVec2(box_w, box_h), ImGuiInputTextFlags_ReadOnly);
  const ImGuiID id = ImGui::GetItemID();
  const bool active = ImGui::IsItemActive();
  const bool hovered = ImGui::IsItemHovered();
  const bool deactivated = ImGui::IsItemDeactivated();
  // Ctrl+C: ImGui has copied the shown selection (with the wrapping's line breaks); the same bytes of the
  // original text replace it. The selection is counted in characters as ImGui decodes them.
  // ctx.key_copy comes from GLFW's key callback: a fast Ctrl+C that ImGui's key state missed still copies.
  const ImGuiIO& io = ImGui::GetIO();
  const bool copy =
      ctx.key_copy || (io.KeyCtrl && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_C)) ||
                                      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Insert))));
  if (active && copy) {
    const ImGuiInputTextState* state = ImGui::GetInputTextState(id);
    if (state && !state->HasSelection()) ImGui::SetClipboardText(select_text_.c_str());  // as ImGui: all
    if (state && state->HasSelection()) {
      const int a = std::min(state->GetSelectionStart(), state->GetSelectionEnd());
      const int b = std::max(state->GetSelectionStart(), state->GetSelectionEnd());
      size_t byte_a = select_shown_.size(), byte_b = select_shown_.size();
      const char* s = select_shown_.c_str();
      const char* end = s + select_shown_.size();
      int ch = 0;
      for (const char* p = s; p <= end; ++ch) {
        if (ch == a) byte_a = static_cast<size_t>(p - s);
        if (ch == b) {
          byte_b = static_cast<size_t>(p - s);
          break;
        }
        if (p == end) break;
        unsigned int c = 0;
        p += ImTextCharFromUtf8(&c, p, end);
      }
      if (byte_a < byte_b && byte_b <= select_text_.size())
        ImGui::SetClipboardText(select_text_.substr(byte_a, byte_b - byte_a).c_str());
    }
  }
  ImGui::TextColored(ctx.theme.text_muted, "%s",
                     "Select with the mouse · Ctrl+C copies · Esc or a click outside: back");
  // Leaving: Esc (ImGui lets go of the box), a click elsewhere, or the box losing the focus.
  const bool clicked_outside =
      select_frames_ > 2 && !hovered &&
      (ImGui::IsMouseClicked(ImGuiMouseButton_Left) || ImGui::IsMouseClicked(ImGuiMouseButton_Right));
  if (deactivated || clicked_outside || ctx.chat.streaming() || ctx.key_escape ||
      (active && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))) {
    selecting_ = 0;
    select_text_.clear();
    select_shown_.clear();
  }
}

void MessageView::stats_line(const chat::Message& m, UiContext& ctx) {
  std::string line;
  if (m.state == chat::MessageState::kStreaming) {
    const auto& s = ctx.diag.last;
    if (s && s->id == ctx.chat.streaming_generation()) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%d tokens · %.1f tok/s · TTFT %.0f ms · streaming (Esc stops)",
                    s->generated_tokens, s->decode_tok_per_s, s->ttft_s * 1e3);
      line = buf;
    } else {
      line = "prefilling…";
    }
  } else {
    line = format_stats_line(m.stats);
  }
  if (line.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ctx.theme.text_muted);
  ImGui::TextWrapped("%s", line.c_str());
  ImGui::PopStyleColor();
}

}  // namespace qc::gui
