#include "qwenchat/json_depth.h"

namespace qc {

int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Status check_json_depth(std::string_view text, const std::string& source, int limit) {
  if (json_nesting_depth(text) <= limit) return {};
  return make_error(source + ": the JSON nests deeper than " + std::to_string(limit) +
                    " levels of arrays and objects (no real file does; is it damaged or hostile?)");
}

}  // namespace qc
