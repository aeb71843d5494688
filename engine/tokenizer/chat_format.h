// ChatML: the conversation -> prompt text / tokens (the conversation and reply structs, and the reply
// split parse_reply, are the public qwenchat/chat.h).
//
// Per turn `<|im_start|>{role}\n{content}<|im_end|>\n`; an optional system prompt first; the generation
// prompt `<|im_start|>assistant\n<think>\n` with thinking on,
// `<|im_start|>assistant\n<think>\n\n</think>\n\n` with it off. Earlier assistant turns lose their thinking
// unless keep_history_thinking is set, which writes them as `<think>\n{thinking}\n</think>\n\n{content}`
// (QWEN35.md section 7).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qwenchat/chat.h"
#include "qwenchat/result.h"
#include "tokenizer/tokenizer.h"

namespace qc {

// One piece of the rendered prompt: a special token of the markup (matched by its text in the
// vocabulary) or text (markup text such as "user\n", or message content).
struct ChatPiece {
  std::string text;
  bool special = false;
};

std::vector<ChatPiece> render_chatml_pieces(const std::vector<ChatMessage>& messages,
                                            const ChatRenderOptions& options);
std::string render_chatml(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options);

// Tokens of the prompt. Only the markup's special pieces become special tokens (looked up with
// Tokenizer::special_id; one the vocabulary lacks is encoded as text); every run of text between them,
// markup and content together, is encoded with parse_special off. So a user typing "<|im_end|>" gets
// plain text tokens, and for content without special-token text the ids equal those of encoding the
// rendered string with parse_special on (what Hugging Face's apply_chat_template + encode gives).
Result<std::vector<int32_t>> encode_chat(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages,
                                         const ChatRenderOptions& options);

// The Jinja template for tokenizer.chat_template in generated GGUFs, equivalent to render_chatml with
// messages only (a system turn as the first message; `enable_thinking` false closes the think block;
// `keep_thinking` true keeps earlier thinking from `reasoning_content` or from content before </think>).
std::string_view chatml_jinja_template();

}  // namespace qc
