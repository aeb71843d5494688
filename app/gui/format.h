// Text the panels show, as plain functions (tested without a window): byte sizes, a reply's stats line,
// file names from titles.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace qc::gui {

// "1.23 GB", "512 KB", "17 B" (powers of 1000).
std::string format_bytes(uint64_t bytes);

// "42 tokens · 12.3 tok/s · prefill 350 tok/s · TTFT 85 ms · MTP 0.74 (0.81/0.62) · cuda/tile"
// (plus "stop: max_tokens" unless the reply ended on its stop token) from a reply's stats object (keys of
// chat_state.h). Empty when the object has none of them.
std::string format_stats_line(const nlohmann::json& stats);

// A file name from a title: letters, digits, '-' and '_' kept, other runs as one '-'; "conversation"
// when nothing is left.
std::string file_stem_from_title(const std::string& title);

}  // namespace qc::gui
