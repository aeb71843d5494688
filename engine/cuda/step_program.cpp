#include "cuda/step_program.h"

#include <algorithm>

#include "attention.h"
#include "cuda/layer_args.h"
#include "embed.h"
#include "gdn.h"
#include "gemv_block.h"
#include "gemv_dense.h"
#include "gemv_q8/gemv_q8.h"
#include "mtp.h"
#include "norm_quant.h"
#include "probe.h"
#include "swiglu.h"

namespace qc::cuda {

// ---- LaunchProfiler ----

Result<size_t> LaunchProfiler::event() {
  if (next_event_ == events_.size()) {
    Event e;
    QC_TRY(e.create());
    events_.push_back(std::move(e));
  }
  return next_event_++;
}

Status LaunchProfiler::begin(const char* label, cudaStream_t s) {
  size_t idx = entries_.size();
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].label == label) idx = i;
  if (idx == entries_.size()) entries_.push_back(Entry{label, 0.0, 0});
  QC_ASSIGN(const size_t ev, event());
  QC_CU(cudaEventRecord(events_[ev].get(), s));
  open_entry_ = idx;
  open_ev_ = ev;
  return Status::success();
}

Status LaunchProfiler::end(cudaStream_t s) {
  QC_ASSIGN(const size_t ev, event());
  QC_CU(cudaEventRecord(events_[ev].get(), s));
  pending_.push_back(Pending{open_entry_, open_ev_, ev});
  return Status::success();
}

Status LaunchProfiler::collect(cudaStream_t s) {
  QC_CU(cudaStreamSynchronize(s));
  for (const Pending& p : pending_) {
    float ms = 0.0f;
    QC_CU(cudaEventElapsedTime(&ms, events_[p.ev0].get(), events_[p.ev1].get()));
    entries_[p.entry].ms += ms;
    entries_[p.entry].calls += 1;
  }
  pending_.clear();
  next_event_ = 0;
  return Status::success();
}

// ---- StepProgram ----

struct StepProgram::Run {
  const KernelConfig& cfg;
  cudaStream_t s;
  LaunchProfiler* prof;
  bool pdl;
  bool quant;  // the GEMV variant reads quantised activations
  bool hl;     // ... in the two-word format
  gpu::TileTuning tile;
  bool keep_states;  // GDN states after tokens 0..M-2 into the history slots (enqueue_main)

  template <class F>
  Status call(const char* label, F&& f) {
    if (prof) QC_TRY(prof->begin(label, s));
    const gpu::GpuStatus st = f();
    if (!st.ok()) return make_error(std::string(label) + ": " + st.describe());
    if (prof) QC_TRY(prof->end(s));
    return Status::success();
  }
};

namespace {

StepProgram::Run make_run(const KernelConfig& cfg, cudaStream_t s, LaunchProfiler* prof);

}  // namespace

bool StepProgram::fused_gate_up(const DevLayer& L, const KernelConfig& cfg) const {
  return cfg.fuse_gate_up && gemv_streaming(cfg.gemv) && L.gate_up.parts.size() == 1 &&
         L.gate_up.parts[0].q8() && L.gate_up.n_out == 2 * c_.n_ff && c_.n_ff % gpu::kQBlock == 0;
}

Status StepProgram::norm(Run& r, const float* x, const float* w, int m, const QBuf& out) const {
  gpu::RmsNormArgs a;
  a.x = x;
  a.ld_x = c_.n_embd;
  a.weight = w;
  a.n = c_.n_embd;
  a.m = m;
  a.eps = c_.rms_eps;
  a.out = out.f;
  a.ld_out = out.ld_f;
  const bool fused = r.cfg.fuse_residual_norm_quant;
  if (r.quant && fused) a.out_q = out.out(r.hl);
  a.pdl = r.pdl;
  QC_TRY(r.call("norm", [&] { return gpu::rmsnorm(a, r.s); }));
  if (r.quant && !fused) {
    gpu::QuantizeArgs q;
    q.x = out.f;
    q.ld_x = out.ld_f;
    q.n = c_.n_embd;
    q.m = m;
    q.out = out.out(r.hl);
    q.pdl = r.pdl;
    QC_TRY(r.call("quantize", [&] { return gpu::quantize_act(q, r.s); }));
  }
  return Status::success();
}

Status StepProgram::site(Run& r, const char* label, const Site& s, const QBuf& in, int m, float* y, int ld_y,
                         const float* residual) const {
  for (const Linear& lin : s.parts) {
    if (lin.format == Linear::Format::kQ8) {
      gpu::GemvQ8Args g;
      g.w = lin.w;
      g.x = in.in();
      g.x_f32 = in.f;
      g.ld_x_f32 = in.ld_f;
      g.y = y + lin.out_offset;
      g.ld_y = ld_y;
      g.residual = residual ? residual + lin.out_offset : nullptr;
      g.ld_residual = ld_y;
      g.m = m;
      g.variant = r.cfg.gemv;
      g.split_k = r.cfg.split_k;
      g.split_scratch = sc_.split;
      g.tile = r.tile;
      g.pdl = r.pdl;
      QC_TRY(r.call(label, [&] { return gpu::gemv_q8(g, r.s); }));
    } else if (lin.format == Linear::Format::kBlock) {
      // The quantised activations the Q8_0 GEMVs read, when the variant has them (dp4a form); deq: f32.
      gpu::GemvBlockArgs g;
      g.w = lin.blocks;
      g.x = in.f;
      g.ld_x = in.ld_f;
      if (r.quant && in.hi) {
        g.format = r.hl ? ActFormat::kHL : ActFormat::kH;
        g.xq = in.in();
      }
      g.y = y + lin.out_offset;
      g.ld_y = ld_y;
      g.residual = residual ? residual + lin.out_offset : nullptr;
      g.ld_residual = ld_y;
      g.m = m;
      g.engine = gpu::block_engine_for(r.cfg.block_engine, g.w, g.format);
      g.pdl = r.pdl;
      QC_TRY(r.call(label, [&] { return gpu::gemv_block(g, r.s); }));
    } else {
      gpu::GemvDenseArgs d;
      d.w = lin.dense;
      d.type = lin.dense_type;
      d.n = lin.rows;
      d.k = lin.cols;
      d.ld_w = lin.cols;
      d.x = in.f;
      d.ld_x = in.ld_f;
      d.y = y + lin.out_offset;
      d.ld_y = ld_y;
      d.residual = residual ? residual + lin.out_offset : nullptr;
      d.ld_residual = ld_y;
      d.m = m;
      d.pdl = r.pdl;
      QC_TRY(r.call(label, [&] { return gpu::gemv_dense(d, r.s); }));
    }
  }
  return Status::success();
}

// One decoder layer on the M token rows of h, in place (QWEN35.md section 2; the CPU reference's
// decoder_layer in engine/reference/reference_layers.cpp):
//   x = rmsnorm(h, attn_norm)
//   h = h + out_proj( gated_deltanet(x) or gated_attention(x) )
//   x = rmsnorm(h, post_attention_norm)
//   h = h + down( silu(gate x) * up x )
// Each step is one or a few kernel-layer calls; the argument filling lives in the helpers below.
Status StepProgram::layer(Run& r, const DevLayer& L, float* h, const int* d_pos, int m, int ctx_hint) const {
  const int H = c_.n_embd;
  QC_TRY(norm(r, h, L.attn_norm, m, sc_.x));  // x = rmsnorm(h, attn_norm) (f32 + quantised)
  if (L.recurrent) {
    // [qkv | z | beta | alpha] = W_in x; y = gated_deltanet(...) (QWEN35.md section 3)
    QC_TRY(site(r, "gemv gdn in", L.in_proj, sc_.x, m, sc_.proj, L.in_proj.n_out, nullptr));
    QC_TRY(gated_deltanet(r, L, d_pos, m));
    QC_TRY(site(r, "gemv gdn out", L.out_proj, sc_.mix, m, h, H, h));  // h += ssm_out y
  } else {
    // [q+gate | k | v] = W_in x; y = gated_attention(...) (QWEN35.md section 4)
    QC_TRY(site(r, "gemv attn in", L.in_proj, sc_.x, m, sc_.proj, L.in_proj.n_out, nullptr));
    QC_TRY(gated_attention(r, L, d_pos, m, ctx_hint));
    QC_TRY(site(r, "gemv attn out", L.out_proj, sc_.mix, m, h, H, h));  // h += attn_output y
  }
  QC_TRY(norm(r, h, L.post_norm, m, sc_.x));                      // x = rmsnorm(h, post_attention_norm)
  QC_TRY(swiglu_gate_up(r, L, m));                                // f = silu(gate x) * up x
  QC_TRY(site(r, "gemv ffn down", L.down, sc_.ffn, m, h, H, h));  // h += down f
  return Status::success();
}

// The GDN mixer on the in-projection in sc.proj: conv ring + SiLU, L2 norms, gates, the delta rule on the
// layer's f32 state, the gated output norm; y -> sc.mix (f32 + quantised). One kernel (gdn_step).
Status StepProgram::gated_deltanet(Run& r, const DevLayer& L, const int* d_pos, int m) const {
  gpu::GdnArgs g = gdn_layer_args(c_, st_, L, sc_.proj);
  g.m = m;
  if (r.keep_states && m > 1) {  // speculative forward: states after tokens 0..m-2 (the last is g.state)
    g.state_per_token = st_.history(L.gdn_index);
    g.ld_state_per_token = st_.history_slot_floats;
    g.n_state_per_token = m - 1;
  }
  g.d_pos = d_pos;
  g.out = sc_.mix.f;
  g.ld_out = sc_.mix.ld_f;
  if (r.quant) g.out_q = sc_.mix.out(r.hl);
  g.pdl = r.pdl;
  return r.call("gdn", [&] { return gpu::gdn_step(g, r.s); });
}

// The attention mixer on the in-projection in sc.proj: q/k RMSNorm, partial RoPE, K/V stored at the rows'
// positions, softmax over the cache (split by position, fixed-order merge), sigmoid output gate; y ->
// sc.mix (f32 + quantised). attention_decode's three kernels (prep, split, merge).
Status StepProgram::gated_attention(Run& r, const DevLayer& L, const int* d_pos, int m, int ctx_hint) const {
  gpu::AttentionArgs a = attention_layer_args(c_, st_, L, sc_.proj, n_ctx_);
  a.d_pos = d_pos;
  a.m = m;
  a.ctx_hint = ctx_hint;
  a.q_scratch = sc_.attn_q;
  a.partials = sc_.attn_partials;
  a.kv_ahead = kv_ahead_;
  a.out = sc_.mix.f;
  a.ld_out = sc_.mix.ld_f;
  if (r.quant) a.out_q = sc_.mix.out(r.hl);
  a.pdl = r.pdl;
  return r.call("attention", [&] { return gpu::attention_decode(a, r.s); });
}

// f = silu(W_gate x) * (W_up x) from x in sc.x into sc.ffn (f32 + quantised): one fused launch
// (gemv_q8_gateup, when fused_gate_up()), else the stacked [gate | up] GEMV into sc.proj and swiglu.
Status StepProgram::swiglu_gate_up(Run& r, const DevLayer& L, int m) const {
  const int F = c_.n_ff;
  if (fused_gate_up(L, r.cfg)) {
    const gpu::Q8Weights& w = L.gate_up.parts[0].w;
    gpu::GemvQ8GateUpArgs g;
    g.gate = gpu::Q8Weights{w.q, w.d, F, w.cols, w.row_stride};
    g.up = gpu::Q8Weights{w.q ? w.q + static_cast<size_t>(F) * w.row_stride : nullptr,
                          w.d ? w.d + static_cast<size_t>(F) * (w.cols / gpu::kQBlock) : nullptr, F, w.cols,
                          w.row_stride};
    g.x = sc_.x.in();
    g.format = r.hl ? ActFormat::kHL : ActFormat::kH;
    g.out_f32 = sc_.ffn.f;
    g.ld_out = sc_.ffn.ld_f;
    g.out_q = sc_.ffn.out(r.hl);
    g.m = m;
    g.tile = r.tile;
    g.pdl = r.pdl;
    return r.call("gemv ffn gate+up", [&] { return gpu::gemv_q8_gateup(g, r.s); });
  }
  const int ldg = L.gate_up.n_out;
  QC_TRY(site(r, "gemv ffn gate+up", L.gate_up, sc_.x, m, sc_.proj, ldg, nullptr));
  gpu::SwigluArgs a;
  a.gate = sc_.proj;
  a.ld_gate = ldg;
  a.up = sc_.proj + F;
  a.ld_up = ldg;
  a.n = F;
  a.m = m;
  a.out = sc_.ffn.f;
  a.ld_out = sc_.ffn.ld_f;
  if (r.quant) a.out_q = sc_.ffn.out(r.hl);
  a.pdl = r.pdl;
  return r.call("swiglu", [&] { return gpu::swiglu(a, r.s); });
}

Status StepProgram::enqueue_main(int m, int ctx_hint, const KernelConfig& cfg, cudaStream_t s,
                                 LaunchProfiler* prof, bool keep_states) const {
  const bool any_gdn =
      std::any_of(m_.layers.begin(), m_.layers.end(), [](const DevLayer& L) { return L.recurrent; });
  if (keep_states && m > 1 && any_gdn && !st_.gdn_history)
    return make_error(
        "CUDA backend: a speculative forward needs the GDN state history (MTP models only, when it fits)");
  Run r = make_run(cfg, s, prof);
  r.keep_states = keep_states;
  const int H = c_.n_embd;
  gpu::EmbedArgs e = m_.embd.args(c_.n_vocab, H);
  e.d_tokens = sc_.step + 1;
  e.m = m;
  e.out = sc_.h;
  e.ld_out = H;
  e.pdl = r.pdl;
  QC_TRY(r.call("embed", [&] { return gpu::embed(e, s); }));
  for (size_t il = 0; il < m_.layers.size(); ++il) {
    QC_TRY(layer(r, m_.layers[il], sc_.h, sc_.step, m, ctx_hint));
    if (cfg.probes) {
      gpu::ProbeArgs p;
      p.x = sc_.h + static_cast<size_t>(m - 1) * H;  // the last token row
      p.n = H;
      p.out = sc_.norms;
      p.index = static_cast<int>(il);
      p.pdl = r.pdl;
      QC_TRY(r.call("probe", [&] { return gpu::probe_l2(p, s); }));
    }
  }
  // hidden = rmsnorm(h, output_norm) (f32, returned) with its quantised words in sc.x; logits = lm_head.
  QBuf fin = sc_.x;
  fin.f = sc_.hidden;
  fin.ld_f = H;
  QC_TRY(norm(r, sc_.h, m_.output_norm, m, fin));
  QC_TRY(site(r, "gemv lm_head", m_.lm_head, fin, m, sc_.logits, c_.n_vocab, nullptr));
  return Status::success();
}

Status StepProgram::enqueue_mtp(int ctx_hint, const KernelConfig& cfg, cudaStream_t s,
                                LaunchProfiler* prof) const {
  if (!m_.has_mtp) return make_error("CUDA backend: the model has no MTP block");
  Run r = make_run(cfg, s, prof);
  const int H = c_.n_embd;
  gpu::EmbedArgs e = m_.embd.args(c_.n_vocab, H);
  e.d_tokens = sc_.mtp_step + 1;
  e.m = 1;
  e.out = sc_.mtp_e;
  e.ld_out = H;
  e.pdl = r.pdl;
  QC_TRY(r.call("embed", [&] { return gpu::embed(e, s); }));
  // cat = [rmsnorm(embed(t), enorm) | rmsnorm(h, hnorm)]
  gpu::MtpConcatArgs mc;
  mc.e = sc_.mtp_e;
  mc.ld_e = H;
  mc.h = sc_.mtp_hin;
  mc.ld_h = H;
  mc.enorm = m_.mtp_enorm;
  mc.hnorm = m_.mtp_hnorm;
  mc.n = H;
  mc.m = 1;
  mc.eps = c_.rms_eps;
  mc.out = sc_.mtp_cat.f;
  mc.ld_out = sc_.mtp_cat.ld_f;
  if (r.quant) mc.out_q = sc_.mtp_cat.out(r.hl);
  mc.pdl = r.pdl;
  QC_TRY(r.call("mtp concat", [&] { return gpu::mtp_concat(mc, s); }));
  // x = eh_proj . cat; the block's attention layer on x at its position; head.
  QC_TRY(site(r, "gemv mtp eh_proj", m_.mtp_eh_proj, sc_.mtp_cat, 1, sc_.mtp_x, H, nullptr));
  QC_TRY(layer(r, m_.mtp_layer, sc_.mtp_x, sc_.mtp_step, 1, ctx_hint));
  QBuf fin = sc_.x;
  fin.f = sc_.mtp_hidden;
  fin.ld_f = H;
  QC_TRY(norm(r, sc_.mtp_x, m_.mtp_head_norm, 1, fin));
  QC_TRY(site(r, "gemv lm_head", m_.lm_head, fin, 1, sc_.mtp_logits, c_.n_vocab, nullptr));
  return Status::success();
}

namespace {

StepProgram::Run make_run(const KernelConfig& cfg, cudaStream_t s, LaunchProfiler* prof) {
  const ActFormat f = gemv_act_format(cfg.gemv);
  return StepProgram::Run{.cfg = cfg,
                          .s = s,
                          .prof = prof,
                          .pdl = cfg.programmatic_launch,
                          .quant = f != ActFormat::kF32,
                          .hl = f == ActFormat::kHL,
                          .tile = gpu::TileTuning{.rows_per_warp = cfg.tile_rows_per_warp,
                                                  .unroll = cfg.tile_unroll,
                                                  .blocks_per_sm = cfg.tile_blocks_per_sm},
                          .keep_states = false};
}

}  // namespace

}  // namespace qc::cuda
