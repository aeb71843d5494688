// Export golden files: the fixed branchy conversation (chat_fixture.h) in each format and scope, compared
// byte for byte with tests/golden/export/. Each golden file starts with one header line naming what
// produced it; the rest is the exact output. QWENCHAT_UPDATE_GOLDEN=1 rewrites them (review the diff).
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "chat_fixture.h"
#include "export/export.h"

namespace qc::exporter {
namespace {

constexpr const char* kHeaderPrefix = "qwenchat golden export v1";

void check_golden(const std::string& name, const ExportOptions& options) {
  const std::string path = std::string(QWENCHAT_SOURCE_DIR) + "/tests/golden/export/" + name;
  const std::string actual = export_tree(test::branchy_conversation(), options);
  const char* update = std::getenv("QWENCHAT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary);
    out << kHeaderPrefix << ": test_export_golden.cpp on chat_fixture.h branchy_conversation(), " << name
        << "; QWENCHAT_UPDATE_GOLDEN=1 rewrites; the exact output follows this line\n"
        << actual;
    ASSERT_TRUE(out.good()) << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << ": missing (run with QWENCHAT_UPDATE_GOLDEN=1 to create it)";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string file = ss.str();
  const size_t nl = file.find('\n');
  ASSERT_NE(std::string::npos, nl) << path;
  ASSERT_EQ(0u, file.rfind(kHeaderPrefix, 0))
      << path << ": the first line must start with \"" << kHeaderPrefix << "\"";
  EXPECT_EQ(file.substr(nl + 1), actual) << path;
}

TEST(ExportGolden, MarkdownCurrentBranch) {
  check_golden("branchy.current.md", {Format::kMarkdown, Branches::kCurrent});
}
TEST(ExportGolden, MarkdownWholeTree) {
  check_golden("branchy.all.md", {Format::kMarkdown, Branches::kAll});
}
TEST(ExportGolden, TextCurrentBranch) {
  check_golden("branchy.current.txt", {Format::kText, Branches::kCurrent});
}
TEST(ExportGolden, TextWholeTree) {
  check_golden("branchy.all.txt", {Format::kText, Branches::kAll});
}
TEST(ExportGolden, JsonCurrentBranch) {
  check_golden("branchy.current.json", {Format::kJson, Branches::kCurrent});
}
TEST(ExportGolden, JsonWholeTree) {
  check_golden("branchy.all.json", {Format::kJson, Branches::kAll});
}

}  // namespace
}  // namespace qc::exporter
