#include "runtime/prefix_cache.h"

#include <algorithm>

namespace qc {
namespace {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

Result<int> PrefixCache::prepare(Backend& backend, Generator& generator, std::span<const int32_t> prompt,
                                 bool mtp, uint64_t conversation) {
  if (prompt.empty()) return make_error("prefix cache: the prompt is empty");
  run_mtp_ = mtp;
  cleared_in_run_ = false;
  const size_t n = prompt.size();
  // Someone else moved the backend (a test, an error path): the live record no longer describes it.
  if (live_valid_ && static_cast<size_t>(backend.position()) != live_.size()) live_valid_ = false;
  // Another conversation (0, unknown, counts as one: an API request between two of the window's replies).
  if (conversation_ != 0 && conversation != conversation_ && live_valid_ && budget_ > 0) park(backend);
  conversation_ = conversation;
  const size_t shared = live_valid_ ? common_prefix(live_, prompt) : 0;

  // 1. The prompt extends the live state (the next message; the live hidden feeds MTP's entry there).
  const bool live_hidden_ok = !mtp || live_.empty() || !live_hidden_.empty();
  const int live_n = static_cast<int>(live_.size());
  const bool on_grid = backend.prefill_grid_floor(live_n) == live_n;  // a later call starts on the grid
  if (live_valid_ && !live_decoded_ && on_grid && !live_.empty() && shared == live_.size() && shared < n &&
      (!mtp || live_mtp_) && live_hidden_ok) {
    generator.set_context_hidden(static_cast<int>(shared) - 1, live_hidden_);
    run_mtp_ = mtp && live_mtp_;
    return static_cast<int>(shared);
  }

  // 2. The longest snapshot inside the shared prefix (edit, regenerate, a re-rendered previous reply).
  Entry* best = nullptr;
  for (Entry& e : entries_) {
    if (e.tokens.size() > shared || e.tokens.size() >= n) continue;
    if (mtp && (!e.mtp || e.hidden.empty())) continue;
    if (common_prefix(e.tokens, prompt) != e.tokens.size()) continue;
    if (!best || e.tokens.size() > best->tokens.size()) best = &e;
  }
  // A parked conversation's state, KV entries included: usable whatever the caches hold now.
  Entry* parked = nullptr;
  for (Entry& e : parked_) {
    if (e.tokens.size() >= n || (best && e.tokens.size() <= best->tokens.size())) continue;
    if (mtp && (!e.mtp || e.hidden.empty())) continue;
    if (common_prefix(e.tokens, prompt) != e.tokens.size()) continue;
    if (!parked || e.tokens.size() > parked->tokens.size()) parked = &e;
  }
  if (parked) {
    if (backend.restore(*parked->snap).ok()) {
      parked->last_use = ++clock_;
      live_ = parked->tokens;
      live_hidden_ = parked->hidden;
      live_mtp_ = parked->mtp;
      live_decoded_ = false;
      live_valid_ = true;
      generator.set_context_hidden(static_cast<int>(live_.size()) - 1, live_hidden_);
      return static_cast<int>(live_.size());
    }
    parked_.clear();
  }
  if (best) {
    if (backend.restore(*best->snap).ok()) {
      best->last_use = ++clock_;
      live_ = best->tokens;
      live_hidden_ = best->hidden;
      live_mtp_ = best->mtp;
      live_decoded_ = false;
      live_valid_ = true;
      generator.set_context_hidden(static_cast<int>(live_.size()) - 1, live_hidden_);
      return static_cast<int>(live_.size());
    }
    // A snapshot that no longer restores (another backend, an older epoch) is useless from now on.
    entries_.clear();
  }

  // 3. From scratch. A reset ends the backend's epoch: no snapshot taken before it can be restored.
  backend.reset();
  entries_.clear();
  live_.clear();
  live_hidden_.clear();
  live_mtp_ = true;  // nothing held, nothing missing
  live_decoded_ = false;
  live_valid_ = true;
  generator.set_context_hidden(-1, {});
  return 0;
}

void PrefixCache::checkpoint(const Backend& backend, std::span<const int32_t> tokens, std::span<const float> hidden) {
  if (budget_ == 0 || cleared_in_run_ || tokens.empty() || static_cast<size_t>(backend.position()) != tokens.size()) return;
  const bool mtp = run_mtp_ && live_mtp_;
  // The same tokens again (a regenerated reply): the new copy replaces the old one.
  std::erase_if(entries_, [&](const Entry& e) { return std::ranges::equal(e.tokens, tokens); });
  std::unique_ptr<StateSnapshot> snap = backend.snapshot();
  if (!snap || snap->bytes() > budget_) return;  // no memory for it, or bigger than the whole budget
  evict_to(snap->bytes());
  Entry e;
  e.tokens.assign(tokens.begin(), tokens.end());
  e.snap = std::move(snap);
  e.hidden.assign(hidden.begin(), hidden.end());
  e.mtp = mtp;
  e.last_use = ++clock_;
  entries_.push_back(std::move(e));
}

void PrefixCache::finish(Backend& backend, const Generator& generator, std::span<const int32_t> prompt,
                         std::span<const int32_t> generated, bool ok) {
  const size_t pos = static_cast<size_t>(std::max(backend.position(), 0));
  if (!ok || cleared_in_run_ || pos > prompt.size() + generated.size()) {
    clear();
    backend.reset();
    return;
  }
  live_mtp_ = live_mtp_ && run_mtp_;
  live_decoded_ = backend.prefill_rows() > 0 && pos > prompt.size();
  live_.assign(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(std::min(pos, prompt.size())));
  if (pos > prompt.size())
    live_.insert(live_.end(), generated.begin(), generated.begin() + static_cast<std::ptrdiff_t>(pos - prompt.size()));
  if (pos > 0 && generator.context_hidden_pos() == static_cast<int>(pos) - 1)
    live_hidden_ = generator.context_hidden();
  else
    live_hidden_.clear();
  live_valid_ = true;
}

void PrefixCache::park(Backend& backend) {
  // The latest turn boundary of the live conversation: the longest snapshot inside the live tokens.
  Entry* turn = nullptr;
  for (Entry& e : entries_) {
    if (e.tokens.size() > live_.size() || common_prefix(e.tokens, live_) != e.tokens.size()) continue;
    if (!turn || e.tokens.size() > turn->tokens.size()) turn = &e;
  }
  if (!turn || !backend.restore(*turn->snap).ok()) return;
  live_ = turn->tokens;  // the backend holds exactly these now
  live_hidden_ = turn->hidden;
  live_mtp_ = turn->mtp;
  live_decoded_ = false;
  std::unique_ptr<StateSnapshot> snap = backend.snapshot_context();
  if (!snap || snap->bytes() > budget_) return;
  std::erase_if(parked_, [&](const Entry& e) { return e.conversation == conversation_; });
  evict_to(snap->bytes());  // may drop `turn`: live_ holds its tokens
  Entry e;
  e.tokens = live_;
  e.snap = std::move(snap);
  e.hidden = live_hidden_;
  e.mtp = live_mtp_;
  e.last_use = ++clock_;
  e.conversation = conversation_;
  parked_.push_back(std::move(e));
}

void PrefixCache::clear() {
  cleared_in_run_ = true;
  entries_.clear();
  parked_.clear();
  conversation_ = 0;
  live_valid_ = false;
  live_.clear();
  live_hidden_.clear();
  live_mtp_ = false;
  live_decoded_ = false;
}

PrefixCacheStats PrefixCache::stats() const {
  PrefixCacheStats s;
  s.snapshots = static_cast<int>(entries_.size());
  s.parked = static_cast<int>(parked_.size());
  for (const Entry& e : entries_) s.snapshot_bytes += e.snap->bytes();
  for (const Entry& e : parked_) s.snapshot_bytes += e.snap->bytes();
  s.live_tokens = live_valid_ ? static_cast<int>(live_.size()) : 0;
  return s;
}

void PrefixCache::evict_to(uint64_t bytes_needed) {
  uint64_t used = 0;
  for (const Entry& e : entries_) used += e.snap->bytes();
  for (const Entry& e : parked_) used += e.snap->bytes();
  auto older = [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; };
  while ((!entries_.empty() || !parked_.empty()) && used + bytes_needed > budget_) {
    auto a = std::min_element(entries_.begin(), entries_.end(), older);
    auto p = std::min_element(parked_.begin(), parked_.end(), older);
    const bool from_parked = a == entries_.end() || (p != parked_.end() && p->last_use < a->last_use);
    std::vector<Entry>& list = from_parked ? parked_ : entries_;
    auto it = from_parked ? p : a;
    used -= it->snap->bytes();
    list.erase(it);
  }
}

}  // namespace qc
