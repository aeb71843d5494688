// Markdown and plain-text exports (see export.h). Pure functions of the trees: no clock, no locale
// (numbers through snprintf in the C locale the app never changes), so golden files match byte for byte.
#include <algorithm>
#include <cstdio>
#include <ctime>

#include "export/export_internal.h"

namespace qc::exporter::detail {

std::vector<chat::MessageId> export_order(const chat::ChatTree& tree, Branches branches) {
  if (branches == Branches::kCurrent) return chat::current_branch(tree);
  std::vector<chat::MessageId> out;
  for (chat::MessageId root : chat::children(tree, 0)) {
    for (chat::MessageId id : chat::subtree(tree, root)) out.push_back(id);
  }
  return out;
}

std::vector<chat::MessageId> unreachable(const chat::ChatTree& tree) {
  const std::vector<chat::MessageId> reached = export_order(tree, Branches::kAll);
  if (reached.size() == tree.messages.size()) return {};
  std::vector<chat::MessageId> sorted = reached;
  std::sort(sorted.begin(), sorted.end());
  std::vector<chat::MessageId> out;
  for (const chat::Message& m : tree.messages) {
    if (!std::binary_search(sorted.begin(), sorted.end(), m.id)) out.push_back(m.id);
  }
  return out;
}

std::string utc_date(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "(invalid date)";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string heading_note(const chat::ChatTree& tree, const chat::Message& m, Branches branches) {
  std::vector<std::string> parts;
  if (branches == Branches::kAll && m.parent_id != 0)
    parts.push_back("reply to #" + std::to_string(m.parent_id));
  const chat::SiblingInfo sib = chat::sibling_info(tree, m.id);
  if (sib.count > 1) {
    parts.push_back("version " + std::to_string(sib.index + 1) + " of " + std::to_string(sib.count));
    if (branches == Branches::kAll && chat::selected_child(tree, m.parent_id) == m.id)
      parts.push_back("selected");
  }
  if (m.state != chat::MessageState::kComplete) parts.push_back(chat::state_name(m.state));
  std::string out = branches == Branches::kAll ? "#" + std::to_string(m.id) : "";
  if (!parts.empty()) {
    if (!out.empty()) out += " ";
    out += "(";
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    out += ")";
  }
  return out;
}

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

bool number(const nlohmann::json& stats, const char* key, double* out) {
  auto it = stats.find(key);
  if (it == stats.end() || !it->is_number()) return false;
  *out = it->get<double>();
  return true;
}

std::string string_field(const nlohmann::json& stats, const char* key) {
  auto it = stats.find(key);
  return it != stats.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string stats_line(const chat::ChatTree& tree, const chat::Message& m) {
  std::vector<std::string> parts;
  if (!m.model.empty() && m.model != tree.conversation.model_path) parts.push_back("model " + m.model);
  if (m.stats.is_object()) {
    double v = 0;
    if (number(m.stats, "generated_tokens", &v)) parts.push_back(fmt("%.0f tokens", v));
    if (number(m.stats, "tok_per_s", &v)) parts.push_back(fmt("%.1f tok/s", v));
    if (number(m.stats, "ttft_ms", &v)) parts.push_back(fmt("TTFT %.0f ms", v));
    if (number(m.stats, "mtp_acceptance", &v)) parts.push_back(fmt("MTP acceptance %.0f%%", v * 100.0));
    if (auto k = string_field(m.stats, "kernel"); !k.empty()) parts.push_back("kernel " + k);
    if (auto b = string_field(m.stats, "backend"); !b.empty()) parts.push_back(b);
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " · " : "") + parts[i];
  return out;
}

std::string display_title(const chat::Conversation& c) {
  return c.title.empty() ? "(untitled)" : c.title;
}

std::string role_title(chat::Role r) {
  switch (r) {
    case chat::Role::kSystem:
      return "System";
    case chat::Role::kUser:
      return "User";
    case chat::Role::kAssistant:
      return "Assistant";
  }
  return "User";
}

namespace {

std::string settings_text(const nlohmann::json& settings) {
  return settings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string messages_text(const chat::ChatTree& tree, Branches branches, size_t shown, size_t unreached) {
  if (branches == Branches::kAll) {
    return "whole tree (" + std::to_string(shown) + ")" +
           (unreached == 0 ? ""
                           : ", and " + std::to_string(unreached) + " no root reaches (listed at the end)");
  }
  return "current branch (" + std::to_string(shown) + " of " + std::to_string(tree.messages.size()) + ")";
}

// Text that ends with exactly one newline (so blocks are separated by exactly one blank line).
std::string block(const std::string& s) {
  size_t end = s.size();
  while (end > 0 && s[end - 1] == '\n') --end;
  return s.substr(0, end) + "\n";
}

// Why a whole-tree export has a section of messages no root reaches.
constexpr const char* kUnreachableWhy =
    "Stored messages that no root leads to: a parent is missing from the conversation or the parent "
    "links form a cycle (a damaged or hand-edited database). Listed by id so that nothing stored is left "
    "out.";

void markdown_message(std::string& out, const chat::ChatTree& tree, const chat::Message& m, Branches branches,
                      const char* level) {
  const std::string note = heading_note(tree, m, branches);
  out += std::string("\n") + level + " " + role_title(m.role) + (note.empty() ? "" : " " + note) + "\n";
  if (!m.error.empty()) out += "\n> Error: " + m.error + "\n";
  if (!m.thinking.empty()) {
    out += "\n<details><summary>Thinking</summary>\n\n" + block(m.thinking) + "\n</details>\n";
  }
  if (!m.content.empty()) out += "\n" + block(m.content);
  const std::string stats = stats_line(tree, m);
  if (!stats.empty()) out += "\n*" + stats + "*\n";
}

void text_message(std::string& out, const chat::ChatTree& tree, const chat::Message& m, Branches branches) {
  const std::string note = heading_note(tree, m, branches);
  out += "\n--- " + std::string(chat::role_name(m.role)) + (note.empty() ? "" : " " + note) + " ---\n";
  if (!m.error.empty()) out += "Error: " + m.error + "\n";
  if (!m.thinking.empty()) out += "[thinking]\n" + block(m.thinking) + "[/thinking]\n";
  if (!m.content.empty()) out += block(m.content);
  const std::string stats = stats_line(tree, m);
  if (!stats.empty()) out += "(" + stats + ")\n";
}

void markdown_one(std::string& out, const chat::ChatTree& tree, Branches branches) {
  const chat::Conversation& c = tree.conversation;
  const std::vector<chat::MessageId> order = export_order(tree, branches);
  const std::vector<chat::MessageId> lost =
      branches == Branches::kAll ? unreachable(tree) : std::vector<chat::MessageId>();
  out += "# " + display_title(c) + "\n\n";
  out += "- Model: " + (c.model_path.empty() ? std::string("(none)") : "`" + c.model_path + "`") + "\n";
  out += "- Created: " + utc_date(c.created_ms) + "\n";
  out += "- Updated: " + utc_date(c.updated_ms) + "\n";
  out += "- Settings: `" + settings_text(c.settings) + "`\n";
  out += "- Messages: " + messages_text(tree, branches, order.size(), lost.size()) + "\n";
  if (!c.system_prompt.empty()) out += "\n## System prompt\n\n" + block(c.system_prompt);
  for (chat::MessageId id : order) markdown_message(out, tree, *chat::find(tree, id), branches, "##");
  if (lost.empty()) return;
  out += "\n## Unreachable messages (" + std::to_string(lost.size()) + ")\n\n" + kUnreachableWhy + "\n";
  for (chat::MessageId id : lost) markdown_message(out, tree, *chat::find(tree, id), branches, "###");
}

void text_one(std::string& out, const chat::ChatTree& tree, Branches branches) {
  const chat::Conversation& c = tree.conversation;
  const std::vector<chat::MessageId> order = export_order(tree, branches);
  const std::vector<chat::MessageId> lost =
      branches == Branches::kAll ? unreachable(tree) : std::vector<chat::MessageId>();
  out += display_title(c) + "\n";
  out += "Model: " + (c.model_path.empty() ? std::string("(none)") : c.model_path) + "\n";
  out += "Created: " + utc_date(c.created_ms) + "\n";
  out += "Updated: " + utc_date(c.updated_ms) + "\n";
  out += "Settings: " + settings_text(c.settings) + "\n";
  out += "Messages: " + messages_text(tree, branches, order.size(), lost.size()) + "\n";
  if (!c.system_prompt.empty()) out += "\n--- system prompt ---\n" + block(c.system_prompt);
  for (chat::MessageId id : order) text_message(out, tree, *chat::find(tree, id), branches);
  if (lost.empty()) return;
  out += "\n=== unreachable messages (" + std::to_string(lost.size()) + ") ===\n" + kUnreachableWhy + "\n";
  for (chat::MessageId id : lost) text_message(out, tree, *chat::find(tree, id), branches);
}

}  // namespace

std::string render_markdown(const std::vector<chat::ChatTree>& trees, Branches branches) {
  std::string out;
  for (size_t i = 0; i < trees.size(); ++i) {
    if (i) out += "\n---\n\n";
    markdown_one(out, trees[i], branches);
  }
  return out;
}

std::string render_text(const std::vector<chat::ChatTree>& trees, Branches branches) {
  std::string out;
  for (size_t i = 0; i < trees.size(); ++i) {
    if (i) out += "\n" + std::string(72, '=') + "\n\n";
    text_one(out, trees[i], branches);
  }
  return out;
}

}  // namespace qc::exporter::detail
