// Writing K-quant files (issue #16 item 3): qwenchat-mkmodel's generator and qwenchat-convert's importer
// with a K-quant mix give every tensor the type model/quant_mix.h's rules say, store exactly quantize_row's
// bytes of the values the F32 file of the same run holds, write the same bytes on 1 and 3 threads, and the
// files load: the CPU logits equal, bit for bit, those of an F32 file of the dequantised weights (the
// matvec decodes a block into exactly dequantize_row's values and accumulates like the F32 path; see
// test_model_kquant_load.cpp), which is a stronger check than a tolerance against the unquantised model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "import/convert.h"
#include "kquant_model_file.h"
#include "model/model.h"
#include "model/quant_mix.h"
#include "model/row_parallel.h"
#include "model/synthetic.h"
#include "reference/reference_backend.h"
#include "runtime/engine.h"
#include "runtime/model_facts.h"
#include "temp_dir.h"
#include "test_import_checkpoint.h"
#include "tokenizer/bpe_trainer.h"

namespace qc {
namespace {

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<float> tensor_values(const gguf::File& f, const gguf::TensorInfo& t) {
  const std::optional<DType> d = dtype_of_gguf_type(t.type);
  EXPECT_TRUE(d.has_value()) << t.name;
  std::vector<float> v(t.n_elements());
  if (d) decode_row(*d, f.tensor_data(t), v.data(), static_cast<int64_t>(v.size()));
  return v;
}

// The file with every tensor decoded to F32 (same metadata, names, shapes).
std::string write_decoded_twin(const std::string& path, const std::string& out) {
  auto f = gguf::File::open(path);
  EXPECT_TRUE(f.ok()) << f.error().describe();
  gguf::Writer w;
  for (const gguf::KeyValue& kv : (*f)->metadata()) w.set(kv.key, kv.value);
  std::vector<std::vector<uint8_t>> data;
  for (const gguf::TensorInfo& t : (*f)->tensors()) {
    const std::vector<float> v = tensor_values(**f, t);
    EXPECT_TRUE(w.add_tensor(t.name, static_cast<uint32_t>(gguf::TensorType::kF32),
                             std::vector<uint64_t>(t.ne, t.ne + t.n_dims))
                    .ok());
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    data.push_back(std::move(b));
  }
  const Status s = w.write_all(out, data);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
  return out;
}

std::vector<float> cpu_logits(const std::string& path, const std::vector<int32_t>& tokens) {
  auto m = Model::load(path);
  EXPECT_TRUE(m.ok()) << m.error().describe();
  if (!m.ok()) return {};
  ReferenceOptions o;
  o.n_ctx = 32;
  o.n_threads = 2;
  auto b = make_reference_backend((*m)->config(), (*m)->weights(), o);
  EXPECT_TRUE(b.ok()) << b.error().describe();
  if (!b.ok()) return {};
  auto out = (*b)->forward(tokens, 0);
  EXPECT_TRUE(out.ok()) << out.error().describe();
  if (!out.ok()) return {};
  return std::vector<float>(out->logits.begin(), out->logits.end());
}

// Every block-format tensor of `q` holds encode_values of the same tensor's values in `f32` (a file of the
// same run written unquantised), and every tensor's type is `want`'s.
void expect_quantised_from(const std::string& q, const std::string& f32,
                           const std::map<std::string, DType>& want) {
  auto fq = gguf::File::open(q);
  auto ff = gguf::File::open(f32);
  ASSERT_TRUE(fq.ok() && ff.ok());
  int n_block = 0;
  for (const gguf::TensorInfo& t : (*fq)->tensors()) {
    ASSERT_TRUE(want.count(t.name)) << t.name;
    const DType type = want.at(t.name);
    EXPECT_EQ(t.type, ggml_type_id(type))
        << t.name << ": " << gguf::type_name(t.type) << " vs " << dtype_name(type);
    const gguf::TensorInfo* src = (*ff)->find_tensor(t.name);
    ASSERT_NE(src, nullptr) << t.name;
    const std::vector<float> v = tensor_values(**ff, *src);
    std::vector<uint8_t> expect(dtype_bytes(type, v.size()));
    const int64_t cols = static_cast<int64_t>(t.ne[0]);
    ASSERT_TRUE(
        encode_matrix(type, v.data(), expect.data(), static_cast<int64_t>(v.size()) / cols, cols, 1).ok());
    ASSERT_EQ(expect.size(), t.nbytes) << t.name;
    EXPECT_EQ(std::memcmp(expect.data(), (*fq)->tensor_data(t), expect.size()), 0) << t.name;
    n_block += dtype_block_format(type).has_value();
  }
  EXPECT_GT(n_block, 10);
}

std::map<std::string, DType> mix_types(const ModelShape& s, QuantMix mix, bool importer) {
  const std::vector<Qwen35Tensor> layout = qwen35_tensor_layout(s);
  auto types = qwen35_tensor_types(s, layout, mix);
  EXPECT_TRUE(types.ok());
  std::map<std::string, DType> out;
  for (size_t i = 0; i < layout.size() && types.ok(); ++i) {
    const bool small = layout[i].role == TensorRole::kSmallProjection;
    out[layout[i].name] = importer && small ? DType::kF32 : (*types)[i];
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return !a.empty() && a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(KQuantWrite, GeneratorWritesTheMixQuantisedThreadIndependentAndLoadable) {
  test::TempDir dir;
  const ModelShape shape = test::kquant_test_shape();
  auto write = [&](QuantMix mix, int threads, const std::string& name) {
    SyntheticModelOptions o;
    o.shape = shape;
    o.seed = 9;
    o.mix = mix;
    o.n_threads = threads;
    o.out_path = dir.file(name);
    const Status s = write_synthetic_model(o);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
    return o.out_path;
  };
  const std::string f32_1 = write(QuantMix::kF32, 1, "f32-1.gguf");
  // The generator's values do not depend on the thread count either (each row range jumps the seeded
  // generator to its first value).
  EXPECT_EQ(file_bytes(f32_1), file_bytes(write(QuantMix::kF32, 3, "f32-3.gguf")));
  const std::vector<int32_t> tokens = {1, 17, 299, 250, 42, 0};
  for (QuantMix mix : {QuantMix::kQ4_K_M, QuantMix::kQ6_K}) {
    SCOPED_TRACE(quant_mix_name(mix));
    const std::string one = write(mix, 1, std::string(quant_mix_name(mix)) + "-1.gguf");
    const std::string three = write(mix, 3, std::string(quant_mix_name(mix)) + "-3.gguf");
    const std::vector<uint8_t> b1 = file_bytes(one);
    EXPECT_GT(b1.size(), 100000u);
    EXPECT_EQ(b1, file_bytes(three));
    expect_quantised_from(one, f32_1, mix_types(shape, mix, false));
    auto f = gguf::File::open(one);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(*(*f)->get_u32("general.file_type"), quant_mix_file_type(mix));

    const std::vector<float> lq = cpu_logits(one, tokens);
    const std::string twin =
        write_decoded_twin(one, dir.file(std::string(quant_mix_name(mix)) + "-deq.gguf"));
    EXPECT_TRUE(same_bits(lq, cpu_logits(twin, tokens)));
    for (float x : lq) ASSERT_TRUE(std::isfinite(x));
    // Not the F32 model's logits: the weights did change (how much is test_kquant_quantize.cpp's business).
    const std::vector<float> lf = cpu_logits(f32_1, tokens);
    ASSERT_EQ(lf.size(), lq.size());
    EXPECT_FALSE(same_bits(lq, lf));
  }
}

TEST(KQuantWrite, ConverterWritesTheMixQuantisedThreadIndependentAndLoadable) {
  test::TempDir dir;
  test::TinyHfSpec s;
  s.hidden = 256;  // rows of whole super-blocks for the H-input projections; attn_output (128) and
  s.ff = 512;      // ssm_out (192) inputs are not, and fall back
  test::write_hf_checkpoint(dir.file("ckpt"), s, test::make_hf_weights(s));
  auto convert = [&](QuantMix mix, int threads, const std::string& name) {
    ConvertOptions o;
    o.input_dir = dir.file("ckpt");
    o.out_path = dir.file(name);
    o.import.mix = mix;
    o.n_threads = threads;
    auto r = convert_hf_checkpoint(o);
    EXPECT_TRUE(r.ok()) << r.error().describe();
    return r.ok() ? r->shape : ModelShape{};
  };
  const ModelShape shape = convert(QuantMix::kF32, 1, "f32.gguf");
  ASSERT_EQ(shape.n_layer + shape.n_mtp, 5);
  const std::vector<int32_t> tokens = {3, 100, 7, 311, 64};
  for (QuantMix mix : {QuantMix::kQ4_K_M, QuantMix::kQ6_K}) {
    SCOPED_TRACE(quant_mix_name(mix));
    const std::string name = quant_mix_name(mix);
    convert(mix, 1, name + "-1.gguf");
    convert(mix, 3, name + "-3.gguf");
    const std::string one = dir.file(name + "-1.gguf");
    EXPECT_EQ(file_bytes(one), file_bytes(dir.file(name + "-3.gguf")));
    const std::map<std::string, DType> want = mix_types(shape, mix, true);
    expect_quantised_from(one, dir.file("f32.gguf"), want);
    // By hand (block count 5, use_more_bits at 2 and 4; layers 1 and 3 attention, blk.4 the MTP block).
    if (mix == QuantMix::kQ4_K_M) {
      EXPECT_EQ(want.at("blk.0.attn_qkv.weight"), DType::kQ4_K);
      EXPECT_EQ(want.at("blk.2.attn_qkv.weight"), DType::kQ6_K);
      EXPECT_EQ(want.at("blk.1.attn_v.weight"), DType::kQ4_K);
      EXPECT_EQ(want.at("blk.4.attn_v.weight"), DType::kQ6_K);
      EXPECT_EQ(want.at("blk.2.ffn_down.weight"), DType::kQ6_K);
      EXPECT_EQ(want.at("blk.3.ffn_down.weight"), DType::kQ4_K);
      EXPECT_EQ(want.at("blk.1.attn_output.weight"), DType::kQ5_0);  // 128-value rows: Q4_K -> Q5_0
      EXPECT_EQ(want.at("blk.0.ssm_out.weight"), DType::kQ5_0);      // 192-value rows
      EXPECT_EQ(want.at("output.weight"), DType::kQ6_K);
    } else {
      EXPECT_EQ(want.at("blk.1.attn_output.weight"), DType::kQ8_0);  // Q6_K -> Q8_0
      EXPECT_EQ(want.at("blk.0.ffn_up.weight"), DType::kQ6_K);
    }
    EXPECT_EQ(want.at("blk.0.ssm_alpha.weight"), DType::kF32);  // the importer's choice, kept
    EXPECT_EQ(want.at("blk.0.ssm_conv1d.weight"), DType::kF32);

    const std::vector<float> lq = cpu_logits(one, tokens);
    const std::string twin = write_decoded_twin(one, dir.file(name + "-deq.gguf"));
    EXPECT_TRUE(same_bits(lq, cpu_logits(twin, tokens)));
    for (float x : lq) ASSERT_TRUE(std::isfinite(x));
  }
}

// A value the format cannot hold is reported for the lowest failing row, whatever the thread count.
TEST(KQuantWrite, EncodeErrorsNameTheFirstFailingRowOnAnyThreadCount) {
  const int64_t rows = 40, cols = 256;
  std::vector<float> x(static_cast<size_t>(rows * cols), 0.25f);
  x[static_cast<size_t>(17 * cols + 3)] = std::numeric_limits<float>::quiet_NaN();
  x[static_cast<size_t>(33 * cols + 9)] = std::numeric_limits<float>::infinity();
  std::vector<uint8_t> out(dtype_bytes(DType::kQ4_K, static_cast<uint64_t>(rows * cols)));
  for (int threads : {1, 3, 8}) {
    const Status s = encode_matrix(DType::kQ4_K, x.data(), out.data(), rows, cols, threads);
    ASSERT_FALSE(s.ok()) << threads;
    EXPECT_EQ(s.error().message.rfind("row 17: ", 0), 0u) << s.error().message;
  }
  x[static_cast<size_t>(17 * cols + 3)] = 0.5f;
  x[static_cast<size_t>(33 * cols + 9)] = 0.5f;
  std::vector<uint8_t> one(out.size()), three(out.size());
  ASSERT_TRUE(encode_matrix(DType::kQ4_K, x.data(), one.data(), rows, cols, 1).ok());
  ASSERT_TRUE(encode_matrix(DType::kQ4_K, x.data(), three.data(), rows, cols, 3).ok());
  EXPECT_EQ(one, three);
}

// The app's model facts name the type holding most of the layers' bytes: Q4_K for a q4_k_m file (this used
// to index a four-entry table by DType, out of bounds for the five block formats).
TEST(KQuantWrite, ModelFactsNameTheDominantKQuantType) {
  test::TempDir dir;
  SyntheticModelOptions o;
  o.shape = test::kquant_test_shape();
  o.mix = QuantMix::kQ4_K_M;
  o.out_path = dir.file("m.gguf");
  const BpeVocab vocab = test::tiny_vocab(o.shape.n_vocab);
  o.extra_metadata = [&](gguf::Writer& w) { write_bpe_vocab_metadata(w, vocab, "x"); };
  ASSERT_TRUE(write_synthetic_model(o).ok());
  EngineOptions eo;
  eo.model_path = o.out_path;
  eo.n_threads = 1;
  eo.n_ctx = 64;
  auto e = Engine::open(eo);
  ASSERT_TRUE(e.ok()) << e.error().describe();
  EXPECT_EQ(describe_model(**e, KernelConfig{}).quantization, "Q4_K");
}

}  // namespace
}  // namespace qc
