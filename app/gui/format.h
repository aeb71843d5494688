// Text the panels show, as plain functions (tested without a window): byte sizes, a reply's stats line,
// file names from titles.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace qc::gui {

// "1.23 GB", "512 KB", "17 B" (powers of 1000).
std::string format_bytes(uint64_t bytes);

// A store timestamp (milliseconds since the epoch) as local "2026-12-04 14:05".
std::string format_date(int64_t ms);

// "42 tokens · 12.3 tok/s · prefill 350 tok/s · TTFT 85 ms · MTP 0.74 (0.81/0.62) · cuda/tile"
// (plus "stop: max_tokens" unless the reply ended on its stop token) from a reply's stats object (keys of
// chat_state.h). Empty when the object has none of them.
std::string format_stats_line(const nlohmann::json& stats);

// What a reply shows in place of an answer that has no visible text (empty when it has some): while
// streaming, "waiting for the first token…" only until anything arrived (white space is a token too:
// "writing… (12 characters of white space so far)"); a reply that ended inside its thinking says so
// ("no answer: ran out of tokens while thinking", with what to do in `advice`). `warning`: shown in the
// warning colour.
struct ReplyPlaceholder {
  std::string text;
  std::string advice;
  bool warning = false;
};
// state: chat::MessageState as its name ("streaming", "complete", "stopped", "error").
ReplyPlaceholder reply_placeholder(const std::string& state, const std::string& content,
                                   const std::string& thinking, const nlohmann::json& stats);

// Where `query` occurs in `text`, ASCII case-insensitively as the store's search (LIKE) matches:
// (begin, length) byte ranges, left to right, not overlapping. None for an empty query.
std::vector<std::pair<size_t, size_t>> match_ranges(std::string_view text, std::string_view query);

// Why `folder` cannot take an export ("no such folder", "not a folder", "this folder cannot be
// written"); empty when it can.
std::string export_folder_problem(const std::string& folder);

// A file name from a title: letters, digits, '-' and '_' kept, other runs as one '-'; "conversation"
// when nothing is left.
std::string file_stem_from_title(const std::string& title);

}  // namespace qc::gui
