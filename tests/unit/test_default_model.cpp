// The embedded default model (assets/qwenchat-default.gguf, trained by assets/recipe/), on the CPU backend:
//  - answers whose correctness does not come from the model: 17 + 25 = 42, and a WordNet definition that
//    starts with the word and its part of speech (the format every definition exercise was trained in);
//  - greedy with MTP gives exactly the tokens of greedy without it, and the trained draft head is
//    accepted at a rate far above chance (the recipe's target is 0.6 at draft length 1);
//  - the golden greedy streams in tests/golden/default_model/greedy.json (recorded from this engine on the
//    committed file; QWENCHAT_UPDATE_GOLDEN=1 rewrites them after the model is retrained) are reproduced
//    bit for bit, with the logits hash.
// Skipped while the model is not committed: the build then ships a random-weight stand-in (assets/CMakeLists).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "generate/generator.h"
#include "qwenchat/kernel_config.h"
#include "runtime/engine.h"
#include "tokenizer/chat_format.h"

namespace qc {
namespace {

namespace fs = std::filesystem;

const std::string kModel = std::string(QWENCHAT_SOURCE_DIR) + "/assets/qwenchat-default.gguf";
const std::string kGolden = std::string(QWENCHAT_SOURCE_DIR) + "/tests/golden/default_model/greedy.json";
const std::string kGoldenCuda = std::string(QWENCHAT_SOURCE_DIR) + "/tests/golden/default_model/greedy_cuda.json";
const std::vector<std::string> kGoldenPrompts = {"What is 17 + 25?", "Define: lantern", "Hello", "Spell \"window\"."};

struct Reply {
  std::vector<int32_t> tokens;
  std::string text;
  std::string logits_hash;
  double accept0 = 0.0;
};

struct RunOn {
  BackendKind backend = BackendKind::kCpu;
  GemvVariant gemv = GemvVariant::kTile;  // CUDA only
};

Reply greedy_chat(const std::string& question, int max_tokens, int draft, const RunOn& run = {}) {
  EngineOptions eo;
  eo.model_path = kModel;
  eo.backend = run.backend;
  eo.n_ctx = 512;
  eo.n_threads = 1;
  eo.kernels.gemv = run.gemv;
  auto engine = Engine::open(eo);
  EXPECT_TRUE(engine.ok()) << engine.error().describe();
  if (!engine.ok()) return {};
  const Tokenizer& tok = (*engine)->tokenizer();
  GenerateRequest req;
  ChatRenderOptions ro;
  ro.thinking = false;
  auto prompt = encode_chat(tok, {{"user", question, ""}}, ro);
  EXPECT_TRUE(prompt.ok());
  req.prompt = *prompt;
  req.max_new_tokens = max_tokens;
  req.sampler = SamplerParams::greedy();
  req.stop_tokens = tok.special().stop;
  req.mtp.enabled = draft > 0;
  req.mtp.draft_len = draft > 0 ? draft : 1;
  Generator gen((*engine)->backend(), tok);
  auto r = gen.generate(req);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return {};
  return {r->tokens, r->text, r->stats.final_logits_hash, draft > 0 ? r->stats.mtp_acceptance(0) : 0.0};
}

// Golden files of greedy streams: QWENCHAT_UPDATE_GOLDEN=1 rewrites them (record_golden, then the test
// skips), otherwise check_golden compares each case's tokens and logits hash (and variant, where the
// cases carry one) with what this run produced.
bool updating_golden() { return std::getenv("QWENCHAT_UPDATE_GOLDEN") != nullptr; }

void record_golden(const std::string& path, const std::string& format, const std::string& produced_by,
                   const nlohmann::json& cases) {
  fs::create_directories(fs::path(path).parent_path());
  const nlohmann::json doc = {{"format", format},
                              {"version", 1},
                              {"produced_by", produced_by},
                              {"model_bytes", fs::file_size(kModel)},
                              {"cases", cases}};
  std::ofstream(path) << doc.dump(1) << "\n";
}

void check_golden(const std::string& path, const std::string& format, const nlohmann::json& got) {
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << " is missing: record it with QWENCHAT_UPDATE_GOLDEN=1 (on a GPU for CUDA)";
  const nlohmann::json golden = nlohmann::json::parse(in);
  ASSERT_EQ(golden.value("format", ""), format);
  ASSERT_EQ(golden.value("model_bytes", uint64_t{0}), fs::file_size(kModel))
      << "the golden streams were recorded from another model file: re-record them";
  ASSERT_EQ(golden["cases"].size(), got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    for (const char* key : {"variant", "tokens", "logits_hash"}) {
      EXPECT_EQ(golden["cases"][i].value(key, nlohmann::json()), got[i].value(key, nlohmann::json()))
          << key << " of " << got[i]["prompt"] << " " << got[i].value("variant", "");
    }
  }
}

class DefaultModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel)) GTEST_SKIP() << kModel << " is not committed yet (the build uses a random stand-in)";
  }
};

TEST_F(DefaultModel, AnswersArithmeticAndDefinitions) {
  const Reply sum = greedy_chat("What is 17 + 25?", 24, 0);
  EXPECT_NE(sum.text.find("42"), std::string::npos) << sum.text;
  const Reply def = greedy_chat("Define: lantern", 48, 0);
  EXPECT_EQ(def.text.rfind("Lantern (noun):", 0), 0u) << def.text;
}

TEST_F(DefaultModel, MtpIsExactAndItsDraftsAreAccepted) {
  for (const char* q : {"Define: river", "What is 8 * 7?", "Tell me a fortune."}) {
    const Reply plain = greedy_chat(q, 48, 0);
    for (int draft : {1, 2}) {
      const Reply spec = greedy_chat(q, 48, draft);
      EXPECT_EQ(spec.tokens, plain.tokens) << q << " draft " << draft;
      // Chance agreement over an 8192-token vocabulary is ~0; the recipe measured its target 0.6 on
      // longer runs (assets/README.md); 0.4 on one short reply leaves room for variance.
      if (draft == 1) {
        EXPECT_GE(spec.accept0, 0.4) << q;
      }
    }
  }
}

TEST_F(DefaultModel, GoldenGreedyStreams) {
  const std::vector<std::string>& prompts = kGoldenPrompts;
  nlohmann::json got = nlohmann::json::array();
  for (const std::string& p : prompts) {
    const Reply r = greedy_chat(p, 40, 0);
    got.push_back({{"prompt", p}, {"tokens", r.tokens}, {"text", r.text}, {"logits_hash", r.logits_hash}});
  }
  if (updating_golden()) {
    record_golden(kGolden, "qwenchat-golden-greedy",
                  "test_default_model.cpp GoldenGreedyStreams, QWENCHAT_UPDATE_GOLDEN=1: greedy chat (thinking off), "
                  "40 tokens, cpu backend, 1 thread",
                  got);
    GTEST_SKIP() << "rewrote " << kGolden;
  }
  check_golden(kGolden, "qwenchat-golden-greedy", got);
}

// ---- The same model on the CUDA backend (skipped without the backend or a device) ----
// Variants of one bit-identity class (qwenchat_kernels/gemv_variant.h) must give the same tokens and the same logits hash;
// the streams of one variant per class are golden (greedy_cuda.json, recorded on the GPU machine with
// QWENCHAT_UPDATE_GOLDEN=1). The CUDA classes quantise activations (hl: ~14 bits, h: 8 bits) where the CPU
// reference keeps f32, so CUDA tokens may part from the CPU's at a near tie: their agreement is printed,
// not asserted, and the answers themselves are checked like on the CPU.
class DefaultModelCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel)) GTEST_SKIP() << kModel << " is not committed yet";
    if (!cuda_backend_compiled()) GTEST_SKIP() << "this build has no CUDA backend";
    EngineOptions eo;
    eo.model_path = kModel;
    eo.backend = BackendKind::kCuda;
    eo.n_ctx = 512;
    auto engine = Engine::open(eo);
    if (!engine.ok() && engine.error().describe().find("no CUDA device") != std::string::npos)
      GTEST_SKIP() << engine.error().describe();
    ASSERT_TRUE(engine.ok()) << engine.error().describe();
  }
};

TEST_F(DefaultModelCuda, AnswersArithmeticAndDefinitions) {
  const RunOn cuda{BackendKind::kCuda, GemvVariant::kTile};
  const Reply sum = greedy_chat("What is 17 + 25?", 24, 0, cuda);
  EXPECT_NE(sum.text.find("42"), std::string::npos) << sum.text;
  const Reply def = greedy_chat("Define: lantern", 48, 0, cuda);
  EXPECT_EQ(def.text.rfind("Lantern (noun):", 0), 0u) << def.text;
}

TEST_F(DefaultModelCuda, MtpIsExactAndItsDraftsAreAccepted) {
  const RunOn cuda{BackendKind::kCuda, GemvVariant::kTile};
  for (const char* q : {"Define: river", "What is 8 * 7?", "Tell me a fortune."}) {
    const Reply plain = greedy_chat(q, 48, 0, cuda);
    for (int draft : {1, 2, 3}) {
      const Reply spec = greedy_chat(q, 48, draft, cuda);
      EXPECT_EQ(spec.tokens, plain.tokens) << q << " draft " << draft;
      if (draft == 1) {
        EXPECT_GE(spec.accept0, 0.4) << q;  // the CPU test's bound, same reasoning
      }
      std::printf("[ mtp      ] %-22s draft %d: %zu tokens, acceptance at position 1 %.2f\n", q, draft,
                  spec.tokens.size(), spec.accept0);
    }
  }
}

TEST_F(DefaultModelCuda, GoldenGreedyStreamsPerVariantClass) {
  // Two variants of each multi-member class, and deq (its own class, f32 activations).
  const std::vector<GemvVariant> variants = {GemvVariant::kTile, GemvVariant::kHLU4, GemvVariant::kTileH,
                                             GemvVariant::kHU, GemvVariant::kDeq};
  nlohmann::json got = nlohmann::json::array();
  for (const std::string& p : kGoldenPrompts) {
    const Reply cpu = greedy_chat(p, 40, 0);
    std::map<int, Reply> first_of_class;
    for (GemvVariant v : variants) {
      const Reply r = greedy_chat(p, 40, 0, {BackendKind::kCuda, v});
      const int cls = gemv_identity_class(v);
      auto [it, fresh] = first_of_class.emplace(cls, r);
      if (!fresh) {
        EXPECT_EQ(r.tokens, it->second.tokens) << p << ": " << gemv_variant_name(v) << " is in a bit-identity class";
        EXPECT_EQ(r.logits_hash, it->second.logits_hash) << p << ": " << gemv_variant_name(v);
        continue;
      }
      std::printf("[ golden   ] %-20s %-6s %2zu tokens, %s the CPU's; \"%s\"\n", p.c_str(), gemv_variant_name(v),
                  r.tokens.size(), r.tokens == cpu.tokens ? "same tokens as" : "DIFFERENT tokens from",
                  r.text.substr(0, 48).c_str());
      got.push_back({{"prompt", p},
                     {"variant", gemv_variant_name(v)},
                     {"tokens", r.tokens},
                     {"text", r.text},
                     {"logits_hash", r.logits_hash},
                     {"same_tokens_as_cpu", r.tokens == cpu.tokens}});
    }
  }
  if (updating_golden()) {
    record_golden(kGoldenCuda, "qwenchat-golden-greedy-cuda",
                  "test_default_model.cpp DefaultModelCuda.GoldenGreedyStreamsPerVariantClass, "
                  "QWENCHAT_UPDATE_GOLDEN=1: greedy chat (thinking off), 40 tokens, cuda backend, one variant per "
                  "bit-identity class",
                  got);
    GTEST_SKIP() << "rewrote " << kGoldenCuda;
  }
  check_golden(kGoldenCuda, "qwenchat-golden-greedy-cuda", got);
}

}  // namespace
}  // namespace qc
