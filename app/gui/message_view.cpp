#include "message_view.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <cstdio>

#include "format.h"

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
    const bool blank = m.content.find_first_not_of(" \t\r\n") == std::string::npos;
    if (!blank) {
      draw_markdown(cache.get(m.id, m.content), st);
    } else if (!m.content.empty() && m.state != chat::MessageState::kStreaming) {
      ImGui::TextColored(ctx.theme.text_muted, "(%zu characters of white space only)", m.content.size());
    } else if (m.state == chat::MessageState::kStreaming && m.id == ctx.chat.waiting_reply()) {
      // Not generating yet: its question is not stored (another process holds the database).
      ImGui::TextColored(ctx.theme.warning, "not started: waiting for the database to save the message");
    } else if (m.state == chat::MessageState::kStreaming) {
      // White space that streamed in is a token too: "waiting" only until anything arrived.
      const char* what = !m.content.empty() ? "writing…" : m.thinking.empty() ? "waiting for the first token…"
                                                                              : "thinking…";
      ImGui::TextColored(ctx.theme.text_muted, "%s", what);
    } else if (!user && m.state == chat::MessageState::kComplete && !m.thinking.empty()) {
      // The reply ended inside its thinking (the token limit, usually): say so instead of an empty bubble.
      const std::string stop = m.stats.is_object() ? m.stats.value("stop_reason", std::string()) : std::string();
      ImGui::TextColored(ctx.theme.warning, "no answer: the reply ended while thinking%s%s",
                         stop.empty() ? "" : " (stop: ", stop.empty() ? "" : (stop + ")").c_str());
      if (stop == "max_tokens")
        ImGui::TextColored(ctx.theme.text_muted, "raise Max tokens in Settings, or turn Thinking off, and regenerate");
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
  actions(m, ctx);
}

void MessageView::actions(const chat::Message& m, UiContext& ctx) {
  const bool streaming = m.state == chat::MessageState::kStreaming;
  if (streaming || editing_ == m.id) return;
  const bool user = m.role == chat::Role::kUser;
  const bool busy = ctx.chat.streaming();
  // Right-aligned small buttons.
  const char* labels_user[] = {"Copy", "Edit", "Delete"};
  const char* labels_reply[] = {"Copy", "Regenerate", "Delete"};
  const char** labels = user ? labels_user : labels_reply;
  float w = 0;
  for (int i = 0; i < 3; ++i)
    w += ImGui::CalcTextSize(labels[i]).x + ImGui::GetStyle().FramePadding.x * 2 +
         ImGui::GetStyle().ItemSpacing.x;
  ImGui::SameLine(std::max(ImGui::GetContentRegionMax().x - w - ctx.em() * 0.5f, ImGui::GetCursorPosX()));
  if (ImGui::SmallButton("Copy")) {
    std::string text = m.content;
    ImGui::SetClipboardText(text.c_str());
    ctx.notices.info("copied the message to the clipboard");
  }
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
