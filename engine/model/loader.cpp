// The one place that knows GGUF tensor names (llama.cpp's qwen35 layout). Every tensor is checked for
// presence, type and shape before the forward code can see it.
#include <string>

#include "model/model.h"

namespace qc {
namespace {

Result<DType> dtype_of(const gguf::File& f, const gguf::TensorInfo& t) {
  // llama.cpp's K-quant files mix Q4_0/Q5_0/Q4_K/Q5_K/Q6_K per tensor (Q4_K_M: Q4_K, Q6_K for some, Q8_0
  // and F32 for others). They stay quantised in memory: the views point into the mapping and the CPU
  // backend decodes a row at a time, so a 27B file is never expanded to f32.
  if (const std::optional<DType> d = dtype_of_gguf_type(t.type)) return *d;
  return make_error(f.path() + ": " + t.name + ": type " + gguf::type_label(t.type) +
                        " is not supported: expected F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K, Q5_K or Q6_K",
                    "re-quantize the model to one of these: llama.cpp's llama-quantize (Q4_K_M, Q6_K, "
                    "Q8_0) or qwenchat-convert --outtype q8_0");
}

std::string shape_str(uint64_t in, uint64_t out) {
  return "[" + std::to_string(in) + "," + std::to_string(out) + "]";
}

// Binds tensors by name with an expected GGUF shape {in, out} ({n} for vectors). Collects the first error.
class Binder {
 public:
  explicit Binder(const gguf::File& f) : f_(f) {}

  TensorView matrix(const std::string& name, int64_t in, int64_t out) { return bind(name, in, out, false); }
  TensorView vector(const std::string& name, int64_t n) { return bind(name, n, 1, false); }
  TensorView optional_vector(const std::string& name, int64_t n) { return bind(name, n, 1, true); }
  TensorView optional_matrix(const std::string& name, int64_t in, int64_t out) {
    return bind(name, in, out, true);
  }

  const Status& status() const { return status_; }

 private:
  TensorView bind(const std::string& name, int64_t in, int64_t out, bool optional) {
    TensorView v;
    if (!status_.ok()) return v;
    const gguf::TensorInfo* t = f_.find_tensor(name);
    if (!t) {
      if (!optional) {
        status_ =
            make_error(f_.path() + ": tensor " + name + " is missing: expected shape " + shape_str(in, out),
                       "the file is not a complete qwen35 model");
      }
      return v;
    }
    auto type = dtype_of(f_, *t);
    if (!type.ok()) {
      status_ = type.error();
      return v;
    }
    const bool dims_ok = t->ne[2] == 1 && t->ne[3] == 1 && t->ne[0] == static_cast<uint64_t>(in) &&
                         t->ne[1] == static_cast<uint64_t>(out);
    if (!dims_ok) {
      std::string got = "[";
      for (uint32_t d = 0; d < t->n_dims; ++d) got += (d ? "," : "") + std::to_string(t->ne[d]);
      got += "]";
      status_ = make_error(f_.path() + ": " + name + ": expected " + std::string(dtype_name(*type)) + " " +
                           (out == 1 ? "[" + std::to_string(in) + "]" : shape_str(in, out)) + ", got " +
                           std::string(gguf::type_name(t->type)) + " " + got);
      return v;
    }
    // The reader derived nbytes from the type and shape; a tensor view computes it again from the DType.
    // Both must agree (whole blocks per row, the same block size) or a row would be read from the wrong
    // place: check here, where the tensor and its expected shape can be named.
    const uint64_t block = static_cast<uint64_t>(dtype_block(*type));
    const uint64_t want_bytes = dtype_bytes(*type, static_cast<uint64_t>(in)) * static_cast<uint64_t>(out);
    if (static_cast<uint64_t>(in) % block != 0 || t->nbytes != want_bytes) {
      status_ =
          make_error(f_.path() + ": " + name + ": " + std::string(dtype_name(*type)) + " " +
                     (out == 1 ? "[" + std::to_string(in) + "]" : shape_str(in, out)) +
                     ": expected rows of whole " + std::to_string(block) + "-value blocks and " +
                     std::to_string(want_bytes) + " bytes, got " + std::to_string(t->nbytes) + " bytes");
      return v;
    }
    v.name = name;
    v.type = *type;
    v.rows = out;
    v.cols = in;
    v.data = f_.tensor_data(*t);
    return v;
  }

  const gguf::File& f_;
  Status status_;
};

void bind_attention(Binder& b, const ModelConfig& c, int il, AttentionWeights& w) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const int64_t H = c.n_embd, hd = c.head_dim, nq = c.n_head, nkv = c.n_kv_heads(il);
  w.wq = b.matrix(p + "attn_q.weight", H, nq * hd * 2);
  w.wk = b.matrix(p + "attn_k.weight", H, nkv * hd);
  w.wv = b.matrix(p + "attn_v.weight", H, nkv * hd);
  w.wo = b.matrix(p + "attn_output.weight", nq * hd, H);
  w.q_norm = b.vector(p + "attn_q_norm.weight", hd);
  w.k_norm = b.vector(p + "attn_k_norm.weight", hd);
}

void bind_deltanet(Binder& b, const ModelConfig& c, int il, DeltaNetWeights& w) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const int64_t H = c.n_embd, nv = c.ssm_n_v_heads;
  w.wqkv = b.matrix(p + "attn_qkv.weight", H, c.ssm_qkv_dim());
  w.wgate = b.matrix(p + "attn_gate.weight", H, c.ssm_d_inner());
  w.wbeta = b.matrix(p + "ssm_beta.weight", H, nv);
  w.walpha = b.matrix(p + "ssm_alpha.weight", H, nv);
  w.conv1d = b.matrix(p + "ssm_conv1d.weight", c.ssm_conv_kernel, c.ssm_qkv_dim());
  w.dt_bias = b.vector(p + "ssm_dt.bias", nv);
  w.a = b.vector(p + "ssm_a", nv);
  w.norm = b.vector(p + "ssm_norm.weight", c.ssm_head_v_dim);
  w.wout = b.matrix(p + "ssm_out.weight", c.ssm_d_inner(), H);
}

void bind_ffn(Binder& b, const ModelConfig& c, int il, FfnWeights& w) {
  const std::string p = "blk." + std::to_string(il) + ".";
  w.gate = b.matrix(p + "ffn_gate.weight", c.n_embd, c.n_ff);
  w.up = b.matrix(p + "ffn_up.weight", c.n_embd, c.n_ff);
  w.down = b.matrix(p + "ffn_down.weight", c.n_ff, c.n_embd);
}

void bind_layer(Binder& b, const ModelConfig& c, int il, bool recurrent, LayerWeights& w) {
  const std::string p = "blk." + std::to_string(il) + ".";
  w.recurrent = recurrent;
  w.attn_norm = b.vector(p + "attn_norm.weight", c.n_embd);
  w.post_norm = b.vector(p + "post_attention_norm.weight", c.n_embd);
  if (recurrent) {
    bind_deltanet(b, c, il, w.gdn);
  } else {
    bind_attention(b, c, il, w.attn);
  }
  bind_ffn(b, c, il, w.ffn);
}

}  // namespace

Result<std::unique_ptr<Model>> Model::load(const std::string& path) {
  QC_ASSIGN(auto file, gguf::File::open(path));
  return from_file(std::move(file));
}

Result<std::unique_ptr<Model>> Model::from_file(std::unique_ptr<gguf::File> file) {
  std::unique_ptr<Model> m(new Model());
  m->file_ = std::move(file);
  const gguf::File& f = *m->file_;
  QC_ASSIGN(m->config_, read_config(f));
  ModelConfig& c = m->config_;

  // The vocabulary size comes from the embedding table.
  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd)
    return make_error(f.path() + ": tensor token_embd.weight is missing", "the file is not a qwen35 model");
  if (embd->ne[0] != static_cast<uint64_t>(c.n_embd) || embd->ne[1] == 0 || embd->ne[1] > (1u << 30)) {
    return make_error(f.path() + ": token_embd.weight: expected shape [" + std::to_string(c.n_embd) +
                      ",n_vocab], got [" + std::to_string(embd->ne[0]) + "," + std::to_string(embd->ne[1]) +
                      "]");
  }
  c.n_vocab = static_cast<int>(embd->ne[1]);

  Binder b(f);
  ModelWeights& w = m->weights_;
  w.token_embd = b.matrix("token_embd.weight", c.n_embd, c.n_vocab);
  w.output_norm = b.vector("output_norm.weight", c.n_embd);
  w.output = b.optional_matrix("output.weight", c.n_embd, c.n_vocab);
  if (b.status().ok() && !w.output.present()) {
    w.output = w.token_embd;
    w.tied_embeddings = true;
  }
  w.layers.resize(static_cast<size_t>(c.n_layer));
  for (int il = 0; il < c.n_layer; ++il) {
    bind_layer(b, c, il, c.is_recurrent[static_cast<size_t>(il)], w.layers[static_cast<size_t>(il)]);
  }
  if (c.n_mtp > 0) {
    // Only the first MTP layer is used (the qwen35 family ships exactly one).
    const int il = c.n_layer;
    const std::string p = "blk." + std::to_string(il) + ".nextn.";
    MtpWeights mtp;
    mtp.eh_proj = b.matrix(p + "eh_proj.weight", 2 * static_cast<int64_t>(c.n_embd), c.n_embd);
    mtp.enorm = b.vector(p + "enorm.weight", c.n_embd);
    mtp.hnorm = b.vector(p + "hnorm.weight", c.n_embd);
    mtp.shared_head_norm = b.optional_vector(p + "shared_head_norm.weight", c.n_embd);
    bind_layer(b, c, il, /*recurrent=*/false, mtp.layer);
    w.mtp = std::move(mtp);
  }
  QC_TRY(b.status());
  return m;
}

uint64_t Model::bytes_per_token() const {
  const ModelWeights& w = weights_;
  auto add = [](uint64_t& s, const TensorView& t) { s += t.present() ? t.nbytes() : 0; };
  uint64_t s = 0;
  add(s, w.output_norm);
  add(s, w.output);
  for (const LayerWeights& l : w.layers) {
    for (const TensorView* t : {&l.attn_norm, &l.post_norm, &l.ffn.gate, &l.ffn.up, &l.ffn.down}) add(s, *t);
    if (l.recurrent) {
      const DeltaNetWeights& g = l.gdn;
      for (const TensorView* t :
           {&g.wqkv, &g.wgate, &g.wbeta, &g.walpha, &g.conv1d, &g.dt_bias, &g.a, &g.norm, &g.wout}) {
        add(s, *t);
      }
    } else {
      const AttentionWeights& a = l.attn;
      for (const TensorView* t : {&a.wq, &a.wk, &a.wv, &a.wo, &a.q_norm, &a.k_norm}) add(s, *t);
    }
  }
  return s;
}

}  // namespace qc
