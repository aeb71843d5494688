// The per-tensor types of a K-quant mix (model/quant_mix.h) against tables worked out by hand from
// llama.cpp's src/llama-quant.cpp (commit 007dbbf3fd17): llama_tensor_get_type_impl's rules, its counters
// (attn_v and the GDN attn_qkv share one; ffn_down counts against the block count, MTP included), the
// output / tied-embedding rule and tensor_type_fallback. The expected types are written out, not recomputed
// with the formula under test.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "kquant_model_file.h"
#include "model/presets.h"
#include "model/quant_mix.h"
#include "model/qwen35_layout.h"

namespace qc {
namespace {

std::map<std::string, DType> types_by_name(const ModelShape& s, QuantMix mix) {
  const std::vector<Qwen35Tensor> layout = qwen35_tensor_layout(s);
  auto types = qwen35_tensor_types(s, layout, mix);
  EXPECT_TRUE(types.ok()) << types.error().describe();
  std::map<std::string, DType> out;
  if (!types.ok()) return out;
  for (size_t i = 0; i < layout.size(); ++i) out[layout[i].name] = (*types)[i];
  return out;
}

using D = DType;

// kquant_test_shape: 4 main layers (0-2 GDN, 3 attention) and the MTP block as blk.4, so the block count
// is 5; every matrix row is a multiple of 256 values. use_more_bits(i, 5): 5/8 = 0 and 7*5/8 = 4, so it
// holds for i = 2 ((2 - 0) % 3 == 2) and i = 4 (>= 4) only.
TEST(QuantMix, Q4KMOnTheTestShapeByHand) {
  const std::map<std::string, DType> t = types_by_name(test::kquant_test_shape(), QuantMix::kQ4_K_M);
  const std::map<std::string, DType> want = {
      {"token_embd.weight", D::kQ4_K},  // untied: no rule for Q4_K_M
      {"output.weight", D::kQ6_K},
      {"output_norm.weight", D::kF32},
      // GDN layers: attn_qkv is attn_v-like (counter i = layer index), ffn_down counts layers.
      {"blk.0.attn_qkv.weight", D::kQ4_K},
      {"blk.1.attn_qkv.weight", D::kQ4_K},
      {"blk.2.attn_qkv.weight", D::kQ6_K},
      {"blk.0.ffn_down.weight", D::kQ4_K},
      {"blk.1.ffn_down.weight", D::kQ4_K},
      {"blk.2.ffn_down.weight", D::kQ6_K},
      {"blk.3.ffn_down.weight", D::kQ4_K},
      {"blk.4.ffn_down.weight", D::kQ6_K},
      {"blk.0.attn_gate.weight", D::kQ4_K},
      {"blk.0.ssm_out.weight", D::kQ4_K},
      {"blk.0.ssm_alpha.weight", D::kQ4_K},  // llama.cpp quantises them (the importer keeps them F32)
      {"blk.0.ssm_beta.weight", D::kQ4_K},
      {"blk.0.ssm_conv1d.weight", D::kF32},
      {"blk.0.ssm_a", D::kF32},
      {"blk.0.ssm_dt.bias", D::kF32},
      {"blk.0.ssm_norm.weight", D::kF32},
      {"blk.0.ffn_gate.weight", D::kQ4_K},
      {"blk.0.ffn_up.weight", D::kQ4_K},
      // The attention layer (counter 3) and the MTP block's attention (counter 4).
      {"blk.3.attn_v.weight", D::kQ4_K},
      {"blk.3.attn_q.weight", D::kQ4_K},
      {"blk.3.attn_k.weight", D::kQ4_K},
      {"blk.3.attn_output.weight", D::kQ4_K},
      {"blk.3.attn_q_norm.weight", D::kF32},
      {"blk.4.attn_v.weight", D::kQ6_K},
      {"blk.4.nextn.eh_proj.weight", D::kQ4_K},
      {"blk.4.nextn.enorm.weight", D::kF32},
  };
  for (const auto& [name, type] : want) {
    ASSERT_TRUE(t.count(name)) << name;
    EXPECT_EQ(dtype_name(t.at(name)), std::string(dtype_name(type))) << name;
  }
}

TEST(QuantMix, OtherMixesOnTheTestShapeByHand) {
  const ModelShape s = test::kquant_test_shape();
  // q5_k_m: the same positions as q4_k_m, Q5_K elsewhere.
  auto q5m = types_by_name(s, QuantMix::kQ5_K_M);
  EXPECT_EQ(q5m["blk.2.attn_qkv.weight"], D::kQ6_K);
  EXPECT_EQ(q5m["blk.4.attn_v.weight"], D::kQ6_K);
  EXPECT_EQ(q5m["blk.3.attn_v.weight"], D::kQ5_K);
  EXPECT_EQ(q5m["blk.4.ffn_down.weight"], D::kQ6_K);
  EXPECT_EQ(q5m["blk.1.ffn_down.weight"], D::kQ5_K);
  EXPECT_EQ(q5m["output.weight"], D::kQ6_K);
  EXPECT_EQ(q5m["token_embd.weight"], D::kQ5_K);
  // q4_k_s: the first four attn_v-like tensors Q5_K (i_attention_wv < 4), ffn_down Q5_K for i < 5/8 = 0:
  // none.
  auto q4s = types_by_name(s, QuantMix::kQ4_K_S);
  for (const char* n :
       {"blk.0.attn_qkv.weight", "blk.1.attn_qkv.weight", "blk.2.attn_qkv.weight", "blk.3.attn_v.weight"})
    EXPECT_EQ(q4s[n], D::kQ5_K) << n;
  EXPECT_EQ(q4s["blk.4.attn_v.weight"], D::kQ4_K);
  EXPECT_EQ(q4s["blk.0.ffn_down.weight"], D::kQ4_K);
  EXPECT_EQ(q4s["output.weight"], D::kQ6_K);
  // q5_k_s and q6_k: one type everywhere but the output (Q6_K).
  auto q5s = types_by_name(s, QuantMix::kQ5_K_S);
  EXPECT_EQ(q5s["blk.2.attn_qkv.weight"], D::kQ5_K);
  EXPECT_EQ(q5s["blk.4.ffn_down.weight"], D::kQ5_K);
  EXPECT_EQ(q5s["output.weight"], D::kQ6_K);
  auto q6 = types_by_name(s, QuantMix::kQ6_K);
  for (const auto& [name, type] : q6) {
    if (type != D::kF32) {
      EXPECT_EQ(type, D::kQ6_K) << name;
    }
  }
  // q4_0: the output takes Q6_K too (new_type != Q8_0); q8_0 keeps its output Q8_0.
  auto q40 = types_by_name(s, QuantMix::kQ4_0);
  EXPECT_EQ(q40["output.weight"], D::kQ6_K);
  EXPECT_EQ(q40["blk.2.attn_qkv.weight"], D::kQ4_0);
  EXPECT_EQ(q40["blk.4.ffn_down.weight"], D::kQ4_0);
  auto q8 = types_by_name(s, QuantMix::kQ8_0);
  EXPECT_EQ(q8["output.weight"], D::kQ8_0);
  EXPECT_EQ(q8["blk.2.attn_qkv.weight"], D::kQ8_0);
  // f16: no rules for unquantised types; every 2-D weight F16.
  auto f16 = types_by_name(s, QuantMix::kF16);
  EXPECT_EQ(f16["output.weight"], D::kF16);
  EXPECT_EQ(f16["blk.0.ssm_alpha.weight"], D::kF16);
}

// Tied embeddings: token_embd is also the lm_head, so it takes the output's rule.
TEST(QuantMix, TiedTokenEmbeddingTakesTheOutputRule) {
  ModelShape s = test::kquant_test_shape();
  s.tied_embeddings = true;
  auto q4m = types_by_name(s, QuantMix::kQ4_K_M);
  EXPECT_EQ(q4m.count("output.weight"), 0u);
  EXPECT_EQ(q4m["token_embd.weight"], D::kQ6_K);
  auto q8 = types_by_name(s, QuantMix::kQ8_0);
  EXPECT_EQ(q8["token_embd.weight"], D::kQ8_0);
}

// The 27B preset: 64 main layers (every 4th attention) plus MTP, block count 65. use_more_bits(i, 65):
// 65/8 = 8, 7*65/8 = 56: layers 0-7, 56-64, and (i - 8) % 3 == 2: 10, 13, ..., 55. Listed by hand.
TEST(QuantMix, Q4KMOn27BLayerCounting) {
  auto shape = preset_shape("27b");
  ASSERT_TRUE(shape.ok()) << shape.error().describe();
  ASSERT_EQ(shape->n_layer + shape->n_mtp, 65);
  const std::set<int> more = {0,  1,  2,  3,  4,  5,  6,  7,  10, 13, 16, 19, 22, 25, 28, 31, 34,
                              37, 40, 43, 46, 49, 52, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64};
  auto t = types_by_name(*shape, QuantMix::kQ4_K_M);
  int n_q6 = 0;
  for (int il = 0; il < 65; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    const bool attention = il == 64 || (il + 1) % shape->full_attention_interval == 0;
    const std::string v = p + (attention ? "attn_v.weight" : "attn_qkv.weight");
    ASSERT_TRUE(t.count(v)) << v;
    const DType want = more.count(il) ? D::kQ6_K : D::kQ4_K;
    EXPECT_EQ(t[v], want) << v;
    EXPECT_EQ(t[p + "ffn_down.weight"], want) << p;
    EXPECT_EQ(t[p + "ffn_up.weight"], D::kQ4_K) << p;
    n_q6 += t[v] == D::kQ6_K;
  }
  EXPECT_EQ(n_q6, 33);
  EXPECT_EQ(t["token_embd.weight"], D::kQ4_K);  // the 27B has a separate lm_head
  EXPECT_EQ(t["output.weight"], D::kQ6_K);
}

// tensor_type_fallback on rows that are not whole 256-value super-blocks (288 = 9 * 32, 100 = neither).
TEST(QuantMix, FallbackForRowsThatAreNotWholeSuperBlocks) {
  const MixPosition mid{3, 20, 3, 20, false};  // use_more_bits(3, 20) is false: the default type applies
  auto type = [&](QuantMix m, const std::string& name, uint64_t ne0) {
    return quant_mix_tensor_type(m, name, {ne0, 64}, mid);
  };
  EXPECT_EQ(*type(QuantMix::kQ4_K_M, "blk.3.ffn_up.weight", 288), D::kQ5_0);  // Q4_K -> Q5_0
  EXPECT_EQ(*type(QuantMix::kQ5_K_M, "blk.3.ffn_up.weight", 288), D::kQ8_0);  // Q5_K -> Q5_1: Q8_0 here
  EXPECT_EQ(*type(QuantMix::kQ6_K, "blk.3.ffn_up.weight", 288), D::kQ8_0);    // Q6_K -> Q8_0
  EXPECT_EQ(*type(QuantMix::kQ4_0, "blk.3.ffn_up.weight", 288), D::kQ4_0);    // 32-value blocks fit
  EXPECT_EQ(*type(QuantMix::kQ4_K_M, "blk.3.ffn_up.weight", 100), D::kF16);   // Q5_0 does not fit either
  EXPECT_EQ(*type(QuantMix::kF16, "blk.3.ffn_up.weight", 100), D::kF16);
  // The output: Q8_0 when the row is not a multiple of the default type's block; q4_0's 32 divides 288,
  // so it picks Q6_K, which then falls back to Q8_0.
  EXPECT_EQ(*type(QuantMix::kQ4_K_M, "output.weight", 288), D::kQ8_0);
  EXPECT_EQ(*type(QuantMix::kQ4_0, "output.weight", 288), D::kQ8_0);
  EXPECT_EQ(*type(QuantMix::kQ4_K_M, "output.weight", 256), D::kQ6_K);
  // No fallback defined for Q4_0 / Q8_0: an error naming the tensor, its shape and the block.
  auto bad = type(QuantMix::kQ4_0, "blk.3.ffn_up.weight", 100);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("blk.3.ffn_up.weight [100,64]"), std::string::npos)
      << bad.error().message;
  EXPECT_NE(bad.error().message.find("Q4_0's block of 32"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(type(QuantMix::kQ4_K_M, "output.weight", 100).ok());  // Q8_0 chosen, 100 % 32 != 0
}

// What llama.cpp leaves unquantised, by name and shape, is what the layout calls non-quantizable.
TEST(QuantMix, QuantisedTensorsAreTheLayoutsQuantizableOnes) {
  for (const char* preset : {"tiny", "27b"}) {
    auto s = preset_shape(preset);
    ASSERT_TRUE(s.ok());
    const std::vector<Qwen35Tensor> layout = qwen35_tensor_layout(*s);
    auto types = qwen35_tensor_types(*s, layout, QuantMix::kF16);
    ASSERT_TRUE(types.ok()) << types.error().describe();
    for (size_t i = 0; i < layout.size(); ++i)
      EXPECT_EQ((*types)[i] == D::kF16, layout[i].quantizable()) << preset << " " << layout[i].name;
  }
}

TEST(QuantMix, NamesAndFileTypes) {
  for (const char* n :
       {"f32", "F16", "bf16", "Q8_0", "q4_0", "q5_0", "q4_k_s", "Q4_K_M", "q5_k_s", "q5_k_m", "q6_k"}) {
    auto m = quant_mix_from_name(n, "--outtype");
    ASSERT_TRUE(m.ok()) << n;
  }
  auto bad = quant_mix_from_name("q4_k", "--outtype");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.error().message,
      "--outtype: expected one of f32, f16, bf16, q8_0, q4_0, q5_0, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k, "
      "got \"q4_k\"");
  // enum llama_ftype in llama.cpp's include/llama.h.
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q4_k_s", "")), 14u);
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q4_k_m", "")), 15u);
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q5_k_s", "")), 16u);
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q5_k_m", "")), 17u);
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q6_k", "")), 18u);
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q4_0", "")), 2u);
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q5_0", "")), 8u);
  EXPECT_EQ(quant_mix_file_type(*quant_mix_from_name("q8_0", "")), 7u);
}

}  // namespace
}  // namespace qc
