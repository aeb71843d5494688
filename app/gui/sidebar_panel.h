// The conversations sidebar: new chat, search over titles and contents (Ctrl+K), the list (most recent
// first) with rename and delete (confirmed) on right-click.
#pragma once

#include <string>
#include <vector>

#include "store/store.h"
#include "ui_context.h"

namespace qc::gui {

class SidebarPanel {
 public:
  void draw(UiContext& ctx);
  void focus_search() { focus_search_ = true; }
  // Esc (from the app's key callback): clears the search when its box has the keyboard. Returns
  // whether it did (then Esc means nothing else).
  bool escape();
  // Set when the user picked a search hit: the chat view scrolls to that message.
  chat::MessageId take_jump() {
    const chat::MessageId id = jump_to_;
    jump_to_ = 0;
    return id;
  }

 private:
  void reload(UiContext& ctx);
  void list(UiContext& ctx);
  void results(UiContext& ctx);
  void modals(UiContext& ctx);

  std::vector<store::ConversationSummary> conversations_;
  // The list does not re-sort under the pointer: while it is hovered a change keeps the rows in place
  // (layout.h frozen_order) and the sorted order comes back when the pointer leaves.
  bool list_hovered_ = false;
  bool resort_pending_ = false;
  bool search_active_ = false;  // the search box had the keyboard last frame
  bool clear_search_ = false;
  uint64_t loaded_version_ = 0;
  std::string query_;
  std::string searched_;
  std::string typed_;    // the query as of typed_at_
  double typed_at_ = 0;  // when the query last changed
  static constexpr double kSearchDelay_s = 0.2;
  std::vector<store::SearchHit> hits_;
  bool focus_search_ = false;
  chat::MessageId jump_to_ = 0;
  chat::ConversationId rename_id_ = 0;
  std::string rename_text_;
  bool open_rename_ = false;
  chat::ConversationId delete_id_ = 0;
  std::string delete_title_;
  bool open_delete_ = false;
};

}  // namespace qc::gui
