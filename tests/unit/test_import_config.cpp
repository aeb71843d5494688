// config.json reading: the multimodal (text_config) and text-only forms, transformers' defaults, the
// places RoPE settings can live, layer patterns, and the variants that are refused with a clear message.
#include <gtest/gtest.h>

#include "import/hf_config.h"
#include "test_import_checkpoint.h"

namespace qc {
namespace {

using nlohmann::json;

Result<HfTextConfig> parse(const json& j) {
  return parse_hf_config(j.dump(), "config.json");
}

void expect_error(const json& j, const std::string& needle) {
  auto c = parse(j);
  ASSERT_FALSE(c.ok()) << j.dump();
  EXPECT_EQ(c.error().message.rfind("config.json: ", 0), 0u) << c.error().message;
  EXPECT_NE(c.error().message.find(needle), std::string::npos) << c.error().message;
}

TEST(ImportConfig, ReadsTheMultimodalForm) {
  test::TinyHfSpec s;
  auto c = parse(test::hf_config_json(s));
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_TRUE(c->nested);
  EXPECT_EQ(c->architecture, "Qwen3_5ForConditionalGeneration");
  EXPECT_EQ(c->hidden_size, 64);
  EXPECT_EQ(c->linear_num_value_heads, 6);
  EXPECT_EQ(c->linear_key_head_dim, 16);
  EXPECT_EQ(c->rope_dims(), 8);
  EXPECT_EQ(c->rope_theta, 10000.0);
  EXPECT_EQ(c->mrope_section, (std::vector<int>{1, 1, 2}));
  EXPECT_EQ(c->full_attention_interval, 2);
  EXPECT_EQ(c->is_full_attention, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(c->mtp_num_hidden_layers, 1);
  EXPECT_FALSE(c->tie_word_embeddings);
  auto shape = shape_from_hf_config(*c, 1, "tiny");
  ASSERT_TRUE(shape.ok()) << shape.error().describe();
  EXPECT_EQ(shape->ssm_n_v_heads, 6);
  EXPECT_EQ(shape->n_ctx_train, 4096);
  EXPECT_EQ(shape->n_mtp, 1);
}

// The published Qwen3.5-27B text_config (fields as shipped), read into the 27b preset's shape.
TEST(ImportConfig, ReadsThe27bConfigAsThePreset) {
  json layer_types = json::array();
  for (int i = 0; i < 64; ++i)
    layer_types.push_back((i + 1) % 4 == 0 ? "full_attention" : "linear_attention");
  const json cfg = {
      {"architectures", {"Qwen3_5ForConditionalGeneration"}},
      {"model_type", "qwen3_5"},
      {"tie_word_embeddings", false},
      {"text_config",
       {{"model_type", "qwen3_5_text"},
        {"attention_bias", false},
        {"attn_output_gate", true},
        {"eos_token_id", 248044},
        {"full_attention_interval", 4},
        {"head_dim", 256},
        {"hidden_act", "silu"},
        {"hidden_size", 5120},
        {"intermediate_size", 17408},
        {"layer_types", layer_types},
        {"linear_conv_kernel_dim", 4},
        {"linear_key_head_dim", 128},
        {"linear_num_key_heads", 16},
        {"linear_num_value_heads", 48},
        {"linear_value_head_dim", 128},
        {"mamba_ssm_dtype", "float32"},
        {"max_position_embeddings", 262144},
        {"mtp_num_hidden_layers", 1},
        {"mtp_use_dedicated_embeddings", false},
        {"num_attention_heads", 24},
        {"num_hidden_layers", 64},
        {"num_key_value_heads", 4},
        {"rms_norm_eps", 1e-6},
        {"tie_word_embeddings", false},
        {"vocab_size", 248320},
        {"rope_parameters",
         {{"mrope_interleaved", true},
          {"mrope_section", {11, 11, 10}},
          {"rope_type", "default"},
          {"rope_theta", 10000000},
          {"partial_rotary_factor", 0.25}}}}},
  };
  auto c = parse(cfg);
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_EQ(c->eos_token_id, 248044);
  auto shape = shape_from_hf_config(*c, 1, "27b");
  ASSERT_TRUE(shape.ok()) << shape.error().describe();
  auto preset = preset_shape("27b");
  ASSERT_TRUE(preset.ok());
  EXPECT_EQ(shape->n_params(), preset->n_params());
  EXPECT_EQ(shape->rope_dims, preset->rope_dims);
  EXPECT_EQ(shape->rope_theta, preset->rope_theta);
  EXPECT_EQ(shape->full_attention_interval, preset->full_attention_interval);
  EXPECT_EQ(shape->n_ctx_train, preset->n_ctx_train);
}

TEST(ImportConfig, TextOnlyFormAndDefaults) {
  // What transformers' Qwen3_5ForCausalLM saves, minus every optional field: transformers' defaults apply.
  const json cfg = {{"model_type", "qwen3_5_text"}, {"vocab_size", 512},        {"hidden_size", 128},
                    {"num_hidden_layers", 8},       {"intermediate_size", 256}, {"num_attention_heads", 2},
                    {"num_key_value_heads", 1},     {"rope_theta", 1e6}};
  auto c = parse(cfg);
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_FALSE(c->nested);
  EXPECT_EQ(c->head_dim, 256);
  EXPECT_EQ(c->linear_num_key_heads, 16);
  EXPECT_EQ(c->linear_num_value_heads, 32);
  EXPECT_EQ(c->partial_rotary_factor, 0.25);
  EXPECT_EQ(c->rope_theta, 1e6);  // top-level (older files)
  EXPECT_EQ(c->full_attention_interval, 4);
  EXPECT_EQ(c->is_full_attention[3], true);
  EXPECT_EQ(c->mtp_num_hidden_layers, 0);
  EXPECT_EQ(c->max_position_embeddings, 32768);
}

TEST(ImportConfig, RopeSettingsFromRopeScalingAndTopLevel) {
  json cfg = test::hf_config_json(test::TinyHfSpec{});
  json& t = cfg["text_config"];
  t.erase("rope_parameters");
  t["rope_scaling"] = {{"type", "mrope"}, {"mrope_section", {1, 1, 2}}};
  t["rope_theta"] = 5e5;
  t["partial_rotary_factor"] = 0.5;
  auto c = parse(cfg);
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_EQ(c->rope_theta, 5e5);
  EXPECT_EQ(c->rope_dims(), 16);
  t.erase("rope_theta");
  expect_error(cfg, "rope_theta is missing");
  t["rope_theta"] = 5e5;
  t["rope_scaling"]["type"] = "yarn";
  expect_error(cfg, "\"yarn\" is not supported");
}

TEST(ImportConfig, LayerPatterns) {
  json cfg = test::hf_config_json(test::TinyHfSpec{});
  json& t = cfg["text_config"];
  t["layer_types"] = {"linear_attention", "full_attention", "full_attention", "linear_attention"};
  expect_error(cfg, "not periodic");
  t["layer_types"] = {"linear_attention", "linear_attention", "linear_attention", "linear_attention"};
  expect_error(cfg, "no full_attention layer");
  t["layer_types"] = {"linear_attention", "sliding_attention", "linear_attention", "full_attention"};
  expect_error(cfg, "entry 1");
  t["layer_types"] = {"linear_attention"};
  expect_error(cfg, "list of 4");
  t.erase("layer_types");
  t["full_attention_interval"] = 4;
  auto c = parse(cfg);
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_EQ(c->is_full_attention, (std::vector<bool>{false, false, false, true}));
}

TEST(ImportConfig, RefusesOtherArchitecturesAndVariants) {
  expect_error({{"model_type", "qwen3_5_moe"}}, "model_type \"qwen3_5_moe\" is not supported");
  expect_error({{"model_type", "qwen3_next"}}, "not supported");
  expect_error({{"model_type", "llama"}}, "not supported");
  expect_error(json::array(), "expected a JSON object");
  const auto with = [](const char* key, const json& value) {
    json cfg = test::hf_config_json(test::TinyHfSpec{});
    cfg["text_config"][key] = value;
    return cfg;
  };
  expect_error(with("attn_output_gate", false), "text_config.attn_output_gate");
  expect_error(with("attention_bias", true), "text_config.attention_bias");
  expect_error(with("mtp_num_hidden_layers", 2), "text_config.mtp_num_hidden_layers: 2 is not supported");
  expect_error(with("mtp_use_dedicated_embeddings", true), "mtp_use_dedicated_embeddings");
  expect_error(with("hidden_act", "gelu"), "hidden_act");
  expect_error(with("hidden_size", -4), "text_config.hidden_size: expected a positive integer, got -4");
  expect_error(with("hidden_size", "64"), "text_config.hidden_size");
  expect_error(with("num_hidden_layers", 100000), "num_hidden_layers: 100000: expected at most 4096");
  expect_error(with("model_type", "qwen3_5_moe_text"), "text_config.model_type");
  expect_error(with("tie_word_embeddings", true),
               "tie_word_embeddings is false but text_config.tie_word_embeddings is true");
  json odd_rope = test::hf_config_json(test::TinyHfSpec{});
  odd_rope["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.3;  // 9.6 of 32 dims
  expect_error(odd_rope, "even number of rotated dims");
  json no_hidden = test::hf_config_json(test::TinyHfSpec{});
  no_hidden["text_config"].erase("hidden_size");
  expect_error(no_hidden, "text_config.hidden_size is missing");
  auto not_json = parse_hf_config("{", "config.json");
  ASSERT_FALSE(not_json.ok());
}

TEST(ImportConfig, ShapesThatQ8_0CannotHoldAreRefused) {
  json cfg = test::hf_config_json(test::TinyHfSpec{});
  cfg["text_config"]["hidden_size"] = 72;
  auto c = parse(cfg);
  ASSERT_TRUE(c.ok());
  auto s = shape_from_hf_config(*c, 0, "odd");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("multiples of 32"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace qc
