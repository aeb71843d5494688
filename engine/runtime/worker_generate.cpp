#include "runtime/worker_generate.h"

#include <algorithm>
#include <chrono>

#include "generate/generator.h"
#include "runtime/model_facts.h"
#include "runtime/prefix_cache.h"
#include "tokenizer/chat_format.h"

namespace qc {
namespace {

using Clock = std::chrono::steady_clock;

// The wording of the one fitting error that is about length (both fit functions use it; run_generation
// recognises it to report context_length_exceeded).
constexpr const char* kContextHolds = ", but the context holds ";

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

GenerationFinished failed(uint64_t id, std::string message, std::string kind = {}) {
  GenerationFinished f;
  f.id = id;
  f.stop_reason = StopReason::error;
  f.error = std::move(message);
  f.error_kind = std::move(kind);
  return f;
}

// Streams one reply: keeps the raw text, re-splits it after every token and sends what changed.
class ReplyStream {
 public:
  ReplyStream(uint64_t id, bool thinking_prompted) : id_(id), thinking_prompted_(thinking_prompted) {}

  TokenDelta push(int index, std::string_view text) {
    raw_.append(text);
    ReplyParts now = parse_reply(raw_, thinking_prompted_);
    TokenDelta d;
    d.id = id_;
    d.index = index;
    part_delta(parts_.thinking, now.thinking, &d.thinking_delta, &d.thinking_replace);
    part_delta(parts_.content, now.content, &d.content_delta, &d.content_replace);
    d.in_thinking = now.in_thinking;
    parts_ = std::move(now);
    return d;
  }
  const std::string& raw() const { return raw_; }

 private:
  uint64_t id_;
  bool thinking_prompted_;
  std::string raw_;
  ReplyParts parts_;
};

}  // namespace

void part_delta(const std::string& before, const std::string& after, std::string* delta, bool* replace) {
  if (after.size() >= before.size() && after.compare(0, before.size(), before) == 0) {
    *delta = after.substr(before.size());
    *replace = false;
  } else {
    *delta = after;
    *replace = true;
  }
}

namespace {

// The fewest messages to drop after `first` (keeping the last) so that `tokens`, the encoding of
// `history`, fits in `budget` tokens; 1 when the turns cannot be told apart in the tokens.
size_t turns_to_drop(const Tokenizer& tokenizer, const std::vector<int32_t>& tokens,
                     const std::vector<ChatMessage>& history, const ChatRenderOptions& render, size_t first,
                     int64_t budget) {
  const int32_t im_start = tokenizer.special().im_start;
  std::vector<size_t> starts;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == im_start) starts.push_back(i);
  const size_t sys = !render.system_prompt.empty() && history.front().role != "system" ? 1 : 0;
  const size_t expected = history.size() + sys + (render.add_generation_prompt ? 1 : 0);
  if (im_start < 0 || starts.size() != expected) return 1;
  const size_t from = starts[first + sys];
  const auto total = static_cast<int64_t>(tokens.size());
  size_t k = 1;
  // Keep the last message: at most history.size() - first - 1 dropped.
  while (first + k + 1 < history.size() &&
         total - static_cast<int64_t>(starts[first + sys + k] - from) > budget)
    ++k;
  return k;
}

}  // namespace

Result<FittedPrompt> fit_prompt(const Tokenizer& tokenizer, std::vector<ChatMessage> history,
                                const ChatRenderOptions& render, int n_ctx, int reserve, bool drop_oldest) {
  if (history.empty()) return make_error("the conversation is empty: nothing to answer");
  FittedPrompt out;
  const size_t first = history.front().role == "system" ? 1 : 0;
  while (true) {
    QC_ASSIGN(out.tokens, encode_chat(tokenizer, history, render));
    const int64_t need = static_cast<int64_t>(out.tokens.size()) + reserve;
    if (need <= n_ctx) {
      // The same conversation as the next turn will render it: this reply as an (empty) assistant turn.
      std::vector<ChatMessage> next = history;
      next.push_back({"assistant", "", ""});
      ChatRenderOptions as_history = render;
      as_history.add_generation_prompt = false;
      if (auto t = encode_chat(tokenizer, next, as_history); t.ok()) {
        const size_t m = std::min(t->size(), out.tokens.size());
        size_t i = 0;
        while (i < m && (*t)[i] == out.tokens[i]) ++i;
        // Text right after a special token is tokenized together with what follows it ("assistant\n"
        // then the reply may merge differently): end the boundary at the last special token.
        const int32_t im_start = tokenizer.special().im_start;
        while (i > 0 && !tokenizer.is_control(out.tokens[i - 1]) && out.tokens[i - 1] != im_start) --i;
        out.turn_boundary = static_cast<int>(i);
      }
      return out;
    }
    if (history.size() <= first + 1 || !drop_oldest) {
      return make_error("the prompt has " + std::to_string(out.tokens.size()) +
                            " tokens and the reply needs " + std::to_string(reserve) + " more" +
                            kContextHolds + std::to_string(n_ctx),
                        "load the model with a longer context (Settings, or --ctx) or shorten the conversation");
    }
    // How many turns to drop, from where each turn starts in the tokens (<|im_start|>; turns are
    // tokenized apart, special tokens separate them): one encode instead of one per dropped message, which
    // made a 20,000-message conversation take minutes. One turn less than the count is dropped at once
    // and the loop finishes one by one, so the result is the minimal drop even if a seam tokenized
    // differently.
    const size_t drop = turns_to_drop(tokenizer, out.tokens, history, render, first, n_ctx - reserve);
    const size_t at_once = drop > 1 ? drop - 1 : 1;
    history.erase(history.begin() + static_cast<std::ptrdiff_t>(first),
                  history.begin() + static_cast<std::ptrdiff_t>(first + at_once));
    out.dropped_messages += static_cast<int>(at_once);
  }
}

Result<FittedPrompt> fit_raw_prompt(const Tokenizer& tokenizer, const std::string& prompt, int n_ctx, int reserve) {
  if (prompt.empty()) return make_error("the prompt is empty: nothing to continue");
  FittedPrompt out;
  QC_ASSIGN(out.tokens, tokenizer.encode(prompt, /*parse_special=*/true));
  if (out.tokens.empty()) return make_error("the prompt encodes to no tokens: nothing to continue");
  out.turn_boundary = static_cast<int>(out.tokens.size()) - 1;
  if (static_cast<int64_t>(out.tokens.size()) + reserve > n_ctx) {
    return make_error("the prompt has " + std::to_string(out.tokens.size()) + " tokens and the reply needs " +
                          std::to_string(reserve) + " more" + kContextHolds + std::to_string(n_ctx),
                      "shorten the prompt or load the model with a longer context");
  }
  return out;
}

void run_generation(const GenerateCommand& cmd, const GenerationContext& ctx) {
  if (ctx.engine == nullptr) {
    ctx.emit(failed(cmd.id, "no model is loaded: open a GGUF file in the Model panel", "no_model"));
    return;
  }
  if (Status s = cmd.sampler.validate(); !s.ok()) {
    ctx.emit(failed(cmd.id, s.error().describe(), "invalid_request"));
    return;
  }
  if (cmd.max_new_tokens < 1) {
    ctx.emit(failed(cmd.id, "max tokens must be at least 1, got " + std::to_string(cmd.max_new_tokens),
                    "invalid_request"));
    return;
  }
  Engine& engine = *ctx.engine;
  Backend& backend = engine.backend();
  const Tokenizer& tok = engine.tokenizer();
  const int reserve = std::max(1, std::min(cmd.reserve_tokens, cmd.max_new_tokens));
  Result<FittedPrompt> fitted = cmd.raw_prompt ? fit_raw_prompt(tok, *cmd.raw_prompt, backend.n_ctx(), reserve)
                                                : fit_prompt(tok, cmd.history, cmd.render, backend.n_ctx(),
                                                             reserve, cmd.drop_oldest_turns);
  if (!fitted.ok()) {
    // Encoding errors of the conversation are the request's too; the only other failure is the length.
    const bool too_long = fitted.error().message.find(kContextHolds) != std::string::npos;
    ctx.emit(failed(cmd.id, fitted.error().describe(), too_long ? "context_length_exceeded" : "invalid_request"));
    return;
  }
  const bool thinking_prompted = !cmd.raw_prompt && cmd.render.thinking;
  const KernelConfig no_kernels;
  const KernelConfig& kernels = ctx.kernels ? *ctx.kernels : no_kernels;
  const ModelFacts facts = describe_model(engine, kernels);

  GenerateRequest req;
  req.prompt = std::move(fitted->tokens);
  req.max_new_tokens = cmd.max_new_tokens;
  req.sampler = cmd.sampler;
  if (!cmd.ignore_stop_tokens) req.stop_tokens = tok.special().stop;
  req.mtp = cmd.mtp;

  // The kept state this prompt starts from (0 = a reset backend); the rest is prefilled, with a
  // checkpoint before the last token for the next reply to start from.
  const std::vector<int32_t> full_prompt = req.prompt;
  Generator gen(backend, tok);
  int reused = 0;
  if (ctx.cache) {
    const bool use_mtp = req.mtp.enabled && backend.has_mtp();
    auto prepared = ctx.cache->prepare(backend, gen, full_prompt, use_mtp, cmd.conversation);
    if (!prepared.ok()) {
      ctx.emit(failed(cmd.id, prepared.error().describe()));
      return;
    }
    reused = *prepared;
    req.prompt.erase(req.prompt.begin(), req.prompt.begin() + reused);
    // The state at the turn boundary is kept (when the prefill passes it): at least one token follows. On
    // the prompt path's grid (Backend::prefill_grid), at most grid - 1 tokens before the boundary, so
    // that the next reply's prefill starts where a fresh run also starts a call.
    const int boundary =
        backend.prefill_grid_floor(std::min(fitted->turn_boundary, static_cast<int>(full_prompt.size()) - 1));
    if (boundary > reused) req.checkpoint = boundary - reused;
  } else {
    backend.reset();
  }

  GenerationStarted started;
  started.id = cmd.id;
  started.prompt_tokens = static_cast<int>(full_prompt.size());
  started.prompt_reused = reused;
  started.n_ctx = backend.n_ctx();
  started.dropped_messages = fitted->dropped_messages;
  started.backend = facts.backend.name;
  started.kernel = facts.kernel_variant();
  ctx.emit(started);

  ReplyStream stream(cmd.id, thinking_prompted);
  const Clock::time_point t0 = Clock::now();
  Clock::time_point t_first{};
  int last_index = -1;

  auto snapshot = [&](int generated, const GenerationStats* gs) {
    StatsSnapshot s;
    s.id = cmd.id;
    s.prompt_tokens = started.prompt_tokens;
    s.prompt_reused = reused;
    s.generated_tokens = generated;
    s.elapsed_s = seconds_since(t0);
    s.ttft_s = std::chrono::duration<double>(t_first - t0).count();
    if (s.ttft_s > 0) s.prefill_tok_per_s = (s.prompt_tokens - reused) / s.ttft_s;
    const double decode_s = seconds_since(t_first);
    if (generated > 1 && decode_s > 0) s.decode_tok_per_s = (generated - 1) / decode_s;
    const auto norms = backend.layer_norms();
    s.layer_norms.assign(norms.begin(), norms.end());
    s.context_used = backend.position();
    s.context_size = backend.n_ctx();
    s.memory_bytes = facts.memory_bytes();
    s.bytes_per_token = facts.bytes_per_token;
    if (gs) {
      s.mtp_draft_len = gs->mtp_draft_len;
      s.mtp_drafted = gs->mtp_drafted;
      s.mtp_accepted = gs->mtp_accepted;
    }
    return s;
  };

  GenerateObserver obs;
  obs.should_cancel = ctx.cancelled;
  // The think markers may be control tokens (the generated vocabularies make them so), whose text the
  // generator hides; the split needs them, so they are put back here.
  const int32_t think_begin = tok.special().think_begin;
  const int32_t think_end = tok.special().think_end;
  obs.on_token = [&](const TokenEvent& e) {
    if (e.index == 0) t_first = Clock::now();
    last_index = e.index;
    const bool marker = e.token >= 0 && (e.token == think_begin || e.token == think_end);
    const std::string marker_text = marker ? tok.token_bytes(e.token) : std::string();
    ctx.emit(stream.push(e.index, marker ? std::string_view(marker_text) : e.text));
    ctx.emit(snapshot(e.index + 1, e.stats));
    if (ctx.at_token) ctx.at_token(e.index);
  };
  obs.on_text_tail = [&](std::string_view tail) { ctx.emit(stream.push(last_index, tail)); };
  if (ctx.cache && req.checkpoint > 0) {
    obs.on_checkpoint = [&](std::span<const float> hidden) {
      const size_t held = static_cast<size_t>(reused + req.checkpoint);
      ctx.cache->checkpoint(backend, std::span<const int32_t>(full_prompt).first(held), hidden);
    };
  }

  auto result = gen.generate(req, obs);
  if (ctx.cache) {
    const bool ok = result.ok() && result->stop_reason != StopReason::error;
    ctx.cache->finish(backend, gen, full_prompt, ok ? std::span<const int32_t>(result->tokens) : std::span<const int32_t>(), ok);
  }
  if (!result.ok()) {
    ctx.emit(failed(cmd.id, result.error().describe()));
    return;
  }
  GenerationFinished f;
  f.id = cmd.id;
  f.stop_reason = result->stop_reason;
  f.error = result->error;
  f.note = result->note;
  f.parts = parse_reply(stream.raw(), thinking_prompted);
  f.parts.in_thinking = false;  // the reply ended; an unclosed think block stays thinking
  f.text = std::move(result->text);
  f.stats = result->stats;
  f.stats.prompt_tokens = started.prompt_tokens;  // the generator counted the prefilled part only
  f.stats.prompt_reused = reused;
  f.mtp_used = result->mtp_used;
  f.backend = facts.backend.name;
  f.kernel = describe_model(engine, kernels).kernel_variant();  // a kernel switch mid-reply shows here
  f.context_used = backend.position();
  f.context_size = backend.n_ctx();
  ctx.emit(std::move(f));
}

}  // namespace qc
