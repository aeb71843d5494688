// Whole-model check of the importer: the double CPU reference running the converted F32 GGUF must give the
// logits (and MTP logits) of an independent forward pass written here in the Hugging Face conventions,
// straight from the HF tensors: zero-centred norms used as (1 + w), A = -exp(A_log), value heads grouped
// by key head (value head h reads key head h / (Nv/Nk)), conv1d as [channels][1][kernel], and the MTP block
// as vLLM's qwen3_5_mtp runs it (fc over [pre_fc_norm_embedding(embed) | pre_fc_norm_hidden(h)], one
// decoder layer, mtp.norm, the shared lm_head). Nothing here uses the importer's mapping, so a wrong
// name, transform or head order shows up as a logit difference.
#include <gtest/gtest.h>

#include <cmath>

#include "import/convert.h"
#include "model/model.h"
#include "reference/reference_backend.h"
#include "temp_dir.h"
#include "test_import_checkpoint.h"

namespace qc {
namespace {

using Vec = std::vector<double>;

double silu(double x) {
  return x / (1.0 + std::exp(-x));
}
double sigm(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

struct HfForward {
  const test::TinyHfSpec& s;
  const test::HfWeights& w;
  std::string P;  // text-model prefix

  const std::vector<float>& t(const std::string& name) const { return w[name]; }

  // y = W x for a [out][in] HF weight.
  Vec mv(const std::string& name, const Vec& x) const {
    const std::vector<float>& m = t(name);
    const size_t in = x.size(), out = m.size() / in;
    EXPECT_EQ(w.shape.at(name).back(), in) << name;
    Vec y(out, 0.0);
    for (size_t r = 0; r < out; ++r) {
      for (size_t c = 0; c < in; ++c) y[r] += static_cast<double>(m[r * in + c]) * x[c];
    }
    return y;
  }

  // Qwen3_5RMSNorm over x[off, off + n): x_hat * (1 + w), the (1 + w) formed in f32 as transformers does.
  // Its eps (config 1e-6) is added to an f32 tensor, so it acts as 1e-6f, which the GGUF stores too; the
  // difference to a double 1e-6 (3e-15) matters for the GDN output norm of small head outputs.
  static constexpr double kEps = static_cast<double>(1e-6f);
  Vec norm(const Vec& x, size_t off, size_t n, const std::string& name, bool plus_one = true) const {
    const std::vector<float>& g = t(name);
    double ss = 0.0;
    for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(n) + kEps);
    Vec y(n);
    for (size_t i = 0; i < n; ++i)
      y[i] = x[off + i] * r * (plus_one ? static_cast<double>(1.0f + g[i]) : g[i]);
    return y;
  }
  Vec norm(const Vec& x, const std::string& name) const { return norm(x, 0, x.size(), name); }

  Vec embed(int32_t tok) const {
    const std::vector<float>& e = t(P + "embed_tokens.weight");
    const size_t H = static_cast<size_t>(s.hidden);
    return Vec(e.begin() + static_cast<ptrdiff_t>(tok * H),
               e.begin() + static_cast<ptrdiff_t>((tok + 1) * H));
  }
  Vec lm_head(const Vec& h) const { return mv(s.tied ? P + "embed_tokens.weight" : "lm_head.weight", h); }

  Vec mlp(const std::string& p, const Vec& x) const {
    const Vec g = mv(p + "mlp.gate_proj.weight", x), u = mv(p + "mlp.up_proj.weight", x);
    Vec a(g.size());
    for (size_t i = 0; i < g.size(); ++i) a[i] = silu(g[i]) * u[i];
    return mv(p + "mlp.down_proj.weight", a);
  }

  // rotate_half RoPE on the first rot dims of x[off, off + head_dim).
  void rope(Vec& x, size_t off, int pos) const {
    const int rot = static_cast<int>(s.head_dim * s.partial_rotary), half = rot / 2;
    for (int i = 0; i < half; ++i) {
      const double inv_freq = 1.0 / std::pow(s.rope_theta, 2.0 * i / rot);
      const double c = std::cos(pos * inv_freq), sn = std::sin(pos * inv_freq);
      const double x0 = x[off + static_cast<size_t>(i)], x1 = x[off + static_cast<size_t>(i + half)];
      x[off + static_cast<size_t>(i)] = x0 * c - x1 * sn;
      x[off + static_cast<size_t>(i + half)] = x1 * c + x0 * sn;
    }
  }

  // Qwen3_5Attention over a whole sequence of normed inputs (positions 0..T-1).
  std::vector<Vec> attention(const std::string& p, const std::vector<Vec>& xs) const {
    const size_t hd = static_cast<size_t>(s.head_dim);
    const int nq = s.heads, nkv = s.kv_heads;
    std::vector<Vec> K, V, out;
    for (size_t pos = 0; pos < xs.size(); ++pos) {
      const Vec qg = mv(p + "self_attn.q_proj.weight", xs[pos]);  // per head [query | gate]
      Vec k = mv(p + "self_attn.k_proj.weight", xs[pos]);
      const Vec v = mv(p + "self_attn.v_proj.weight", xs[pos]);
      Vec q(static_cast<size_t>(nq) * hd), gate(static_cast<size_t>(nq) * hd);
      for (int h = 0; h < nq; ++h) {
        const Vec qn = norm(qg, static_cast<size_t>(h) * 2 * hd, hd, p + "self_attn.q_norm.weight");
        for (size_t i = 0; i < hd; ++i) {
          q[h * hd + i] = qn[i];
          gate[h * hd + i] = qg[static_cast<size_t>(h) * 2 * hd + hd + i];
        }
        rope(q, h * hd, static_cast<int>(pos));
      }
      for (int g = 0; g < nkv; ++g) {
        const Vec kn = norm(k, static_cast<size_t>(g) * hd, hd, p + "self_attn.k_norm.weight");
        std::copy(kn.begin(), kn.end(), k.begin() + static_cast<ptrdiff_t>(g * hd));
        rope(k, g * hd, static_cast<int>(pos));
      }
      K.push_back(k);
      V.push_back(v);
      Vec o(static_cast<size_t>(nq) * hd, 0.0);
      for (int h = 0; h < nq; ++h) {
        const size_t g = static_cast<size_t>(h / (nq / nkv));  // repeat_kv
        Vec sc(K.size());
        double mx = -1e300, sum = 0.0;
        for (size_t j = 0; j < K.size(); ++j) {
          double d = 0.0;
          for (size_t i = 0; i < hd; ++i) d += q[h * hd + i] * K[j][g * hd + i];
          sc[j] = d / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, sc[j]);
        }
        for (double& x : sc) sum += (x = std::exp(x - mx));
        for (size_t j = 0; j < K.size(); ++j) {
          for (size_t i = 0; i < hd; ++i) o[h * hd + i] += sc[j] / sum * V[j][g * hd + i];
        }
        for (size_t i = 0; i < hd; ++i) o[h * hd + i] *= sigm(gate[h * hd + i]);
      }
      out.push_back(mv(p + "self_attn.o_proj.weight", o));
    }
    return out;
  }

  // Qwen3_5GatedDeltaNet over a whole sequence (torch_recurrent_gated_delta_rule's order of operations).
  std::vector<Vec> gated_deltanet(const std::string& p, const std::vector<Vec>& xs) const {
    const std::string a = p + "linear_attn.";
    const size_t Nk = static_cast<size_t>(s.nk), Nv = static_cast<size_t>(s.nv);
    const size_t Dk = static_cast<size_t>(s.dk), Dv = static_cast<size_t>(s.dv),
                 Kc = static_cast<size_t>(s.conv);
    const size_t C = 2 * Nk * Dk + Nv * Dv, T = xs.size();
    std::vector<Vec> mixed, z, b, al;
    for (const Vec& x : xs) {
      mixed.push_back(mv(a + "in_proj_qkv.weight", x));
      z.push_back(mv(a + "in_proj_z.weight", x));
      b.push_back(mv(a + "in_proj_b.weight", x));
      al.push_back(mv(a + "in_proj_a.weight", x));
    }
    const std::vector<float>& conv = t(a + "conv1d.weight");  // [C][1][Kc]
    std::vector<Vec> u(T, Vec(C));
    for (size_t tt = 0; tt < T; ++tt) {
      for (size_t c = 0; c < C; ++c) {
        double acc = 0.0;
        for (size_t j = 0; j < Kc; ++j) {
          const ptrdiff_t src = static_cast<ptrdiff_t>(tt + j) - static_cast<ptrdiff_t>(Kc - 1);
          if (src >= 0) acc += static_cast<double>(conv[c * Kc + j]) * mixed[static_cast<size_t>(src)][c];
        }
        u[tt][c] = silu(acc);
      }
    }
    const std::vector<float>& A_log = t(a + "A_log");
    const std::vector<float>& dt_bias = t(a + "dt_bias");
    std::vector<Vec> y(T, Vec(Nv * Dv));
    for (size_t h = 0; h < Nv; ++h) {
      const size_t kh = h / (Nv / Nk);       // grouped: value head h reads key head h / (Nv/Nk)
      const double A = -std::exp(A_log[h]);  // A_log.float().exp() in f32
      Vec S(Dk * Dv, 0.0);
      for (size_t tt = 0; tt < T; ++tt) {
        Vec q(u[tt].begin() + static_cast<ptrdiff_t>(kh * Dk),
              u[tt].begin() + static_cast<ptrdiff_t>((kh + 1) * Dk));
        Vec k(u[tt].begin() + static_cast<ptrdiff_t>((Nk + kh) * Dk),
              u[tt].begin() + static_cast<ptrdiff_t>((Nk + kh + 1) * Dk));
        const size_t v0 = 2 * Nk * Dk + h * Dv;
        double qq = 0.0, kk = 0.0;
        for (size_t i = 0; i < Dk; ++i) qq += q[i] * q[i], kk += k[i] * k[i];
        for (size_t i = 0; i < Dk; ++i) {  // l2norm, eps 1e-6 as the reference uses it

          q[i] = q[i] / std::sqrt(qq + 1e-6) / std::sqrt(static_cast<double>(Dk));
          k[i] = k[i] / std::sqrt(kk + 1e-6);
        }
        const double beta = sigm(b[tt][h]);
        const double g = A * std::log1p(std::exp(al[tt][h] + static_cast<double>(dt_bias[h])));
        Vec o(Dv, 0.0);
        for (size_t col = 0; col < Dv; ++col) {
          double mem = 0.0;
          for (size_t r = 0; r < Dk; ++r) mem += (S[r * Dv + col] *= std::exp(g)) * k[r];
          const double delta = beta * (u[tt][v0 + col] - mem);
          for (size_t r = 0; r < Dk; ++r) S[r * Dv + col] += k[r] * delta;
          for (size_t r = 0; r < Dk; ++r) o[col] += S[r * Dv + col] * q[r];
        }
        const Vec on = norm(o, 0, Dv, a + "norm.weight", /*plus_one=*/false);  // RMSNormGated: no +1
        for (size_t i = 0; i < Dv; ++i) y[tt][h * Dv + i] = on[i] * silu(z[tt][h * Dv + i]);
      }
    }
    std::vector<Vec> out;
    for (const Vec& yy : y) out.push_back(mv(a + "out_proj.weight", yy));
    return out;
  }

  // One decoder layer over the sequence, in place.
  void layer(const std::string& p, bool full, std::vector<Vec>& x) const {
    std::vector<Vec> xn;
    for (const Vec& h : x) xn.push_back(norm(h, p + "input_layernorm.weight"));
    const std::vector<Vec> mix = full ? attention(p, xn) : gated_deltanet(p, xn);
    for (size_t tt = 0; tt < x.size(); ++tt) {
      for (size_t i = 0; i < x[tt].size(); ++i) x[tt][i] += mix[tt][i];
      const Vec f = mlp(p, norm(x[tt], p + "post_attention_layernorm.weight"));
      for (size_t i = 0; i < x[tt].size(); ++i) x[tt][i] += f[i];
    }
  }

  // Logits and post-norm hidden states of the main model.
  void run(const std::vector<int32_t>& tokens, std::vector<Vec>* logits, std::vector<Vec>* hidden) const {
    std::vector<Vec> x;
    for (int32_t tok : tokens) x.push_back(embed(tok));
    for (int il = 0; il < s.layers; ++il) {
      layer(P + "layers." + std::to_string(il) + ".", (il + 1) % s.interval == 0, x);
    }
    for (const Vec& h : x) {
      hidden->push_back(norm(h, P + "norm.weight"));
      logits->push_back(lm_head(hidden->back()));
    }
  }

  // MTP logits for positions 0..n-1: the block at position p sees token next[p] and hidden h[p].
  std::vector<Vec> mtp(const std::vector<int32_t>& next, const std::vector<Vec>& h) const {
    std::vector<Vec> x;
    for (size_t p = 0; p < next.size(); ++p) {
      Vec cat = norm(embed(next[p]), "mtp.pre_fc_norm_embedding.weight");
      const Vec hn = norm(h[p], "mtp.pre_fc_norm_hidden.weight");
      cat.insert(cat.end(), hn.begin(), hn.end());
      x.push_back(mv("mtp.fc.weight", cat));
    }
    layer("mtp.layers.0.", /*full=*/true, x);
    std::vector<Vec> out;
    for (const Vec& v : x) out.push_back(lm_head(norm(v, "mtp.norm.weight")));
    return out;
  }
};

// The backend hands out float values of a double computation: they must be the HF forward's values rounded
// to float, give or take the double rounding of two summation orders (~1e-16 x the sum of |terms| per
// operation, a few hundred operations deep with O(1) terms: below 1e-12 absolute). Tolerance: half an f32
// ulp (2^-24 relative) for the output rounding + 1e-12. (With eps as a double 1e-6 instead of 1e-6f in the
// HF norms, one logit in ~4000 already missed this by 0.8 ulp: the bound is tight enough to see that.)
double tol(double want) {
  return std::fabs(want) * 0x1p-24 + 1e-12;
}

// The HF weights as a Q8_0 file holds them: every 2-D weight but in_proj_a/b and conv1d quantized and
// dequantized in blocks of 32 along its rows (value-head reorders move whole rows or Dv-column chunks, so
// the blocks are the same in both layouts when Dv % 32 == 0).
test::HfWeights q8_rounded(test::HfWeights w) {
  for (auto& [name, v] : w.value) {
    const bool skip = w.shape[name].size() != 2 || name.find("in_proj_a.") != std::string::npos ||
                      name.find("in_proj_b.") != std::string::npos;
    if (skip) continue;
    std::vector<uint8_t> q(dtype_bytes(DType::kQ8_0, v.size()));
    quantize_q8_0(v.data(), q.data(), static_cast<int64_t>(v.size()));
    dequantize_q8_0(q.data(), v.data(), static_cast<int64_t>(v.size()));
  }
  return w;
}

void check_converted_against_hf(const test::TinyHfSpec& s, DType out_type = DType::kF32) {
  test::TempDir dir;
  const test::HfWeights stored = test::make_hf_weights(s);
  test::write_hf_checkpoint(dir.file("ckpt"), s, stored);
  const test::HfWeights w = out_type == DType::kQ8_0 ? q8_rounded(stored) : stored;
  ConvertOptions o;
  o.input_dir = dir.file("ckpt");
  o.out_path = dir.file("model.gguf");
  o.import.mix = quant_mix_of(out_type);
  auto conv = convert_hf_checkpoint(o);
  ASSERT_TRUE(conv.ok()) << conv.error().describe();
  auto model = Model::load(o.out_path);
  ASSERT_TRUE(model.ok()) << model.error().describe();
  ReferenceOptions ro;
  ro.precision = RefPrecision::kDouble;
  ro.n_ctx = 16;
  ro.n_threads = 1;
  auto b = make_reference_backend((*model)->config(), (*model)->weights(), ro);
  ASSERT_TRUE(b.ok()) << b.error().describe();

  const std::vector<int32_t> tokens = {3, 250, 17, 42, 5, 299, 8};
  const HfForward hf{s, w, test::text_prefix(s)};
  std::vector<Vec> want_logits, want_hidden;
  hf.run(tokens, &want_logits, &want_hidden);

  auto out = (*b)->forward(tokens, 0);
  ASSERT_TRUE(out.ok()) << out.error().describe();
  const size_t V = static_cast<size_t>(s.vocab_size), H = static_cast<size_t>(s.hidden);
  double worst = 0.0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    for (size_t i = 0; i < V; ++i) {
      const double d = out->logits[t * V + i] - want_logits[t][i];
      worst = std::max(worst, std::fabs(d));
      ASSERT_NEAR(out->logits[t * V + i], want_logits[t][i], tol(want_logits[t][i]))
          << "position " << t << " logit " << i;
    }
  }
  const std::vector<float> hidden(out->hidden.begin(), out->hidden.end());

  // MTP at positions 0..T-2, fed the backend's own (float) hidden states on both sides.
  ASSERT_EQ((*b)->has_mtp(), s.mtp);
  if (!s.mtp) return;
  std::vector<int32_t> next(tokens.begin() + 1, tokens.end());
  std::vector<Vec> h;
  for (size_t p = 0; p < next.size(); ++p)
    h.emplace_back(hidden.begin() + static_cast<ptrdiff_t>(p * H),
                   hidden.begin() + static_cast<ptrdiff_t>((p + 1) * H));
  const std::vector<Vec> want_mtp = hf.mtp(next, h);
  for (size_t p = 0; p < next.size(); ++p) {
    auto m =
        (*b)->mtp_forward(next[p], std::span<const float>(hidden).subspan(p * H, H), static_cast<int>(p));
    ASSERT_TRUE(m.ok()) << m.error().describe();
    for (size_t i = 0; i < V; ++i) {
      worst = std::max(worst, std::fabs(m->logits[i] - want_mtp[p][i]));
      ASSERT_NEAR(m->logits[i], want_mtp[p][i], tol(want_mtp[p][i]))
          << "MTP position " << p << " logit " << i;
    }
  }
  std::printf("[ converted vs HF-convention forward ] max |dlogit| = %.3g\n", worst);
}

TEST(ImportModel, ConvertedF32MatchesHfForwardShardedUntied) {
  test::TinyHfSpec s;  // multimodal naming, F32, 2 shards, untied, MTP
  check_converted_against_hf(s);
}

TEST(ImportModel, ConvertedF32MatchesHfForwardBf16TiedTextOnly) {
  test::TinyHfSpec s;
  s.dtype = "BF16";
  s.tied = true;
  s.nested = false;
  s.shards = 1;
  s.nk = 1;  // six value heads on one key head, a different grouping
  s.seed = 11;
  check_converted_against_hf(s);
}

// Q8_0: the reference on the Q8_0 file against the HF forward on the Q8_0-rounded HF weights (Dv = 32).
TEST(ImportModel, ConvertedQ8_0MatchesHfForwardOnRoundedWeights) {
  test::TinyHfSpec s;
  check_converted_against_hf(s, DType::kQ8_0);
}

}  // namespace
}  // namespace qc
