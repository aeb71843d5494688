// CPU implementations the GPU kernels are checked against: the activation quantiser (a bit-exact mirror:
// same IEEE f32 steps), and double-precision references of every other operation, written like the math
// in QWEN35.md rather than like the kernels.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "sample.h"

namespace qc::gpu::test {

inline constexpr float kInv127f = 1.0f / 127.0f;

// Bit-exact mirror of quantize_block_warp (common.cuh) over n values (n multiple of 32); lo may be null.
void quantize_ref(const float* x, int n, int8_t* hi, int8_t* lo, float* scale);

// Q8_0 weights in the split layout, on the host.
struct HostQ8 {
  int rows = 0, cols = 0, stride = 0;
  std::vector<int8_t> q;    // [rows][stride]
  std::vector<uint16_t> d;  // [rows][cols/32] f16 bits
  double weight(int r, int k) const;
};
// Random int8 in [-127, 127], scales in [1e-3, 2e-2] with random sign, rounded to f16.
HostQ8 random_q8(std::mt19937& rng, int rows, int cols);

// One Q8_0 block's step of the int8 tensor-core contracts (gemm_q8.h, gemv_q8/gemv_q8_mma.cu), in their f32
// steps: ih, il = the exact int dot products of the block's 32 weights q with the activation words hi, lo;
// v = ih (h) or fmaf(il, kInv127f, ih) (hl); returns fmaf(v, xs * f16(d), acc), the product rounded first.
float q8_mma_block_step(float acc, const int8_t* q, const int8_t* hi, const int8_t* lo, bool hl, float xs,
                        uint16_t d);

// Quantised activations of M rows (both words), built from random floats by quantize_ref.
struct HostAct {
  int m = 0, k = 0, ld = 0, ld_s = 0;
  std::vector<float> src;      // [m][k] the floats that were quantised
  std::vector<int8_t> hi, lo;  // [m][ld]
  std::vector<float> scale;    // [m][ld_s]
  // The value the kernels see: s*hi (h) or s*(hi + lo*kInv127f) (hl), exact in double.
  double value(int row, int col, bool hl) const;
};
HostAct make_act(std::mt19937& rng, int m, int k);

// y[m][n] = sum_k W[n][k] a[m][k] in double, and sum_k |W[n][k] a[m][k]| (for error bounds).
struct RefGemv {
  std::vector<double> y, abs;
};
RefGemv gemv_q8_ref(const HostQ8& w, const HostAct& x, bool hl);
RefGemv gemv_q8_f32_ref(const HostQ8& w, const std::vector<float>& x, int m);  // x [m][cols]

double silu(double x);
double sigmoid(double x);
double softplus(double x);

// rmsnorm in double: x * w / sqrt(mean(x^2) + eps).
std::vector<double> rmsnorm_ref(const float* x, const float* w, int n, double eps);

// Gated DeltaNet, one token at a time, in double (QWEN35.md section 3).
struct GdnShape {
  int nk = 0, nv = 0, dk = 0, dv = 0, kc = 4;
  int conv_dim() const { return 2 * nk * dk + nv * dv; }
};
class GdnRef {
 public:
  GdnRef(GdnShape s, std::vector<float> conv_w, std::vector<float> dt_bias, std::vector<float> ssm_a,
         std::vector<float> norm_w, const std::vector<float>& state0, double l2_eps, double norm_eps);
  // One token: qkv [conv_dim], z [nv*dv], beta/alpha [nv]; returns y [nv*dv].
  std::vector<double> step(const float* qkv, const float* z, const float* beta, const float* alpha);
  const std::vector<double>& state() const { return state_; }  // [nv][dk][dv]

 private:
  GdnShape s_;
  std::vector<float> conv_w_, dt_bias_, ssm_a_, norm_w_;
  std::vector<double> state_;
  std::vector<std::vector<float>> inputs_;  // conv inputs of every past token
  double l2_eps_, norm_eps_;
};

// NeoX partial RoPE + per-head RMSNorm of one head in double (attention.h).
std::vector<double> norm_rope_ref(const float* x, const float* w, int dim, double eps, int rope_dims,
                                  double theta, int pos);

// Decode attention of one query head over positions 0..last with keys/values given in double
// ([pos][dim]); returns o * sigmoid(gate).
std::vector<double> attention_head_ref(const std::vector<double>& q, const std::vector<double>& keys,
                                       const std::vector<double>& values, int last, int dim,
                                       const float* gate);

// The sampling rule of sample.h in double.
int sample_ref(const std::vector<float>& logits, const DeviceSampleParams& p, uint64_t counter);

}  // namespace qc::gpu::test
