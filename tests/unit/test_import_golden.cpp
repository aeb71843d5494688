// CI check against transformers without torch: tests/reference/compare_transformers.py (run on the GPU
// machine) writes tests/reference/golden_qwen35.json: for each case the checkpoint recipe (config.json and
// every tensor's name, shape and hash-formula parameters), the token ids, and slices of transformers'
// logits (top-k ids at a few positions) for the F32 weights, the Q8_0-rounded weights and the MTP block.
// This test rebuilds each checkpoint bit for bit, converts it with our importer to F32 and Q8_0, runs the
// double reference and compares at those slices with the tolerance the script derived (2 x transformers'
// own f32-vs-f64 spread + 1e-6). Skipped while the golden file is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "import/convert.h"
#include "model/model.h"
#include "reference/reference_backend.h"
#include "temp_dir.h"
#include "test_import_checkpoint.h"

namespace qc {
namespace {

using nlohmann::json;

const std::string kGolden = std::string(QWENCHAT_SOURCE_DIR) + "/tests/reference/golden_qwen35.json";

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// The script's hash_values(): float32(center + scale * u).
std::vector<float> hash_values(const std::string& name, uint64_t n, double center, double scale) {
  const uint64_t base = fnv1a(name);
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    const double u =
        static_cast<double>(static_cast<int64_t>((splitmix64(base ^ i) >> 11) % 2001) - 1000) / 1000.0;
    v[i] = static_cast<float>(center + scale * u);
  }
  return v;
}

void write_checkpoint(const json& c, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::map<std::string, std::vector<test::StEntry>> files;
  json map = json::object();
  for (const json& t : c["tensors"]) {
    test::StEntry e{t["name"], "F32", t["shape"].get<std::vector<uint64_t>>(), {}};
    uint64_t n = 1;
    for (uint64_t d : e.shape) n *= d;
    const std::vector<float> v = hash_values(t["hash_name"], n, t["center"], t["scale"]);
    e.bytes.resize(n * 4);
    std::memcpy(e.bytes.data(), v.data(), e.bytes.size());
    files[t["file"]].push_back(std::move(e));
    map[t["name"].get<std::string>()] = t["file"];
  }
  for (const auto& [file, entries] : files)
    test::write_file(dir + "/" + file, test::safetensors_bytes(entries));
  test::write_file(dir + "/model.safetensors.index.json", json{{"weight_map", map}}.dump());
  test::write_file(dir + "/config.json", c["config"].dump());
  test::write_file(dir + "/tokenizer.json", *bpe_vocab_to_tokenizer_json(test::tiny_vocab(300)));
}

// Our logits at each golden slice against transformers'.
void compare(const json& slices, const std::vector<std::vector<float>>& ours, double tol,
             const std::string& what) {
  for (const json& s : slices) {
    const size_t pos = s["pos"];
    ASSERT_LT(pos, ours.size()) << what;
    for (size_t k = 0; k < s["ids"].size(); ++k) {
      const size_t id = s["ids"][k];
      const double want = s["logits"][k];
      EXPECT_NEAR(ours[pos][id], want, tol) << what << " position " << pos << " id " << id;
    }
  }
}

TEST(ImportGolden, ConvertedModelsMatchTransformersSlices) {
  if (!std::filesystem::exists(kGolden))
    GTEST_SKIP() << kGolden << " not present (run compare_transformers.py)";
  std::ifstream in(kGolden);
  const json g = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(g.is_discarded());
  ASSERT_EQ(g.value("format", ""), "qwenchat-golden-logits");
  ASSERT_FALSE(g["cases"].empty());
  for (const json& c : g["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    test::TempDir dir;
    write_checkpoint(c, dir.file("ckpt"));
    const std::vector<int32_t> tokens = c["tokens"].get<std::vector<int32_t>>();
    const double tol = c["tolerance"];
    for (const char* kind : {"f32", "q8_0"}) {
      if (!c.contains(kind)) continue;
      ConvertOptions o;
      o.input_dir = dir.file("ckpt");
      o.out_path = dir.file(std::string(kind) + ".gguf");
      o.import.mix = std::string(kind) == "f32" ? QuantMix::kF32 : QuantMix::kQ8_0;
      auto r = convert_hf_checkpoint(o);
      ASSERT_TRUE(r.ok()) << r.error().describe();
      auto m = Model::load(o.out_path);
      ASSERT_TRUE(m.ok()) << m.error().describe();
      ReferenceOptions ro;
      ro.precision = RefPrecision::kDouble;
      ro.n_ctx = static_cast<int>(tokens.size()) + 1;
      ro.max_batch = static_cast<int>(tokens.size());
      auto b = make_reference_backend((*m)->config(), (*m)->weights(), ro);
      ASSERT_TRUE(b.ok()) << b.error().describe();
      auto out = (*b)->forward(tokens, 0);
      ASSERT_TRUE(out.ok()) << out.error().describe();
      const size_t V = static_cast<size_t>(out->n_vocab), H = static_cast<size_t>(out->n_embd);
      std::vector<std::vector<float>> logits;
      for (size_t t = 0; t < tokens.size(); ++t) {
        logits.emplace_back(out->logits.begin() + static_cast<ptrdiff_t>(t * V),
                            out->logits.begin() + static_cast<ptrdiff_t>((t + 1) * V));
      }
      const std::vector<float> hidden(out->hidden.begin(), out->hidden.end());
      compare(c[kind]["logits"], logits, tol, std::string(kind) + " logits");
      std::vector<std::vector<float>> mtp;
      for (size_t p = 0; p + 1 < tokens.size(); ++p) {
        auto d = (*b)->mtp_forward(tokens[p + 1], std::span<const float>(hidden).subspan(p * H, H),
                                   static_cast<int>(p));
        ASSERT_TRUE(d.ok()) << d.error().describe();
        mtp.emplace_back(d->logits.begin(), d->logits.end());
      }
      compare(c[kind]["mtp_logits"], mtp, tol, std::string(kind) + " MTP logits");
    }
  }
}

}  // namespace
}  // namespace qc
