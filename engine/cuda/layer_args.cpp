#include "cuda/layer_args.h"

namespace qc::cuda {

gpu::GdnArgs gdn_shape_args(const ModelConfig& c) {
  gpu::GdnArgs g;
  g.n_k_heads = c.ssm_n_k_heads;
  g.n_v_heads = c.ssm_n_v_heads;
  g.head_k_dim = c.ssm_head_k_dim;
  g.head_v_dim = c.ssm_head_v_dim;
  g.conv_kernel = c.ssm_conv_kernel;
  return g;
}

gpu::GdnArgs gdn_layer_args(const ModelConfig& c, const StateBuffers& st, const DevLayer& L,
                            const float* proj) {
  const int ldp = L.in_proj.n_out;
  gpu::GdnArgs g = gdn_shape_args(c);
  g.qkv = proj;
  g.ld_qkv = ldp;
  g.z = proj + L.col_z;
  g.ld_z = ldp;
  g.beta = proj + L.col_beta;
  g.ld_beta = ldp;
  g.alpha = proj + L.col_alpha;
  g.ld_alpha = ldp;
  g.conv_w = L.conv_w;
  g.dt_bias = L.dt_bias;
  g.ssm_a = L.ssm_a;
  g.norm_w = L.ssm_norm;
  g.conv_ring = st.ring(L.gdn_index);
  g.state = st.state(L.gdn_index);
  g.l2_eps = 1e-6f;  // transformers' l2norm eps (docs/REFERENCE.md), not rms_eps
  g.norm_eps = c.rms_eps;
  return g;
}

gpu::AttentionArgs attention_layer_args(const ModelConfig& c, const StateBuffers& st, const DevLayer& L,
                                        const float* proj, int n_ctx) {
  const int ldp = L.in_proj.n_out;
  gpu::AttentionArgs a;
  a.q_gate = proj;
  a.ld_q = ldp;
  a.k = proj + L.col_k;
  a.ld_k = ldp;
  a.v = proj + L.col_v;
  a.ld_v = ldp;
  a.q_norm = L.q_norm;
  a.k_norm = L.k_norm;
  a.eps = c.rms_eps;
  a.rope_theta = c.rope_theta;
  a.rope_dims = c.rope_dims;
  a.n_head = c.n_head;
  a.n_kv = L.n_kv;
  a.head_dim = c.head_dim;
  a.k_cache = st.k_cache[static_cast<size_t>(L.kv_index)];
  a.v_cache = st.v_cache[static_cast<size_t>(L.kv_index)];
  a.max_ctx = n_ctx;
  return a;
}

}  // namespace qc::cuda
