// Export of conversations to Markdown, JSON and plain text, and import of our JSON.
//
// Scope: one conversation or several (the CLI's --all), the current branch or the whole tree.
// - Markdown: a metadata header per conversation (title, model, created/updated dates in UTC, settings,
//   system prompt), then each message under a heading with its role; thinking in a collapsible
//   <details><summary>Thinking</summary> block; a stats line in italics under replies. For the whole
//   tree, messages come depth-first and each heading names its id, its parent and its branch ("2/3").
// - JSON: everything: {"format":"qwenchat-export","version":1,"conversations":[{... "messages":[...]}]},
//   ids, parent ids, selections, states, settings, stats. Current-branch exports hold only the branch's
//   messages (still a valid tree). Pretty-printed with 2 spaces, keys in a fixed order, so exports diff.
// - Plain text: the same content as Markdown without markup ("[user]" blocks).
// Every output is a pure function of the trees (no clock), so golden files compare byte for byte.
//
// Import: parse_export_json validates format/version/fields (each error names the JSON path, expected
// and actual); import_json writes each conversation into a store as a new conversation: a new
// conversation id; message ids are per conversation, so they are kept, and with them parent links,
// selections, timestamps, settings and stats. A round trip export -> import -> export gives the same
// JSON except the conversation ids.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_state.h"
#include "qwenchat/result.h"
#include "store/store.h"

namespace qc::exporter {

inline constexpr const char* kFormatName = "qwenchat-export";
inline constexpr int kFormatVersion = 1;

enum class Format { kMarkdown, kJson, kText };
Result<Format> parse_format(std::string_view s);  // "md" / "markdown", "json", "txt" / "text"
const char* format_extension(Format f);           // "md", "json", "txt"

enum class Branches { kCurrent, kAll };
Result<Branches> parse_branches(std::string_view s);  // "current", "all"

struct ExportOptions {
  Format format = Format::kMarkdown;
  Branches branches = Branches::kCurrent;
};

// The export text of one or more conversations (several are separated by a rule in Markdown/text, and
// are elements of "conversations" in JSON).
std::string export_trees(const std::vector<chat::ChatTree>& trees, const ExportOptions& options);
inline std::string export_tree(const chat::ChatTree& tree, const ExportOptions& options) {
  return export_trees({tree}, options);
}

// The JSON document as a value (what export_trees dumps for Format::kJson); ordered_json keeps the key
// order of the format (ids first, text last) instead of sorting keys.
nlohmann::ordered_json to_json(const std::vector<chat::ChatTree>& trees, Branches branches);

// Parses and validates an export document. The trees come back with their exported ids (conversation
// id as exported, messages sorted by id, next_id set). Errors name the path ("conversations[0].messages[3]
// .parent_id: message 9 is not in the conversation").
Result<std::vector<chat::ChatTree>> parse_export_json(std::string_view text);

// Imports every conversation of an export document into the store (one transaction per conversation).
// Returns the new conversation ids in document order.
Result<std::vector<chat::ConversationId>> import_json(store::Store& store, std::string_view text);

// What `qwenchat-cli import` runs: opens (creating) the database at db_path with the default options and
// imports into it. Safe beside a running app: the open leaves replies still "streaming" alone while an
// app holds the database's instance lock (store::Recover::kUnlessAppRunning), and a bad document is
// refused before the database is created.
Result<std::vector<chat::ConversationId>> import_json_into(const std::string& db_path, std::string_view text);

// Loads conversations from a store and exports them (what the CLI and the GUI's export dialog call).
// ids empty = every conversation, most recent first.
Result<std::string> export_from_store(const store::Store& store, const std::vector<chat::ConversationId>& ids,
                                      const ExportOptions& options);

// Writes `data` to `path` atomically: into "<path>.partial-<pid>-<n>" in the same folder (the only place
// besides path it writes), flushed, then renamed over path. On error (a read-only folder, a full disk)
// the temporary file is removed, path is untouched (an existing file keeps its content, never a
// truncated one), and the error names path and the reason ("export to /x/a.md failed: cannot create a
// file in the folder /x: Read-only file system").
Status write_file_atomic(const std::string& path, std::string_view data);

}  // namespace qc::exporter
