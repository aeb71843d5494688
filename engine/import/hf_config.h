// config.json of a Hugging Face Qwen3.5 checkpoint -> the model's shape. Accepts the multimodal form
// (model_type "qwen3_5", text fields under "text_config", as the published Qwen3.5/3.6 checkpoints ship)
// and the text-only form (model_type "qwen3_5_text", what transformers' Qwen3_5ForCausalLM saves). Field
// names and defaults follow transformers' Qwen3_5TextConfig (configuration_qwen3_5.py, 5.x): absent
// optional fields take its defaults; RoPE settings are read from rope_parameters (5.x) or rope_scaling /
// top-level keys (older files).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/presets.h"
#include "qwenchat/result.h"

namespace qc {

struct HfTextConfig {
  std::string model_type;    // top-level model_type: "qwen3_5" or "qwen3_5_text"
  std::string architecture;  // architectures[0] when present ("Qwen3_5ForConditionalGeneration")
  bool nested = false;       // text fields came from "text_config"

  int vocab_size = 0;
  int hidden_size = 0;
  int num_hidden_layers = 0;
  int intermediate_size = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 256;
  double rms_norm_eps = 1e-6;
  double rope_theta = 0.0;
  double partial_rotary_factor = 0.25;
  std::vector<int> mrope_section;  // empty when the file has none
  int linear_num_key_heads = 16;
  int linear_num_value_heads = 32;
  int linear_key_head_dim = 128;
  int linear_value_head_dim = 128;
  int linear_conv_kernel_dim = 4;
  std::vector<bool> is_full_attention;  // per layer, from layer_types or full_attention_interval
  int full_attention_interval = 4;      // the period of is_full_attention
  bool tie_word_embeddings = false;
  int max_position_embeddings = 32768;
  int mtp_num_hidden_layers = 0;
  int eos_token_id = -1;  // first of eos_token_id when present
  int bos_token_id = -1;

  int rope_dims() const { return static_cast<int>(head_dim * partial_rotary_factor); }
};

// `source` names the file in messages. Refuses other architectures (qwen3_5_moe, qwen3_next, ...) and
// variants the engine cannot run (no output gate, attention biases, more than one MTP layer, dedicated
// MTP embeddings, a RoPE type other than default, layer patterns that are not periodic).
Result<HfTextConfig> parse_hf_config(std::string_view json_text, const std::string& source);
Result<HfTextConfig> read_hf_config(const std::string& path);

// The GGUF shape for this config (n_vocab = vocab_size, n_mtp as given: 0 when the checkpoint has no MTP
// weights). Runs ModelShape::validate, so sizes that Q8_0 cannot hold are refused here.
Result<ModelShape> shape_from_hf_config(const HfTextConfig& c, int n_mtp, const std::string& name);

}  // namespace qc
