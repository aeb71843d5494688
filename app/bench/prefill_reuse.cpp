#include "prefill_reuse.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <random>

#include "generate/generator.h"
#include "runtime/prefix_cache.h"

namespace qc::bench_app {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::vector<int32_t> random_tokens(int n, int n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(0, std::max(1, std::min(n_vocab, 100000)) - 1);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& x : t) x = d(rng);
  return t;
}

struct Timed {
  double ttft_s = 0.0;     // from before the state was prepared to the first token
  double prepare_s = 0.0;  // of which the prefix cache's restore (or the reset)
  double prefill_s = 0.0;  // and the generator's prompt forward passes (GenerationStats::prefill_seconds)
  int reused = 0;
  std::string error;
};

// One reply of a single token to `prompt`: through `cache` when given (prepare, checkpoint at
// `checkpoint` tokens of the whole prompt when > 0, finish), else from a reset backend.
Timed reply(Backend& be, PrefixCache* cache, const std::vector<int32_t>& prompt, int checkpoint,
            uint64_t conversation = 1) {
  Timed t;
  const auto t0 = Clock::now();
  Generator gen(be, TokenText{});
  GenerateRequest req;
  req.prompt = prompt;
  req.max_new_tokens = 1;
  req.sampler = SamplerParams::greedy();
  if (cache) {
    auto r = cache->prepare(be, gen, prompt, false, conversation);
    if (!r.ok()) {
      t.error = r.error().describe();
      return t;
    }
    t.reused = *r;
    req.prompt.erase(req.prompt.begin(), req.prompt.begin() + t.reused);
    const int kept = be.prefill_grid_floor(checkpoint);  // where the cache can keep a state
    if (kept > t.reused) req.checkpoint = kept - t.reused;
  } else {
    be.reset();
  }
  t.prepare_s = std::chrono::duration<double>(Clock::now() - t0).count();
  Clock::time_point first{};
  GenerateObserver obs;
  obs.on_token = [&](const TokenEvent& e) {
    if (e.index == 0) first = Clock::now();
  };
  const std::span<const int32_t> all(prompt);
  if (cache && req.checkpoint > 0)
    obs.on_checkpoint = [&](std::span<const float> hidden) {
      cache->checkpoint(be, all.first(static_cast<size_t>(checkpoint)), hidden);
    };
  auto res = gen.generate(req, obs);
  if (!res.ok() || res->stop_reason == StopReason::error) {
    t.error = res.ok() ? res->error : res.error().describe();
    if (cache) cache->clear();
    return t;
  }
  if (cache) cache->finish(be, gen, prompt, res->tokens, true);
  t.ttft_s = std::chrono::duration<double>(first - t0).count();
  t.prefill_s = res->stats.prefill_seconds;
  return t;
}

}  // namespace

json measure_prefill_and_reuse(Backend& be, const PrefillReuseOptions& o,
                               const std::function<bool(const std::string&)>& out_of_time) {
  json out = json::object();
  const int V = be.config().n_vocab;
  if (be.prefill_rows() > 0)
    std::printf("\n== prefill (the prompt path, chunks of %d) and conversation state reuse ==\n", be.prefill_rows());
  else
    std::printf("\n== prefill (the prompt through forward() in chunks of %d) and conversation state reuse ==\n",
                be.max_batch());
  json pre = json::array();
  reply(be, nullptr, random_tokens(64, V, 1), 0);  // warm-up: graphs, first launches
  for (int n : o.prefill) {
    if (n + 1 > be.n_ctx()) {
      std::printf("  prefill %5d: skipped (context %d)\n", n, be.n_ctx());
      continue;
    }
    if (out_of_time("prefill " + std::to_string(n))) break;
    const Timed t = reply(be, nullptr, random_tokens(n, V, 2), 0);
    if (!t.error.empty()) {
      std::printf("  prefill %5d: ERROR %s\n", n, t.error.c_str());
      continue;
    }
    std::printf("  prefill %5d tokens: %8.1f ms, %7.0f tok/s\n", n, t.ttft_s * 1e3, n / t.ttft_s);
    pre.push_back({{"tokens", n}, {"seconds", t.ttft_s}, {"tok_per_s", n / t.ttft_s}});
  }
  out["prefill"] = pre;

  const int H = o.history, M = o.message;
  if (H + 2 * M + 1 > be.n_ctx()) {
    std::printf("  reuse: skipped (history %d + messages need a context above %d)\n", H, be.n_ctx());
    return out;
  }
  if (out_of_time("reuse")) return out;
  const std::vector<int32_t> history = random_tokens(H, V, 3), message = random_tokens(M, V, 4),
                             message2 = random_tokens(M, V, 5);
  PrefixCache cache(16ull << 30);
  // The previous turn: the history and one reply token, keeping the state at the turn boundary.
  std::vector<int32_t> turn = history;
  turn.push_back(7);
  const Timed prev = reply(be, &cache, turn, H);
  std::vector<int32_t> prompt = history;
  prompt.insert(prompt.end(), message.begin(), message.end());
  const Timed kept = reply(be, &cache, prompt, H);  // the re-rendered reply differs: the snapshot at H
  std::vector<int32_t> longer = prompt;
  longer.insert(longer.end(), message2.begin(), message2.end());
  const Timed live = reply(be, &cache, longer, 0);  // extends the live state
  // Another conversation (its first reply parks this one: the state at H with its KV entries, to host
  // memory), then back: the parked state comes back instead of H tokens of prefill.
  std::vector<int32_t> other = random_tokens(M, V, 6);
  const Timed away = reply(be, &cache, other, M - 1, 2);
  std::vector<int32_t> back = history;
  back.insert(back.end(), message2.begin(), message2.end());
  const Timed returned = reply(be, &cache, back, H, 1);
  Timed fresh;
  if (!out_of_time("reuse: the fresh prefill")) fresh = reply(be, nullptr, prompt, 0);
  for (const Timed* t : std::initializer_list<const Timed*>{&prev, &kept, &live, &away, &returned, &fresh})
    if (!t->error.empty()) std::printf("  reuse: ERROR %s\n", t->error.c_str());
  std::printf("  time to first token of a %d-token message after %d tokens: %.1f ms from scratch, %.1f ms "
              "from the kept state (%d reused, %.0fx), %.1f ms continuing the live state (%d reused)\n",
              M, H, fresh.ttft_s * 1e3, kept.ttft_s * 1e3, kept.reused,
              kept.ttft_s > 0 ? fresh.ttft_s / kept.ttft_s : 0.0, live.ttft_s * 1e3, live.reused);
  std::printf("  another conversation's first reply (%d tokens, parking this one's %d-token state with its KV "
              "entries): %.1f ms; back to this one: %.1f ms (%d reused)\n",
              M, H, away.ttft_s * 1e3, returned.ttft_s * 1e3, returned.reused);
  std::printf("  where the kept-state time goes: restore %.1f ms, prefill of the %d new tokens %.1f ms, the rest "
              "(first token, checkpoint) %.1f ms\n",
              kept.prepare_s * 1e3, M, kept.prefill_s * 1e3, (kept.ttft_s - kept.prepare_s - kept.prefill_s) * 1e3);
  const PrefixCacheStats cs = cache.stats();
  out["reuse"] = {{"history", H},
                  {"message", M},
                  {"fresh_ttft_s", fresh.ttft_s},
                  {"snapshot_ttft_s", kept.ttft_s},
                  {"snapshot_restore_s", kept.prepare_s},
                  {"snapshot_prefill_s", kept.prefill_s},
                  {"snapshot_reused", kept.reused},
                  {"live_ttft_s", live.ttft_s},
                  {"live_reused", live.reused},
                  {"previous_turn_ttft_s", prev.ttft_s},
                  {"other_conversation_ttft_s", away.ttft_s},
                  {"switch_back_ttft_s", returned.ttft_s},
                  {"switch_back_reused", returned.reused},
                  {"snapshots", cs.snapshots},
                  {"parked", cs.parked},
                  {"snapshot_bytes", cs.snapshot_bytes}};
  return out;
}

}  // namespace qc::bench_app
