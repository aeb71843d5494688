// Deep JSON from outside is refused with an error naming the limit, before nlohmann::json (whose DOM is
// freed and printed recursively) sees it: exports being imported, tokenizer.json, config.json and
// safetensors headers (issue 13: 100k-deep documents crashed the app and the converter with a stack
// overflow). The GUI's settings file has its own test (tests/gui/test_gui_settings.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "export/export.h"
#include "import/hf_config.h"
#include "import/safetensors.h"
#include "qwenchat/json_depth.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

// {"key": [[[ ... ]]]} with `depth` levels in all.
std::string deep_document(const std::string& key, int depth) {
  return "{\"" + key + "\": " + std::string(static_cast<size_t>(depth - 1), '[') +
         std::string(static_cast<size_t>(depth - 1), ']') + "}";
}

void expect_depth_error(const Error& e) {
  EXPECT_NE(e.message.find("deeper than 256 levels"), std::string::npos) << e.message;
}

TEST(JsonDepth, MeasuresStructureOnly) {
  EXPECT_EQ(json_nesting_depth("{}"), 1);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": "[[[{{"}]})"), 3);
  EXPECT_EQ(json_nesting_depth(R"(["\"[", ["\\"]])"), 2);
  EXPECT_EQ(json_nesting_depth(deep_document("k", 300)), 300);
  EXPECT_TRUE(check_json_depth(deep_document("k", 256), "x").ok());
  const Status s = check_json_depth(deep_document("k", 257), "f.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("f.json: ", 0), 0u);
  expect_depth_error(s.error());
}

TEST(JsonDepth, EveryReaderOfOutsideJsonRefusesA100kDeepDocument) {
  const std::string deep = deep_document("model_type", 100000);
  auto exported = exporter::parse_export_json(deep);
  ASSERT_FALSE(exported.ok());
  expect_depth_error(exported.error());
  auto config = parse_hf_config(deep, "config.json");
  ASSERT_FALSE(config.ok());
  expect_depth_error(config.error());
  auto tok = bpe_vocab_from_tokenizer_json(deep_document("model", 100000), "tokenizer.json");
  ASSERT_FALSE(tok.ok());
  expect_depth_error(tok.error());

  // A safetensors file: 8-byte little-endian header length, then the header.
  const std::string header = deep_document("__metadata__", 100000);
  std::vector<uint8_t> file(8 + header.size());
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(file.data() + 8, header.data(), header.size());
  auto st = st::File::from_bytes(file, "model.safetensors");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("deeper than 256 levels"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace qc
