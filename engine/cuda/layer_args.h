// The part of the mixers' kernel arguments that a layer fixes, in one place for the decode step
// (step_program.cpp: gdn_step, attention_decode) and the prompt path (prefill_program.cpp: gdn_prefill,
// attention_prefill): the model's shape, the layer's weights, its columns of the in-projection output and its
// state (GDN state and conv ring, KV cache). The caller sets what differs between the programs: rows (m),
// positions, outputs, scratch, PDL, the speculative state history.
#pragma once

#include "attention.h"
#include "cuda/buffers.h"
#include "cuda/device_model.h"
#include "gdn.h"
#include "model/config.h"

namespace qc::cuda {

// The GDN shape from the model: heads, head dims, conv kernel (what gdn_prefill_scratch_floats() reads).
gpu::GdnArgs gdn_shape_args(const ModelConfig& c);

// gdn_shape_args() plus layer L's in-projection outputs in proj (rows of L.in_proj.n_out floats: qkv | z |
// beta | alpha), its weights, its state and conv ring in st, and the two norms' eps.
gpu::GdnArgs gdn_layer_args(const ModelConfig& c, const StateBuffers& st, const DevLayer& L,
                            const float* proj);

// Attention layer L: its in-projection outputs in proj (rows of L.in_proj.n_out floats: q+gate | k | v), q/k
// norms, RoPE, heads, and its KV cache in st (n_ctx positions).
gpu::AttentionArgs attention_layer_args(const ModelConfig& c, const StateBuffers& st, const DevLayer& L,
                                        const float* proj, int n_ctx);

}  // namespace qc::cuda
