// Test doubles for the generator: a Backend whose "model" is a hash chain over (token, position), so its
// logits are a deterministic function of the whole prefix (a wrong snapshot/restore or a token run at the
// wrong position changes every later row), with an MTP block that is right a given percentage of the time
// and records every cache entry it is asked to write.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "generate/backend.h"
#include "generate/generator.h"

namespace qc::testing {

inline uint64_t mix64(uint64_t z) {  // SplitMix64 finaliser
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline constexpr uint64_t kInitialState = 0x1234567887654321ull;

// State after running `token` at `pos` on top of state `h`.
inline uint64_t next_state(uint64_t h, int32_t token, int pos) {
  return mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(token)) * 0xD6E8FEB86659FD93ull) ^
               (static_cast<uint64_t>(pos) << 40));
}

struct FakeOptions {
  int n_vocab = 48;
  int n_ctx = 256;
  bool has_mtp = true;
  int mtp_accept_percent = 60;  // how often the MTP draft is the main model's greedy choice
  // When set, the logits row at position p peaks at script(p) (the token predicted for p+1); otherwise
  // rows are pseudo-random functions of the state.
  std::function<int32_t(int)> script;
  int fail_on_forward_call = -1;  // 1-based forward() call that returns an error, -1 = never
  int max_batch = 1 << 20;        // most tokens one forward() takes (the generator must chunk to it)
  bool nan_logits = false;
  // Most tokens forward_speculative() takes (keeps the state after every position for commit()); 0 = no
  // support, the generator restores a snapshot and re-runs.
  int speculative_tokens = 0;
  // Most tokens prefill() takes (Backend's prompt path: last row only, MTP entries written by the
  // backend); 0 = no prompt path.
  int prefill_rows = 0;
  int prefill_grid = 1;  // Backend::prefill_grid()
};

class FakeSnapshot : public StateSnapshot {
 public:
  FakeSnapshot(int pos, uint64_t h) : pos_(pos), h_(h) {}
  int position() const override { return pos_; }
  uint64_t state() const { return h_; }

 private:
  int pos_;
  uint64_t h_;
};

class FakeBackend : public Backend {
 public:
  static constexpr int kEmbd = 4;  // the 64-bit state as four exact 16-bit floats

  explicit FakeBackend(FakeOptions o) : o_(std::move(o)) {
    cfg_.architecture = "fake";
    cfg_.n_vocab = o_.n_vocab;
    cfg_.n_embd = kEmbd;
    cfg_.n_mtp = o_.has_mtp ? 1 : 0;
    reset();
  }

  BackendInfo info() const override { return {"fake", "test", 0}; }
  const ModelConfig& config() const override { return cfg_; }
  int n_ctx() const override { return o_.n_ctx; }
  int position() const override { return pos_; }
  int max_batch() const override { return o_.max_batch; }
  void reset() override {
    pos_ = 0;
    h_ = kInitialState;
    spec_n_ = 0;
  }

  // The logits row of the main model in state h (after running the token at pos).
  void row(uint64_t h, int pos, float* out) const {
    const int v = o_.n_vocab;
    if (o_.nan_logits) {
      for (int i = 0; i < v; ++i) out[i] = std::numeric_limits<float>::quiet_NaN();
      return;
    }
    if (o_.script) {
      for (int i = 0; i < v; ++i) out[i] = -1.0f;
      out[o_.script(pos)] = 5.0f;
      return;
    }
    for (int i = 0; i < v; ++i)  // 24-bit values in [-4, 4)
      out[i] = static_cast<float>(mix64(h ^ (static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull)) >> 40) *
                   (8.0f / 16777216.0f) -
               4.0f;
  }
  int32_t greedy(uint64_t h, int pos) const {
    std::vector<float> r(static_cast<size_t>(o_.n_vocab));
    row(h, pos, r.data());
    int32_t best = 0;
    for (int i = 1; i < o_.n_vocab; ++i)
      if (r[static_cast<size_t>(i)] > r[static_cast<size_t>(best)]) best = i;
    return best;
  }

  Result<StepOutput> forward(std::span<const int32_t> tokens, int pos) override {
    ++forward_calls;
    if (forward_calls == o_.fail_on_forward_call) return make_error("fake backend: injected failure");
    if (spec_n_ > 0) return make_error("fake forward: a speculative forward is pending");
    if (pos != pos_)
      return make_error("fake forward: pos " + std::to_string(pos) + " != " + std::to_string(pos_));
    if (pos + static_cast<int>(tokens.size()) > o_.n_ctx) return make_error("fake forward: context full");
    if (static_cast<int>(tokens.size()) > o_.max_batch) return make_error("fake forward: more than max_batch tokens");
    const size_t n = tokens.size(), v = static_cast<size_t>(o_.n_vocab);
    kept_.clear();
    logits_.assign(n * v, 0.0f);
    hidden_.assign(n * kEmbd, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      if (tokens[i] < 0 || tokens[i] >= o_.n_vocab) return make_error("fake forward: token out of range");
      h_ = next_state(h_, tokens[i], pos_);
      kept_.push_back(h_);
      record(token_at, pos_, tokens[i]);
      record(state_at, pos_, h_);
      row(h_, pos_, logits_.data() + i * v);
      encode(h_, hidden_.data() + i * kEmbd);
      ++pos_;
    }
    tokens_run += static_cast<int64_t>(n);
    return StepOutput{static_cast<int>(n), o_.n_vocab, kEmbd, logits_, hidden_};
  }

  // The prompt path per its contract (backend.h): forward()'s states, the last row only, and the MTP
  // entries the chunk knows the next token of, recorded like mtp_forward() records them.
  int prefill_rows() const override { return o_.prefill_rows; }
  int prefill_grid() const override { return o_.prefill_grid; }
  Result<StepOutput> prefill(std::span<const int32_t> tokens, int pos, const PrefillMtp& mtp) override {
    ++prefill_calls;
    prefill_starts.push_back(pos);
    if (o_.prefill_rows == 0) return make_error("fake prefill: no prompt path");
    if (tokens.empty() || static_cast<int>(tokens.size()) > o_.prefill_rows)
      return make_error("fake prefill: chunk size out of range");
    if (mtp.entries && !mtp.prev_hidden.empty() && mtp.prev_hidden.size() != kEmbd)
      return make_error("fake prefill: bad prev_hidden size");
    const int calls = forward_calls;
    auto out = forward(tokens, pos);
    forward_calls = calls;
    if (!out.ok()) return out;
    const size_t n = tokens.size(), v = static_cast<size_t>(o_.n_vocab);
    if (mtp.entries && o_.has_mtp) {
      if (!mtp.prev_hidden.empty()) {
        record(mtp_token, pos - 1, tokens[0]);
        record(mtp_state, pos - 1, decode(mtp.prev_hidden.data()));
        prev_entries += 1;
      }
      for (size_t i = 0; i + 1 < n; ++i) {
        record(mtp_token, pos + static_cast<int>(i), tokens[i + 1]);
        record(mtp_state, pos + static_cast<int>(i), kept_[i]);
      }
      if (mtp.next_token >= 0) {
        record(mtp_token, pos + static_cast<int>(n) - 1, mtp.next_token);
        record(mtp_state, pos + static_cast<int>(n) - 1, kept_[n - 1]);
      }
    }
    last_logits_.assign(logits_.end() - static_cast<std::ptrdiff_t>(v), logits_.end());
    last_hidden_.assign(hidden_.end() - kEmbd, hidden_.end());
    return StepOutput{1, o_.n_vocab, kEmbd, last_logits_, last_hidden_};
  }

  int max_speculative_tokens() const override { return o_.speculative_tokens; }
  Result<StepOutput> forward_speculative(std::span<const int32_t> tokens, int pos) override {
    if (spec_n_ > 0) return make_error("fake forward_speculative: a speculative forward is pending");
    if (static_cast<int>(tokens.size()) > o_.speculative_tokens)
      return make_error("fake forward_speculative: more than max_speculative_tokens");
    const int p0 = pos_;
    auto out = forward(tokens, pos);
    if (!out.ok()) return out;
    ++speculative_calls;
    spec_n_ = static_cast<int>(tokens.size());
    spec_pos_ = p0;
    return out;
  }
  Status commit(int m) override {
    ++commits;
    if (spec_n_ == 0) return make_error("fake commit: nothing pending");
    if (m < 1 || m > spec_n_) return make_error("fake commit: m out of range");
    h_ = kept_[static_cast<size_t>(m - 1)];
    pos_ = spec_pos_ + m;
    spec_n_ = 0;
    return Status::success();
  }

  bool has_mtp() const override { return o_.has_mtp; }
  Result<StepOutput> mtp_forward(int32_t token, std::span<const float> hidden, int pos) override {
    ++mtp_calls;
    if (!o_.has_mtp) return make_error("fake: no MTP block");
    if (spec_n_ > 0) return make_error("fake mtp_forward: a speculative forward is pending");
    if (hidden.size() != kEmbd) return make_error("fake mtp: bad hidden size");
    const uint64_t hp = decode(hidden.data());
    record(mtp_token, pos, token);
    record(mtp_state, pos, hp);
    const uint64_t h1 = next_state(hp, token, pos + 1);  // what the main model would hold at pos+1
    const int32_t right = greedy(h1, pos + 1);
    const bool ok = static_cast<int>(mix64(h1 ^ 0xABCDEFull) % 100) < o_.mtp_accept_percent;
    const int32_t draft =
        ok ? right
           : static_cast<int32_t>((right + 1 + static_cast<int32_t>(mix64(h1) % (o_.n_vocab - 1))) %
                                  o_.n_vocab);
    mtp_logits_.assign(static_cast<size_t>(o_.n_vocab), 0.0f);
    mtp_logits_[static_cast<size_t>(draft)] = 1.0f;
    mtp_hidden_.assign(kEmbd, 0.0f);
    encode(h1, mtp_hidden_.data());
    return StepOutput{1, o_.n_vocab, kEmbd, mtp_logits_, mtp_hidden_};
  }

  std::unique_ptr<StateSnapshot> snapshot() const override {
    if (spec_n_ > 0) return nullptr;
    return std::make_unique<FakeSnapshot>(pos_, h_);
  }
  Status restore(const StateSnapshot& s) override {
    ++restores;
    if (spec_n_ > 0) return make_error("fake restore: a speculative forward is pending");
    const auto* f = dynamic_cast<const FakeSnapshot*>(&s);
    if (f == nullptr) return make_error("fake restore: foreign snapshot");
    pos_ = f->position();
    h_ = f->state();
    return Status::success();
  }
  std::span<const float> layer_norms() const override { return {}; }

  uint64_t state() const { return h_; }

  // Records (per position, rewritten when a position is run again).
  int forward_calls = 0, mtp_calls = 0, restores = 0, speculative_calls = 0, commits = 0;
  int prefill_calls = 0, prev_entries = 0;
  std::vector<int> prefill_starts;  // pos of every prefill() call
  int64_t tokens_run = 0;
  std::vector<int32_t> token_at;
  std::vector<uint64_t> state_at;
  std::vector<int32_t> mtp_token;
  std::vector<uint64_t> mtp_state;

 private:
  template <class T>
  static void record(std::vector<T>& v, int pos, T value) {
    if (v.size() <= static_cast<size_t>(pos)) v.resize(static_cast<size_t>(pos) + 1, T{});
    v[static_cast<size_t>(pos)] = value;
  }
  static void encode(uint64_t h, float* out) {
    for (int i = 0; i < kEmbd; ++i) out[i] = static_cast<float>((h >> (16 * i)) & 0xffffu);
  }
  static uint64_t decode(const float* in) {
    uint64_t h = 0;
    for (int i = 0; i < kEmbd; ++i) h |= static_cast<uint64_t>(in[i]) << (16 * i);
    return h;
  }

  FakeOptions o_;
  ModelConfig cfg_;
  int pos_ = 0;
  uint64_t h_ = kInitialState;
  std::vector<uint64_t> kept_;  // state after each token of the last forward call
  int spec_n_ = 0, spec_pos_ = 0;
  std::vector<float> logits_, hidden_, mtp_logits_, mtp_hidden_, last_logits_, last_hidden_;
};

// Token i's text is "<i>" except where `bytes` overrides it; `control` ids produce no text.
inline TokenText fake_text(std::vector<std::string> bytes = {}, std::vector<int32_t> control = {}) {
  return TokenText{
      [bytes](int32_t id) {
        if (id >= 0 && static_cast<size_t>(id) < bytes.size() && !bytes[static_cast<size_t>(id)].empty())
          return bytes[static_cast<size_t>(id)];
        return "<" + std::to_string(id) + ">";
      },
      [control](int32_t id) {
        for (const int32_t c : control)
          if (c == id) return true;
        return false;
      }};
}

// Main-model states h_q for a token sequence x_0 .. x_{n-1} (h_q after running x_q at position q).
inline std::vector<uint64_t> true_states(const std::vector<int32_t>& x) {
  std::vector<uint64_t> h(x.size());
  uint64_t s = kInitialState;
  for (size_t q = 0; q < x.size(); ++q) h[q] = s = next_state(s, x[q], static_cast<int>(q));
  return h;
}

}  // namespace qc::testing
