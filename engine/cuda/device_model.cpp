#include "cuda/device_model.h"

#include <algorithm>

#include "attention.h"
#include "gdn.h"
#include "model/cuda_weight_types.h"

namespace qc::cuda {
namespace {

bool present(const TensorView& v, bool have_data) {
  return have_data ? v.present() : !v.name.empty();
}

size_t elem_bytes(DType t) {
  return t == DType::kF32 ? 4 : 2;
}

gpu::DenseType dense_type(DType t) {
  switch (t) {
    case DType::kF16:
      return gpu::DenseType::kF16;
    case DType::kBF16:
      return gpu::DenseType::kBF16;
    default:
      return gpu::DenseType::kF32;
  }
}

struct Member {
  const TensorView* v;
  WeightRole role;
};

class Builder {
 public:
  Builder(Carver& carver, bool have_data, std::vector<TensorSlot>& slots)
      : c_(carver), have_(have_data), slots_(slots) {}

  // Stacks the members row-wise; consecutive members of one storage type share a Linear.
  Result<Site> site(const std::vector<Member>& members) {
    Site s;
    s.k = static_cast<int>(members.front().v->cols);
    size_t i = 0;
    while (i < members.size()) {
      size_t j = i;
      int64_t rows = 0;
      const DType t = members[i].v->type;
      while (j < members.size() && members[j].v->type == t) {
        if (members[j].v->cols != s.k)
          return make_error(members[j].v->name + ": expected " + std::to_string(s.k) +
                            " input columns like " + members.front().v->name + ", got " +
                            std::to_string(members[j].v->cols));
        rows += members[j].v->rows;
        ++j;
      }
      Linear lin;
      lin.rows = static_cast<int>(rows);
      lin.cols = s.k;
      lin.out_offset = s.n_out;
      gpu::BlockType bt{};
      lin.format = t == DType::kQ8_0       ? Linear::Format::kQ8
                   : block_type(t, &bt) ? Linear::Format::kBlock
                                        : Linear::Format::kDense;
      int64_t r0 = 0;
      if (lin.format == Linear::Format::kQ8) {
        if (s.k % gpu::kQBlock != 0)
          return make_error(members[i].v->name + ": Q8_0 rows must be a multiple of 32 long, got " +
                            std::to_string(s.k));
        const int stride = gpu::q8_row_stride(s.k);
        int8_t* q = c_.take<int8_t>(gpu::q8_split_q_bytes(rows, s.k));
        uint16_t* d = c_.take<uint16_t>(gpu::q8_split_d_count(rows, s.k));
        lin.w = gpu::Q8Weights{q, d, lin.rows, s.k, stride};
        for (size_t m = i; m < j; ++m) {
          TensorSlot slot = base_slot(*members[m].v, members[m].role, TensorSlot::Kind::kQ8);
          slot.row_stride = stride;
          slot.q = q ? q + static_cast<size_t>(r0) * stride : nullptr;
          slot.d = d ? d + static_cast<size_t>(r0) * (s.k / gpu::kQBlock) : nullptr;
          slots_.push_back(std::move(slot));
          r0 += members[m].v->rows;
        }
      } else if (lin.format == Linear::Format::kBlock) {
        if (s.k % gpu::block_elems(bt) != 0)
          return make_error(members[i].v->name + ": " + dtype_name(t) + " rows must be a multiple of " +
                            std::to_string(gpu::block_elems(bt)) + " long, got " + std::to_string(s.k));
        const size_t row = gpu::block_row_bytes(bt, s.k);
        uint8_t* data = c_.take<uint8_t>(static_cast<size_t>(rows) * row);
        lin.blocks = gpu::BlockWeights{data, bt, lin.rows, s.k};
        for (size_t m = i; m < j; ++m) {
          TensorSlot slot = base_slot(*members[m].v, members[m].role, TensorSlot::Kind::kBlock);
          slot.data = data ? data + static_cast<size_t>(r0) * row : nullptr;
          slots_.push_back(std::move(slot));
          r0 += members[m].v->rows;
        }
      } else {
        const size_t es = elem_bytes(t);
        uint8_t* data = c_.take<uint8_t>(static_cast<size_t>(rows) * s.k * es);
        lin.dense = data;
        lin.dense_type = dense_type(t);
        for (size_t m = i; m < j; ++m) {
          TensorSlot slot = base_slot(*members[m].v, members[m].role, TensorSlot::Kind::kDense);
          slot.data = data ? data + static_cast<size_t>(r0) * s.k * es : nullptr;
          slots_.push_back(std::move(slot));
          r0 += members[m].v->rows;
        }
      }
      s.n_out += lin.rows;
      s.parts.push_back(lin);
      i = j;
    }
    return s;
  }

  // A vector (or small matrix such as the conv taps) decoded to f32.
  const float* vec(const TensorView& v, WeightRole role) {
    float* p = c_.take<float>(static_cast<size_t>(v.rows * v.cols));
    TensorSlot slot = base_slot(v, role, TensorSlot::Kind::kF32Vector);
    slot.data = p;
    slots_.push_back(std::move(slot));
    return p;
  }

  Result<DevEmbedding> embedding(const TensorView& v, uint64_t* bytes) {
    DevEmbedding e;
    if (v.type == DType::kQ8_0) {
      const int stride = gpu::q8_row_stride(static_cast<int>(v.cols));
      int8_t* q = c_.take<int8_t>(gpu::q8_split_q_bytes(v.rows, v.cols));
      uint16_t* d = c_.take<uint16_t>(gpu::q8_split_d_count(v.rows, v.cols));
      e.type = gpu::EmbedType::kQ8;
      e.q8 = gpu::Q8Weights{q, d, static_cast<int>(v.rows), static_cast<int>(v.cols), stride};
      TensorSlot slot = base_slot(v, WeightRole::kEmbedding, TensorSlot::Kind::kQ8);
      slot.q = q;
      slot.d = d;
      slot.row_stride = stride;
      *bytes = slot.device_bytes();
      slots_.push_back(std::move(slot));
    } else if (gpu::BlockType bt{}; block_type(v.type, &bt)) {
      if (v.cols % gpu::block_elems(bt) != 0)
        return make_error(v.name + ": " + dtype_name(v.type) + " rows must be a multiple of " +
                          std::to_string(gpu::block_elems(bt)) + " long, got " + std::to_string(v.cols));
      uint8_t* data = c_.take<uint8_t>(static_cast<size_t>(v.rows) * gpu::block_row_bytes(bt, v.cols));
      e.type = gpu::EmbedType::kBlock;
      e.blocks = gpu::BlockWeights{data, bt, static_cast<int>(v.rows), static_cast<int>(v.cols)};
      TensorSlot slot = base_slot(v, WeightRole::kEmbedding, TensorSlot::Kind::kBlock);
      slot.data = data;
      *bytes = slot.device_bytes();
      slots_.push_back(std::move(slot));
    } else {
      uint8_t* data = c_.take<uint8_t>(static_cast<size_t>(v.rows * v.cols) * elem_bytes(v.type));
      e.type = v.type == DType::kF32   ? gpu::EmbedType::kF32
               : v.type == DType::kF16 ? gpu::EmbedType::kF16
                                       : gpu::EmbedType::kBF16;
      e.dense = data;
      TensorSlot slot = base_slot(v, WeightRole::kEmbedding, TensorSlot::Kind::kDense);
      slot.data = data;
      *bytes = slot.device_bytes();
      slots_.push_back(std::move(slot));
    }
    return e;
  }

  bool have() const { return have_; }

 private:
  TensorSlot base_slot(const TensorView& v, WeightRole role, TensorSlot::Kind kind) {
    TensorSlot s;
    s.src = have_ ? &v : nullptr;
    s.name = v.name;
    s.role = role;
    s.kind = kind;
    s.type = v.type;
    s.rows = v.rows;
    s.cols = v.cols;
    return s;
  }

  Carver& c_;
  bool have_;
  std::vector<TensorSlot>& slots_;
};

Status layout_layer(Builder& b, const ModelConfig& c, const LayerWeights& lw, int n_kv, DevLayer& L) {
  L.recurrent = lw.recurrent;
  L.attn_norm = b.vec(lw.attn_norm, WeightRole::kNorm);
  L.post_norm = b.vec(lw.post_norm, WeightRole::kNorm);
  if (lw.recurrent) {
    const DeltaNetWeights& g = lw.gdn;
    QC_ASSIGN(L.in_proj, b.site({{&g.wqkv, WeightRole::kProjection},
                                 {&g.wgate, WeightRole::kProjection},
                                 {&g.wbeta, WeightRole::kProjection},
                                 {&g.walpha, WeightRole::kProjection}}));
    L.col_z = c.ssm_qkv_dim();
    L.col_beta = L.col_z + c.ssm_d_inner();
    L.col_alpha = L.col_beta + c.ssm_n_v_heads;
    L.conv_w = b.vec(g.conv1d, WeightRole::kConv);
    L.dt_bias = b.vec(g.dt_bias, WeightRole::kDtBias);
    L.ssm_a = b.vec(g.a, WeightRole::kSsmA);
    L.ssm_norm = b.vec(g.norm, WeightRole::kGatedNorm);
    QC_ASSIGN(L.out_proj, b.site({{&g.wout, WeightRole::kProjection}}));
  } else {
    const AttentionWeights& a = lw.attn;
    QC_ASSIGN(L.in_proj, b.site({{&a.wq, WeightRole::kProjection},
                                 {&a.wk, WeightRole::kProjection},
                                 {&a.wv, WeightRole::kProjection}}));
    L.col_k = 2 * c.n_head * c.head_dim;
    L.col_v = L.col_k + n_kv * c.head_dim;
    L.n_kv = n_kv;
    L.q_norm = b.vec(a.q_norm, WeightRole::kNorm);
    L.k_norm = b.vec(a.k_norm, WeightRole::kNorm);
    QC_ASSIGN(L.out_proj, b.site({{&a.wo, WeightRole::kProjection}}));
  }
  QC_ASSIGN(L.gate_up,
            b.site({{&lw.ffn.gate, WeightRole::kProjection}, {&lw.ffn.up, WeightRole::kProjection}}));
  QC_ASSIGN(L.down, b.site({{&lw.ffn.down, WeightRole::kProjection}}));
  return Status::success();
}

}  // namespace

bool block_type(DType t, gpu::BlockType* out) {
  switch (t) {
    case DType::kQ4_0:
      *out = gpu::BlockType::kQ4_0;
      return true;
    case DType::kQ5_0:
      *out = gpu::BlockType::kQ5_0;
      return true;
    case DType::kQ4_K:
      *out = gpu::BlockType::kQ4_K;
      return true;
    case DType::kQ5_K:
      *out = gpu::BlockType::kQ5_K;
      return true;
    case DType::kQ6_K:
      *out = gpu::BlockType::kQ6_K;
      return true;
    default:
      return false;
  }
}

uint64_t TensorSlot::device_bytes() const {
  const auto n = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
  switch (kind) {
    case Kind::kQ8:
      return static_cast<uint64_t>(rows) * static_cast<uint64_t>(row_stride) + n / gpu::kQBlock * 2;
    case Kind::kDense:
      return n * elem_bytes(type);
    case Kind::kBlock: {
      gpu::BlockType bt{};
      return block_type(type, &bt) ? static_cast<uint64_t>(rows) * gpu::block_row_bytes(bt, cols) : 0;
    }
    case Kind::kF32Vector:
      return n * 4;
  }
  return 0;
}

uint64_t Linear::bytes() const {
  const auto n = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
  switch (format) {
    case Format::kQ8:
      return static_cast<uint64_t>(rows) * static_cast<uint64_t>(w.row_stride) + n / gpu::kQBlock * 2;
    case Format::kBlock:
      return static_cast<uint64_t>(rows) * blocks.row_bytes();
    case Format::kDense:
      break;
  }
  return n * (dense_type == gpu::DenseType::kF32 ? 4 : 2);
}

gpu::EmbedArgs DevEmbedding::args(int n_vocab, int dim) const {
  gpu::EmbedArgs e;
  e.type = type;
  e.q8 = q8;
  e.dense = dense;
  e.blocks = blocks;
  e.n_vocab = n_vocab;
  e.dim = dim;
  return e;
}

uint64_t Site::bytes() const {
  uint64_t s = 0;
  for (const Linear& l : parts) s += l.bytes();
  return s;
}

Status check_cuda_support(const ModelConfig& c) {
  auto fail = [](const std::string& what) {
    return Status(make_error("the CUDA backend does not support this model: " + what,
                             "choose the CPU backend for this model"));
  };
  if (c.n_embd % 32 != 0 || c.n_embd > 12288)
    return fail("hidden size must be a multiple of 32 and <= 12288, got " + std::to_string(c.n_embd));
  if (c.n_ff % 32 != 0)
    return fail("feed_forward_length must be a multiple of 32, got " + std::to_string(c.n_ff));
  if (c.n_attention_layers() > 0 || c.n_mtp > 0) {
    if (c.head_dim != 128 && c.head_dim != 256)
      return fail("attention head_dim must be 128 or 256, got " + std::to_string(c.head_dim));
    for (int il = 0; il < c.n_layer + c.n_mtp; ++il) {
      const bool attn = il >= c.n_layer || !c.is_recurrent[static_cast<size_t>(il)];
      if (!attn) continue;
      const int kv = c.n_kv_heads(il);
      const int g = kv > 0 ? c.n_head / kv : 0;
      if (kv <= 0 || c.n_head % kv != 0 || !(g == 1 || g == 2 || g == 3 || g == 4 || g == 6 || g == 8))
        return fail("layer " + std::to_string(il) +
                    ": query heads / KV heads must be 1, 2, 3, 4, 6 or 8, got " + std::to_string(c.n_head) +
                    " / " + std::to_string(kv));
    }
    if (c.rope_dims % 2 != 0 || c.rope_dims > c.head_dim)
      return fail("rope dimension count must be even and <= head_dim, got " + std::to_string(c.rope_dims));
  }
  if (c.n_recurrent_layers() > 0) {
    if (c.ssm_head_k_dim != 64 && c.ssm_head_k_dim != 128)
      return fail("GDN key head dim (ssm.state_size) must be 64 or 128, got " +
                  std::to_string(c.ssm_head_k_dim));
    if (c.ssm_head_v_dim % 32 != 0 || c.ssm_head_v_dim < 32 || c.ssm_head_v_dim > 256)
      return fail("GDN value head dim must be a multiple of 32 in [32, 256], got " +
                  std::to_string(c.ssm_head_v_dim));
    if (c.ssm_conv_kernel < 1 || gpu::kMaxTokens + c.ssm_conv_kernel - 1 > gpu::kConvRing)
      return fail("ssm.conv_kernel must be in [1, " + std::to_string(gpu::kConvRing - gpu::kMaxTokens + 1) +
                  "], got " + std::to_string(c.ssm_conv_kernel));
    if (c.ssm_n_k_heads <= 0 || c.ssm_n_v_heads % c.ssm_n_k_heads != 0)
      return fail("GDN value heads must be a multiple of key heads, got " + std::to_string(c.ssm_n_v_heads) +
                  " / " + std::to_string(c.ssm_n_k_heads));
  }
  return Status::success();
}

Result<DeviceModel> layout_model(const ModelConfig& c, const ModelWeights& w, bool have_data,
                                 Carver& carver) {
  QC_TRY(check_cuda_support(c));
  // Before any layout: the Builder below sizes and uploads the types the kernels read.
  QC_TRY(check_cuda_weight_types(w));
  if (w.layers.size() != static_cast<size_t>(c.n_layer))
    return make_error("CUDA backend: expected " + std::to_string(c.n_layer) + " layers of weights, got " +
                      std::to_string(static_cast<long long>(w.layers.size())));
  DeviceModel m;
  Builder b(carver, have_data, m.slots);
  QC_ASSIGN(m.embd, b.embedding(w.token_embd, &m.embedding_bytes));
  int n_gdn = 0, n_attn = 0;
  m.layers.resize(w.layers.size());
  for (int il = 0; il < c.n_layer; ++il) {
    DevLayer& L = m.layers[static_cast<size_t>(il)];
    QC_TRY(layout_layer(b, c, w.layers[static_cast<size_t>(il)], c.n_kv_heads(il), L));
    if (L.recurrent)
      L.gdn_index = n_gdn++;
    else
      L.kv_index = n_attn++;
  }
  m.output_norm = b.vec(w.output_norm, WeightRole::kNorm);
  m.tied = w.tied_embeddings || !present(w.output, have_data) || w.output.name == w.token_embd.name;
  if (m.tied) {
    Linear lin;
    lin.rows = static_cast<int>(w.token_embd.rows);
    lin.cols = static_cast<int>(w.token_embd.cols);
    if (m.embd.type == gpu::EmbedType::kQ8) {
      lin.format = Linear::Format::kQ8;
      lin.w = m.embd.q8;
    } else if (m.embd.type == gpu::EmbedType::kBlock) {
      lin.format = Linear::Format::kBlock;
      lin.blocks = m.embd.blocks;
    } else {
      lin.format = Linear::Format::kDense;
      lin.dense = m.embd.dense;
      lin.dense_type = dense_type(w.token_embd.type);
    }
    m.lm_head.parts.push_back(lin);
    m.lm_head.n_out = lin.rows;
    m.lm_head.k = lin.cols;
  } else {
    QC_ASSIGN(m.lm_head, b.site({{&w.output, WeightRole::kProjection}}));
  }
  if (c.n_mtp > 0 && w.mtp) {
    const MtpWeights& mt = *w.mtp;
    m.has_mtp = true;
    QC_ASSIGN(m.mtp_eh_proj, b.site({{&mt.eh_proj, WeightRole::kProjection}}));
    m.mtp_enorm = b.vec(mt.enorm, WeightRole::kNorm);
    m.mtp_hnorm = b.vec(mt.hnorm, WeightRole::kNorm);
    m.mtp_head_norm = present(mt.shared_head_norm, have_data) ? b.vec(mt.shared_head_norm, WeightRole::kNorm)
                                                              : m.output_norm;
    QC_TRY(layout_layer(b, c, mt.layer, c.n_kv_heads(c.n_layer), m.mtp_layer));
    m.mtp_layer.kv_index = n_attn;
  }
  return m;
}

ModelWeights describe_generated_weights(const ModelConfig& c, DType t, bool tied,
                                        const std::map<std::string, DType>* per_tensor) {
  auto mat = [&](const std::string& name, int64_t rows, int64_t cols) {
    TensorView v;
    v.name = name;
    v.type = t;
    if (per_tensor) {
      if (const auto it = per_tensor->find(name); it != per_tensor->end()) v.type = it->second;
    }
    v.rows = rows;
    v.cols = cols;
    return v;
  };
  auto vec = [&](const std::string& name, int64_t n) {
    TensorView v;
    v.name = name;
    v.type = DType::kF32;
    v.rows = 1;
    v.cols = n;
    return v;
  };
  const int64_t H = c.n_embd, hd = c.head_dim;
  auto layer = [&](const std::string& p, bool recurrent, int n_kv) {
    LayerWeights l;
    l.recurrent = recurrent;
    l.attn_norm = vec(p + "attn_norm.weight", H);
    l.post_norm = vec(p + "post_attention_norm.weight", H);
    l.ffn.gate = mat(p + "ffn_gate.weight", c.n_ff, H);
    l.ffn.up = mat(p + "ffn_up.weight", c.n_ff, H);
    l.ffn.down = mat(p + "ffn_down.weight", H, c.n_ff);
    if (recurrent) {
      l.gdn.wqkv = mat(p + "attn_qkv.weight", c.ssm_qkv_dim(), H);
      l.gdn.wgate = mat(p + "attn_gate.weight", c.ssm_d_inner(), H);
      l.gdn.wbeta = mat(p + "ssm_beta.weight", c.ssm_n_v_heads, H);
      l.gdn.walpha = mat(p + "ssm_alpha.weight", c.ssm_n_v_heads, H);
      l.gdn.conv1d = vec(p + "ssm_conv1d.weight", c.ssm_conv_kernel);
      l.gdn.conv1d.rows = c.ssm_qkv_dim();
      l.gdn.dt_bias = vec(p + "ssm_dt.bias", c.ssm_n_v_heads);
      l.gdn.a = vec(p + "ssm_a", c.ssm_n_v_heads);
      l.gdn.norm = vec(p + "ssm_norm.weight", c.ssm_head_v_dim);
      l.gdn.wout = mat(p + "ssm_out.weight", H, c.ssm_d_inner());
    } else {
      l.attn.wq = mat(p + "attn_q.weight", 2 * c.n_head * hd, H);
      l.attn.wk = mat(p + "attn_k.weight", n_kv * hd, H);
      l.attn.wv = mat(p + "attn_v.weight", n_kv * hd, H);
      l.attn.wo = mat(p + "attn_output.weight", H, c.n_head * hd);
      l.attn.q_norm = vec(p + "attn_q_norm.weight", hd);
      l.attn.k_norm = vec(p + "attn_k_norm.weight", hd);
    }
    return l;
  };
  ModelWeights w;
  w.token_embd = mat("token_embd.weight", c.n_vocab, H);
  w.output_norm = vec("output_norm.weight", H);
  w.tied_embeddings = tied;
  w.output = tied ? w.token_embd : mat("output.weight", c.n_vocab, H);
  for (int il = 0; il < c.n_layer; ++il)
    w.layers.push_back(
        layer("blk." + std::to_string(il) + ".", c.is_recurrent[static_cast<size_t>(il)], c.n_kv_heads(il)));
  if (c.n_mtp > 0) {
    const std::string p = "blk." + std::to_string(c.n_layer) + ".";
    MtpWeights mt;
    mt.eh_proj = mat(p + "nextn.eh_proj.weight", H, 2 * H);
    mt.enorm = vec(p + "nextn.enorm.weight", H);
    mt.hnorm = vec(p + "nextn.hnorm.weight", H);
    mt.shared_head_norm = vec(p + "nextn.shared_head_norm.weight", H);
    mt.layer = layer(p, false, c.n_kv_heads(c.n_layer));
    w.mtp = std::move(mt);
  }
  return w;
}

}  // namespace qc::cuda
