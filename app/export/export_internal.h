// Pieces shared by the export formats (not part of the API).
#pragma once

#include <string>
#include <vector>

#include "chat/chat_state.h"
#include "export/export.h"

namespace qc::exporter::detail {

// The messages an export holds, in order: the current branch, or every message depth-first (roots and
// siblings by id).
std::vector<chat::MessageId> export_order(const chat::ChatTree& tree, Branches branches);

// Messages no root reaches, by id: their parent chain ends at a message that is not in the conversation,
// or loops. The store's foreign keys keep them out, but a damaged or hand-edited database (or one written
// with foreign keys off) can hold them. Whole-tree exports list them in a section of their own, so an
// export never leaves out a stored message without saying so.
std::vector<chat::MessageId> unreachable(const chat::ChatTree& tree);

// "2024-05-01 12:00:00 UTC" for Unix epoch milliseconds.
std::string utc_date(int64_t ms);

// The words after a message's role in its heading: "#4 (reply to #3, version 2 of 3, selected, stopped)"
// for the whole tree, "(version 2 of 3)" for the current branch; empty when there is nothing to say.
std::string heading_note(const chat::ChatTree& tree, const chat::Message& m, Branches branches);

// "25 tokens · 41.3 tok/s · TTFT 120 ms · MTP acceptance 81% · kernel hlu4 · cuda" from the known stats
// keys (chat_state.h) plus the message's model when it differs from the conversation's; empty when none.
std::string stats_line(const chat::ChatTree& tree, const chat::Message& m);

// "Title" / "(untitled)"
std::string display_title(const chat::Conversation& c);
// "Role" capitalised: "User", "Assistant", "System".
std::string role_title(chat::Role r);

std::string render_markdown(const std::vector<chat::ChatTree>& trees, Branches branches);
std::string render_text(const std::vector<chat::ChatTree>& trees, Branches branches);

}  // namespace qc::exporter::detail
