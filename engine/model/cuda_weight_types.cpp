#include "model/cuda_weight_types.h"

#include <string>
#include <vector>

namespace qc {
namespace {

void add_layer(const LayerWeights& l, std::vector<const TensorView*>& out) {
  if (l.recurrent) {
    for (const TensorView* t : {&l.gdn.wqkv, &l.gdn.wgate, &l.gdn.wbeta, &l.gdn.walpha, &l.gdn.wout})
      out.push_back(t);
  } else {
    for (const TensorView* t : {&l.attn.wq, &l.attn.wk, &l.attn.wv, &l.attn.wo}) out.push_back(t);
  }
  for (const TensorView* t : {&l.ffn.gate, &l.ffn.up, &l.ffn.down}) out.push_back(t);
}

}  // namespace

bool cuda_reads_matrix_type(DType t) {
  switch (t) {  // no default: a new DType must be decided here (-Wswitch)
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return true;
  }
  return false;
}

Status check_cuda_weight_types(const ModelWeights& w) {
  std::vector<const TensorView*> matrices = {&w.token_embd, &w.output};
  for (const LayerWeights& l : w.layers) add_layer(l, matrices);
  if (w.mtp) {
    matrices.push_back(&w.mtp->eh_proj);
    add_layer(w.mtp->layer, matrices);
  }
  for (const TensorView* t : matrices) {
    if (cuda_reads_matrix_type(t->type)) continue;
    const std::string what = "; the CUDA kernels read F32/F16/BF16/Q8_0/Q4_0/Q5_0/Q4_K/Q5_K/Q6_K";
    return make_error("tensor " + (t->name.empty() ? std::string("(unnamed)") : t->name) + " has type " +
                          dtype_name(t->type) + what,
                      "use the CPU backend (--backend cpu, or CPU in the model panel) for this model");
  }
  return Status::success();
}

}  // namespace qc
