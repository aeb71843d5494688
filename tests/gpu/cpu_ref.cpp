#include "cpu_ref.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpu_test_util.h"
#include "sample_rng.h"

namespace qc::gpu::test {

void quantize_ref(const float* x, int n, int8_t* hi, int8_t* lo, float* scale) {
  for (int b = 0; b < n / 32; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[b * 32 + j]));
    const float s = amax / 127.0f;
    scale[b] = s;
    for (int j = 0; j < 32; ++j) {
      int qh = 0, ql = 0;
      if (s > 0.0f) {
        const float t = x[b * 32 + j] / s;
        qh = std::clamp(static_cast<int>(std::nearbyint(t)), -127, 127);
        const float r = t - static_cast<float>(qh);
        ql = static_cast<int>(std::nearbyint(r * 127.0f));
      }
      hi[b * 32 + j] = static_cast<int8_t>(qh);
      if (lo) lo[b * 32 + j] = static_cast<int8_t>(ql);
    }
  }
}

double HostQ8::weight(int r, int k) const {
  return static_cast<double>(h_bits2f(d[static_cast<size_t>(r) * (cols / 32) + k / 32])) *
         q[static_cast<size_t>(r) * stride + k];
}

HostQ8 random_q8(std::mt19937& rng, int rows, int cols) {
  HostQ8 w;
  w.rows = rows;
  w.cols = cols;
  w.stride = (cols + 15) / 16 * 16;
  w.q.assign(static_cast<size_t>(rows) * w.stride, 0);
  w.d.resize(static_cast<size_t>(rows) * (cols / 32));
  std::uniform_int_distribution<int> qd(-127, 127);
  std::uniform_real_distribution<float> sd(1e-3f, 2e-2f);
  std::bernoulli_distribution neg(0.25);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < cols; ++k) w.q[static_cast<size_t>(r) * w.stride + k] = static_cast<int8_t>(qd(rng));
  for (auto& s : w.d) s = f2h_bits(neg(rng) ? -sd(rng) : sd(rng));
  return w;
}

double HostAct::value(int row, int col, bool hl) const {
  const double s = scale[static_cast<size_t>(row) * ld_s + col / 32];
  const double h = hi[static_cast<size_t>(row) * ld + col];
  if (!hl) return s * h;
  return s *
         (h + static_cast<double>(lo[static_cast<size_t>(row) * ld + col]) * static_cast<double>(kInv127f));
}

float q8_mma_block_step(float acc, const int8_t* q, const int8_t* hi, const int8_t* lo, bool hl, float xs,
                        uint16_t d) {
  int ih = 0, il = 0;
  for (int k = 0; k < 32; ++k) {
    ih += hi[k] * q[k];
    if (hl) il += lo[k] * q[k];
  }
  const float v =
      hl ? std::fma(static_cast<float>(il), kInv127f, static_cast<float>(ih)) : static_cast<float>(ih);
  return std::fma(v, xs * h_bits2f(d), acc);
}

HostAct make_act(std::mt19937& rng, int m, int k) {
  HostAct a;
  a.m = m;
  a.k = k;
  a.ld = (k + 15) / 16 * 16;
  a.ld_s = k / 32;
  a.src = random_normal(rng, static_cast<size_t>(m) * k, 1.0f);
  // A few large outliers per row, like real hidden states, so block scales vary.
  std::uniform_int_distribution<int> pick(0, k - 1);
  for (int r = 0; r < m; ++r)
    for (int i = 0; i < 3; ++i) a.src[static_cast<size_t>(r) * k + pick(rng)] *= 20.0f;
  a.hi.assign(static_cast<size_t>(m) * a.ld, 0);
  a.lo.assign(static_cast<size_t>(m) * a.ld, 0);
  a.scale.assign(static_cast<size_t>(m) * a.ld_s, 0.0f);
  for (int r = 0; r < m; ++r)
    quantize_ref(a.src.data() + static_cast<size_t>(r) * k, k, a.hi.data() + static_cast<size_t>(r) * a.ld,
                 a.lo.data() + static_cast<size_t>(r) * a.ld,
                 a.scale.data() + static_cast<size_t>(r) * a.ld_s);
  return a;
}

RefGemv gemv_q8_ref(const HostQ8& w, const HostAct& x, bool hl) {
  RefGemv out;
  out.y.assign(static_cast<size_t>(x.m) * w.rows, 0.0);
  out.abs.assign(out.y.size(), 0.0);
  std::vector<double> a(static_cast<size_t>(w.cols));
  for (int m = 0; m < x.m; ++m) {
    for (int k = 0; k < w.cols; ++k) a[k] = x.value(m, k, hl);
    for (int n = 0; n < w.rows; ++n) {
      double s = 0.0, t = 0.0;
      for (int k = 0; k < w.cols; ++k) {
        const double p = w.weight(n, k) * a[k];
        s += p;
        t += std::fabs(p);
      }
      out.y[static_cast<size_t>(m) * w.rows + n] = s;
      out.abs[static_cast<size_t>(m) * w.rows + n] = t;
    }
  }
  return out;
}

RefGemv gemv_q8_f32_ref(const HostQ8& w, const std::vector<float>& x, int m_rows) {
  RefGemv out;
  out.y.assign(static_cast<size_t>(m_rows) * w.rows, 0.0);
  out.abs.assign(out.y.size(), 0.0);
  for (int m = 0; m < m_rows; ++m)
    for (int n = 0; n < w.rows; ++n) {
      double s = 0.0, t = 0.0;
      for (int k = 0; k < w.cols; ++k) {
        const double p = w.weight(n, k) * x[static_cast<size_t>(m) * w.cols + k];
        s += p;
        t += std::fabs(p);
      }
      out.y[static_cast<size_t>(m) * w.rows + n] = s;
      out.abs[static_cast<size_t>(m) * w.rows + n] = t;
    }
  return out;
}

double silu(double x) {
  return x / (1.0 + std::exp(-x));
}
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double softplus(double x) {
  return x > 20.0 ? x : std::log1p(std::exp(x));
}

std::vector<double> rmsnorm_ref(const float* x, const float* w, int n, double eps) {
  double ss = 0.0;
  for (int i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const double inv = 1.0 / std::sqrt(ss / n + eps);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i) y[i] = x[i] * inv * w[i];
  return y;
}

GdnRef::GdnRef(GdnShape s, std::vector<float> conv_w, std::vector<float> dt_bias, std::vector<float> ssm_a,
               std::vector<float> norm_w, const std::vector<float>& state0, double l2_eps, double norm_eps)
    : s_(s),
      conv_w_(std::move(conv_w)),
      dt_bias_(std::move(dt_bias)),
      ssm_a_(std::move(ssm_a)),
      norm_w_(std::move(norm_w)),
      state_(state0.begin(), state0.end()),
      l2_eps_(l2_eps),
      norm_eps_(norm_eps) {}

std::vector<double> GdnRef::step(const float* qkv, const float* z, const float* beta, const float* alpha) {
  const int cd = s_.conv_dim();
  inputs_.emplace_back(qkv, qkv + cd);
  const int t = static_cast<int>(inputs_.size()) - 1;
  // 1. causal depthwise conv over the last kc inputs (zeros before the first token), then SiLU.
  std::vector<double> u(cd);
  for (int c = 0; c < cd; ++c) {
    double acc = 0.0;
    for (int i = 0; i < s_.kc; ++i) {
      const int ti = t - s_.kc + 1 + i;
      const double xin = ti >= 0 ? inputs_[ti][c] : 0.0;
      acc += static_cast<double>(conv_w_[static_cast<size_t>(c) * s_.kc + i]) * xin;
    }
    u[c] = silu(acc);
  }
  std::vector<double> y(static_cast<size_t>(s_.nv) * s_.dv);
  for (int j = 0; j < s_.nv; ++j) {
    const int kh = j % s_.nk;  // GGUF tiled order: value head j reads key head j % nk
    std::vector<double> q(s_.dk), k(s_.dk), v(s_.dv);
    for (int i = 0; i < s_.dk; ++i) {
      q[i] = u[kh * s_.dk + i];
      k[i] = u[s_.nk * s_.dk + kh * s_.dk + i];
    }
    for (int i = 0; i < s_.dv; ++i) v[i] = u[2 * s_.nk * s_.dk + j * s_.dv + i];
    // 2./3. L2 norms, q scale
    double qs = 0.0, ks = 0.0;
    for (int i = 0; i < s_.dk; ++i) {
      qs += q[i] * q[i];
      ks += k[i] * k[i];
    }
    const double qf = 1.0 / std::sqrt(qs + l2_eps_) / std::sqrt(static_cast<double>(s_.dk));
    const double kf = 1.0 / std::sqrt(ks + l2_eps_);
    for (int i = 0; i < s_.dk; ++i) {
      q[i] *= qf;
      k[i] *= kf;
    }
    // 4. gates
    const double b = sigmoid(beta[j]);
    const double g = softplus(static_cast<double>(alpha[j]) + dt_bias_[j]) * ssm_a_[j];
    const double decay = std::exp(g);
    // 5. delta rule
    double* S = state_.data() + static_cast<size_t>(j) * s_.dk * s_.dv;
    for (size_t i = 0; i < static_cast<size_t>(s_.dk) * s_.dv; ++i) S[i] *= decay;
    std::vector<double> o(s_.dv, 0.0);
    for (int c = 0; c < s_.dv; ++c) {
      double mem = 0.0;
      for (int r = 0; r < s_.dk; ++r) mem += S[r * s_.dv + c] * k[r];
      const double delta = b * (v[c] - mem);
      for (int r = 0; r < s_.dk; ++r) S[r * s_.dv + c] += k[r] * delta;
      for (int r = 0; r < s_.dk; ++r) o[c] += S[r * s_.dv + c] * q[r];
    }
    // 6. gated output norm
    double os = 0.0;
    for (double x : o) os += x * x;
    const double inv = 1.0 / std::sqrt(os / s_.dv + norm_eps_);
    for (int c = 0; c < s_.dv; ++c)
      y[static_cast<size_t>(j) * s_.dv + c] = o[c] * inv * norm_w_[c] * silu(z[j * s_.dv + c]);
  }
  return y;
}

std::vector<double> norm_rope_ref(const float* x, const float* w, int dim, double eps, int rope_dims,
                                  double theta, int pos) {
  std::vector<double> y = rmsnorm_ref(x, w, dim, eps);
  std::vector<double> r = y;
  const int half = rope_dims / 2;
  for (int i = 0; i < half; ++i) {
    const double ang = pos * std::pow(theta, -2.0 * i / rope_dims);
    const double c = std::cos(ang), s = std::sin(ang);
    r[i] = y[i] * c - y[i + half] * s;
    r[i + half] = y[i + half] * c + y[i] * s;
  }
  return r;
}

std::vector<double> attention_head_ref(const std::vector<double>& q, const std::vector<double>& keys,
                                       const std::vector<double>& values, int last, int dim,
                                       const float* gate) {
  std::vector<double> score(last + 1);
  double big = -INFINITY;
  for (int t = 0; t <= last; ++t) {
    double s = 0.0;
    for (int d = 0; d < dim; ++d) s += q[d] * keys[static_cast<size_t>(t) * dim + d];
    score[t] = s / std::sqrt(static_cast<double>(dim));
    big = std::max(big, score[t]);
  }
  double sum = 0.0;
  std::vector<double> o(dim, 0.0);
  for (int t = 0; t <= last; ++t) {
    const double p = std::exp(score[t] - big);
    sum += p;
    for (int d = 0; d < dim; ++d) o[d] += p * values[static_cast<size_t>(t) * dim + d];
  }
  for (int d = 0; d < dim; ++d) o[d] = o[d] / sum * sigmoid(gate[d]);
  return o;
}

int sample_ref(const std::vector<float>& logits, const DeviceSampleParams& p, uint64_t counter) {
  const int n = static_cast<int>(logits.size());
  auto val = [&](int i) { return std::isnan(logits[i]) ? -INFINITY : logits[i]; };
  std::vector<int> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + p.top_k, idx.end(),
                    [&](int a, int b) { return val(a) > val(b) || (val(a) == val(b) && a < b); });
  if (!(p.temperature > 0.0f)) return idx[0];
  const double z0 = val(idx[0]);
  std::vector<double> e(p.top_k);
  double total = 0.0;
  for (int i = 0; i < p.top_k; ++i) {
    e[i] = std::exp((static_cast<double>(val(idx[i])) - z0) / static_cast<double>(p.temperature));
    total += e[i];
  }
  int keep = p.top_k;
  if (p.top_p < 1.0f) {
    const double target = static_cast<double>(p.top_p) * total;
    double run = 0.0;
    for (int i = 0; i < p.top_k; ++i) {
      run += e[i];
      if (run >= target) {
        keep = i + 1;
        break;
      }
    }
  }
  if (p.min_p > 0.0f) {
    int j = 1;
    while (j < keep && e[j] >= static_cast<double>(p.min_p)) ++j;
    keep = j;
  }
  double kept = 0.0;
  for (int i = 0; i < keep; ++i) kept += e[i];
  const double target = static_cast<double>(counter_uniform24(p.seed, counter)) * kept;
  double run = 0.0;
  for (int i = 0; i < keep; ++i) {
    run += e[i];
    if (target < run) return idx[i];
  }
  return idx[keep - 1];
}

}  // namespace qc::gpu::test
