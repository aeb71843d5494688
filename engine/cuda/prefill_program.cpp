#include "cuda/prefill_program.h"
#include "cuda/layer_args.h"
#include "cuda/prefill_weights.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attention.h"
#include "embed.h"
#include "gdn.h"
#include "gdn_prefill.h"
#include "gemm_dense.h"
#include "gemm_q8.h"
#include "gemv_block.h"
#include "mtp.h"
#include "norm_quant.h"
#include "swiglu.h"

namespace qc::cuda {
namespace {

// Powers of two the f16 path scales each kind of projection input by (gemm_f16.h): normed inputs and the
// mixers' outputs are O(1) with outliers in the hundreds, far inside f16's range (65504); SwiGLU outputs
// are products of two projections and reach the thousands where a model builds its massive activations,
// so they get 2^-4 (range 1e6), at the cost of f16 subnormals below 2^-10 there (absolute error <= 2^-21,
// nothing next to the terms that matter).
constexpr int kShiftNormed = 0, kShiftMixer = 0, kShiftSwiglu = 4;

QBuf take_rows(Carver& cv, int rows, int k) {
  QBuf b;
  const int ld = gpu::q8_row_stride(k);
  b.ld_f = ld;
  b.ld = ld;
  b.ld_scale = (ld + gpu::kQBlock - 1) / gpu::kQBlock;
  b.f = cv.take<float>(static_cast<size_t>(rows) * ld);
  b.hi = cv.take<int8_t>(static_cast<size_t>(rows) * ld);
  b.lo = cv.take<int8_t>(static_cast<size_t>(rows) * ld);
  b.scale = cv.take<float>(static_cast<size_t>(rows) * b.ld_scale);
  return b;
}

// The rows [r, ...) of a buffer.
QBuf offset_rows(const QBuf& b, int r) {
  QBuf o = b;
  o.f = b.f ? b.f + static_cast<size_t>(r) * b.ld_f : nullptr;
  o.hi = b.hi ? b.hi + static_cast<size_t>(r) * b.ld : nullptr;
  o.lo = b.lo ? b.lo + static_cast<size_t>(r) * b.ld : nullptr;
  o.scale = b.scale ? b.scale + static_cast<size_t>(r) * b.ld_scale : nullptr;
  return o;
}

Status gpu_status(const char* label, const gpu::GpuStatus& st) {
  if (st.ok()) return Status::success();
  return make_error(std::string("prefill ") + label + ": " + st.describe());
}

// rmsnorm of n rows of H floats with weight w; the caller picks the outputs.
gpu::RmsNormArgs rmsnorm_rows(const ModelConfig& c, const float* x, int ld_x, const float* w, int n) {
  gpu::RmsNormArgs a;
  a.x = x;
  a.ld_x = ld_x;
  a.weight = w;
  a.n = c.n_embd;
  a.m = n;
  a.eps = c.rms_eps;
  return a;
}
}  // namespace

int f16_slice_rows(int n, int k) {
  const size_t total = static_cast<size_t>(n) * static_cast<size_t>(k);
  const size_t slices = std::max<size_t>(1, (total + kF16SliceElems - 1) / kF16SliceElems);
  const size_t rows = ((static_cast<size_t>(n) + slices - 1) / slices + 127) / 128 * 128;
  return static_cast<int>(std::min<size_t>(rows, static_cast<size_t>(n)));
}

Status layout_prefill(const ModelConfig& c, const DeviceModel& m, int rows, bool f16, gpu::GdnScan gdn_scan,
                      Carver& cv, PrefillBuffers* out) {
  PrefillBuffers b;
  b.rows = rows;
  if (rows <= 0) {
    *out = b;
    return Status::success();
  }
  const int H = c.n_embd;
  int n_proj = 2 * H, n_mix = H, n_attn = 32;
  auto visit = [&](const DevLayer& L) {
    n_proj = std::max({n_proj, L.in_proj.n_out, L.gate_up.n_out});
    n_mix = std::max(n_mix, L.out_proj.k);
    if (!L.recurrent) n_attn = std::max(n_attn, c.n_head * c.head_dim);
  };
  for (const DevLayer& L : m.layers) visit(L);
  if (m.has_mtp) visit(m.mtp_layer);
  b.pos = cv.take<int>(static_cast<size_t>(rows) + 2);
  b.tokens = cv.take<int>(static_cast<size_t>(rows) + 1);
  b.h = cv.take<float>(static_cast<size_t>(rows) * H);
  b.x = take_rows(cv, rows, H);
  b.n_proj = n_proj;
  b.proj = cv.take<float>(static_cast<size_t>(rows) * n_proj);
  b.mix = take_rows(cv, rows, n_mix);
  b.ffn = take_rows(cv, rows, std::max(c.n_ff, 2 * H));
  if (m.has_mtp) b.attn_out = cv.take<float>(static_cast<size_t>(rows) * n_attn);
  const bool any_attention =
      m.has_mtp || std::any_of(m.layers.begin(), m.layers.end(), [](const DevLayer& L) { return !L.recurrent; });
  if (any_attention) b.attn_q = cv.take<float>(gpu::attention_q_scratch_floats(c.n_head, c.head_dim, rows));
  b.hidden = cv.take<float>(static_cast<size_t>(rows + 1) * H);
  const bool any_gdn = std::any_of(m.layers.begin(), m.layers.end(), [](const DevLayer& L) { return L.recurrent; });
  if (any_gdn) {
    gpu::GdnArgs g = gdn_shape_args(c);
    g.m = rows;
    g.scan = gdn_scan;
    b.gdn_scan = gdn_scan;
    b.gdn = cv.take<float>(std::max<size_t>(gpu::gdn_prefill_scratch_floats(g), 1));
  }
  if (f16) {
    // Every Q8_0 and block-quantised matrix the path multiplies (lm_head stays a one-row product).
    int max_k = 8;
    size_t slice = 0;
    auto site = [&](const Site& st) {
      for (const Linear& lin : st.parts) {
        if (!lin.f16_gemm()) continue;
        max_k = std::max(max_k, lin.cols);
        slice = std::max(slice, static_cast<size_t>(f16_slice_rows(lin.rows, lin.cols)) * lin.cols);
      }
    };
    auto layer = [&](const DevLayer& L) {
      site(L.in_proj);
      site(L.out_proj);
      site(L.gate_up);
      site(L.down);
    };
    for (const DevLayer& L : m.layers) layer(L);
    if (m.has_mtp) {
      site(m.mtp_eh_proj);
      site(m.mtp_layer.in_proj);
    }
    b.ld_x16 = (max_k + 7) / 8 * 8;
    b.x16 = cv.take<uint16_t>(static_cast<size_t>(rows) * b.ld_x16);
    b.w16_elems = std::max<size_t>(slice, 8);
    b.w16 = cv.take<uint16_t>(b.w16_elems);
    b.lt_workspace = cv.take<unsigned char>(gpu::GemmF16::kWorkspaceBytes);
  }
  *out = b;
  return Status::success();
}

gpu::QActOut PrefillProgram::words(const QBuf& b) const {
  return f16_ ? gpu::QActOut{} : b.out(true);
}

Status PrefillProgram::norm(const float* x, int ld_x, const float* w, int n, const QBuf& out, bool quantise,
                            cudaStream_t s) const {
  const PhaseScope phase(profile_, "norms", s);
  gpu::RmsNormArgs a = rmsnorm_rows(c_, x, ld_x, w, n);
  a.out = out.f;
  a.ld_out = out.ld_f;
  if (quantise) a.out_q = out.out(true);
  return gpu_status("norm", gpu::rmsnorm(a, s));
}

Status PrefillProgram::norm_for(const Site& site, const float* x, int ld_x, const float* w, int n, const QBuf& out,
                                bool quantise, int f16_shift, cudaStream_t s, bool* x16) const {
  *x16 = f16_ && !quantise &&
         std::all_of(site.parts.begin(), site.parts.end(), [](const Linear& lin) { return lin.f16_gemm(); });
  if (!*x16) return norm(x, ld_x, w, n, out, quantise, s);
  const PhaseScope phase(profile_, "norms", s);
  gpu::RmsNormArgs a = rmsnorm_rows(c_, x, ld_x, w, n);
  a.out16 = pb_.x16;
  a.ld_out16 = pb_.ld_x16;
  a.shift16 = f16_shift;
  return gpu_status("norm", gpu::rmsnorm(a, s));
}

// The f16 path of one Q8_0 or block-quantised matrix: pb.x16 holds the inputs already; the matrix in slices
// of rows.
Status PrefillProgram::project_f16(const char* label, const Linear& lin, int n, float* y, int ld_y,
                                   const float* residual, int f16_shift, cudaStream_t s) const {
  const int K = lin.cols;
  const int slice = f16_slice_rows(lin.rows, K);  // layout_prefill sized pb.w16 for it
  for (int r0 = 0; r0 < lin.rows; r0 += slice) {
    const int rows = std::min(slice, lin.rows - r0);
    // The resident copy when the load made one (prefill_weights.h: the same bits), else this slice now.
    const uint16_t* w16 = lin.w16 ? lin.w16 + static_cast<size_t>(r0) * K : pb_.w16;
    if (!lin.w16) {
      const PhaseScope phase(profile_, "f16: weight dequantisation", s);
      QC_TRY(gpu_status(label, dequant_linear_f16(lin, r0, rows, pb_.w16, K, s)));
    }
    const PhaseScope phase(profile_, label, s);
    gpu::GemmF16Args g;
    g.w = w16;
    g.n = rows;
    g.k = K;
    g.ld_w = K;
    g.x = pb_.x16;
    g.ld_x = pb_.ld_x16;
    g.m = n;
    g.alpha = std::ldexp(1.0f, f16_shift);
    g.y = y + lin.out_offset + r0;
    g.ld_y = ld_y;
    g.residual = residual ? residual + lin.out_offset + r0 : nullptr;
    g.ld_residual = ld_y;
    // The algorithm is one per shape and alignment; asking for it is host work, so only when profiling.
    if (profile_)
      profile_->note(std::string(label) + ": N " + std::to_string(rows) + ", K " + std::to_string(K) + ": " +
                     f16_->describe(g));
    QC_TRY(gpu_status(label, f16_->run(g, s)));
  }
  return Status::success();
}

Status PrefillProgram::project(const char* label, const Site& site, const QBuf& in, int n, float* y, int ld_y,
                               const float* residual, int f16_shift, cudaStream_t s, bool x16_ready) const {
  return project_site(label, site, in, n, y, ld_y, residual, f16_ != nullptr, f16_shift, s, x16_ready);
}

Status PrefillProgram::project_site(const char* label, const Site& site, const QBuf& in, int n, float* y, int ld_y,
                                    const float* residual, bool f16, int f16_shift, cudaStream_t s,
                                    bool x16_ready) const {
  // The site's parts share their input: rounded to f16 once (or already, by the caller).
  for (const Linear& lin : site.parts) {
    if (lin.f16_gemm() && f16) {
      if (!x16_ready) {
        const PhaseScope phase(profile_, "f16: activation rounding", s);
        QC_TRY(gpu_status(label, gpu::rows_to_f16(in.f, in.ld_f, n, lin.cols, f16_shift, pb_.x16, pb_.ld_x16, s)));
        x16_ready = true;
      }
      QC_TRY(project_f16(label, lin, n, y, ld_y, residual, f16_shift, s));
    } else if (lin.format == Linear::Format::kBlock) {
      // lm_head's one row, or every block-quantised matrix on the int8 path (no cuBLASLt): the decode GEMV,
      // kMaxTokens rows at a time (slow for a long prompt; only where the f16 GEMM is unavailable).
      const PhaseScope phase(profile_, label, s);
      for (int r0 = 0; r0 < n; r0 += gpu::kMaxTokens) {
        gpu::GemvBlockArgs g;
        g.w = lin.blocks;
        g.x = in.f + static_cast<size_t>(r0) * in.ld_f;
        g.ld_x = in.ld_f;
        g.m = std::min(gpu::kMaxTokens, n - r0);
        g.y = y + static_cast<size_t>(r0) * ld_y + lin.out_offset;
        g.ld_y = ld_y;
        g.residual = residual ? residual + static_cast<size_t>(r0) * ld_y + lin.out_offset : nullptr;
        g.ld_residual = ld_y;
        QC_TRY(gpu_status(label, gpu::gemv_block(g, s)));
      }
    } else if (lin.q8()) {
      const PhaseScope phase(profile_, label, s);
      gpu::GemmQ8Args g;
      g.w = lin.w;
      g.x = in.in();
      g.m = n;
      g.y = y + lin.out_offset;
      g.ld_y = ld_y;
      g.residual = residual ? residual + lin.out_offset : nullptr;
      g.ld_residual = ld_y;
      QC_TRY(gpu_status(label, gpu::gemm_q8(g, s)));
    } else {
      const PhaseScope phase(profile_, "dense projections", s);
      gpu::GemmDenseArgs d;
      d.w = lin.dense;
      d.type = lin.dense_type;
      d.n = lin.rows;
      d.k = lin.cols;
      d.ld_w = lin.cols;
      d.x = in.f;
      d.ld_x = in.ld_f;
      d.m = n;
      d.y = y + lin.out_offset;
      d.ld_y = ld_y;
      d.residual = residual ? residual + lin.out_offset : nullptr;
      d.ld_residual = ld_y;
      QC_TRY(gpu_status(label, gpu::gemm_dense(d, s)));
    }
  }
  return Status::success();
}

Status PrefillProgram::gdn(const DevLayer& L, const int* d_pos, int n, bool out16, cudaStream_t s) const {
  const PhaseScope phase(profile_, "gdn", s);
  gpu::GdnArgs g = gdn_layer_args(c_, st_, L, pb_.proj);
  g.m = n;
  g.d_pos = d_pos;
  if (out16) {
    g.out16 = pb_.x16;
    g.ld_out16 = pb_.ld_x16;
    g.shift16 = kShiftMixer;
  } else {
    g.out = pb_.mix.f;
    g.ld_out = pb_.mix.ld_f;
    g.out_q = words(pb_.mix);
  }
  g.scan = pb_.gdn_scan;
  return gpu_status("gdn", gpu::gdn_prefill(g, pb_.gdn, s));
}

Status PrefillProgram::attention(const DevLayer& L, const int* d_pos, int n, float* out, int ld_out, const QBuf* out_q,
                                 bool out16, cudaStream_t s) const {
  const PhaseScope phase(profile_, "attention", s);
  gpu::AttentionArgs a = attention_layer_args(c_, st_, L, pb_.proj, n_ctx_);
  a.d_pos = d_pos;
  a.m = n;
  a.q_scratch = pb_.attn_q;
  a.flash_rows = pb_.attn_rows;
  a.out = out;
  a.ld_out = ld_out;
  if (out_q) a.out_q = out_q->out(true);
  if (out16) {
    a.out16 = pb_.x16;
    a.ld_out16 = pb_.ld_x16;
    a.shift16 = kShiftMixer;
  }
  return gpu_status("attention", gpu::attention_prefill(a, s));
}

Status PrefillProgram::layer(const DevLayer& L, float* h, const int* d_pos, int n, cudaStream_t s) const {
  const int H = c_.n_embd;
  const bool q = !f16_;  // the int8 path reads quantised words
  bool x16 = false;  // the norm wrote the site's f16 inputs itself
  QC_TRY(norm_for(L.in_proj, h, H, L.attn_norm, n, pb_.x, q, kShiftNormed, s, &x16));
  const int ldp = L.in_proj.n_out;
  QC_TRY(project(L.recurrent ? "gdn in" : "attn in", L.in_proj, pb_.x, n, pb_.proj, ldp, nullptr, kShiftNormed, s,
                 x16));
  // The f16 path reads the mixer's output only as the out projection's f16 input: written as such by the
  // gated norm or the attention kernel (rows_to_f16's bits), no f32 rows (per 2048-token prompt of the 27B,
  // 3.2 GB of f32 writes and the rounding pass over them, ~1.5 ms of 1.9 on an H100).
  const bool mix16 =
      f16_ &&
      std::all_of(L.out_proj.parts.begin(), L.out_proj.parts.end(), [](const Linear& lin) { return lin.f16_gemm(); });
  if (L.recurrent)
    QC_TRY(gdn(L, d_pos, n, mix16, s));
  else
    QC_TRY(attention(L, d_pos, n, mix16 ? nullptr : pb_.mix.f, pb_.mix.ld_f, q ? &pb_.mix : nullptr, mix16, s));
  QC_TRY(project(L.recurrent ? "gdn out" : "attn out", L.out_proj, pb_.mix, n, h, H, h, kShiftMixer, s, mix16));
  QC_TRY(norm_for(L.gate_up, h, H, L.post_norm, n, pb_.x, q, kShiftNormed, s, &x16));
  const int F = c_.n_ff, ldg = L.gate_up.n_out;
  QC_TRY(project("ffn gate+up", L.gate_up, pb_.x, n, pb_.proj, ldg, nullptr, kShiftNormed, s, x16));
  gpu::SwigluArgs a;
  a.gate = pb_.proj;
  a.ld_gate = ldg;
  a.up = pb_.proj + F;
  a.ld_up = ldg;
  a.n = F;
  a.m = n;
  // The f16 path reads the SwiGLU output only as down's f16 input: written as such, no f32 copy.
  const bool f16_down = f16_ && std::all_of(L.down.parts.begin(), L.down.parts.end(), [](const Linear& lin) { return lin.f16_gemm(); });
  if (f16_down) {
    a.out16 = pb_.x16;
    a.ld_out16 = pb_.ld_x16;
    a.shift16 = kShiftSwiglu;
  } else {
    a.out = pb_.ffn.f;
    a.ld_out = pb_.ffn.ld_f;
    a.out_q = words(pb_.ffn);
  }
  {
    const PhaseScope phase(profile_, "swiglu", s);
    QC_TRY(gpu_status("swiglu", gpu::swiglu(a, s)));
  }
  return project("ffn down", L.down, pb_.ffn, n, h, H, h, kShiftSwiglu, s, f16_down);
}

Status PrefillProgram::enqueue(const PrefillChunk& ch, cudaStream_t s) const {
  const int n = ch.n, H = c_.n_embd;
  if (n < 1 || n > pb_.rows)
    return make_error("prefill: a chunk of " + std::to_string(n) + " tokens, expected 1.." + std::to_string(pb_.rows));
  gpu::EmbedArgs e = m_.embd.args(c_.n_vocab, H);
  e.d_tokens = pb_.tokens;
  e.m = n;
  e.out = pb_.h;
  e.ld_out = H;
  {
    const PhaseScope phase(profile_, "embedding", s);
    QC_TRY(gpu_status("embed", gpu::embed(e, s)));
  }
  const int* d_pos = pb_.pos + 1;  // position of chunk row 0
  for (const DevLayer& L : m_.layers) QC_TRY(layer(L, pb_.h, d_pos, n, s));
  // hidden rows 1..n = rmsnorm(h, output_norm), quantised into x; logits of the last row.
  QBuf fin = pb_.x;
  fin.f = pb_.hidden + H;
  fin.ld_f = H;
  // lm_head: one row, on gemm_q8 / gemv_block on both paths (a vocabulary-sized dequantisation would cost
  // more than it).
  QC_TRY(norm(pb_.h, H, m_.output_norm, n, fin, true, s));
  QC_TRY(project_site("lm_head", m_.lm_head, offset_rows(fin, n - 1), 1, sc_.logits, c_.n_vocab, nullptr,
                      /*f16=*/false, 0, s));
  if (ch.mtp && m_.has_mtp) QC_TRY(mtp_entries(ch, s));
  return Status::success();
}

// MTP entries for hidden rows r0..r1 (positions pos-1+r, tokens x_{q+1} = pb.tokens[r]): up to n + 1
// rows with both ends known, so in batches of at most `rows` (the buffers' height).
Status PrefillProgram::mtp_entries(const PrefillChunk& ch, cudaStream_t s) const {
  const int r0 = ch.prev_hidden ? 0 : 1, r1 = ch.next_token ? ch.n : ch.n - 1;
  for (int b = r0; b <= r1; b += pb_.rows) QC_TRY(mtp_batch(b, std::min(pb_.rows, r1 - b + 1), s));
  return Status::success();
}

Status PrefillProgram::mtp_batch(int r0, int k, cudaStream_t s) const {
  const int H = c_.n_embd;
  gpu::EmbedArgs e = m_.embd.args(c_.n_vocab, H);
  e.d_tokens = pb_.tokens + r0;
  e.m = k;
  e.out = pb_.h;
  e.ld_out = H;
  QC_TRY(gpu_status("mtp embed", gpu::embed(e, s)));
  // cat = [rmsnorm(embed(t), enorm) | rmsnorm(h, hnorm)]: f32 in proj, quantised in ffn's words.
  QBuf cat = pb_.ffn;
  cat.f = pb_.proj;
  cat.ld_f = 2 * H;
  gpu::MtpConcatArgs mc;
  mc.e = pb_.h;
  mc.ld_e = H;
  mc.h = pb_.hidden + static_cast<size_t>(r0) * H;
  mc.ld_h = H;
  mc.enorm = m_.mtp_enorm;
  mc.hnorm = m_.mtp_hnorm;
  mc.n = H;
  mc.m = k;
  mc.eps = c_.rms_eps;
  mc.out = cat.f;
  mc.ld_out = cat.ld_f;
  mc.out_q = words(cat);
  QC_TRY(gpu_status("mtp concat", gpu::mtp_concat(mc, s)));
  // The block's residual stream, in h (its embedding rows are in cat now), rows of H floats like the layers'
  // projection outputs. Written into mix (rows of 6144 floats) eh_proj took 5.40 ms of a 2048-token prompt,
  // here 4.49 ms (H200, 2026-12-04); the same GEMM alone takes 0.148 ms per 1024 rows in qwenchat-gemm-bench
  // (shape "mtp eh_proj"): the rest is not understood yet (docs/PERFORMANCE.md).
  float* x = pb_.h;
  const int ld_x = H;
  QC_TRY(project("mtp eh_proj", m_.mtp_eh_proj, cat, k, x, ld_x, nullptr, kShiftNormed, s));
  const DevLayer& L = m_.mtp_layer;
  QC_TRY(norm(x, ld_x, L.attn_norm, k, pb_.x, !f16_, s));
  QC_TRY(project("mtp attn in", L.in_proj, pb_.x, k, pb_.proj, L.in_proj.n_out, nullptr, kShiftNormed, s));
  const int n_attn = c_.n_head * c_.head_dim;
  return attention(L, pb_.pos + r0, k, pb_.attn_out, n_attn, nullptr, false, s);
}

}  // namespace qc::cuda
