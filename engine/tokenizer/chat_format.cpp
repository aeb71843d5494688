#include "tokenizer/chat_format.h"

namespace qc {
namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";
constexpr std::string_view kThinkBegin = "<think>";
constexpr std::string_view kThinkEnd = "</think>";

struct Builder {
  std::vector<ChatPiece> pieces;
  void special(std::string_view s) { pieces.push_back({std::string(s), true}); }
  void text(std::string_view s) {
    if (s.empty()) return;
    if (!pieces.empty() && !pieces.back().special) {
      pieces.back().text += s;
    } else {
      pieces.push_back({std::string(s), false});
    }
  }
  void turn(std::string_view role, std::string_view thinking, std::string_view content) {
    special(kImStart);
    text(role);
    text("\n");
    if (!thinking.empty()) {
      special(kThinkBegin);
      text("\n");
      text(thinking);
      text("\n");
      special(kThinkEnd);
      text("\n\n");
    }
    text(content);
    special(kImEnd);
    text("\n");
  }
};

std::string_view trim_newlines(std::string_view s) {
  while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<ChatPiece> render_chatml_pieces(const std::vector<ChatMessage>& messages,
                                            const ChatRenderOptions& o) {
  Builder b;
  if (!o.system_prompt.empty() && (messages.empty() || messages.front().role != "system")) {
    b.turn("system", {}, o.system_prompt);
  }
  for (const ChatMessage& m : messages) {
    const bool keep = o.keep_history_thinking && m.role == "assistant";
    b.turn(m.role, keep ? std::string_view(m.thinking) : std::string_view(), m.content);
  }
  if (o.add_generation_prompt) {
    b.special(kImStart);
    b.text("assistant\n");
    b.special(kThinkBegin);
    b.text("\n");
    if (!o.thinking) {
      b.text("\n");
      b.special(kThinkEnd);
      b.text("\n\n");
    }
  }
  return std::move(b.pieces);
}

std::string render_chatml(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options) {
  std::string out;
  for (const ChatPiece& p : render_chatml_pieces(messages, options)) out += p.text;
  return out;
}

Result<std::vector<int32_t>> encode_chat(const Tokenizer& tok, const std::vector<ChatMessage>& messages,
                                         const ChatRenderOptions& options) {
  std::vector<int32_t> ids;
  std::string run;  // text since the last special token
  const auto flush = [&]() -> Status {
    if (run.empty()) return Status::success();
    QC_ASSIGN(const std::vector<int32_t> part, tok.encode(run, /*parse_special=*/false));
    ids.insert(ids.end(), part.begin(), part.end());
    run.clear();
    return Status::success();
  };
  for (const ChatPiece& p : render_chatml_pieces(messages, options)) {
    const int32_t id = p.special ? tok.special_id(p.text) : -1;
    if (id < 0) {
      run += p.text;
      continue;
    }
    QC_TRY(flush());
    ids.push_back(id);
  }
  QC_TRY(flush());
  return ids;
}

ReplyParts parse_reply(std::string_view text, bool thinking_prompted) {
  ReplyParts r;
  const size_t end = text.find(kThinkEnd);
  if (end == std::string_view::npos) {
    std::string_view t = text;
    const bool opened = t.substr(0, kThinkBegin.size()) == kThinkBegin;
    if (!thinking_prompted && !opened) {
      r.content = std::string(text);
      return r;
    }
    if (opened) t.remove_prefix(kThinkBegin.size());
    while (!t.empty() && t.front() == '\n') t.remove_prefix(1);
    r.thinking = std::string(t);  // trailing newlines kept: more text may follow while streaming
    r.in_thinking = true;
    return r;
  }
  std::string_view thinking = text.substr(0, end);
  if (const size_t b = thinking.rfind(kThinkBegin); b != std::string_view::npos) {
    thinking.remove_prefix(b + kThinkBegin.size());
  }
  r.thinking = std::string(trim_newlines(thinking));
  std::string_view content = text.substr(end + kThinkEnd.size());
  while (!content.empty() && content.front() == '\n') content.remove_prefix(1);
  r.content = std::string(content);
  return r;
}

std::string_view chatml_jinja_template() {
  // Kept equivalent to render_chatml (checked with Python's jinja2 when written; see the commit log).
  return R"jinja({%- for message in messages %}
    {%- if message.role == 'assistant' %}
        {%- set content = message.content if message.content is string else '' %}
        {%- set reasoning = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning = message.reasoning_content %}
        {%- elif '</think>' in content %}
            {%- set reasoning = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
            {%- set content = content.split('</think>')[-1].lstrip('\n') %}
        {%- endif %}
        {%- if keep_thinking is defined and keep_thinking and reasoning %}
            {{- '<|im_start|>assistant\n<think>\n' + reasoning + '\n</think>\n\n' + content + '<|im_end|>\n' }}
        {%- else %}
            {{- '<|im_start|>assistant\n' + content + '<|im_end|>\n' }}
        {%- endif %}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- else %}
        {{- '<think>\n' }}
    {%- endif %}
{%- endif %})jinja";
}

}  // namespace qc
