#include "import/qwen35_import.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <set>

#include "model/kquant_quantize.h"
#include "model/row_parallel.h"

namespace qc {
namespace {

// Which value-head reorder a tensor needs (see the header).
enum class Reorder : uint8_t {
  kNone,
  kQkvRows,   // in_proj_qkv: the v rows after q and k
  kHeadRows,  // in_proj_z: Dv rows per head
  kOneRow,    // in_proj_a, in_proj_b: one row per head
  kConv,      // conv1d [C][K]: the v channels after q and k
  kVector,    // A_log, dt_bias: one entry per head
  kOutCols,   // out_proj: Dv input columns per head
};

struct Source {
  const char* gguf_suffix;
  const char* hf_suffix;
  Reorder reorder;
};

// Per-layer tensors: GGUF "blk.N.<suffix>" <- HF "<layer prefix><suffix>".
constexpr Source kLayerSources[] = {
    {"attn_norm.weight", "input_layernorm.weight", Reorder::kNone},
    {"post_attention_norm.weight", "post_attention_layernorm.weight", Reorder::kNone},
    {"ffn_gate.weight", "mlp.gate_proj.weight", Reorder::kNone},
    {"ffn_up.weight", "mlp.up_proj.weight", Reorder::kNone},
    {"ffn_down.weight", "mlp.down_proj.weight", Reorder::kNone},
    {"attn_q.weight", "self_attn.q_proj.weight", Reorder::kNone},  // per head [query | gate] in both
    {"attn_k.weight", "self_attn.k_proj.weight", Reorder::kNone},
    {"attn_v.weight", "self_attn.v_proj.weight", Reorder::kNone},
    {"attn_output.weight", "self_attn.o_proj.weight", Reorder::kNone},
    {"attn_q_norm.weight", "self_attn.q_norm.weight", Reorder::kNone},
    {"attn_k_norm.weight", "self_attn.k_norm.weight", Reorder::kNone},
    {"attn_qkv.weight", "linear_attn.in_proj_qkv.weight", Reorder::kQkvRows},
    {"attn_gate.weight", "linear_attn.in_proj_z.weight", Reorder::kHeadRows},
    {"ssm_beta.weight", "linear_attn.in_proj_b.weight", Reorder::kOneRow},
    {"ssm_alpha.weight", "linear_attn.in_proj_a.weight", Reorder::kOneRow},
    {"ssm_conv1d.weight", "linear_attn.conv1d.weight", Reorder::kConv},
    {"ssm_dt.bias", "linear_attn.dt_bias", Reorder::kVector},
    {"ssm_a", "linear_attn.A_log", Reorder::kVector},
    {"ssm_norm.weight", "linear_attn.norm.weight", Reorder::kNone},
    {"ssm_out.weight", "linear_attn.out_proj.weight", Reorder::kOutCols},
};

// MTP-only tensors: GGUF "blk.{n_layer}.nextn.<x>" <- HF "mtp.<y>".
constexpr Source kNextnSources[] = {
    {"nextn.eh_proj.weight", "mtp.fc.weight", Reorder::kNone},
    {"nextn.enorm.weight", "mtp.pre_fc_norm_embedding.weight", Reorder::kNone},
    {"nextn.hnorm.weight", "mtp.pre_fc_norm_hidden.weight", Reorder::kNone},
    {"nextn.shared_head_norm.weight", "mtp.norm.weight", Reorder::kNone},
};

std::string shape_str(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

struct Mapping {
  std::string hf_name;
  Reorder reorder = Reorder::kNone;
};

// The HF source of a GGUF tensor name from the layout.
Result<Mapping> hf_source(const std::string& gguf_name, const ModelShape& s, const std::string& prefix) {
  if (gguf_name == "token_embd.weight") return Mapping{prefix + "embed_tokens.weight"};
  if (gguf_name == "output_norm.weight") return Mapping{prefix + "norm.weight"};
  if (gguf_name == "output.weight") return Mapping{"lm_head.weight"};
  if (gguf_name.rfind("blk.", 0) == 0) {
    const size_t dot = gguf_name.find('.', 4);
    int layer = -1;
    std::from_chars(gguf_name.data() + 4, gguf_name.data() + dot, layer);  // plain decimal from the layout
    const std::string suffix = gguf_name.substr(dot + 1);
    const bool mtp = layer == s.n_layer;
    if (mtp) {
      for (const Source& src : kNextnSources) {
        if (suffix == src.gguf_suffix) return Mapping{src.hf_suffix, src.reorder};
      }
    }
    const std::string layer_prefix =
        mtp ? std::string("mtp.layers.0.") : prefix + "layers." + std::to_string(layer) + ".";
    for (const Source& src : kLayerSources) {
      if (suffix == src.gguf_suffix) return Mapping{layer_prefix + src.hf_suffix, src.reorder};
    }
  }
  return make_error("internal: no Hugging Face source for GGUF tensor " + gguf_name);
}

ImportTransform make_transform(TensorRole role, Reorder reorder, const ModelShape& s) {
  ImportTransform t;
  t.nk = s.ssm_n_k_heads;
  t.nv = s.ssm_n_v_heads;
  const int64_t qk = 2 * int64_t{s.ssm_n_k_heads} * s.ssm_head_k_dim;  // q and k channels before v
  if (role == TensorRole::kNorm) t.op = ImportTransform::Op::kPlusOne;
  if (role == TensorRole::kSsmA) t.op = ImportTransform::Op::kNegExp;
  switch (reorder) {
    case Reorder::kNone:
      break;
    case Reorder::kQkvRows:
    case Reorder::kConv:
      t.row_first = qk, t.row_per = s.ssm_head_v_dim;
      break;
    case Reorder::kHeadRows:
      t.row_per = s.ssm_head_v_dim;
      break;
    case Reorder::kOneRow:
      t.row_per = 1;
      break;
    case Reorder::kVector:
      t.col_per = 1;
      break;
    case Reorder::kOutCols:
      t.col_per = s.ssm_head_v_dim;
      break;
  }
  return t;
}

// The mix's type (model/quant_mix.h), except for ssm_alpha/ssm_beta: llama.cpp's rules would quantise them
// like any 2-D weight, but they feed exponentials (the decay exp(ssm_a * softplus(alpha + dt_bias)) and
// beta = sigmoid(b)), where an input error becomes a relative error of the state, are tiny ({H, Nv}, well
// under 0.1% of a layer's weights) and stay F32 in every file this importer writes, as they always have.
// Norms, conv, ssm_a and dt bias are F32 by the rules themselves.
DType out_type_for(TensorRole role, DType mixed) {
  return role == TensorRole::kSmallProjection ? DType::kF32 : mixed;
}

// Detects where the text model lives.
Result<std::string> text_prefix(const Checkpoint& ckpt) {
  for (const char* p : {"model.language_model.", "model."}) {
    if (ckpt.find(std::string(p) + "embed_tokens.weight")) return std::string(p);
  }
  std::string some;
  const std::vector<std::string> names = ckpt.names();
  for (size_t i = 0; i < names.size() && i < 5; ++i) some += (i ? ", " : "") + names[i];
  return make_error(ckpt.dir() +
                        ": no model.embed_tokens.weight or model.language_model.embed_tokens.weight "
                        "(found " +
                        std::to_string(names.size()) + " tensors: " + some +
                        (names.size() > 5 ? ", ..." : "") + ")",
                    "the checkpoint is not a Qwen3.5 text model in Hugging Face naming");
}

}  // namespace

int64_t ImportTransform::source_row(int64_t r) const {
  if (row_per == 0 || r < row_first || r >= row_first + nv * row_per) return r;
  const int64_t j = (r - row_first) / row_per, i = (r - row_first) % row_per;
  return row_first + hf_value_head(j, nk, nv) * row_per + i;
}

int64_t ImportTransform::source_col(int64_t c) const {
  if (col_per == 0) return c;
  return hf_value_head(c / col_per, nk, nv) * col_per + c % col_per;
}

Result<ImportPlan> plan_qwen35_import(const HfTextConfig& config, const Checkpoint& ckpt,
                                      const ImportOptions& options, const std::string& model_name) {
  ImportPlan plan;
  QC_ASSIGN(plan.text_prefix, text_prefix(ckpt));

  // MTP: converted when the config declares it, the checkpoint holds it and the caller wants it.
  int n_mtp = 0;
  if (config.mtp_num_hidden_layers > 0 && options.include_mtp) {
    if (ckpt.find("mtp.fc.weight")) {
      n_mtp = 1;
    } else {
      plan.notices.push_back(
          "config.json declares an MTP block but the checkpoint has no mtp.* weights "
          "(transformers drops them when it saves): converted without MTP");
    }
  }
  QC_ASSIGN(plan.shape, shape_from_hf_config(config, n_mtp, model_name));
  const ModelShape& s = plan.shape;

  std::set<std::string> used;
  const std::vector<Qwen35Tensor> layout = qwen35_tensor_layout(s);
  QC_ASSIGN(const std::vector<DType> mixed, qwen35_tensor_types(s, layout, options.mix));
  for (size_t i = 0; i < layout.size(); ++i) {
    const Qwen35Tensor& g = layout[i];
    QC_ASSIGN(const Mapping m, hf_source(g.name, s, plan.text_prefix));
    ImportTensor t;
    t.gguf = g;
    t.out_type = out_type_for(g.role, mixed[i]);
    t.hf_name = m.hf_name;
    t.cols = static_cast<int64_t>(g.shape[0]);
    t.rows = g.shape.size() > 1 ? static_cast<int64_t>(g.shape[1]) : 1;
    t.transform = make_transform(g.role, m.reorder, s);
    if (g.shape.size() == 1) {
      t.hf_shape = {g.shape[0]};
    } else if (g.role == TensorRole::kConv) {
      t.hf_shape = {g.shape[1], 1, g.shape[0]};  // PyTorch Conv1d weight [channels, 1, kernel]
    } else {
      t.hf_shape = {g.shape[1], g.shape[0]};
    }

    const CheckpointTensor* src = ckpt.find(t.hf_name);
    if (!src) {
      return make_error(ckpt.dir() + ": tensor \"" + t.hf_name + "\" is missing (needed for GGUF " + g.name +
                            ", expected shape " + shape_str(t.hf_shape) + ")",
                        "the checkpoint is incomplete or not a Qwen3.5 model of this config");
    }
    QC_TRY(checkpoint_dtype(*src));
    const std::vector<uint64_t>& got = src->tensor->shape;
    const bool conv_2d = g.role == TensorRole::kConv && got == std::vector<uint64_t>{g.shape[1], g.shape[0]};
    if (got != t.hf_shape && !conv_2d) {
      return make_error(src->file->path() + ": tensor \"" + t.hf_name + "\": expected shape " +
                        shape_str(t.hf_shape) + " (from config.json), got " + shape_str(got));
    }
    used.insert(t.hf_name);
    plan.tensors.push_back(std::move(t));
  }

  // Left-over tensors: vision tower and skipped MTP weights are expected; anything else under the text
  // model means a variant this mapping does not know, which would silently convert wrong.
  size_t ignored = 0;
  std::vector<std::string> unexpected;
  for (const std::string& name : ckpt.names()) {
    if (used.count(name)) continue;
    const bool text = name.rfind(plan.text_prefix, 0) == 0 && name.rfind("model.visual.", 0) != 0;
    const bool mtp = name.rfind("mtp.", 0) == 0;
    const bool head = name == "lm_head.weight";
    if ((text || (mtp && n_mtp > 0)) && !(head && s.tied_embeddings)) {
      unexpected.push_back(name);
    } else {
      ++ignored;
    }
  }
  if (!unexpected.empty()) {
    std::string list;
    for (size_t i = 0; i < unexpected.size() && i < 8; ++i) list += (i ? ", " : "") + unexpected[i];
    if (unexpected.size() > 8) list += ", ...";
    const std::string msg =
        std::to_string(unexpected.size()) + " text-model tensors have no place in the qwen35 layout: " + list;
    if (!options.allow_unused) {
      return make_error(ckpt.dir() + ": " + msg,
                        "an unknown model variant; --allow-unused converts anyway (the result may be wrong)");
    }
    plan.notices.push_back(msg + " (ignored: --allow-unused)");
  }
  if (ignored > 0) {
    plan.notices.push_back(std::to_string(ignored) + " tensors not part of the text model were skipped " +
                           "(vision tower, lm_head of tied embeddings, MTP when not converted)");
  }
  return plan;
}

Status convert_tensor(const ImportTensor& t, const CheckpointTensor& src, std::vector<uint8_t>* out,
                      int n_threads) {
  QC_ASSIGN(const DType in_type, checkpoint_dtype(src));
  const std::span<const uint8_t> in = src.file->data(*src.tensor);
  const uint64_t in_row_bytes = dtype_bytes(in_type, static_cast<uint64_t>(t.cols));
  const uint64_t out_row_bytes = dtype_bytes(t.out_type, static_cast<uint64_t>(t.cols));
  if (in.size() != in_row_bytes * static_cast<uint64_t>(t.rows)) {
    return make_error(src.file->path() + ": tensor \"" + t.hf_name + "\": " + std::to_string(in.size()) +
                      " bytes, expected " + std::to_string(in_row_bytes * static_cast<uint64_t>(t.rows)));
  }
  out->resize(out_row_bytes * static_cast<uint64_t>(t.rows));
  const ImportTransform& x = t.transform;
  // Most tensors (every projection but the GDN ones) are plain copies: decode straight into the output row.
  const bool plain = x.col_per == 0 && x.op == ImportTransform::Op::kNone;
  return for_row_chunks(t.rows, n_threads, [&](int64_t first, int64_t end) -> Status {
    std::vector<float> row(static_cast<size_t>(t.cols)), res(static_cast<size_t>(t.cols));
    for (int64_t r = first; r < end; ++r) {
      const uint8_t* in_row = in.data() + static_cast<uint64_t>(x.source_row(r)) * in_row_bytes;
      decode_row(in_type, in_row, plain ? res.data() : row.data(), t.cols);
      for (int64_t c = 0; !plain && c < t.cols; ++c) {
        const float v = row[static_cast<size_t>(x.source_col(c))];
        float& o = res[static_cast<size_t>(c)];
        switch (x.op) {
          case ImportTransform::Op::kNone:
            o = v;
            break;
          case ImportTransform::Op::kPlusOne:
            o = 1.0f + v;
            break;  // in f32, as transformers forms 1 + w
          case ImportTransform::Op::kNegExp:
            o = -std::exp(v);
            break;  // f32 exp, as A_log.float().exp()
        }
      }
      const Status s = encode_values(t.out_type, res.data(),
                                     out->data() + static_cast<uint64_t>(r) * out_row_bytes, t.cols);
      if (!s.ok()) {
        return make_error(src.file->path() + ": tensor \"" + t.hf_name + "\" -> " + t.gguf.name + " as " +
                              dtype_name(t.out_type) + ", row " + std::to_string(r) + ": " +
                              s.error().message,
                          "the checkpoint holds values this format cannot store; try --outtype q8_0 or f16");
      }
    }
    return Status{};
  });
}

}  // namespace qc
