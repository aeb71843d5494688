#include "sidebar_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <ctime>

namespace qc::gui {
namespace {

std::string date_of(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

}  // namespace

void SidebarPanel::reload(UiContext& ctx) {
  loaded_version_ = ctx.chat.list_version();
  auto list = ctx.store.list_conversations();
  if (ctx.notices.check(list.ok() ? Status() : Status(list.error()), "conversation list"))
    conversations_ = std::move(*list);
  searched_.clear();  // contents may have changed: search again
}

void SidebarPanel::draw(UiContext& ctx) {
  if (loaded_version_ != ctx.chat.list_version()) reload(ctx);
  if (ImGui::Button("+ New chat", ImVec2(-1, 0))) ctx.requests.new_conversation = true;
  if (focus_search_) {
    ImGui::SetKeyboardFocusHere();
    focus_search_ = false;
  }
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##search", "Search (Ctrl+K)", &query_);
  if (ImGui::IsItemActive() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) query_.clear();
  ImGui::Separator();
  ImGui::BeginChild("list");
  if (query_.empty()) {
    list(ctx);
  } else {
    results(ctx);
  }
  ImGui::EndChild();
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
      ImGui::SetTooltip("%s\n%lld messages · %s\nright-click: rename, delete", c.title.c_str(),
                        static_cast<long long>(c.message_count), date_of(c.updated_ms).c_str());
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
    ImGui::PushStyleColor(ImGuiCol_Text, ctx.theme.text_muted);
    ImGui::TextWrapped("%s%s",
                       h.message_id == 0 ? "title: " : (h.role == chat::Role::kUser ? "you: " : "reply: "),
                       h.snippet.c_str());
    ImGui::PopStyleColor();
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
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
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
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

}  // namespace qc::gui
