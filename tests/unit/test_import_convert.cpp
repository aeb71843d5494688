// qwenchat-convert's engine half on small HF-style checkpoints written by the test: the GGUF has exactly the
// tensors, shapes, types and metadata keys of our synthetic generator for the same shape; each HF->GGUF
// transform puts values where llama.cpp's converter puts them (checked with weights that encode their
// own position); Q8_0 output is the F32 output quantized; failures (missing tensor, wrong shape, unknown
// tensors, full disk) are reported and leave no file behind.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/reader.h"
#include "import/convert.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "runtime/engine.h"
#include "temp_dir.h"
#include "test_import_checkpoint.h"
#include "tokenizer/bpe_trainer.h"

namespace qc {
namespace {

namespace fs = std::filesystem;
using test::HfWeights;
using test::TinyHfSpec;

Result<ConvertSummary> convert(const std::string& in, const std::string& out, DType type = DType::kF32,
                               std::vector<std::string>* notices = nullptr) {
  ConvertOptions o;
  o.input_dir = in;
  o.out_path = out;
  o.import.mix = quant_mix_of(type);
  o.notice = [notices](const std::string& s) {
    if (notices) notices->push_back(s);
  };
  return convert_hf_checkpoint(o);
}

// The GGUF tensor as f32 [rows][cols] (any type).
std::vector<float> gguf_values(const gguf::File& f, const std::string& name) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (!t) return {};
  const uint64_t n = t->n_elements();
  std::vector<float> v(n);
  DType d = DType::kF32;
  if (t->type == static_cast<uint32_t>(gguf::TensorType::kQ8_0)) d = DType::kQ8_0;
  if (t->type == static_cast<uint32_t>(gguf::TensorType::kF16)) d = DType::kF16;
  decode_row(d, f.tensor_data(*t), v.data(), static_cast<int64_t>(n));
  return v;
}

TEST(ImportConvert, LayoutAndMetadataMatchTheSyntheticGenerator) {
  for (const bool tied : {false, true}) {
    SCOPED_TRACE(tied ? "tied" : "untied");
    test::TempDir dir;
    TinyHfSpec s;
    s.tied = tied;
    const std::string ck = dir.file("ckpt");
    test::write_hf_checkpoint(ck, s, test::make_hf_weights(s));
    auto r = convert(ck, dir.file("out.gguf"));
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->shape.n_mtp, 1);
    EXPECT_EQ(r->template_source, "tokenizer_config.json");

    // The generator's file for the same shape, with a tokenizer, like qwenchat-mkmodel writes it.
    SyntheticModelOptions so;
    so.shape = r->shape;
    so.mix = QuantMix::kF32;
    so.out_path = dir.file("synthetic.gguf");
    const BpeVocab vocab = test::tiny_vocab(300);
    so.extra_metadata = [&](gguf::Writer& w) { write_bpe_vocab_metadata(w, vocab, "x"); };
    ASSERT_TRUE(write_synthetic_model(so).ok());

    auto a = gguf::File::open(dir.file("out.gguf"));
    auto b = gguf::File::open(dir.file("synthetic.gguf"));
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ((*a)->tensors().size(), (*b)->tensors().size());
    for (size_t i = 0; i < (*a)->tensors().size(); ++i) {
      const gguf::TensorInfo& x = (*a)->tensors()[i];
      const gguf::TensorInfo& y = (*b)->tensors()[i];
      EXPECT_EQ(x.name, y.name);
      EXPECT_EQ(x.n_dims, y.n_dims) << x.name;
      EXPECT_EQ(std::vector<uint64_t>(x.ne, x.ne + 4), std::vector<uint64_t>(y.ne, y.ne + 4)) << x.name;
      EXPECT_EQ(x.type, y.type) << x.name;
    }
    EXPECT_EQ((*a)->find_tensor("output.weight") == nullptr, tied);
    ASSERT_EQ((*a)->metadata().size(), (*b)->metadata().size());
    for (size_t i = 0; i < (*a)->metadata().size(); ++i) {
      const gguf::KeyValue& x = (*a)->metadata()[i];
      const gguf::KeyValue& y = (*b)->metadata()[i];
      EXPECT_EQ(x.key, y.key);
      // Model metadata agrees value for value (the test config's mrope_section is what the generator
      // derives for 8 rotated dims); the tokenizer and the name differ by construction.
      if (x.key.rfind("qwen35.", 0) == 0 || x.key == "general.architecture" || x.key == "general.file_type") {
        EXPECT_TRUE(x.value == y.value) << x.key;
      }
    }
    EXPECT_EQ((*(*a)->get_string("general.name")), "ckpt");
    EXPECT_EQ((*(*a)->get_u32("qwen35.nextn_predict_layers")), 1u);
    EXPECT_EQ((*(*a)->get_u32("qwen35.block_count")), 5u);
  }
}

TEST(ImportConvert, Q8_0IsTheF32ConversionQuantizedAndLoadsInTheEngine) {
  test::TempDir dir;
  TinyHfSpec s;
  s.dtype = "BF16";
  test::write_hf_checkpoint(dir.file("ckpt"), s, test::make_hf_weights(s));
  ASSERT_TRUE(convert(dir.file("ckpt"), dir.file("f32.gguf"), DType::kF32).ok());
  auto r = convert(dir.file("ckpt"), dir.file("q8.gguf"), DType::kQ8_0);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  auto f = gguf::File::open(dir.file("f32.gguf"));
  auto q = gguf::File::open(dir.file("q8.gguf"));
  ASSERT_TRUE(f.ok() && q.ok());
  EXPECT_EQ(*(*q)->get_u32("general.file_type"), 7u);
  int n_q8 = 0;
  for (const gguf::TensorInfo& t : (*q)->tensors()) {
    const bool small =
        t.name.find("ssm_alpha") != std::string::npos || t.name.find("ssm_beta") != std::string::npos;
    const bool matrix = t.n_dims == 2 && t.name.find("conv1d") == std::string::npos;
    const auto want = matrix && !small ? gguf::TensorType::kQ8_0 : gguf::TensorType::kF32;
    ASSERT_EQ(t.type, static_cast<uint32_t>(want)) << t.name;
    const std::vector<float> ref = gguf_values(**f, t.name);
    std::vector<uint8_t> expect(
        dtype_bytes(want == gguf::TensorType::kQ8_0 ? DType::kQ8_0 : DType::kF32, ref.size()));
    encode_row(want == gguf::TensorType::kQ8_0 ? DType::kQ8_0 : DType::kF32, ref.data(), expect.data(),
               static_cast<int64_t>(ref.size()));
    ASSERT_EQ(std::memcmp(expect.data(), (*q)->tensor_data(t), expect.size()), 0) << t.name;
    n_q8 += want == gguf::TensorType::kQ8_0;
  }
  EXPECT_GT(n_q8, 20);

  EngineOptions eo;
  eo.model_path = dir.file("q8.gguf");
  eo.n_threads = 1;
  eo.n_ctx = 64;
  auto e = Engine::open(eo);
  ASSERT_TRUE(e.ok()) << e.error().describe();
  EXPECT_TRUE((*e)->backend().has_mtp());
  EXPECT_EQ((*e)->model().config().n_vocab, s.vocab_size);
  auto ids = (*e)->tokenizer().encode("<|im_start|>user\nHello<|im_end|>", true);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ((*ids)[0], (*e)->tokenizer().special().im_start);
  auto out = (*e)->backend().forward(*ids, 0);
  ASSERT_TRUE(out.ok()) << out.error().describe();
  for (float x : out->logits) ASSERT_TRUE(std::isfinite(x));
  auto tmpl = (*e)->model().file().get_string("tokenizer.chat_template");
  ASSERT_TRUE(tmpl.ok());
  EXPECT_EQ(*tmpl, test::kTinyChatTemplate);
  EXPECT_EQ(*(*e)->model().file().get_u32("tokenizer.ggml.eos_token_id"),
            static_cast<uint32_t>((*e)->tokenizer().special().im_end));
}

// ---- the transforms, with weights that encode where they came from ----

// value = row * 1024 + col: exact in f32 for the tiny sizes, so each GGUF value names its HF source.
void encode_positions(HfWeights& w, const std::string& name) {
  std::vector<float>& v = w.value[name];
  const std::vector<uint64_t>& sh = w.shape[name];
  const uint64_t cols = sh.size() == 1 ? sh[0] : v.size() / sh[0];
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t r = sh.size() == 1 ? 0 : i / cols, c = sh.size() == 1 ? i : i % cols;
    v[i] = static_cast<float>(r * 1024 + c);
  }
}

TEST(ImportConvert, ValueHeadsLandInLlamaCppTiledOrderInEveryTensor) {
  test::TempDir dir;
  TinyHfSpec s;  // Nk = 2, Nv = 6: three value heads per key head
  HfWeights w = test::make_hf_weights(s);
  const std::string a = test::text_prefix(s) + "layers.0.linear_attn.";
  for (const char* n : {"in_proj_qkv.weight", "in_proj_z.weight", "in_proj_b.weight", "in_proj_a.weight",
                        "conv1d.weight", "out_proj.weight", "dt_bias"}) {
    encode_positions(w, a + n);
  }
  std::vector<float>& alog = w.value[a + "A_log"];
  for (int h = 0; h < s.nv; ++h) alog[static_cast<size_t>(h)] = std::log(static_cast<float>(h + 2));
  test::write_hf_checkpoint(dir.file("ckpt"), s, w);
  ASSERT_TRUE(convert(dir.file("ckpt"), dir.file("out.gguf")).ok());
  auto f = gguf::File::open(dir.file("out.gguf"));
  ASSERT_TRUE(f.ok());
  const gguf::File& g = **f;

  // llama.cpp's order, stated as in its converter: HF value head h (key group h / r, member h % r) goes to
  // GGUF position (h % r) * Nk + h / r, i.e. [G0_v0, G1_v0, G0_v1, G1_v1, ...].
  const int r = s.nv / s.nk;
  std::vector<int> pos_of_hf(static_cast<size_t>(s.nv));
  for (int h = 0; h < s.nv; ++h) pos_of_hf[static_cast<size_t>(h)] = (h % r) * s.nk + h / r;
  const int qk = 2 * s.nk * s.dk, H = s.hidden, K = s.conv;

  const std::vector<float> qkv = gguf_values(g, "blk.0.attn_qkv.weight");   // [qk + Nv*Dv][H]
  const std::vector<float> z = gguf_values(g, "blk.0.attn_gate.weight");    // [Nv*Dv][H]
  const std::vector<float> beta = gguf_values(g, "blk.0.ssm_beta.weight");  // [Nv][H]
  const std::vector<float> alpha = gguf_values(g, "blk.0.ssm_alpha.weight");
  const std::vector<float> conv = gguf_values(g, "blk.0.ssm_conv1d.weight");  // [qk + Nv*Dv][K]
  const std::vector<float> dt = gguf_values(g, "blk.0.ssm_dt.bias");
  const std::vector<float> ssm_a = gguf_values(g, "blk.0.ssm_a");
  const std::vector<float> out = gguf_values(g, "blk.0.ssm_out.weight");  // [H][Nv*Dv]
  // q and k rows/channels stay where they are.
  for (int row = 0; row < qk; ++row) {
    ASSERT_EQ(qkv[static_cast<size_t>(row * H + 5)], static_cast<float>(row * 1024 + 5));
    ASSERT_EQ(conv[static_cast<size_t>(row * K + 3)], static_cast<float>(row * 1024 + 3));
  }
  for (int h = 0; h < s.nv; ++h) {
    const int j = pos_of_hf[static_cast<size_t>(h)];
    SCOPED_TRACE("HF head " + std::to_string(h) + " -> GGUF head " + std::to_string(j));
    for (int i = 0; i < s.dv; i += 7) {
      const int hf_v_row = qk + h * s.dv + i;
      const int gg_v_row = qk + j * s.dv + i;
      EXPECT_EQ(qkv[static_cast<size_t>(gg_v_row * H + 3)], static_cast<float>(hf_v_row * 1024 + 3));
      EXPECT_EQ(conv[static_cast<size_t>(gg_v_row * K + 1)], static_cast<float>(hf_v_row * 1024 + 1));
      EXPECT_EQ(z[static_cast<size_t>((j * s.dv + i) * H + 2)],
                static_cast<float>((h * s.dv + i) * 1024 + 2));
      EXPECT_EQ(out[static_cast<size_t>(9 * s.nv * s.dv + j * s.dv + i)],
                static_cast<float>(9 * 1024 + h * s.dv + i));
    }
    EXPECT_EQ(beta[static_cast<size_t>(j * H + 4)], static_cast<float>(h * 1024 + 4));
    EXPECT_EQ(alpha[static_cast<size_t>(j * H + 4)], static_cast<float>(h * 1024 + 4));
    EXPECT_EQ(dt[static_cast<size_t>(j)], static_cast<float>(h));
    EXPECT_EQ(ssm_a[static_cast<size_t>(j)], -std::exp(std::log(static_cast<float>(h + 2))));
    // The meaning: GGUF head j reads key head j % Nk, the key head HF head h reads (h / r).
    EXPECT_EQ(j % s.nk, h / r);
  }
}

TEST(ImportConvert, NormsGetPlusOneExceptTheGdnOutputNorm) {
  test::TempDir dir;
  TinyHfSpec s;
  const HfWeights w = test::make_hf_weights(s);
  test::write_hf_checkpoint(dir.file("ckpt"), s, w);
  ASSERT_TRUE(convert(dir.file("ckpt"), dir.file("out.gguf")).ok());
  auto f = gguf::File::open(dir.file("out.gguf"));
  ASSERT_TRUE(f.ok());
  const std::string P = test::text_prefix(s);
  const std::pair<const char*, std::string> plus_one[] = {
      {"output_norm.weight", P + "norm.weight"},
      {"blk.0.attn_norm.weight", P + "layers.0.input_layernorm.weight"},
      {"blk.1.post_attention_norm.weight", P + "layers.1.post_attention_layernorm.weight"},
      {"blk.1.attn_q_norm.weight", P + "layers.1.self_attn.q_norm.weight"},
      {"blk.3.attn_k_norm.weight", P + "layers.3.self_attn.k_norm.weight"},
      {"blk.4.attn_norm.weight", "mtp.layers.0.input_layernorm.weight"},
      {"blk.4.post_attention_norm.weight", "mtp.layers.0.post_attention_layernorm.weight"},
      {"blk.4.attn_q_norm.weight", "mtp.layers.0.self_attn.q_norm.weight"},
      {"blk.4.nextn.enorm.weight", "mtp.pre_fc_norm_embedding.weight"},
      {"blk.4.nextn.hnorm.weight", "mtp.pre_fc_norm_hidden.weight"},
      {"blk.4.nextn.shared_head_norm.weight", "mtp.norm.weight"},
  };
  for (const auto& [gg, hf] : plus_one) {
    const std::vector<float> got = gguf_values(**f, gg);
    const std::vector<float>& want = w[hf];
    ASSERT_EQ(got.size(), want.size()) << gg;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], 1.0f + want[i]) << gg << " " << i;
  }
  EXPECT_EQ(gguf_values(**f, "blk.2.ssm_norm.weight"), w[P + "layers.2.linear_attn.norm.weight"]);
  // Plain copies: embedding, lm_head, the MTP projection (input columns = [embedding half | hidden half]).
  EXPECT_EQ(gguf_values(**f, "token_embd.weight"), w[P + "embed_tokens.weight"]);
  EXPECT_EQ(gguf_values(**f, "output.weight"), w["lm_head.weight"]);
  EXPECT_EQ(gguf_values(**f, "blk.4.nextn.eh_proj.weight"), w["mtp.fc.weight"]);
  EXPECT_EQ(gguf_values(**f, "blk.4.attn_q.weight"), w["mtp.layers.0.self_attn.q_proj.weight"]);
  EXPECT_EQ(gguf_values(**f, "blk.3.ffn_down.weight"), w[P + "layers.3.mlp.down_proj.weight"]);
}

// ---- what is reported, and what is refused ----

TEST(ImportConvert, TextOnlyNamesSingleFileAndMissingMtp) {
  test::TempDir dir;
  TinyHfSpec s;
  s.nested = false;
  s.shards = 1;
  const HfWeights w = test::make_hf_weights(s);
  std::vector<std::string> mtp_names;
  for (const std::string& n : w.order) {
    if (n.rfind("mtp.", 0) == 0) mtp_names.push_back(n);
  }
  test::write_hf_checkpoint(dir.file("ckpt"), s, w, mtp_names);  // as transformers saves it: no mtp.*
  std::vector<std::string> notes;
  auto r = convert(dir.file("ckpt"), dir.file("out.gguf"), DType::kF32, &notes);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->shape.n_mtp, 0);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("no mtp.* weights"), std::string::npos) << notes[0];
  auto m = Model::load(dir.file("out.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().describe();
  EXPECT_FALSE((*m)->weights().mtp.has_value());
  EXPECT_EQ((*m)->config().n_layer, 4);
}

TEST(ImportConvert, VisionTensorsAreSkippedUnknownTextTensorsRefused) {
  test::TempDir dir;
  TinyHfSpec s;
  const HfWeights w = test::make_hf_weights(s);
  std::vector<uint8_t> four(16, 0);
  test::write_hf_checkpoint(dir.file("vision"), s, w, {},
                            {{"model.visual.patch_embed.proj.weight", "F32", {4}, four}});
  std::vector<std::string> notes;
  ASSERT_TRUE(convert(dir.file("vision"), dir.file("v.gguf"), DType::kF32, &notes).ok());
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("1 tensors not part of the text model"), std::string::npos) << notes.back();

  const std::string extra = test::text_prefix(s) + "layers.0.linear_attn.new_thing.weight";
  test::write_hf_checkpoint(dir.file("unknown"), s, w, {}, {{extra, "F32", {4}, four}});
  auto r = convert(dir.file("unknown"), dir.file("u.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(extra), std::string::npos) << r.error().message;
  EXPECT_FALSE(fs::exists(dir.file("u.gguf")));
  EXPECT_FALSE(fs::exists(dir.file("u.gguf.partial")));
  ConvertOptions o;
  o.input_dir = dir.file("unknown");
  o.out_path = dir.file("u.gguf");
  o.import.allow_unused = true;
  EXPECT_TRUE(convert_hf_checkpoint(o).ok());
}

TEST(ImportConvert, MissingTensorsAndWrongShapesAreNamed) {
  test::TempDir dir;
  TinyHfSpec s;
  HfWeights w = test::make_hf_weights(s);
  const std::string P = test::text_prefix(s);
  test::write_hf_checkpoint(dir.file("missing"), s, w, {P + "layers.2.linear_attn.A_log"});
  auto r = convert(dir.file("missing"), dir.file("m.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("tensor \"" + P +
                                   "layers.2.linear_attn.A_log\" is missing (needed for GGUF blk.2.ssm_a"),
            std::string::npos)
      << r.error().message;
  EXPECT_FALSE(fs::exists(dir.file("m.gguf")));

  w.shape[P + "layers.1.self_attn.k_proj.weight"] = {32, 64};
  w.value[P + "layers.1.self_attn.k_proj.weight"].resize(32 * 64);
  test::write_hf_checkpoint(dir.file("shape"), s, w);
  r = convert(dir.file("shape"), dir.file("s.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(
                "self_attn.k_proj.weight\": expected shape [64, 64] (from config.json), got [32, 64]"),
            std::string::npos)
      << r.error().message;

  test::TempDir empty;
  r = convert(empty.path().string(), dir.file("e.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("config.json"), std::string::npos) << r.error().message;
}

TEST(ImportConvert, TokenizerPaddedAndCheckedAgainstTheRows) {
  test::TempDir dir;
  TinyHfSpec s;
  test::write_hf_checkpoint(dir.file("ckpt"), s, test::make_hf_weights(s));
  ASSERT_TRUE(convert(dir.file("ckpt"), dir.file("out.gguf")).ok());
  auto f = gguf::File::open(dir.file("out.gguf"));
  ASSERT_TRUE(f.ok());
  auto tokens = (*f)->get_strings("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(tokens->size(), static_cast<size_t>(s.vocab_size));
  EXPECT_EQ(tokens->back(), "[PAD" + std::to_string(s.vocab_size - 1) + "]");
  EXPECT_EQ(*(*f)->get_string("tokenizer.ggml.pre"), "qwen35");

  // A vocabulary larger than the embedding rows cannot be converted.
  const BpeVocab big = test::tiny_vocab(600);
  ASSERT_GT(big.tokens.size(), static_cast<size_t>(s.vocab_size));
  test::write_file(dir.file("ckpt") + "/tokenizer.json", *bpe_vocab_to_tokenizer_json(big));
  auto r = convert(dir.file("ckpt"), dir.file("small.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("embedding rows"), std::string::npos) << r.error().message;
}

// A full disk while tensors are written: the writer's error comes back, no file is left behind.
TEST(ImportConvert, FullDiskReturnsErrorAndRemovesThePartialFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "/dev/full is not available";
  test::TempDir dir;
  TinyHfSpec s;
  test::write_hf_checkpoint(dir.file("ckpt"), s, test::make_hf_weights(s));
  const std::string out = dir.file("full.gguf");
  fs::create_symlink("/dev/full", out + ".partial");
  auto r = convert(dir.file("ckpt"), out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().describe().find("full"), std::string::npos) << r.error().describe();
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::is_symlink(out + ".partial"));
}

}  // namespace
}  // namespace qc
