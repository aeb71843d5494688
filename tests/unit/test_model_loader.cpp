// Config parsing for every preset, tensor binding on a generated model, and one test per way a model file
// can be wrong (missing tensor, wrong shape, unsupported type, wrong architecture, bad metadata).
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "temp_dir.h"

namespace qc {
namespace {

std::string write_metadata_only(const test::TempDir& dir, const std::vector<gguf::KeyValue>& kv) {
  gguf::Writer w;
  for (const auto& e : kv) w.set(e.key, e.value);
  const std::string path = dir.file("meta.gguf");
  EXPECT_TRUE(w.write_all(path, {}).ok());
  return path;
}

TEST(ModelConfig, EveryPresetParses) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    test::TempDir dir;
    auto shape = preset_shape(name);
    ASSERT_TRUE(shape.ok());
    auto file = gguf::File::open(write_metadata_only(dir, qwen35_metadata(*shape, DType::kQ8_0)));
    ASSERT_TRUE(file.ok()) << file.error().describe();
    auto c = read_config(**file);
    ASSERT_TRUE(c.ok()) << c.error().describe();
    EXPECT_EQ(c->n_embd, shape->n_embd);
    EXPECT_EQ(c->n_layer, shape->n_layer);
    EXPECT_EQ(c->n_mtp, shape->n_mtp);
    EXPECT_EQ(c->n_ff, shape->n_ff);
    EXPECT_EQ(c->n_head, shape->n_head);
    EXPECT_EQ(c->n_kv_heads(0), shape->n_head_kv);
    EXPECT_EQ(c->head_dim, shape->head_dim);
    EXPECT_EQ(c->rope_dims, shape->rope_dims);
    EXPECT_EQ(c->ssm_n_k_heads, shape->ssm_n_k_heads);
    EXPECT_EQ(c->ssm_n_v_heads, shape->ssm_n_v_heads);
    EXPECT_EQ(c->ssm_head_k_dim, shape->ssm_head_k_dim);
    EXPECT_EQ(c->ssm_head_v_dim, shape->ssm_head_v_dim);
    EXPECT_EQ(c->n_attention_layers(), shape->n_layer / 4);
    for (int i = 0; i < c->n_layer; ++i) EXPECT_EQ(c->is_recurrent[static_cast<size_t>(i)], (i + 1) % 4 != 0);
  }
}

TEST(ModelConfig, RealShapesMatchQwen35Table) {
  auto s = preset_shape("27b");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->n_embd, 5120);
  EXPECT_EQ(s->n_layer, 64);
  EXPECT_EQ(s->n_ff, 17408);
  EXPECT_EQ(s->n_head * s->head_dim * 2, 12288);
  EXPECT_EQ(2 * s->ssm_n_k_heads * s->ssm_head_k_dim + s->ssm_n_v_heads * s->ssm_head_v_dim, 10240);
  EXPECT_EQ(s->rope_dims, 64);
  EXPECT_FALSE(preset_shape("28b").ok());
}

TEST(ModelConfig, PerLayerKvHeadArrayAndRecurrentFlags) {
  test::TempDir dir;
  auto shape = *preset_shape("tiny");
  auto kv = qwen35_metadata(shape, DType::kF32);
  const int blocks = shape.n_layer + shape.n_mtp;
  std::vector<int32_t> per_layer(static_cast<size_t>(blocks), 0);
  std::vector<int32_t> recurrent(static_cast<size_t>(blocks), 1);
  for (int i = 0; i < blocks; ++i) {
    if (i == 2 || i == 5 || i >= shape.n_layer) {
      per_layer[static_cast<size_t>(i)] = shape.n_head_kv;
      recurrent[static_cast<size_t>(i)] = 0;
    }
  }
  for (auto& e : kv) {
    if (e.key == "qwen35.attention.head_count_kv") e.value = gguf::Value::i32s(per_layer);
  }
  std::vector<gguf::Value> flags;
  for (int32_t r : recurrent) flags.push_back(gguf::Value::of_bool(r != 0));
  kv.push_back({"qwen35.attention.recurrent_layers", gguf::Value::array_of(gguf::ValueType::kBool, flags)});
  auto file = gguf::File::open(write_metadata_only(dir, kv));
  ASSERT_TRUE(file.ok()) << file.error().describe();
  auto c = read_config(**file);
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_FALSE(c->is_recurrent[2]);
  EXPECT_FALSE(c->is_recurrent[5]);
  EXPECT_TRUE(c->is_recurrent[3]);
  EXPECT_EQ(c->n_kv_heads(2), shape.n_head_kv);
  EXPECT_EQ(c->n_kv_heads(0), 0);
}

TEST(ModelConfig, ErrorsNameTheKey) {
  test::TempDir dir;
  auto shape = *preset_shape("tiny");
  struct Case {
    std::string key;
    gguf::Value value;
    std::string expect;  // substring of the error
  };
  const std::vector<Case> cases = {
      {"general.architecture", gguf::Value::of_string("llama"), "expected \"qwen35\""},
      {"qwen35.embedding_length", gguf::Value::of_string("wide"), "qwen35.embedding_length"},
      {"qwen35.attention.head_count_kv", gguf::Value::of_u32(3), "head_count_kv"},
      {"qwen35.ssm.inner_size", gguf::Value::of_u32(65), "ssm.inner_size"},
      {"qwen35.rope.dimension_count", gguf::Value::of_u32(1000), "rope.dimension_count"},
      {"qwen35.nextn_predict_layers", gguf::Value::of_u32(100), "nextn_predict_layers"},
      // A corrupt layer count is refused before per-layer tables are sized from it.
      {"qwen35.block_count", gguf::Value::of_u32(100000), "block_count = 100000: expected at most 4096"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    auto kv = qwen35_metadata(shape, DType::kF32);
    for (auto& e : kv) {
      if (e.key == c.key) e.value = c.value;
    }
    auto file = gguf::File::open(write_metadata_only(dir, kv));
    ASSERT_TRUE(file.ok());
    auto cfg = read_config(**file);
    ASSERT_FALSE(cfg.ok());
    EXPECT_NE(cfg.error().message.find(c.expect), std::string::npos) << cfg.error().message;
  }
  // A missing key is named too.
  auto kv = qwen35_metadata(shape, DType::kF32);
  std::erase_if(kv, [](const gguf::KeyValue& e) { return e.key == "qwen35.ssm.state_size"; });
  auto file = gguf::File::open(write_metadata_only(dir, kv));
  ASSERT_TRUE(file.ok());
  auto cfg = read_config(**file);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.error().message.find("qwen35.ssm.state_size"), std::string::npos) << cfg.error().message;
}

std::string make_tiny(const test::TempDir& dir, DType type) {
  SyntheticModelOptions o;
  o.shape = *preset_shape("tiny");
  o.seed = 5;
  o.mix = quant_mix_of(type);
  o.out_path = dir.file("tiny.gguf");
  const Status s = write_synthetic_model(o);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
  return o.out_path;
}

TEST(ModelLoader, BindsEveryTensorOfGeneratedModel) {
  for (DType type : {DType::kQ8_0, DType::kF16, DType::kBF16, DType::kF32}) {
    SCOPED_TRACE(dtype_name(type));
    test::TempDir dir;
    auto m = Model::load(make_tiny(dir, type));
    ASSERT_TRUE(m.ok()) << m.error().describe();
    const ModelConfig& c = (*m)->config();
    const ModelWeights& w = (*m)->weights();
    EXPECT_EQ(c.n_vocab, preset_shape("tiny")->n_vocab);
    ASSERT_EQ(w.layers.size(), static_cast<size_t>(c.n_layer));
    EXPECT_TRUE(w.tied_embeddings);
    EXPECT_EQ(w.output.data, w.token_embd.data);
    EXPECT_EQ(w.layers[0].gdn.wqkv.type, type);
    EXPECT_EQ(w.layers[0].gdn.wqkv.rows, c.ssm_qkv_dim());
    EXPECT_EQ(w.layers[0].gdn.conv1d.type, DType::kF32);
    EXPECT_EQ(w.layers[0].gdn.conv1d.cols, c.ssm_conv_kernel);
    EXPECT_EQ(w.layers[3].attn.wq.rows, 2 * c.n_head * c.head_dim);
    ASSERT_TRUE(w.mtp.has_value());
    EXPECT_EQ(w.mtp->eh_proj.cols, 2 * c.n_embd);
    EXPECT_TRUE(w.mtp->shared_head_norm.present());
    EXPECT_GT((*m)->bytes_per_token(), 0u);
  }
}

// Copies a GGUF, letting `edit` drop (return false) or change a tensor's declared type/shape. Data bytes
// are taken from the source, resized to the new declared size.
std::string rewrite(const test::TempDir& dir, const std::string& src,
                    const std::function<bool(gguf::TensorInfo&)>& edit,
                    const std::function<void(std::vector<gguf::KeyValue>&)>& edit_kv = {}) {
  auto f = gguf::File::open(src);
  EXPECT_TRUE(f.ok());
  gguf::Writer w;
  std::vector<gguf::KeyValue> kv = (*f)->metadata();
  if (edit_kv) edit_kv(kv);
  for (const auto& e : kv) {
    if (e.key != "general.alignment") w.set(e.key, e.value);
  }
  std::vector<std::vector<uint8_t>> data;
  for (const gguf::TensorInfo& t : (*f)->tensors()) {
    gguf::TensorInfo copy = t;
    if (!edit(copy)) continue;
    std::vector<uint64_t> shape(copy.ne, copy.ne + copy.n_dims);
    EXPECT_TRUE(w.add_tensor(copy.name, copy.type, shape).ok());
    const uint8_t* p = (*f)->tensor_data(t);
    std::vector<uint8_t> bytes(p, p + t.nbytes);
    bytes.resize(w.tensors().back().nbytes);
    data.push_back(std::move(bytes));
  }
  const std::string out = dir.file("edited.gguf");
  EXPECT_TRUE(w.write_all(out, data).ok());
  return out;
}

void expect_load_error(const std::string& path, const std::vector<std::string>& parts) {
  auto m = Model::load(path);
  ASSERT_FALSE(m.ok());
  for (const std::string& p : parts)
    EXPECT_NE(m.error().message.find(p), std::string::npos) << m.error().message;
}

TEST(ModelLoader, MissingTensorIsNamed) {
  test::TempDir dir;
  const std::string src = make_tiny(dir, DType::kQ8_0);
  expect_load_error(rewrite(dir, src, [](gguf::TensorInfo& t) { return t.name != "blk.1.ssm_a"; }),
                    {"blk.1.ssm_a", "missing"});
  expect_load_error(
      rewrite(dir, src, [](gguf::TensorInfo& t) { return t.name != "blk.8.nextn.eh_proj.weight"; }),
      {"blk.8.nextn.eh_proj.weight", "missing"});
}

TEST(ModelLoader, WrongShapeNamesExpectedAndActual) {
  test::TempDir dir;
  const std::string src = make_tiny(dir, DType::kQ8_0);
  expect_load_error(rewrite(dir, src,
                            [](gguf::TensorInfo& t) {
                              if (t.name == "blk.3.attn_q.weight") t.ne[1] /= 2;
                              return true;
                            }),
                    {"blk.3.attn_q.weight", "expected Q8_0 [96,256]", "got Q8_0 [96,128]"});
}

TEST(ModelLoader, UnsupportedTypeIsNamed) {
  test::TempDir dir;
  const std::string src = make_tiny(dir, DType::kF32);
  expect_load_error(
      rewrite(dir, src,
              [](gguf::TensorInfo& t) {
                if (t.name == "blk.0.ffn_up.weight") t.type = static_cast<uint32_t>(gguf::TensorType::kI32);
                return true;
              }),
      {"blk.0.ffn_up.weight", "I32", "expected F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K, Q5_K or Q6_K"});
}

// The llama.cpp block formats (Q4_0, Q5_0, Q4_K, Q5_K, Q6_K) load: test_model_kquant_load.cpp.

TEST(ModelLoader, WrongArchitectureIsRefused) {
  test::TempDir dir;
  const std::string src = make_tiny(dir, DType::kF32);
  expect_load_error(rewrite(
                        dir, src, [](gguf::TensorInfo&) { return true; },
                        [](std::vector<gguf::KeyValue>& kv) {
                          for (auto& e : kv) {
                            if (e.key == "general.architecture")
                              e.value = gguf::Value::of_string("qwen3next");
                          }
                        }),
                    {"general.architecture", "qwen3next"});
}

TEST(ModelLoader, UntiedOutputIsBound) {
  test::TempDir dir;
  SyntheticModelOptions o;
  o.shape = *preset_shape("tiny");
  o.shape.tied_embeddings = false;
  o.shape.n_mtp = 0;
  o.out_path = dir.file("untied.gguf");
  ASSERT_TRUE(write_synthetic_model(o).ok());
  auto m = Model::load(o.out_path);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  EXPECT_FALSE((*m)->weights().tied_embeddings);
  EXPECT_NE((*m)->weights().output.data, (*m)->weights().token_embd.data);
  EXPECT_FALSE((*m)->weights().mtp.has_value());
  EXPECT_EQ((*m)->config().n_mtp, 0);
}

TEST(ModelLoader, NotAFileGivesAnError) {
  test::TempDir dir;
  EXPECT_FALSE(Model::load(dir.file("does-not-exist.gguf")).ok());
  EXPECT_FALSE(Model::load(dir.path().string()).ok());
}

}  // namespace
}  // namespace qc
