// Hugging Face Qwen3.5 tensors -> the qwen35 GGUF layout (QWEN35.md section 5). The one place that knows
// both naming schemes and the three conventions that differ between them:
//   - norms: HF stores zero-centred weights (y = x_hat * (1 + w)); the GGUF stores 1 + w, computed in f32
//     as transformers does, for every norm except the GDN output norm (linear_attn.norm -> ssm_norm);
//   - ssm_a = -exp(A_log), in f32 as transformers computes it;
//   - value heads: HF groups them by key head (value head h reads key head h / (Nv/Nk)); llama.cpp tiles
//     them (GGUF value head j reads key head j % Nk), so GGUF head j holds HF head
//     (j % Nk) * (Nv/Nk) + j / Nk. Applied to the v rows of in_proj_qkv, the rows of in_proj_z, in_proj_b,
//     in_proj_a, the entries of A_log and dt_bias, the v channels of conv1d and the input columns of
//     out_proj.
// HF names: the text model under "model." (Qwen3_5ForCausalLM) or "model.language_model."
// (Qwen3_5ForConditionalGeneration), lm_head.weight, and the MTP block under "mtp." (mtp.fc ->
// nextn.eh_proj, mtp.pre_fc_norm_embedding -> nextn.enorm, mtp.pre_fc_norm_hidden -> nextn.hnorm,
// mtp.norm -> nextn.shared_head_norm, mtp.layers.0.* -> blk.{n_layer}.*), as llama.cpp's converter maps
// them (convert_hf_to_gguf.py, _Qwen35MtpMixin).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "import/checkpoint.h"
#include "import/hf_config.h"
#include "model/qwen35_layout.h"
#include "qwenchat/result.h"

namespace qc {

// The HF value head stored at GGUF (tiled) position j, for nk key heads and nv value heads.
inline int64_t hf_value_head(int64_t j, int64_t nk, int64_t nv) {
  return (j % nk) * (nv / nk) + j / nk;
}

// How one output row is made from the HF tensor (viewed as a row-major [rows][cols] matrix; vectors are
// one row). Rows and columns outside the value-head ranges are copied in place.
struct ImportTransform {
  enum class Op : uint8_t { kNone, kPlusOne, kNegExp };
  Op op = Op::kNone;
  int64_t row_first = 0;  // value-head rows [row_first, row_first + nv * row_per) are reordered
  int64_t row_per = 0;    // rows per value head; 0 = no row reorder
  int64_t col_per = 0;    // columns per value head (cols == nv * col_per); 0 = no column reorder
  int64_t nk = 1, nv = 1;

  int64_t source_row(int64_t r) const;
  int64_t source_col(int64_t c) const;
};

struct ImportTensor {
  Qwen35Tensor gguf;               // GGUF name, shape {in, out}, role
  DType out_type = DType::kF32;    // type written to the GGUF
  std::string hf_name;             // source tensor in the checkpoint
  std::vector<uint64_t> hf_shape;  // expected source shape (PyTorch order); conv1d also accepts [C, K]
  int64_t rows = 1, cols = 0;      // the GGUF tensor as [rows][cols]
  ImportTransform transform;
};

struct ImportOptions {
  // The file's types: every 2-D weight but ssm_alpha/ssm_beta (kept F32, see out_type_for) takes the type
  // model/quant_mix.h's rules give it in this mix; vectors and conv stay F32.
  QuantMix mix = QuantMix::kQ8_0;
  bool include_mtp = true;        // convert the MTP block when the checkpoint has it
  bool allow_unused = false;      // convert even if text-model tensors are left over (unknown variant)
};

struct ImportPlan {
  ModelShape shape;
  std::string text_prefix;            // "model." or "model.language_model."
  std::vector<ImportTensor> tensors;  // in GGUF order
  std::vector<std::string> notices;   // decisions worth telling the user (MTP dropped, tensors ignored)
};

// Matches the checkpoint against the layout for the config's shape: every tensor must exist with the
// expected shape and a readable dtype. Errors name the HF tensor, its file, expected and actual shape.
Result<ImportPlan> plan_qwen35_import(const HfTextConfig& config, const Checkpoint& ckpt,
                                      const ImportOptions& options, const std::string& model_name);

// The GGUF bytes of one tensor (out_type, [rows][cols]), built row by row from the mapped source, the rows
// spread over up to n_threads threads (model/row_parallel.h: the bytes do not depend on the count).
Status convert_tensor(const ImportTensor& t, const CheckpointTensor& src, std::vector<uint8_t>* out,
                      int n_threads = 1);

}  // namespace qc
