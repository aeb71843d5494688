// `generate` (one prompt, text on stdout, a stats line last on stderr) and `chat` (an interactive
// terminal conversation through the chat template).
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "generate/generator.h"
#include "tokenizer/chat_format.h"

namespace qc::cli {
namespace {

std::vector<app::OptionSpec> sampling_specs() {
  auto s = engine_option_specs();
  const std::vector<app::OptionSpec> more = {
      {"max-tokens", true, "most tokens to generate (default 128)"},
      {"seed", true, "sampling seed (default 0)"},
      {"temperature", true, "0 = greedy (default 0.7)"},
      {"top-k", true, "keep the k most likely tokens, 0 = off (default 20)"},
      {"top-p", true, "nucleus mass, 1 = off (default 0.8)"},
      {"min-p", true, "drop tokens below min-p x the top probability (default 0)"},
      {"presence-penalty", true, "subtracted from seen tokens' logits (default 0)"},
      {"repeat-penalty", true, "divides seen tokens' positive logits (default 1 = off)"},
      {"mtp", true, "on|off: speculative decoding with the model's MTP block (default off)"},
      {"draft", true, "MTP draft length 1..3 (default 1)"},
  };
  s.insert(s.end(), more.begin(), more.end());
  return s;
}

Result<SamplerParams> sampler_params(const app::Args& a) {
  SamplerParams p;
  QC_ASSIGN(const double t, a.get_double("temperature", p.temperature, 0.0, 100.0));
  QC_ASSIGN(const long long k, a.get_int("top-k", p.top_k, 0, 1 << 30));
  QC_ASSIGN(const double tp, a.get_double("top-p", p.top_p, 0.0, 1.0));
  QC_ASSIGN(const double mp, a.get_double("min-p", p.min_p, 0.0, 1.0));
  QC_ASSIGN(const double pp, a.get_double("presence-penalty", p.presence_penalty, -100.0, 100.0));
  QC_ASSIGN(const double rp, a.get_double("repeat-penalty", p.repetition_penalty, 0.01, 100.0));
  QC_ASSIGN(const long long seed, a.get_int("seed", 0, 0, (1ll << 62)));
  p.temperature = static_cast<float>(t);
  p.top_k = static_cast<int>(k);
  p.top_p = static_cast<float>(tp);
  p.min_p = static_cast<float>(mp);
  p.presence_penalty = static_cast<float>(pp);
  p.repetition_penalty = static_cast<float>(rp);
  p.seed = static_cast<uint64_t>(seed);
  QC_TRY(p.validate());
  return p;
}

Result<MtpOptions> mtp_options(const app::Args& a) {
  MtpOptions m;
  const std::string on = a.get_or("mtp", "off");
  if (on != "on" && on != "off") return make_error("--mtp: expected on or off, got \"" + on + "\"");
  m.enabled = on == "on";
  QC_ASSIGN(const long long d, a.get_int("draft", 1, 1, kMaxDraftLen));
  m.draft_len = static_cast<int>(d);
  return m;
}

std::string stats_line(const GenerateResult& r, const Backend& b, uint64_t bytes_per_token) {
  const GenerationStats& s = r.stats;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "tokens=%d prompt=%d decode=%.2f tok/s prefill=%.1f tok/s ttft=%.0f ms backend=%s stop=%s "
                "logits_hash=%s",
                s.generated_tokens, s.prompt_tokens, s.decode_tok_per_s, s.prefill_tok_per_s,
                s.time_to_first_token_s * 1e3, b.info().name.c_str(), to_string(r.stop_reason),
                s.final_logits_hash.c_str());
  std::string line = buf;
  if (s.mtp_draft_len > 0) {
    line += " mtp_accept=";
    for (int j = 0; j < s.mtp_draft_len; ++j) {
      std::snprintf(buf, sizeof buf, "%s%.2f", j ? "/" : "", s.mtp_acceptance(j));
      line += buf;
    }
    // Verification passes and re-runs (0 where the backend rolls back with commit(m)).
    std::snprintf(buf, sizeof buf, " decode_passes=%lld rerun_passes=%lld",
                  static_cast<long long>(s.decode_steps), static_cast<long long>(s.rerun_passes));
    line += buf;
  }
  // Weight bytes per decoded token over the decode time (MTP passes read them once for several tokens, so
  // this can pass the ceiling with MTP on: it is the rate a plain decode would need for the same speed).
  const double gbs = static_cast<double>(bytes_per_token) * s.decode_tok_per_s / 1e9;
  std::snprintf(buf, sizeof buf, " weights=%.1f GB/s", gbs);
  line += buf;
  if (const double ceiling = b.info().read_ceiling_gbs; ceiling > 0) {
    std::snprintf(buf, sizeof buf, " ceiling=%.0f GB/s (%.0f%%)", ceiling, 100.0 * gbs / ceiling);
    line += buf;
  }
  return line;
}

}  // namespace

Status cmd_generate(int argc, char** argv) {
  bool help = false;
  auto specs = sampling_specs();
  specs.push_back({"prompt", true, "the prompt text (raw completion unless --chat)"});
  specs.push_back({"chat", false, "wrap the prompt in the chat template as a user turn (thinking off)"});
  QC_ASSIGN(app::Args args, parse_or_help(argc, argv, "qwenchat-cli generate --model F --prompt TEXT [options]", specs, &help));
  if (help) return {};
  QC_ASSIGN(const std::string prompt, args.require("prompt"));
  QC_ASSIGN(EngineOptions eo, engine_options(args));
  GenerateRequest req;
  QC_ASSIGN(req.sampler, sampler_params(args));
  QC_ASSIGN(req.mtp, mtp_options(args));
  QC_ASSIGN(const long long max_tokens, args.get_int("max-tokens", 128, 0, 1 << 24));
  req.max_new_tokens = static_cast<int>(max_tokens);
  QC_ASSIGN(auto engine, Engine::open(eo));
  report_context_cap(*engine);
  if (const std::string note = engine->backend().info().note; !note.empty())
    std::fprintf(stderr, "note: %s\n", note.c_str());
  const Tokenizer& tok = engine->tokenizer();
  if (args.has("chat")) {
    ChatRenderOptions ro;
    ro.thinking = false;
    QC_ASSIGN(req.prompt, encode_chat(tok, {{"user", prompt, ""}}, ro));
  } else {
    QC_ASSIGN(req.prompt, tok.encode(prompt, /*parse_special=*/true));
  }
  if (req.prompt.empty()) return make_error("--prompt: the prompt encodes to no tokens");
  req.stop_tokens = tok.special().stop;
  Generator gen(engine->backend(), tok);
  GenerateObserver obs;
  obs.on_token = [](const TokenEvent& e) {
    std::fwrite(e.text.data(), 1, e.text.size(), stdout);
    std::fflush(stdout);
  };
  obs.on_text_tail = [](std::string_view t) { std::fwrite(t.data(), 1, t.size(), stdout); };
  QC_ASSIGN(const GenerateResult r, gen.generate(req, obs));
  std::printf("\n");
  std::fflush(stdout);
  if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
  if (r.stop_reason == StopReason::error) return make_error("generation failed: " + r.error);
  std::fprintf(stderr, "%s\n", stats_line(r, engine->backend(), engine->model().bytes_per_token()).c_str());
  return {};
}

Status cmd_chat(int argc, char** argv) {
  bool help = false;
  auto specs = sampling_specs();
  specs.push_back({"system", true, "system prompt"});
  specs.push_back({"thinking", true, "on|off (default off)"});
  QC_ASSIGN(app::Args args, parse_or_help(argc, argv, "qwenchat-cli chat --model F [options]", specs, &help));
  if (help) return {};
  QC_ASSIGN(EngineOptions eo, engine_options(args));
  GenerateRequest req;
  QC_ASSIGN(req.sampler, sampler_params(args));
  QC_ASSIGN(req.mtp, mtp_options(args));
  QC_ASSIGN(const long long max_tokens, args.get_int("max-tokens", 512, 1, 1 << 24));
  req.max_new_tokens = static_cast<int>(max_tokens);
  ChatRenderOptions ro;
  ro.system_prompt = args.get_or("system", "");
  const std::string thinking = args.get_or("thinking", "off");
  if (thinking != "on" && thinking != "off") return make_error("--thinking: expected on or off");
  ro.thinking = thinking == "on";
  QC_ASSIGN(auto engine, Engine::open(eo));
  report_context_cap(*engine);
  const Tokenizer& tok = engine->tokenizer();
  req.stop_tokens = tok.special().stop;
  std::fprintf(stderr, "qwenchat chat: %s on %s. Empty line or Ctrl+D quits.\n",
               engine->model().config().name.c_str(), engine->backend().info().name.c_str());
  std::vector<ChatMessage> history;
  std::string line;
  while (true) {
    std::fprintf(stderr, "> ");
    if (!std::getline(std::cin, line) || line.empty()) break;
    history.push_back({"user", line, ""});
    // The whole conversation is re-encoded each turn: the template drops earlier thinking, so the
    // prompt is not a pure extension of the previous context. Small models make this cheap on the CPU.
    // A turn that cannot be answered (too long for the context, invalid text) is reported and taken
    // back; the session and the conversation so far go on.
    auto prompt = encode_chat(tok, history, ro);
    const int64_t need = prompt.ok() ? static_cast<int64_t>(prompt->size()) + req.max_new_tokens : 0;
    if (!prompt.ok() || need > engine->backend().n_ctx()) {
      const std::string why = !prompt.ok() ? prompt.error().describe()
                                           : "the conversation and the reply need " + std::to_string(need) +
                                                 " tokens, but the context holds " +
                                                 std::to_string(engine->backend().n_ctx()) +
                                                 " (shorten the message, lower --max-tokens or raise --ctx)";
      std::fprintf(stderr, "qwenchat chat: that message was not sent: %s\n", why.c_str());
      history.pop_back();
      continue;
    }
    req.prompt = std::move(*prompt);
    engine->backend().reset();
    Generator gen(engine->backend(), tok);
    std::string raw;
    GenerateObserver obs;
    obs.on_token = [&](const TokenEvent& e) {
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
      raw += tok.token_bytes(e.token);
    };
    QC_ASSIGN(const GenerateResult r, gen.generate(req, obs));
    std::printf("\n");
    std::fflush(stdout);  // before the stats line on stderr
    if (r.stop_reason == StopReason::error) return make_error("generation failed: " + r.error);
    const ReplyParts parts = parse_reply(r.text, ro.thinking);
    history.push_back({"assistant", parts.content, parts.thinking});
    std::fprintf(stderr, "[%s]\n", stats_line(r, engine->backend(), engine->model().bytes_per_token()).c_str());
  }
  return {};
}

}  // namespace qc::cli
