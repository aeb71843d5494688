#include "runtime/model_facts.h"

#include <array>

#include "model/quant.h"

namespace qc {
namespace {

// The type holding most of the layers' projection bytes: what "the quantization" of a file means to a
// user (norms and small vectors stay F32 in every format).
std::string dominant_weight_type(const ModelWeights& w) {
  std::array<uint64_t, kDTypeCount> bytes{};  // indexed by DType (K-quant files use all nine)
  auto add = [&](const TensorView& t) {
    if (t.present()) bytes[static_cast<size_t>(t.type)] += t.nbytes();
  };
  for (const LayerWeights& l : w.layers) {
    add(l.ffn.gate);
    add(l.ffn.up);
    add(l.ffn.down);
    if (l.recurrent) {
      add(l.gdn.wqkv);
      add(l.gdn.wgate);
      add(l.gdn.wout);
    } else {
      add(l.attn.wq);
      add(l.attn.wk);
      add(l.attn.wv);
      add(l.attn.wo);
    }
  }
  size_t best = 0;
  for (size_t i = 1; i < bytes.size(); ++i) {
    if (bytes[i] > bytes[best]) best = i;
  }
  return dtype_name(static_cast<DType>(best));
}

}  // namespace

ModelFacts describe_model(const Engine& engine, const KernelConfig& kernels) {
  const Model& m = engine.model();
  const ModelConfig& c = m.config();
  ModelFacts f;
  f.path = engine.options().model_path;
  f.name = c.name;
  f.architecture = c.architecture;
  f.summary = c.summary();
  f.quantization = dominant_weight_type(m.weights());
  f.tokenizer = engine.tokenizer().kind();
  for (const gguf::TensorInfo& t : m.file().tensors()) f.n_params += t.n_elements();
  f.file_bytes = m.file().file_size();
  f.bytes_per_token = m.bytes_per_token();
  f.n_layer = c.n_layer;
  f.n_embd = c.n_embd;
  f.n_vocab = c.n_vocab;
  f.n_ctx_train = c.n_ctx_train;
  f.n_ctx = engine.backend().n_ctx();
  f.n_mtp = engine.backend().has_mtp() ? c.n_mtp : 0;
  f.layer_is_recurrent = c.is_recurrent;
  f.backend_kind = engine.options().backend;
  f.backend = engine.backend().info();
  f.kernels = kernels;
  return f;
}

}  // namespace qc
