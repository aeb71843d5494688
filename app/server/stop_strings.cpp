#include "server/stop_strings.h"

#include <algorithm>
#include <utility>

namespace qc::server {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (std::string& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

std::string StopMatcher::push(std::string_view text) {
  if (matched_) return {};
  pending_.append(text);
  if (stops_.empty()) return std::exchange(pending_, {});
  size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, pending_.find(s));
  if (first != std::string::npos) {
    matched_ = true;
    std::string out = pending_.substr(0, first);
    pending_.clear();
    return out;
  }
  // Hold back the longest suffix that is a proper prefix of some stop string. A stop string starts at a
  // character boundary and the pending text is whole characters, so the cut is a character boundary.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    const size_t most = std::min(s.size() - 1, pending_.size());
    for (size_t n = most; n > hold; --n) {
      if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
        hold = n;
        break;
      }
    }
  }
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopMatcher::flush() { return std::exchange(pending_, {}); }

}  // namespace qc::server
