// Writes a qwen35 GGUF with seeded random weights of a given shape: tensor names, shapes, types and
// metadata as llama.cpp's converter writes them (QWEN35.md section 5), so everything downstream (loader,
// both backends, the benchmark) runs on it exactly as on a real download; a K-quant mix (q4_k_m, ...) picks
// each tensor's type as llama.cpp's quantizer would (model/quant_mix.h). Streams tensor by tensor, so the
// 27B shape (28 GB in Q8_0) needs only two encoded tensors in memory at a time (one being written while the
// next is encoded, model/tensor_stream.h); each tensor's rows are generated and encoded on several threads
// (model/row_parallel.h), the bytes the same for any count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf/types.h"
#include "model/presets.h"
#include "model/quant.h"
#include "model/quant_mix.h"
#include "model/qwen35_layout.h"
#include "qwenchat/result.h"

namespace qc {
namespace gguf {
class Writer;
}

struct SyntheticModelOptions {
  ModelShape shape;
  uint64_t seed = 0;
  // Types of the 2-D weights (ssm_alpha/beta included); norms, conv, ssm_a, dt bias stay F32.
  QuantMix mix = QuantMix::kQ8_0;
  int n_threads = 0;  // 0: default_writer_threads()
  std::string out_path;
  // Adds more metadata (tokenizer.* keys, chat template) before the header is written; may be empty.
  std::function<void(gguf::Writer&)> extra_metadata;
  std::function<void(size_t done, size_t total, const std::string& tensor)> progress;  // may be empty
};

Status write_synthetic_model(const SyntheticModelOptions& opts);

// qwen35_metadata() and the tensor list live in model/qwen35_layout.h (shared with the HF importer).

}  // namespace qc
