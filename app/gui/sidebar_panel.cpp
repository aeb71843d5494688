#include "sidebar_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <imgui_internal.h>

#include <ctime>

#include "format.h"
#include "layout.h"
#include "widgets.h"

namespace qc::gui {
namespace {

// Wrapped text with the byte ranges `marks` on a highlight: laid out word by word (a word that does not
// fit starts a new line), each piece drawn over its own background rectangle when marked.
void highlighted_text(const std::string& text, const std::vector<std::pair<size_t, size_t>>& marks,
                      ImU32 mark_bg, const ImVec4& color) {
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  const float left = ImGui::GetCursorScreenPos().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 pen = ImGui::GetCursorScreenPos();
  const float line_h = ImGui::GetTextLineHeight();
  const ImU32 fg = ImGui::GetColorU32(color);
  auto marked = [&](size_t i) {
    for (const auto& [b, n] : marks)
      if (i >= b && i < b + n) return true;
    return false;
  };
  size_t i = 0;
  while (i < text.size()) {
    // One word and the spaces after it.
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    while (end < text.size() && (text[end] == ' ' || text[end] == '\n')) ++end;
    const float word_w = ImGui::CalcTextSize(text.data() + i, text.data() + end).x;
    if (pen.x > left && pen.x + word_w > right) pen = ImVec2(left, pen.y + line_h);
    // Pieces of the word with one marking each.
    for (size_t a = i; a < end;) {
      const bool m = marked(a);
      size_t b = a + 1;
      while (b < end && marked(b) == m) ++b;
      const float w = ImGui::CalcTextSize(text.data() + a, text.data() + b).x;
      if (m) dl->AddRectFilled(pen, ImVec2(pen.x + w, pen.y + line_h), mark_bg, 2.0f);
      dl->AddText(pen, fg, text.data() + a, text.data() + b);
      pen.x += w;
      a = b;
    }
    i = end;
  }
  ImGui::Dummy(ImVec2(right - left, pen.y + line_h - ImGui::GetCursorScreenPos().y));
}

}  // namespace

void SidebarPanel::reload(UiContext& ctx) {
  loaded_version_ = ctx.chat.list_version();
  auto list = ctx.store.list_conversations();
  if (ctx.notices.check(list.ok() ? Status() : Status(list.error()), "conversation list")) {
    if (list_hovered_) {
      std::vector<int64_t> shown, fresh;
      for (const auto& c : conversations_) shown.push_back(c.id);
      for (const auto& c : *list) fresh.push_back(c.id);
      std::vector<store::ConversationSummary> kept;
      for (size_t i : frozen_order(shown, fresh)) kept.push_back(std::move((*list)[i]));
      conversations_ = std::move(kept);
      resort_pending_ = true;
    } else {
      conversations_ = std::move(*list);
      resort_pending_ = false;
    }
  }
  searched_.clear();  // contents may have changed: search again
}

bool SidebarPanel::escape() {
  if (!search_active_ || query_.empty()) return false;
  clear_search_ = true;
  return true;
}

void SidebarPanel::draw(UiContext& ctx) {
  if (loaded_version_ != ctx.chat.list_version()) reload(ctx);
  if (ImGui::Button("+ New chat", ImVec2(-1, 0))) ctx.requests.new_conversation = true;
  if (focus_search_) {
    ImGui::SetKeyboardFocusHere();
    focus_search_ = false;
  }
  if (clear_search_) {
    // The box keeps its own copy of the text while it is being edited: let go of it, clear, take it back.
    clear_search_ = false;
    query_.clear();
    ImGui::ClearActiveID();
    ImGui::SetKeyboardFocusHere();
  }
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##search", "Search (Ctrl+K) · Esc clears", &query_);
  search_active_ = ImGui::IsItemActive();
  ImGui::Separator();
  ImGui::BeginChild("list");
  if (query_.empty()) {
    list(ctx);
  } else {
    results(ctx);
  }
  list_hovered_ = ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows |
                                         ImGuiHoveredFlags_AllowWhenBlockedByActiveItem |
                                         ImGuiHoveredFlags_AllowWhenBlockedByPopup);
  ImGui::EndChild();
  if (!list_hovered_ && resort_pending_) reload(ctx);  // the pointer left: the sorted order again
  modals(ctx);
}

void SidebarPanel::list(UiContext& ctx) {
  const chat::ChatTree* open = ctx.chat.tree();
  if (conversations_.empty()) ImGui::TextColored(ctx.theme.text_muted, "No conversations yet.");
  for (const store::ConversationSummary& c : conversations_) {
    ImGui::PushID(static_cast<int>(c.id));
    const bool selected = open && open->conversation.id == c.id;
    if (ImGui::Selectable(c.title.c_str(), selected))
      ctx.notices.check(ctx.chat.open(c.id), "open conversation");
    if (ImGui::IsItemHovered()) {
      tooltip("%s\n%lld messages · %s\nright-click: rename, delete", c.title.c_str(),
                        static_cast<long long>(c.message_count), format_date(c.updated_ms).c_str());
    }
    if (ImGui::BeginPopupContextItem("menu")) {
      if (ImGui::MenuItem("Rename…")) {
        rename_id_ = c.id;
        rename_text_ = c.title;
        open_rename_ = true;
      }
      if (ImGui::MenuItem("Delete…")) {
        delete_id_ = c.id;
        delete_title_ = c.title;
        open_delete_ = true;
      }
      ImGui::EndPopup();
    }
    ImGui::PopID();
  }
}

void SidebarPanel::results(UiContext& ctx) {
  // A LIKE scan of every message (store.h: ~56 ms per 10 MB): run when typing pauses, not per keystroke.
  if (query_ != typed_) {
    typed_ = query_;
    typed_at_ = ctx.now_s;
  }
  if (searched_ != query_ && ctx.now_s - typed_at_ >= kSearchDelay_s) {
    searched_ = query_;
    auto hits = ctx.store.search(query_);
    hits_.clear();
    if (ctx.notices.check(hits.ok() ? Status() : Status(hits.error()), "search")) hits_ = std::move(*hits);
  }
  if (hits_.empty()) ImGui::TextColored(ctx.theme.text_muted, "No matches.");
  for (size_t i = 0; i < hits_.size(); ++i) {
    const store::SearchHit& h = hits_[i];
    ImGui::PushID(static_cast<int>(i));
    ImGui::PushFont(ctx.fonts.bold);
    const bool clicked = ImGui::Selectable(h.conversation_title.c_str());
    ImGui::PopFont();
    // The snippet with every match of the query on a highlight (the store's match when the ASCII
    // comparison finds none, e.g. a case difference outside ASCII).
    const std::string prefix =
        h.message_id == 0 ? "title: " : (h.role == chat::Role::kUser ? "you: " : "reply: ");
    std::string snippet = h.snippet;
    for (char& c : snippet)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    auto marks = match_ranges(snippet, searched_);
    if (marks.empty() && h.match_length > 0 && h.match_begin + h.match_length <= snippet.size())
      marks.emplace_back(h.match_begin, h.match_length);
    for (auto& m : marks) m.first += prefix.size();
    highlighted_text(prefix + snippet, marks, ImGui::GetColorU32(ImGuiCol_TextSelectedBg),
                     ctx.theme.text_muted);
    if (clicked || (ImGui::IsItemClicked())) {
      if (ctx.notices.check(ctx.chat.open(h.conversation_id), "open conversation") && h.message_id != 0) {
        if (ctx.notices.check(ctx.chat.jump_to(h.message_id), "jump to message")) jump_to_ = h.message_id;
      }
    }
    ImGui::Separator();
    ImGui::PopID();
  }
}

void SidebarPanel::modals(UiContext& ctx) {
  if (open_rename_) {
    ImGui::OpenPopup("Rename conversation");
    open_rename_ = false;
  }
  if (ImGui::BeginPopupModal("Rename conversation", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    ImGui::SetNextItemWidth(ctx.em() * 20);
    const bool enter = ImGui::InputText("##title", &rename_text_, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::Button("Rename") || enter) {
      ctx.notices.check(ctx.chat.rename(rename_id_, rename_text_), "rename");
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (open_delete_) {
    ImGui::OpenPopup("Delete conversation?");
    open_delete_ = false;
  }
  if (ImGui::BeginPopupModal("Delete conversation?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("Delete \"%s\" and all its messages?", delete_title_.c_str());
    ImGui::TextColored(ctx.theme.warning, "This cannot be undone (export it first with Ctrl+E).");
    if (ImGui::Button("Delete")) {
      ctx.notices.check(ctx.chat.remove(delete_id_), "delete conversation");
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

}  // namespace qc::gui
