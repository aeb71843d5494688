// The decode loop and MTP speculation. Notation used in the comments below: x_q is the token at position
// q, the main model run on x_q gives logits_q (which predict x_{q+1}) and the post-norm hidden h_q. The
// "pending" token is the last emitted one: sampled, streamed, but not yet run, at P = backend.position().
//
// MTP cache (QWEN35.md section 6). The MTP block's entry at position q is computed from the triple
//   (token x_{q+1}, hidden h_q of the main model, pos q)
// and must exist for every position before a draft can attend to it. Who writes which entry:
//   - prefill: q = start .. start+n-2, triples (prompt[q-start+1], prefill hidden row, q); the entry at
//     start-1 too when this generator kept h_{start-1} from its previous call (continuing conversation);
//   - each decode step starts with the call for q = P-1: (pending x_P, h_{P-1}, P-1), which is both the
//     true cache entry and the first draft;
//   - chained drafts write speculative entries at P, P+1, ... from (draft, MTP output); they are
//     overwritten once the main model's hidden for those positions is known:
//   - after verification, q = P .. P+m-2 (the positions of the m-1 accepted tokens run besides the
//     pending one): triples (x_{q+1} = the accepted draft, h_q = verification hidden row q-P, q).
// Invariant at the top of each step: entries 0 .. P-2 hold true triples.
//
// Main-model rollback. A step with k drafts runs [x_P, d_1..d_k] in one forward pass and keeps m tokens
// (the pending one and the m-1 accepted drafts; the last emitted token is the new pending one). With a
// backend that supports it (max_speculative_tokens() >= k+1) the pass is forward_speculative(), which
// keeps the recurrent state after every position, and commit(m) selects the one after x_{P+m-1}: one
// weight pass per step whatever is rejected, rerun_passes stays 0. Otherwise the generator snapshots before
// the pass and, on a partial rejection, restores and re-runs the m tokens (a second weight pass). Both
// leave the backend at P+m with the state of exactly the kept tokens; the emitted tokens come from the
// verification pass's rows either way.
#include "generate/generator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Greedy draft from MTP logits: argmax, NaN never wins, ties to the lowest id.
int32_t argmax(std::span<const float> row) {
  int32_t best = 0;
  float best_x = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] > best_x) {
      best_x = row[i];
      best = static_cast<int32_t>(i);
    }
  }
  return best;
}

void copy_into(std::vector<float>& dst, size_t dst_offset, std::span<const float> src) {
  std::memcpy(dst.data() + dst_offset, src.data(), src.size() * sizeof(float));
}

}  // namespace

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::stop_token:
      return "stop_token";
    case StopReason::max_tokens:
      return "max_tokens";
    case StopReason::cancelled:
      return "cancelled";
    case StopReason::context_full:
      return "context_full";
    case StopReason::error:
      return "error";
  }
  return "unknown";
}

TokenText TokenText::from(const Tokenizer& tokenizer) {
  return TokenText{[&tokenizer](int32_t id) { return tokenizer.token_bytes(id); },
                   [&tokenizer](int32_t id) { return tokenizer.is_control(id); }};
}

// One generate() call: the request, its result, and buffers sized once at the start.
struct Generator::Run {
  Run(const GenerateRequest& rq, const GenerateObserver& ob, int vocab)
      : req(rq), obs(ob), sampler(rq.sampler, vocab) {}
  const GenerateRequest& req;
  const GenerateObserver& obs;
  GenerateResult res;
  Sampler sampler;
  Utf8Stream utf8;
  int n_vocab = 0, n_embd = 0, n_ctx = 0, start = 0;
  bool use_mtp = false;
  int k_max = 0;  // drafts per step (0 = plain decoding)
  bool done = false;
  int32_t pending = -1;
  std::vector<float> first_row;     // [n_vocab] last prefill logits row
  std::vector<float> last_row;      // [n_vocab] row the last emitted token was sampled from
  std::vector<float> hidden;        // [rows][n_embd] copies of forward hidden rows
  std::vector<float> draft_hidden;  // [n_embd] MTP output fed to the next chained draft
  std::vector<int32_t> batch;       // [k_max + 1] pending token + drafts
  Clock::time_point t0, t_first, t_last;

  void fail(std::string message) {
    res.stop_reason = StopReason::error;
    res.error = std::move(message);
    done = true;
  }
  void stop(StopReason r) {
    res.stop_reason = r;
    done = true;
  }
};

Generator::Generator(Backend& backend, TokenText text, GeneratorOptions options)
    : backend_(backend), text_(std::move(text)), options_(options) {}

Generator::Generator(Backend& backend, const Tokenizer& tokenizer, GeneratorOptions options)
    : Generator(backend, TokenText::from(tokenizer), options) {}

Status Generator::validate(const GenerateRequest& rq) const {
  QC_TRY(rq.sampler.validate());
  if (rq.max_new_tokens < 0)
    return make_error("generate: max_new_tokens must be >= 0, got " + std::to_string(rq.max_new_tokens));
  if (rq.mtp.enabled && (rq.mtp.draft_len < 1 || rq.mtp.draft_len > kMaxDraftLen))
    return make_error("generate: MTP draft_len must be in [1, " + std::to_string(kMaxDraftLen) + "], got " +
                      std::to_string(rq.mtp.draft_len));
  if (rq.checkpoint < 0 || (rq.checkpoint > 0 && static_cast<size_t>(rq.checkpoint) >= rq.prompt.size()))
    return make_error("generate: checkpoint must be 0 or in [1, " + std::to_string(rq.prompt.size()) +
                      "), got " + std::to_string(rq.checkpoint));
  if (options_.prefill_chunk < 1)
    return make_error("generate: prefill_chunk must be >= 1, got " + std::to_string(options_.prefill_chunk));
  const int n_vocab = backend_.config().n_vocab;
  if (n_vocab <= 0) return make_error("generate: backend reports n_vocab " + std::to_string(n_vocab));
  if (rq.prompt.empty()) return make_error("generate: the prompt is empty (at least one token is needed)");
  for (size_t i = 0; i < rq.prompt.size(); ++i) {
    if (rq.prompt[i] < 0 || rq.prompt[i] >= n_vocab)
      return make_error("generate: prompt token " + std::to_string(i) + " is " +
                        std::to_string(rq.prompt[i]) + ", expected an id in [0, " + std::to_string(n_vocab) +
                        ")");
  }
  const int64_t used = backend_.position(), n_ctx = backend_.n_ctx();
  if (used + static_cast<int64_t>(rq.prompt.size()) > n_ctx)
    return make_error("generate: prompt of " + std::to_string(rq.prompt.size()) +
                          " tokens does not fit the context: n_ctx " + std::to_string(n_ctx) + ", " +
                          std::to_string(used) + " already used, room for " + std::to_string(n_ctx - used),
                      "shorten the conversation or load the model with a larger context");
  return Status::success();
}

bool Generator::cancelled(const Run& run) const {
  if (run.obs.cancel != nullptr && run.obs.cancel->load(std::memory_order_relaxed)) return true;
  return run.obs.should_cancel && run.obs.should_cancel();
}

// Checks a StepOutput's shape: n rows of logits, and of hidden when `need_hidden`.
static Status check_output(const StepOutput& out, int n, int n_vocab, int n_embd, bool need_hidden,
                           const char* what) {
  if (out.n_tokens != n || out.logits.size() != static_cast<size_t>(n) * static_cast<size_t>(n_vocab))
    return make_error(std::string("generate: backend ") + what + " returned " + std::to_string(out.n_tokens) +
                      " rows / " + std::to_string(out.logits.size()) + " logits, expected " +
                      std::to_string(n) + " x " + std::to_string(n_vocab));
  if (need_hidden && out.hidden.size() != static_cast<size_t>(n) * static_cast<size_t>(n_embd))
    return make_error(std::string("generate: backend ") + what + " returned " +
                      std::to_string(out.hidden.size()) + " hidden values, expected " + std::to_string(n) +
                      " x " + std::to_string(n_embd));
  return Status::success();
}

Status Generator::fill_mtp(Run& run, int32_t token, std::span<const float> hidden, int pos) {
  QC_ASSIGN(const StepOutput out, backend_.mtp_forward(token, hidden, pos));
  ++run.res.stats.mtp_passes;
  return check_output(out, 1, run.n_vocab, run.n_embd, false, "mtp_forward");
}

void Generator::emit(Run& run, int32_t token, std::span<const float> logits_row) {
  GenerateResult& res = run.res;
  res.tokens.push_back(token);
  run.sampler.accept(token);
  // The final hash needs the row of the last token, and backend spans die at the next call: keep a copy
  // (one row, V floats: ~1 MB and tens of microseconds at V = 248k, small next to a 27B forward pass).
  copy_into(run.last_row, 0, logits_row);
  const bool is_stop =
      std::find(run.req.stop_tokens.begin(), run.req.stop_tokens.end(), token) != run.req.stop_tokens.end();
  std::string delta;
  if (!is_stop && !(text_.is_control && text_.is_control(token)) && text_.bytes)
    delta = run.utf8.push(text_.bytes(token));
  res.text += delta;
  run.t_last = Clock::now();
  if (res.tokens.size() == 1) run.t_first = run.t_last;
  if (run.obs.on_token) run.obs.on_token(TokenEvent{token, static_cast<int>(res.tokens.size()) - 1, delta, &res.stats});
  if (is_stop) {
    res.stop_token = token;
    run.stop(StopReason::stop_token);
  } else if (static_cast<int>(res.tokens.size()) >= run.req.max_new_tokens) {
    run.stop(StopReason::max_tokens);
  }
}

// The backend's prompt path: chunks of prefill_rows() tokens (ending at the checkpoint), each returning
// its last row only; the backend writes the MTP entries, including the one before the prompt when this
// generator kept h_{start-1} and the one at a chunk's last position from the next chunk's first token.
// Every prompt token goes through this path, even a single one, so that a state reached at a turn
// boundary has the same bits however the conversation got there (runtime/prefix_cache.h); chunks end on
// the backend's prefill_grid() (absolute positions), so later chunks start on it whatever the first did.
Status Generator::prefill_path(Run& run) {
  const std::vector<int32_t>& prompt = run.req.prompt;
  const int n = static_cast<int>(prompt.size());
  const size_t e = static_cast<size_t>(run.n_embd);
  std::vector<float> prev;
  if (run.use_mtp && run.start > 0 && last_hidden_pos_ == run.start - 1 && last_hidden_.size() == e)
    prev = last_hidden_;
  last_hidden_pos_ = -1;
  const int chunk = std::max(1, backend_.prefill_rows());
  for (int c0 = 0, len = 0; c0 < n; c0 += len) {
    if (c0 > 0 && cancelled(run)) {
      run.stop(StopReason::cancelled);
      return Status::success();
    }
    len = std::min(chunk, n - c0);
    if (c0 + len < n) {
      const int end = backend_.prefill_grid_floor(run.start + c0 + len);
      if (end > run.start + c0) len = end - run.start - c0;
    }
    const int cp = run.req.checkpoint;
    if (cp > c0 && cp < c0 + len) len = cp - c0;  // a chunk ends at the checkpoint
    Backend::PrefillMtp mtp;
    mtp.entries = run.use_mtp;
    if (c0 == 0) mtp.prev_hidden = prev;
    if (c0 + len < n) mtp.next_token = prompt[static_cast<size_t>(c0 + len)];
    QC_ASSIGN(const StepOutput out,
              backend_.prefill(std::span<const int32_t>(prompt).subspan(static_cast<size_t>(c0),
                                                                         static_cast<size_t>(len)),
                               run.start + c0, mtp));
    ++run.res.stats.forward_passes;
    QC_TRY(check_output(out, 1, run.n_vocab, run.n_embd, true, "prefill"));
    copy_into(run.first_row, 0, out.logits);
    last_hidden_.assign(out.hidden.begin(), out.hidden.end());
    last_hidden_pos_ = run.start + c0 + len - 1;
    if (c0 + len == cp && run.obs.on_checkpoint) run.obs.on_checkpoint(std::span<const float>(last_hidden_));
  }
  return Status::success();
}

Status Generator::prefill(Run& run) {
  if (backend_.prefill_rows() > 0) return prefill_path(run);
  const std::vector<int32_t>& prompt = run.req.prompt;
  const int n = static_cast<int>(prompt.size());
  const size_t e = static_cast<size_t>(run.n_embd);
  if (run.use_mtp && run.start > 0 && last_hidden_pos_ == run.start - 1 && last_hidden_.size() == e)
    QC_TRY(fill_mtp(run, prompt[0], last_hidden_, run.start - 1));  // entry start-1: (prompt[0], h_{start-1})
  last_hidden_pos_ = -1;
  const int chunk = prefill_chunk();
  for (int c0 = 0, len = 0; c0 < n; c0 += len) {
    if (c0 > 0 && cancelled(run)) {
      run.stop(StopReason::cancelled);
      return Status::success();
    }
    len = std::min(chunk, n - c0);
    const int cp = run.req.checkpoint;
    if (cp > c0 && cp < c0 + len) len = cp - c0;  // a chunk ends at the checkpoint
    QC_ASSIGN(const StepOutput out, backend_.forward(std::span<const int32_t>(prompt).subspan(
                                                         static_cast<size_t>(c0), static_cast<size_t>(len)),
                                                     run.start + c0));
    ++run.res.stats.forward_passes;
    QC_TRY(check_output(out, len, run.n_vocab, run.n_embd, run.use_mtp, "forward"));
    copy_into(run.first_row, 0, out.logits.subspan(static_cast<size_t>(len - 1) * run.first_row.size()));
    const bool have_hidden = out.hidden.size() == static_cast<size_t>(len) * e;
    if (have_hidden) {
      copy_into(run.hidden, 0, out.hidden);  // spans die at the next backend call (fill_mtp)
      last_hidden_.assign(out.hidden.end() - static_cast<std::ptrdiff_t>(e), out.hidden.end());
      last_hidden_pos_ = run.start + c0 + len - 1;
    }
    if (run.use_mtp) {
      for (int i = 0; i < len; ++i) {
        const int q = c0 + i;   // prompt index; position start + q
        if (q + 1 >= n) break;  // the last prompt position pairs with the first sampled token (step())
        QC_TRY(fill_mtp(run, prompt[static_cast<size_t>(q + 1)],
                        std::span<const float>(run.hidden).subspan(static_cast<size_t>(i) * e, e),
                        run.start + q));
      }
    }
    if (c0 + len == cp && run.obs.on_checkpoint) {
      const bool at_cp = have_hidden && last_hidden_pos_ == run.start + c0 + len - 1;
      run.obs.on_checkpoint(at_cp ? std::span<const float>(last_hidden_) : std::span<const float>());
    }
  }
  return Status::success();
}

void Generator::set_context_hidden(int pos, std::vector<float> hidden) {
  last_hidden_ = std::move(hidden);
  last_hidden_pos_ = last_hidden_.empty() ? -1 : pos;
}

// One decode step: optional drafts, one forward pass over [pending, drafts...], acceptance, and the
// repair of the backend and MTP states so that the invariants at the top of the file hold again.
Status Generator::step(Run& run) {
  GenerationStats& st = run.res.stats;
  const int P = backend_.position();
  const int remaining = run.req.max_new_tokens - static_cast<int>(run.res.tokens.size());
  // Never draft past the token budget (at most remaining-1 drafts + 1 bonus) or the context.
  const int k = std::max(0, std::min({run.k_max, remaining - 1, run.n_ctx - P - 1}));
  const size_t e = static_cast<size_t>(run.n_embd);
  const auto V = static_cast<size_t>(run.n_vocab);
  run.batch[0] = run.pending;

  if (run.use_mtp) {
    if (last_hidden_pos_ != P - 1 || last_hidden_.size() != e)
      return make_error("generate: internal: no hidden state for position " + std::to_string(P - 1));
    // Call j runs the MTP block at position P-1+j. j = 0: (x_P, h_{P-1}) is the true cache entry at P-1
    // (made even when k = 0, to keep the cache complete). j > 0: (d_{j-1}, MTP output of call j-1),
    // speculative, overwritten after verification.
    std::span<const float> h_in(last_hidden_);
    int32_t tok = run.pending;
    for (int j = 0; j < std::max(k, 1); ++j) {
      QC_ASSIGN(const StepOutput out, backend_.mtp_forward(tok, h_in, P - 1 + j));
      ++st.mtp_passes;
      QC_TRY(check_output(out, 1, run.n_vocab, run.n_embd, j + 1 < k, "mtp_forward"));
      if (j >= k) break;
      const int32_t d = argmax(out.logits);
      run.batch[static_cast<size_t>(j) + 1] = d;
      ++st.mtp_drafted[static_cast<size_t>(j)];
      if (j + 1 < k) {  // the output span dies at the next call, which reads it: copy
        copy_into(run.draft_hidden, 0, out.hidden);
        h_in = run.draft_hidden;
        tok = d;
      }
    }
  }

  // Verification of k drafts: a speculative forward that keeps the recurrent state of every position
  // when the backend can (commit(m) below picks one), else a snapshot to restore and re-run from.
  const bool speculate = k > 0 && backend_.max_speculative_tokens() >= k + 1;
  std::unique_ptr<StateSnapshot> snap;
  if (k > 0 && !speculate) {
    snap = backend_.snapshot();
    if (!snap) return make_error("generate: backend could not snapshot its state for MTP verification");
  }
  const std::span<const int32_t> batch(run.batch.data(), static_cast<size_t>(k) + 1);
  QC_ASSIGN(const StepOutput out,
            speculate ? backend_.forward_speculative(batch, P) : backend_.forward(batch, P));
  ++st.forward_passes;
  ++st.decode_steps;
  QC_TRY(check_output(out, k + 1, run.n_vocab, run.n_embd, run.use_mtp, "forward"));

  // Acceptance: row i holds logits_{P+i}. A draft is checked only while every earlier one was accepted;
  // the first rejection emits the sampler's replacement, all accepted emits a bonus token from row k.
  int m = 0;  // tokens emitted in this step
  for (int i = 0; i <= k && !run.done; ++i) {
    if (i > 0 && cancelled(run)) {
      run.stop(StopReason::cancelled);
      break;
    }
    const std::span<const float> row = out.logits.subspan(static_cast<size_t>(i) * V, V);
    DraftVerdict v;
    if (i < k) {
      v = run.sampler.verify_draft(row, run.batch[static_cast<size_t>(i) + 1]);
      if (v.accepted) ++st.mtp_accepted[static_cast<size_t>(i)];
    } else {
      v.token = run.sampler.sample(row);
    }
    if (run.sampler.last_degenerate())
      return make_error("generate: logits at position " + std::to_string(P + i) + " are all NaN or -inf");
    emit(run, v.token, row);
    ++m;
    if (i < k && !v.accepted) break;
  }

  // Keep the hidden rows of the m positions the backend keeps (P .. P+m-1) before the spans die.
  const bool have_hidden = out.hidden.size() == static_cast<size_t>(k + 1) * e;
  if (have_hidden) copy_into(run.hidden, 0, out.hidden.subspan(0, static_cast<size_t>(m) * e));

  // The backend ran k+1 tokens, but only the pending one and the m-1 accepted drafts before the last
  // emitted token belong to the context. commit(m) keeps the recurrent state after those m tokens, which
  // the speculative forward kept (no recomputation; KV entries past P+m-1 are rewritten before they are
  // read). Fallback for backends without it: restore and re-run the m tokens -- exact, at the cost of a
  // second weight pass on every partial rejection (rerun_passes counts them).
  if (speculate) {
    QC_TRY(backend_.commit(m));
  } else if (m < k + 1) {
    QC_TRY(backend_.restore(*snap));
    QC_ASSIGN(const StepOutput again, backend_.forward(batch.first(static_cast<size_t>(m)), P));
    ++st.forward_passes;
    ++st.rerun_passes;
    QC_TRY(check_output(again, m, run.n_vocab, run.n_embd, false, "forward (re-run)"));
    // Rows of `again` equal rows 0..m-1 of the verification pass for a backend whose per-position
    // results do not depend on the batch; the emitted tokens were already taken from those.
  }

  if (run.use_mtp) {  // true MTP cache entries for P .. P+m-2 (see the top of the file)
    for (int j = 0; j + 1 < m; ++j)
      QC_TRY(fill_mtp(run, run.batch[static_cast<size_t>(j) + 1],
                      std::span<const float>(run.hidden).subspan(static_cast<size_t>(j) * e, e), P + j));
  }
  if (have_hidden) {
    last_hidden_.assign(run.hidden.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(m - 1) * e),
                        run.hidden.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(m) * e));
    last_hidden_pos_ = P + m - 1;
  } else {
    last_hidden_pos_ = -1;
  }
  run.pending = run.res.tokens.back();
  return Status::success();
}

Result<GenerateResult> Generator::generate(const GenerateRequest& request, const GenerateObserver& observer) {
  QC_TRY(validate(request));
  Run run(request, observer, backend_.config().n_vocab);
  run.t0 = Clock::now();
  run.n_vocab = backend_.config().n_vocab;
  run.n_embd = std::max(backend_.config().n_embd, 0);
  run.n_ctx = backend_.n_ctx();
  run.start = backend_.position();
  run.use_mtp = request.mtp.enabled && backend_.has_mtp();
  run.k_max = run.use_mtp ? request.mtp.draft_len : 0;
  run.res.mtp_used = run.use_mtp;
  run.res.stats.mtp_draft_len = run.k_max;
  run.res.stats.prompt_tokens = static_cast<int>(request.prompt.size());
  if (request.mtp.enabled && !run.use_mtp)
    run.res.note = "MTP requested but the model has no MTP block: decoding without speculation";
  if (request.penalize_prompt)
    for (const int32_t t : request.prompt) run.sampler.accept(t);
  const size_t rows = static_cast<size_t>(std::max(prefill_chunk(), kMaxDraftLen + 1));
  run.first_row.resize(static_cast<size_t>(run.n_vocab));
  run.last_row.resize(static_cast<size_t>(run.n_vocab));
  run.hidden.resize(rows * static_cast<size_t>(run.n_embd));
  run.draft_hidden.resize(static_cast<size_t>(run.n_embd));
  run.batch.resize(static_cast<size_t>(kMaxDraftLen) + 1);

  const Status pre = prefill(run);
  if (!pre.ok()) run.fail(pre.error().message);
  const Clock::time_point t_prefill = Clock::now();

  if (!run.done) {
    if (request.max_new_tokens == 0) {
      run.stop(StopReason::max_tokens);
    } else if (cancelled(run)) {
      run.stop(StopReason::cancelled);
    } else {
      const int32_t t = run.sampler.sample(run.first_row);
      if (run.sampler.last_degenerate()) {
        run.fail("generate: logits at position " + std::to_string(backend_.position() - 1) +
                 " are all NaN or -inf");
      } else {
        emit(run, t, run.first_row);
        run.pending = t;
      }
    }
  }
  while (!run.done) {
    if (cancelled(run)) {
      run.stop(StopReason::cancelled);
    } else if (backend_.position() >= run.n_ctx) {
      run.stop(StopReason::context_full);
    } else {
      const Status s = step(run);
      if (!s.ok()) run.fail(s.error().message);
    }
  }

  // Finish: the stream's unfinished bytes, then the numbers.
  const std::string tail = run.utf8.flush();
  if (!tail.empty()) {
    run.res.text += tail;
    if (observer.on_text_tail) observer.on_text_tail(tail);
  }
  GenerationStats& st = run.res.stats;
  st.generated_tokens = static_cast<int>(run.res.tokens.size());
  st.prefill_seconds = seconds(run.t0, t_prefill);
  if (st.prefill_seconds > 0.0) st.prefill_tok_per_s = st.prompt_tokens / st.prefill_seconds;
  if (st.generated_tokens > 0) {
    st.time_to_first_token_s = seconds(run.t0, run.t_first);
    st.decode_seconds = seconds(run.t_first, run.t_last);
    if (st.decode_seconds > 0.0) st.decode_tok_per_s = (st.generated_tokens - 1) / st.decode_seconds;
    st.final_logits_hash = logits_hash(run.last_row);
  }
  return std::move(run.res);
}

}  // namespace qc
