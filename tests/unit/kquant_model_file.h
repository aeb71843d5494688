// Test helper: a small qwen35 model written as a GGUF whose matrices mix the types of a llama.cpp K-quant
// file (Q4_K, Q6_K, Q5_K, Q4_0, Q5_0, Q8_0, F32 vectors), and its twin with every tensor decoded to F32
// (dequantize_row / decode_row) and written as F32. The two must give the same logits on the CPU.
//
// Quantised blocks are random bytes with the f16 scale fields (d, and dmin for Q4_K/Q5_K) overwritten by
// small finite halves: any other byte pattern is a valid block. The scales are chosen so a decoded value is
// at most about `target` in magnitude (1/sqrt(in) for projections, 1 for the embedding), which keeps the
// forward pass's activations O(1) like random_model.h's.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gguf/writer.h"
#include "model/kquant.h"
#include "model/quant.h"
#include "model/qwen35_layout.h"

namespace qc::test {

// Every dimension a K-quant row can have is a multiple of 256 here (H = 256, n_ff = 512, q/gate 256,
// GDN inner 256), three GDN layers and one attention layer, untied lm_head, an MTP block.
inline ModelShape kquant_test_shape() {
  ModelShape s;
  s.name = "kquant-test";
  s.n_embd = 256;
  s.n_layer = 4;
  s.n_ff = 512;
  s.n_head = 2;
  s.n_head_kv = 1;
  s.head_dim = 128;
  s.rope_dims = 32;
  s.rope_theta = 10000.0f;
  s.ssm_n_k_heads = 2;
  s.ssm_n_v_heads = 4;
  s.ssm_head_k_dim = 32;
  s.ssm_head_v_dim = 64;
  s.full_attention_interval = 4;
  s.n_vocab = 300;
  s.n_mtp = 1;
  s.tied_embeddings = false;
  s.n_ctx_train = 256;
  return s;
}

// Where the f16 scales of one block sit, and the largest |quant * sub-scale| a block can hold (so that
// d = target / unit bounds the decoded values by about target).
struct BlockScales {
  int d_offset = 0;
  int dmin_offset = -1;  // -1: no dmin
  float unit = 1.0f;
};

inline BlockScales block_scales(gguf::TensorType t) {
  switch (t) {
    case gguf::TensorType::kQ4_0:
      return {0, -1, 8.0f};
    case gguf::TensorType::kQ5_0:
      return {0, -1, 16.0f};
    case gguf::TensorType::kQ8_0:
      return {0, -1, 128.0f};
    case gguf::TensorType::kQ4_K:
      return {0, 2, 63.0f * 15.0f};
    case gguf::TensorType::kQ5_K:
      return {0, 2, 63.0f * 31.0f};
    case gguf::TensorType::kQ6_K:
      return {208, -1, 128.0f * 32.0f};
    default:
      return {};
  }
}

// Random valid blocks of `type` for `n` values.
inline std::vector<uint8_t> random_blocks(gguf::TensorType type, uint64_t n, float target,
                                          std::mt19937& rng) {
  uint64_t block_elems = 0, block_bytes = 0;
  EXPECT_TRUE(gguf::type_block_size(static_cast<uint32_t>(type), &block_elems, &block_bytes));
  std::vector<uint8_t> bytes(n / block_elems * block_bytes);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(byte(rng));
  const BlockScales s = block_scales(type);
  for (uint64_t b = 0; b < n / block_elems; ++b) {
    uint8_t* blk = bytes.data() + b * block_bytes;
    const uint16_t d = f32_to_f16(target / s.unit * u(rng));
    std::memcpy(blk + s.d_offset, &d, 2);
    if (s.dmin_offset >= 0) {
      // The mins shift a sub-block by at most 63 * dmin: keep that below target too.
      const uint16_t dmin = f32_to_f16(target / 63.0f * 0.5f * u(rng));
      std::memcpy(blk + s.dmin_offset, &dmin, 2);
    }
  }
  return bytes;
}

// Every value of a tensor decoded to f32: F32 copied, Q8_0 through decode_row, the rest through
// dequantize_row (the function the issue names as the definition of these formats).
inline std::vector<float> decode_tensor(gguf::TensorType type, const std::vector<uint8_t>& bytes,
                                        uint64_t n) {
  std::vector<float> out(n);
  if (type == gguf::TensorType::kF32) {
    std::memcpy(out.data(), bytes.data(), n * 4);
  } else if (type == gguf::TensorType::kQ8_0) {
    decode_row(DType::kQ8_0, bytes.data(), out.data(), static_cast<int64_t>(n));
  } else {
    const Status s = dequantize_row(type, bytes.data(), out.data(), static_cast<int64_t>(n));
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
  }
  return out;
}

// The type each tensor of the mixed file gets: token_embd Q4_K and output Q6_K (as llama.cpp's Q4_K_M
// does), the other matrices cycling through all six block types, one norm in Q8_0 (a small tensor in a
// block format, decoded whole at load), every other vector F32.
inline gguf::TensorType mixed_type(const Qwen35Tensor& t, size_t matrix_index) {
  using TT = gguf::TensorType;
  if (t.name == "token_embd.weight") return TT::kQ4_K;
  if (t.name == "output.weight") return TT::kQ6_K;
  if (t.name == "blk.0.attn_norm.weight") return TT::kQ8_0;
  if (!t.quantizable()) return TT::kF32;
  const TT cycle[] = {TT::kQ4_K, TT::kQ6_K, TT::kQ5_K, TT::kQ4_0, TT::kQ5_0, TT::kQ8_0};
  return cycle[matrix_index % 6];
}

// F32 values for a vector or conv tensor, by role (norms near 1, ssm_a in [-2, -0.1], ...).
inline std::vector<float> float_values(const Qwen35Tensor& t, uint64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    switch (t.role) {
      case TensorRole::kNorm:
      case TensorRole::kSsmNorm:
        x = 1.0f + 0.2f * u(rng);
        break;
      case TensorRole::kSsmA:
        x = -1.05f + 0.95f * u(rng);
        break;
      case TensorRole::kConv:
        x = 0.6f * u(rng);
        break;
      default:
        x = u(rng);
        break;
    }
  }
  return v;
}

struct KQuantFiles {
  std::string quantised;  // mixed block types
  std::string f32;        // the same values, every tensor F32
};

// Writes both files into `dir` (a folder path ending without a slash). Every row a K-quant type gets must
// be a multiple of 256 long in `shape` (kquant_test_shape's are; the GPU tests use one with CUDA's GDN
// head sizes).
inline KQuantFiles write_kquant_model(const std::string& dir, uint32_t seed,
                                      const ModelShape& shape = kquant_test_shape()) {
  EXPECT_TRUE(shape.validate().ok());
  std::mt19937 rng(seed);
  gguf::Writer wq, wf;
  for (const gguf::KeyValue& kv : qwen35_metadata(shape, DType::kQ4_K)) wq.set(kv.key, kv.value);
  for (const gguf::KeyValue& kv : qwen35_metadata(shape, DType::kF32)) wf.set(kv.key, kv.value);
  std::vector<std::vector<uint8_t>> qdata, fdata;
  size_t matrix_index = 0;
  for (const Qwen35Tensor& t : qwen35_tensor_layout(shape)) {
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    const gguf::TensorType type = mixed_type(t, matrix_index);
    if (t.quantizable()) ++matrix_index;
    std::vector<uint8_t> bytes;
    if (type == gguf::TensorType::kF32) {
      const std::vector<float> v = float_values(t, n, rng);
      bytes.resize(n * 4);
      std::memcpy(bytes.data(), v.data(), n * 4);
    } else if (!t.quantizable()) {  // a norm in Q8_0: encoded from values near 1
      const std::vector<float> v = float_values(t, n, rng);
      bytes.resize(dtype_bytes(DType::kQ8_0, n));
      encode_row(DType::kQ8_0, v.data(), bytes.data(), static_cast<int64_t>(n));
    } else {
      const float target =
          t.role == TensorRole::kEmbedding ? 1.0f : 1.0f / std::sqrt(static_cast<float>(t.shape[0]));
      bytes = random_blocks(type, n, target, rng);
    }
    EXPECT_TRUE(wq.add_tensor(t.name, static_cast<uint32_t>(type), t.shape).ok()) << t.name;
    EXPECT_TRUE(wf.add_tensor(t.name, static_cast<uint32_t>(gguf::TensorType::kF32), t.shape).ok()) << t.name;
    const std::vector<float> decoded = decode_tensor(type, bytes, n);
    std::vector<uint8_t> fbytes(n * 4);
    std::memcpy(fbytes.data(), decoded.data(), n * 4);
    qdata.push_back(std::move(bytes));
    fdata.push_back(std::move(fbytes));
  }
  KQuantFiles files{dir + "/mixed.gguf", dir + "/mixed-f32.gguf"};
  const Status sq = wq.write_all(files.quantised, qdata);
  EXPECT_TRUE(sq.ok()) << (sq.ok() ? "" : sq.error().describe());
  const Status sf = wf.write_all(files.f32, fdata);
  EXPECT_TRUE(sf.ok()) << (sf.ok() ? "" : sf.error().describe());
  return files;
}

}  // namespace qc::test
