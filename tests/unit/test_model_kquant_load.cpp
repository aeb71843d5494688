// Loading llama.cpp K-quant files (issue #16): a file that mixes Q4_K, Q6_K, Q5_K, Q4_0, Q5_0, Q8_0 and F32
// per tensor loads with its matrices still quantised (views into the mapping), the CPU reference computes
// the same logits as on the F32 file of the decoded values, and broken files give errors that name the
// tensor and its type.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kquant_model_file.h"
#include "model/model.h"
#include "reference/reference_backend.h"
#include "temp_dir.h"

namespace qc {
namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_all_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Overwrites the type id of tensor `name` in a GGUF image's tensor table: finds the length-prefixed name,
// skips n_dims and the dims, writes the u32 type. The data section is left as it is, so the declared size
// no longer matches what the file holds.
std::string patch_type(const test::TempDir& dir, const std::string& src, const std::string& name,
                       uint32_t type, const std::string& out_name) {
  std::vector<uint8_t> b = read_all(src);
  std::vector<uint8_t> needle(8);
  const uint64_t len = name.size();
  std::memcpy(needle.data(), &len, 8);
  needle.insert(needle.end(), name.begin(), name.end());
  const auto it = std::search(b.begin(), b.end(), needle.begin(), needle.end());
  EXPECT_NE(it, b.end()) << name;
  if (it == b.end()) return src;
  size_t pos = static_cast<size_t>(it - b.begin()) + needle.size();
  uint32_t n_dims = 0;
  std::memcpy(&n_dims, b.data() + pos, 4);
  pos += 4 + 8 * static_cast<size_t>(n_dims);
  std::memcpy(b.data() + pos, &type, 4);
  const std::string out = dir.file(out_name);
  write_all_bytes(out, b);
  return out;
}

std::vector<float> run_logits(const Model& m, RefPrecision precision, const std::vector<int32_t>& tokens,
                              std::vector<float>* mtp_logits) {
  ReferenceOptions o;
  o.precision = precision;
  o.n_ctx = 32;
  o.n_threads = 2;
  auto b = make_reference_backend(m.config(), m.weights(), o);
  EXPECT_TRUE(b.ok()) << b.error().describe();
  if (!b.ok()) return {};
  auto out = (*b)->forward(tokens, 0);
  EXPECT_TRUE(out.ok()) << out.error().describe();
  if (!out.ok()) return {};
  std::vector<float> logits(out->logits.begin(), out->logits.end());
  const int64_t H = m.config().n_embd;
  const std::vector<float> last_hidden(out->hidden.end() - H, out->hidden.end());
  auto mtp = (*b)->mtp_forward(tokens.back(), last_hidden, static_cast<int>(tokens.size()));
  EXPECT_TRUE(mtp.ok()) << mtp.error().describe();
  if (mtp.ok()) mtp_logits->assign(mtp->logits.begin(), mtp->logits.end());
  return logits;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The engine's DType table (model/quant.h) and the GGUF type table (gguf/types.cpp) agree on every block
// geometry and id, and decode_row of a block format is dequantize_row.
TEST(KQuantLoad, DTypeGeometryMatchesTheGgufTable) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ5_0,
                  DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    SCOPED_TRACE(dtype_name(t));
    uint64_t elems = 0, bytes = 0;
    ASSERT_TRUE(gguf::type_block_size(ggml_type_id(t), &elems, &bytes));
    EXPECT_EQ(gguf::type_name(ggml_type_id(t)), dtype_name(t));
    EXPECT_EQ(static_cast<uint64_t>(dtype_block(t)), elems);
    EXPECT_EQ(dtype_bytes(t, elems * 3), bytes * 3);
    EXPECT_EQ(dtype_encodable(t), !dtype_block_format(t).has_value());
  }
  std::mt19937 rng(2);
  for (gguf::TensorType type : {gguf::TensorType::kQ4_0, gguf::TensorType::kQ5_0, gguf::TensorType::kQ4_K,
                                gguf::TensorType::kQ5_K, gguf::TensorType::kQ6_K}) {
    const std::vector<uint8_t> blocks = test::random_blocks(type, 512, 1.0f, rng);
    std::vector<float> a(512), b(512);
    ASSERT_TRUE(dequantize_row(type, blocks.data(), a.data(), 512).ok());
    DType t = DType::kF32;
    for (DType d : {DType::kQ4_0, DType::kQ5_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K})
      if (dtype_block_format(d) == type) t = d;
    decode_row(t, blocks.data(), b.data(), 512);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), 512 * sizeof(float)), 0) << dtype_name(t);
  }
}

TEST(KQuantLoad, MixedFileBindsQuantisedViewsIntoTheMapping) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 7);
  auto m = Model::load(files.quantised);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  const ModelWeights& w = (*m)->weights();
  EXPECT_EQ(w.token_embd.type, DType::kQ4_K);
  EXPECT_EQ(w.output.type, DType::kQ6_K);
  EXPECT_EQ(w.layers[0].attn_norm.type, DType::kQ8_0);
  // Every one of the six block types is bound somewhere, each view pointing at the file's own bytes (not
  // at an expanded copy).
  std::vector<DType> seen;
  const gguf::File& f = (*m)->file();
  auto visit = [&](const TensorView& v) {
    seen.push_back(v.type);
    const gguf::TensorInfo* t = f.find_tensor(v.name);
    ASSERT_NE(t, nullptr) << v.name;
    EXPECT_EQ(v.data, f.tensor_data(*t)) << v.name;
    EXPECT_EQ(v.nbytes(), t->nbytes) << v.name;
  };
  visit(w.token_embd);
  visit(w.output);
  for (const LayerWeights& l : w.layers) {
    for (const TensorView* v : {&l.ffn.gate, &l.ffn.up, &l.ffn.down}) visit(*v);
    if (l.recurrent) {
      for (const TensorView* v : {&l.gdn.wqkv, &l.gdn.wgate, &l.gdn.wbeta, &l.gdn.walpha, &l.gdn.wout})
        visit(*v);
    } else {
      for (const TensorView* v : {&l.attn.wq, &l.attn.wk, &l.attn.wv, &l.attn.wo}) visit(*v);
    }
  }
  for (DType t : {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ4_0, DType::kQ5_0, DType::kQ8_0}) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), t), seen.end()) << dtype_name(t);
  }
  // The quantised file reads far fewer bytes per token than its F32 twin (4.5-8.5 bits vs 32 per weight).
  auto f32 = Model::load(files.f32);
  ASSERT_TRUE(f32.ok()) << f32.error().describe();
  EXPECT_LT((*m)->bytes_per_token() * 3, (*f32)->bytes_per_token());
}

// The K-quant matvec decodes each row a super-block (or 32-value block) at a time into exactly the f32
// values dequantize_row gives, and accumulates element i into lane i % 16 like the F32 path, in the same
// order: so the logits are equal bit for bit, not just within a tolerance, in both precisions. The
// embedding lookup of a Q4_K token_embd and the MTP block are covered by the same comparison.
TEST(KQuantLoad, CpuLogitsEqualThoseOfTheDecodedF32File) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 11);
  auto q = Model::load(files.quantised);
  ASSERT_TRUE(q.ok()) << q.error().describe();
  auto f = Model::load(files.f32);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  const std::vector<int32_t> tokens = {1, 17, 299, 250, 42, 0};
  for (RefPrecision p : {RefPrecision::kFloat, RefPrecision::kDouble}) {
    SCOPED_TRACE(p == RefPrecision::kFloat ? "f32" : "f64");
    std::vector<float> q_mtp, f_mtp;
    const std::vector<float> lq = run_logits(**q, p, tokens, &q_mtp);
    const std::vector<float> lf = run_logits(**f, p, tokens, &f_mtp);
    ASSERT_EQ(lq.size(), tokens.size() * 300);
    EXPECT_TRUE(same_bits(lq, lf));
    EXPECT_TRUE(same_bits(q_mtp, f_mtp));
    // Not a degenerate pass: finite, and the logits differ between tokens.
    for (float x : lq) ASSERT_TRUE(std::isfinite(x));
    EXPECT_NE(lq[0], lq[300]);
    // Same bits run to run.
    std::vector<float> again_mtp;
    EXPECT_TRUE(same_bits(run_logits(**q, p, tokens, &again_mtp), lq));
  }
}

void expect_load_error(const std::string& path, const std::vector<std::string>& parts) {
  auto m = Model::load(path);
  ASSERT_FALSE(m.ok()) << path;
  for (const std::string& p : parts)
    EXPECT_NE(m.error().message.find(p), std::string::npos) << m.error().message;
}

TEST(KQuantLoad, RowNotAWholeSuperBlockIsNamed) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 3);
  // conv1d is {4, 384} F32: declared Q4_K its 4-value rows are not whole 256-value super-blocks.
  const std::string bad = patch_type(dir, files.quantised, "blk.0.ssm_conv1d.weight",
                                     static_cast<uint32_t>(gguf::TensorType::kQ4_K), "conv-q4k.gguf");
  expect_load_error(bad, {"blk.0.ssm_conv1d.weight", "Q4_K block size 256", "got 4"});
}

TEST(KQuantLoad, WrongByteSizeIsNamedWithTheDeclaredType) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 3);
  // output.weight is the last tensor (Q6_K, 210 bytes per 256 values): declared F32 it needs 1024 per 256,
  // past the end of the file.
  expect_load_error(patch_type(dir, files.quantised, "output.weight", 0, "out-f32.gguf"),
                    {"output.weight", "runs past the end of the file", "F32 [256,300]"});
  // token_embd.weight is the first (Q4_K): declared Q6_K it runs into the next tensor's bytes.
  expect_load_error(patch_type(dir, files.quantised, "token_embd.weight",
                               static_cast<uint32_t>(gguf::TensorType::kQ6_K), "embd-q6k.gguf"),
                    {"token_embd.weight", "overlaps", "Q6_K [256,300]"});
  // A file cut short: the last tensor's Q6_K rows are incomplete.
  std::vector<uint8_t> b = read_all(files.quantised);
  b.resize(b.size() - 1000);
  write_all_bytes(dir.file("cut.gguf"), b);
  expect_load_error(dir.file("cut.gguf"), {"output.weight", "truncated", "Q6_K [256,300]"});
}

TEST(KQuantLoad, UnknownAndUnsupportedTypeIdsAreNamed) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 3);
  expect_load_error(patch_type(dir, files.quantised, "blk.1.ffn_up.weight", 99, "unknown.gguf"),
                    {"blk.1.ffn_up.weight", "unknown tensor type id 99"});
  // Q2_K is a type the reader knows (its blocks are smaller than Q4_K's, so the data still fits) but no
  // backend computes with: refused by the loader, by name, with the list of supported types.
  expect_load_error(patch_type(dir, files.quantised, "token_embd.weight",
                               static_cast<uint32_t>(gguf::TensorType::kQ2_K), "q2k.gguf"),
                    {"token_embd.weight", "Q2_K is not supported", "Q4_K, Q5_K or Q6_K"});
}

// Views built by hand (tests, tools) skip the loader: the reference backend checks whole blocks itself,
// since its forward pass decodes rows block by block.
TEST(KQuantLoad, ReferenceBackendRefusesPartialBlockRows) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 5);
  auto m = Model::load(files.quantised);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  ModelWeights w = (*m)->weights();
  // output_norm as 2 rows of 128 Q4_K values: the right element count, but half a super-block per row.
  w.output_norm.type = DType::kQ4_K;
  w.output_norm.rows = 2;
  w.output_norm.cols = 128;
  const Status s = validate_reference_model((*m)->config(), w);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("output_norm.weight: Q4_K rows must be a multiple of 256 values, got 128"),
            std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace qc
