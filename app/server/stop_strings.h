// OpenAI's `stop`: the reply ends before the first occurrence of any stop string, which is not sent.
// While streaming, text that could be the start of a stop string is held back until the next token
// shows whether it is (at most the longest stop string minus one byte is ever held).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qc::server {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);  // empty strings are ignored

  // Takes the next piece of text; returns what may be sent now. Once a stop string is found, matched()
  // is true, the returned text ends where the stop string began, and later calls return nothing.
  std::string push(std::string_view text);
  // At the end of the reply: the text still held back (none after a match).
  std::string flush();
  bool matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool matched_ = false;
};

}  // namespace qc::server
