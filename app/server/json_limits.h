// Limits checked on a request body before it reaches the JSON parser. nlohmann::json parses recursively,
// so a body of 100,000 '[' would overflow the stack of the HTTP thread; the scan below is iterative and
// linear, so a hostile body costs one pass over bytes the size limit already bounds.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qc::server {

// Deepest nesting of arrays/objects in a request: OpenAI requests nest about 5 deep (messages -> content
// parts -> part), so 64 leaves room for any real client's extra fields.
inline constexpr int kMaxJsonDepth = 64;

// Deepest nesting of [ and { outside string literals (escapes honoured). Malformed text is not rejected
// here (the parser says what is wrong); only the depth is measured.
int json_nesting_depth(std::string_view text);

}  // namespace qc::server
