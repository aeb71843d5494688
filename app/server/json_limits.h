// The request body's depth limit: OpenAI requests nest about 5 deep (messages -> content parts -> part),
// so 64 leaves room for any real client's extra fields. The scan is qwenchat/json_depth.h's.
#pragma once

#include "qwenchat/json_depth.h"

namespace qc::server {

inline constexpr int kMaxJsonDepth = 64;
using qc::json_nesting_depth;

}  // namespace qc::server
