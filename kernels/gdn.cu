// Kernel of gdn.h: grid = value heads, block = 2 * head_v_dim threads; thread (half, v) owns rows
// [half*dk/2, +dk/2) of column v of its head's state, in registers (64 for the 27B; a whole column per
// thread needed 255 registers and spilled). Per token: conv + SiLU of the head's q, k (shared memory) and
// the column's v channel, two block reductions for the L2 norms, the delta rule on the half-column (two
// dk/2-long FMA chains, halves added in fixed order through shared memory), one block reduction for the
// gated norm.
#include "common.cuh"
#include "gdn.h"

namespace qc::gpu {
namespace {

constexpr int kMaxDv = 256;

// Conv input of channel ch at position t: this step's rows, the ring for earlier positions, 0 before 0.
__device__ __forceinline__ float conv_input(const GdnArgs& a, int conv_dim, int pos0, int t, int ch) {
  if (t >= pos0) return a.qkv[(t - pos0) * a.ld_qkv + ch];
  if (t < 0) return 0.0f;
  return a.conv_ring[(t % kConvRing) * conv_dim + ch];
}

// silu(sum_i w[ch][i] * x_{p-kc+1+i}[ch]), i ascending.
__device__ __forceinline__ float conv_silu(const GdnArgs& a, int conv_dim, int pos0, int p, int ch) {
  const int kc = a.conv_kernel;
  float acc = 0.0f;
  for (int i = 0; i < kc; ++i)
    acc = __fmaf_rn(a.conv_w[ch * kc + i], conv_input(a, conv_dim, pos0, p - kc + 1 + i, ch), acc);
  return silu(acc);
}

template <int DK>
__global__ void __launch_bounds__(2 * kMaxDv) gdn_kernel(const GdnArgs a) {
  constexpr int KH = DK / 2;  // state rows per thread: thread (half, v) owns S[half*KH .. +KH)[v]
  __shared__ float sq[DK], sk[DK], scratch[32];
  __shared__ float red_mem[2][kMaxDv], red_o[2][kMaxDv];
  pdl_wait();
  pdl_trigger();
  const int j = blockIdx.x, kh = j % a.n_k_heads, dv = a.head_v_dim;
  const int v = threadIdx.x % dv, half = threadIdx.x / dv, k0 = half * KH;
  const int conv_dim = 2 * a.n_k_heads * DK + a.n_v_heads * dv;
  const int q_ch0 = kh * DK, k_ch0 = a.n_k_heads * DK + kh * DK, v_ch = 2 * a.n_k_heads * DK + j * dv + v;
  const bool writes_qk = j == kh;  // exactly one block writes the ring slots of a key head's channels
  const int pos0 = *a.d_pos;
  const float q_scale = __fdiv_rn(1.0f, __fsqrt_rn(static_cast<float>(DK)));
  const float* state_col = a.state + static_cast<size_t>(j) * DK * dv + static_cast<size_t>(k0) * dv + v;

  float S[KH];
#pragma unroll
  for (int k = 0; k < KH; ++k) S[k] = state_col[k * dv];

  for (int mt = 0; mt < a.m; ++mt) {
    const int p = pos0 + mt;
    const int slot = p % kConvRing;
    // 1. conv + SiLU: q and k channels of the key head into shared memory, this column's v channel.
    float qss = 0.0f, kss = 0.0f;
    for (int c = threadIdx.x; c < 2 * DK; c += blockDim.x) {
      const int ch = c < DK ? q_ch0 + c : k_ch0 + (c - DK);
      const float u = conv_silu(a, conv_dim, pos0, p, ch);
      if (c < DK) {
        sq[c] = u;
        qss = __fmaf_rn(u, u, qss);
      } else {
        sk[c - DK] = u;
        kss = __fmaf_rn(u, u, kss);
      }
      if (writes_qk) a.conv_ring[slot * conv_dim + ch] = a.qkv[mt * a.ld_qkv + ch];
    }
    const float vu = conv_silu(a, conv_dim, pos0, p, v_ch);
    if (half == 0) a.conv_ring[slot * conv_dim + v_ch] = a.qkv[mt * a.ld_qkv + v_ch];
    // 2. L2 norms (same thread -> element mapping as above, so no barrier before the rescale).
    const float qn =
        __fmul_rn(__fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(block_sum(qss, scratch), a.l2_eps))), q_scale);
    const float kn = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(block_sum(kss, scratch), a.l2_eps)));
    for (int c = threadIdx.x; c < 2 * DK; c += blockDim.x) {
      if (c < DK)
        sq[c] = __fmul_rn(sq[c], qn);
      else
        sk[c - DK] = __fmul_rn(sk[c - DK], kn);
    }
    __syncthreads();
    // 3. gates
    const float beta = sigmoid(a.beta[mt * a.ld_beta + j]);
    const float g = __fmul_rn(softplus(__fadd_rn(a.alpha[mt * a.ld_alpha + j], a.dt_bias[j])), a.ssm_a[j]);
    const float decay = expf(g);
    // 4. delta rule on column v; the two halves' partial dot products are added in fixed order (0 + 1).
    float mem = 0.0f;
#pragma unroll
    for (int k = 0; k < KH; ++k) {
      S[k] = __fmul_rn(S[k], decay);
      mem = __fmaf_rn(S[k], sk[k0 + k], mem);
    }
    red_mem[half][v] = mem;
    __syncthreads();
    const float delta = __fmul_rn(beta, __fsub_rn(vu, __fadd_rn(red_mem[0][v], red_mem[1][v])));
    float o = 0.0f;
#pragma unroll
    for (int k = 0; k < KH; ++k) {
      S[k] = __fmaf_rn(sk[k0 + k], delta, S[k]);
      o = __fmaf_rn(S[k], sq[k0 + k], o);
    }
    red_o[half][v] = o;
    if (a.state_per_token && mt < a.n_state_per_token) {  // block-uniform condition
      const size_t ld =
          a.ld_state_per_token ? a.ld_state_per_token : static_cast<size_t>(a.n_v_heads) * DK * dv;
      float* dst = a.state_per_token + static_cast<size_t>(mt) * ld + static_cast<size_t>(j) * DK * dv +
                   static_cast<size_t>(k0) * dv + v;
#pragma unroll
      for (int k = 0; k < KH; ++k) dst[k * dv] = S[k];
    }
    __syncthreads();
    o = __fadd_rn(red_o[0][v], red_o[1][v]);
    // 5. gated output norm (each column counted once: by its half-0 thread)
    const float oss = block_sum(half == 0 ? __fmul_rn(o, o) : 0.0f, scratch);
    if (half == 0) {  // warp-uniform: dv is a multiple of 32
      const float inv =
          __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(oss, static_cast<float>(dv)), a.norm_eps)));
      const float gate = silu(a.z[mt * a.ld_z + j * dv + v]);
      const float y = __fmul_rn(__fmul_rn(__fmul_rn(o, inv), a.norm_w[v]), gate);
      const int col = j * dv + v;
      if (a.out) a.out[mt * a.ld_out + col] = y;
      if (a.out_q.hi) {
        const int wcol = col - (threadIdx.x & 31);
        quantize_block_warp(y, a.out_q.hi + mt * a.out_q.ld + wcol,
                            a.out_q.lo ? a.out_q.lo + mt * a.out_q.ld + wcol : nullptr,
                            a.out_q.scale + mt * a.out_q.ld_scale + wcol / kQBlock);
      }
    }
    __syncthreads();  // sq, sk and red_* are rewritten by the next token
  }
  float* state_out = a.state + static_cast<size_t>(j) * DK * dv + static_cast<size_t>(k0) * dv + v;
#pragma unroll
  for (int k = 0; k < KH; ++k) state_out[k * dv] = S[k];
}

}  // namespace

GpuStatus gdn_step(const GdnArgs& a, cudaStream_t stream) {
  QC_GPU_REQUIRE(a.qkv && a.z && a.beta && a.alpha && a.conv_w && a.dt_bias && a.ssm_a && a.norm_w &&
                     a.conv_ring && a.state && a.d_pos,
                 "gdn_step: a required pointer is null");
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kMaxTokens, "gdn_step: M must be in [1, 4], got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.head_k_dim == 64 || a.head_k_dim == 128,
                 "gdn_step: head_k_dim must be 64 or 128, got " + std::to_string(a.head_k_dim));
  QC_GPU_REQUIRE(
      a.head_v_dim >= 32 && a.head_v_dim <= kMaxDv && a.head_v_dim % 32 == 0,
      "gdn_step: head_v_dim must be a multiple of 32 in [32, 256], got " + std::to_string(a.head_v_dim));
  QC_GPU_REQUIRE(a.n_k_heads > 0 && a.n_v_heads >= a.n_k_heads && a.n_v_heads % a.n_k_heads == 0,
                 "gdn_step: n_v_heads (" + std::to_string(a.n_v_heads) +
                     ") must be a multiple of n_k_heads (" + std::to_string(a.n_k_heads) + ")");
  QC_GPU_REQUIRE(a.conv_kernel >= 1 && a.m + a.conv_kernel - 1 <= kConvRing,
                 "gdn_step: need M + conv_kernel - 1 <= " + std::to_string(kConvRing) +
                     ", got M=" + std::to_string(a.m) + " conv_kernel=" + std::to_string(a.conv_kernel));
  const int inner = a.n_v_heads * a.head_v_dim;
  QC_GPU_REQUIRE(
      a.ld_qkv >= a.conv_dim() && a.ld_z >= inner && a.ld_beta >= a.n_v_heads && a.ld_alpha >= a.n_v_heads,
      "gdn_step: ld_qkv >= conv_dim (" + std::to_string(a.conv_dim()) +
          "), ld_z >= Nv*dv, ld_beta/alpha >= Nv required");
  QC_GPU_REQUIRE(
      !a.state_per_token ||
          (a.n_state_per_token >= 0 &&
           (a.ld_state_per_token == 0 ||
            a.ld_state_per_token >= static_cast<size_t>(a.n_v_heads) * a.head_k_dim * a.head_v_dim)),
      "gdn_step: state_per_token needs n_state_per_token >= 0 and ld_state_per_token 0 or >= Nv*dk*dv");
  QC_GPU_REQUIRE(a.out || a.out_q.hi, "gdn_step: no output requested");
  QC_GPU_REQUIRE(!a.out16, "gdn_step: out16 is gdn_prefill's output only (must be null)");
  QC_GPU_REQUIRE(!a.out || a.ld_out >= inner, "gdn_step: ld_out must be >= Nv*dv=" + std::to_string(inner));
  QC_GPU_REQUIRE(!a.out_q.hi || (a.out_q.scale && a.out_q.ld >= inner && a.out_q.ld_scale >= inner / kQBlock),
                 "gdn_step: out_q needs scale, ld >= Nv*dv and ld_scale >= Nv*dv/32");
  cudaError_t e;
  if (a.head_k_dim == 128)
    e = launch_kernel(gdn_kernel<128>, dim3(a.n_v_heads), dim3(2 * a.head_v_dim), 0, stream, a.pdl, a);
  else
    e = launch_kernel(gdn_kernel<64>, dim3(a.n_v_heads), dim3(2 * a.head_v_dim), 0, stream, a.pdl, a);
  if (e != cudaSuccess) return GpuStatus::cuda(e, "launch gdn_kernel", __FILE__, __LINE__);
  QC_LAUNCH_CHECK("gdn_kernel", stream);
  return GpuStatus::success();
}

}  // namespace qc::gpu
