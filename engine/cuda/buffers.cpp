#include "cuda/buffers.h"

#include <algorithm>
#include <cstdio>

#include "cuda/prefill_program.h"
#include "argmax.h"
#include "attention.h"
#include "gdn.h"
#include "gemv_q8/gemv_q8.h"

namespace qc::cuda {
namespace {

// f32 + quantised words for [kMaxTokens][k].
QBuf take_qbuf(Carver& c, int k) {
  QBuf b;
  const int ld = gpu::q8_row_stride(k);
  b.ld_f = ld;
  b.ld = ld;
  b.ld_scale = (ld + gpu::kQBlock - 1) / gpu::kQBlock;
  b.f = c.take<float>(static_cast<size_t>(gpu::kMaxTokens) * ld);
  b.hi = c.take<int8_t>(static_cast<size_t>(gpu::kMaxTokens) * ld);
  b.lo = c.take<int8_t>(static_cast<size_t>(gpu::kMaxTokens) * ld);
  b.scale = c.take<float>(static_cast<size_t>(gpu::kMaxTokens) * b.ld_scale);
  return b;
}

int max_site_rows(const Site& s, int acc) {
  for (const Linear& l : s.parts) acc = std::max(acc, l.rows);
  return acc;
}

}  // namespace

int ctx_bucket(int need, int n_ctx) {
  long long b = kMinCtxBucket;
  while (b < need) b *= 2;
  return static_cast<int>(std::min<long long>(b, n_ctx));
}

Status layout_state(const ModelConfig& c, const DeviceModel& m, int n_ctx, Carver& rec, Carver& hist,
                    Carver& kv, StateBuffers* out, bool with_history) {
  StateBuffers s;
  int n_gdn = 0;
  std::vector<int> kv_heads;
  for (const DevLayer& L : m.layers) {
    if (L.recurrent)
      ++n_gdn;
    else
      kv_heads.push_back(L.n_kv);
  }
  if (m.has_mtp) kv_heads.push_back(m.mtp_layer.n_kv);
  s.state_floats = static_cast<size_t>(c.ssm_n_v_heads) * c.ssm_head_k_dim * c.ssm_head_v_dim;
  s.ring_floats = static_cast<size_t>(gpu::kConvRing) * c.ssm_qkv_dim();
  // One take for both parts keeps them contiguous: the snapshot copies [state | ring] in one go.
  float* base = rec.take<float>(static_cast<size_t>(n_gdn) * (s.state_floats + s.ring_floats));
  s.recurrent_base = base;
  s.recurrent_bytes = static_cast<size_t>(n_gdn) * (s.state_floats + s.ring_floats) * sizeof(float);
  s.gdn_state = base;
  s.conv_ring = base ? base + static_cast<size_t>(n_gdn) * s.state_floats : nullptr;
  // History slots for the speculative forward (MTP verification), only where drafts exist.
  s.history_slot_floats = with_history ? static_cast<size_t>(n_gdn) * s.state_floats : 0;
  if (with_history && m.has_mtp && n_gdn > 0)
    s.gdn_history = hist.take<float>(static_cast<size_t>(gpu::kMaxTokens - 1) * s.history_slot_floats);
  for (int nk : kv_heads) {
    const size_t elems = static_cast<size_t>(nk) * n_ctx * c.head_dim;
    s.k_cache.push_back(kv.take<uint16_t>(elems));
    s.v_cache.push_back(kv.take<uint16_t>(elems));
    s.kv_elems.push_back(elems);
    s.kv_heads.push_back(nk);
  }
  *out = std::move(s);
  return Status::success();
}

Status layout_scratch(const ModelConfig& c, const DeviceModel& m, int sm_count, Carver& cv, Scratch* out) {
  Scratch s;
  const int M = gpu::kMaxTokens;
  const int H = c.n_embd;
  const int V = c.n_vocab;
  s.step = cv.take<int>(8);
  s.mtp_step = cv.take<int>(8);
  s.h = cv.take<float>(static_cast<size_t>(M) * H);
  s.x = take_qbuf(cv, H);
  int n_proj = 0, n_rows = V, n_kv_max = 0;
  int mix_k = 32;
  auto visit = [&](const DevLayer& L) {
    n_proj = std::max({n_proj, L.in_proj.n_out, L.gate_up.n_out});
    for (const Site* st : {&L.in_proj, &L.out_proj, &L.gate_up, &L.down}) n_rows = max_site_rows(*st, n_rows);
    mix_k = std::max(mix_k, L.out_proj.k);
    n_kv_max = std::max(n_kv_max, L.n_kv);
  };
  for (const DevLayer& L : m.layers) visit(L);
  if (m.has_mtp) {
    visit(m.mtp_layer);
    n_rows = max_site_rows(m.mtp_eh_proj, n_rows);
  }
  s.n_proj = n_proj;
  s.proj = cv.take<float>(static_cast<size_t>(M) * n_proj);
  s.mix = take_qbuf(cv, mix_k);
  s.ffn = take_qbuf(cv, c.n_ff);
  s.hidden = cv.take<float>(static_cast<size_t>(M) * H);
  s.logits = cv.take<float>(static_cast<size_t>(M) * V);
  s.split = cv.take<float>(gpu::gemv_q8_split_scratch_floats(kMaxSplitK, M, n_rows));
  // Attention scratch: the largest over every M (per-row split lengths: no dependence on the context).
  size_t q_floats = 0, part_floats = 0;
  if (n_kv_max > 0) {
    q_floats = gpu::attention_q_scratch_floats(c.n_head, c.head_dim, M);
    std::vector<int> kvs;
    for (const DevLayer& L : m.layers)
      if (!L.recurrent) kvs.push_back(L.n_kv);
    if (m.has_mtp) kvs.push_back(m.mtp_layer.n_kv);
    // Per-row split lengths (split_len 0): the grid's splits depend on the KV heads only.
    for (int kvh : kvs)
      part_floats = std::max(part_floats, gpu::attention_partial_floats(c.n_head, c.head_dim, M,
                                                                        gpu::attention_row_splits(kvh, sm_count)));
  }
  s.attn_q = cv.take<float>(std::max<size_t>(q_floats, 1));
  s.attn_partials = cv.take<float>(std::max<size_t>(part_floats, 1));
  s.norms = cv.take<float>(static_cast<size_t>(std::max(c.n_layer, 1)));
  if (m.has_mtp) {
    s.mtp_e = cv.take<float>(H);
    s.mtp_cat = take_qbuf(cv, 2 * H);
    s.mtp_hin = cv.take<float>(H);
    s.mtp_x = cv.take<float>(H);
    s.mtp_hidden = cv.take<float>(H);
    s.mtp_logits = cv.take<float>(V);
  }
  *out = s;
  return Status::success();
}

std::string MemoryEstimate::describe() const {
  char buf[460];
  std::snprintf(buf, sizeof buf,
                "%.2f GiB (weights %.2f, KV cache %.2f for n_ctx=%d, recurrent state %.2f, MTP state history "
                "%.2f, scratch %.2f, prompt path %.2f, its f16 weights %.2f, one state snapshot %.2f)",
                gib(total()), gib(weights), gib(kv_cache), n_ctx, gib(recurrent), gib(history), gib(scratch),
                gib(prefill), gib(prefill_weights), gib(snapshot));
  return buf;
}

Result<MemoryEstimate> estimate_memory(const ModelConfig& c, const ModelWeights& w, bool have_data, int n_ctx,
                                       bool with_history, int sm_count, int prefill_rows, bool prefill_f16,
                                       gpu::GdnScan gdn_scan) {
  Carver wc;
  QC_ASSIGN(const DeviceModel m, layout_model(c, w, have_data, wc));
  Carver rec, hist, kv, sc;
  StateBuffers st;
  Scratch scratch;
  QC_TRY(layout_state(c, m, n_ctx, rec, hist, kv, &st, with_history));
  QC_TRY(layout_scratch(c, m, sm_count, sc, &scratch));
  MemoryEstimate e;
  e.weights = wc.bytes();
  e.kv_cache = kv.bytes();
  e.recurrent = rec.bytes();
  e.history = hist.bytes();
  e.scratch = sc.bytes();
  e.snapshot = rec.bytes();
  Carver pc;
  PrefillBuffers pb;
  QC_TRY(layout_prefill(c, m, prefill_rows, prefill_f16, gdn_scan, pc, &pb));
  e.prefill = pc.bytes();
  e.n_ctx = n_ctx;
  return e;
}

}  // namespace qc::cuda
