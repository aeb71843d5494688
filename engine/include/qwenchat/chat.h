// A conversation as the engine takes it (ChatMessage, ChatRenderOptions) and a reply as it comes back,
// split into thinking and content (ReplyParts, parse_reply). Plain structs; rendering them into ChatML
// tokens is engine/tokenizer/chat_format.h (encode_chat), which the worker calls.
#pragma once

#include <string>
#include <string_view>

namespace qc {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" (any other role is written as given)
  std::string content;
  std::string thinking;  // assistant turns: the reasoning, without the <think> markers
};

struct ChatRenderOptions {
  std::string system_prompt;           // a system turn written first (unless messages start with one)
  bool thinking = true;                // the generation prompt opens a think block (off: an empty one)
  bool keep_history_thinking = false;  // earlier assistant turns keep their thinking
  bool add_generation_prompt = true;
};

// A generated reply (decoded text, specials included) split at the first "</think>": the text before it
// is thinking (a leading "<think>" and surrounding newlines removed), the text after it is content
// (leading newlines removed). Without "</think>" the whole text is thinking still in progress when the
// prompt opened a think block (or the text starts with "<think>"), otherwise it is all content.
struct ReplyParts {
  std::string thinking;
  std::string content;
  bool in_thinking = false;  // the think block is still open (streaming)
};
ReplyParts parse_reply(std::string_view generated, bool thinking_prompted);

}  // namespace qc
