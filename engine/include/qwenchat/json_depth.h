// A depth check for JSON text before it reaches nlohmann::json. Its DOM is freed and printed recursively
// (and our own walks of it recurse), so a file of 100,000 '[' overflows the stack (issue 13: a deep
// settings object, config.json or export crashed the app). Every JSON we read from outside goes through
// this first; the scan is iterative and linear in the text.
#pragma once

#include <string>
#include <string_view>

#include "qwenchat/result.h"

namespace qc {

// Files (tokenizer.json, config.json, exports, settings) nest fewer than 16 levels in practice; 256 is far
// above any real one and far below what the recursion can take (each level costs a few hundred bytes
// of stack).
inline constexpr int kMaxJsonFileDepth = 256;

// The deepest nesting of [ and { outside string literals (escapes honoured). Malformed text is not
// judged here (the parser says what is wrong), only measured.
int json_nesting_depth(std::string_view text);

// "SOURCE: the JSON nests deeper than LIMIT levels of arrays and objects" when it does.
Status check_json_depth(std::string_view text, const std::string& source, int limit = kMaxJsonFileDepth);

}  // namespace qc
