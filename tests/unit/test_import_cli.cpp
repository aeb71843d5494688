// qwenchat-convert as a process: converts a small checkpoint, reports bad input with one line on stderr and
// a non-zero exit (never a signal), and its output runs in `qwenchat-cli logits --mtp`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"
#include "test_import_checkpoint.h"

namespace qc {
namespace {

namespace fs = std::filesystem;

const std::string kConvert = std::string(QWENCHAT_BINARY_DIR) + "/app/qwenchat-convert";
const std::string kCli = std::string(QWENCHAT_BINARY_DIR) + "/app/qwenchat-cli";

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string err;
};

ProcessResult run_process(const std::string& args, const test::TempDir& dir) {
  const std::string err_path = dir.file("stderr.txt");
  const int status = std::system((args + " > /dev/null 2> " + err_path).c_str());
  ProcessResult r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  std::ifstream f(err_path);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  return r;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(ImportCli, ConvertsAndReportsErrorsInOneLine) {
  if (!fs::exists(kConvert) || !fs::exists(kCli)) GTEST_SKIP() << "executables not built";
  test::TempDir dir;
  test::TinyHfSpec s;
  s.dtype = "BF16";
  test::write_hf_checkpoint(dir.file("ckpt"), s, test::make_hf_weights(s));

  const ProcessResult ok = run_process(kConvert + " " + dir.file("ckpt") + " " + dir.file("m.gguf"), dir);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.err.find("wrote " + dir.file("m.gguf")), std::string::npos) << ok.err;
  EXPECT_NE(ok.err.find("MTP yes"), std::string::npos) << ok.err;
  ASSERT_TRUE(fs::exists(dir.file("m.gguf")));

  const ProcessResult logits =
      run_process(kCli + " logits --model " + dir.file("m.gguf") + " --tokens 5,9,200,7 --mtp --out " +
                      dir.file("l.bin") + " --threads 1",
                  dir);
  EXPECT_EQ(logits.exit_code, 0) << logits.err;
  // 4 main rows of logits + hidden, 3 MTP rows of logits + hidden, float32.
  EXPECT_EQ(fs::file_size(dir.file("l.bin")),
            static_cast<uintmax_t>((4 + 3) * (s.vocab_size + s.hidden) * 4));

  const struct {
    std::string args, needle;
  } bad[] = {
      {"", "expected two arguments"},
      {dir.file("nothing") + " " + dir.file("x.gguf"), "config.json"},
      {dir.file("ckpt") + " " + dir.file("x.gguf") + " --outtype q3_k_m", "--outtype: expected one of"},
      {dir.file("ckpt") + " " + dir.file("no/such/dir/x.gguf"), "x.gguf"},
      {dir.file("ckpt") + " " + dir.file("x.gguf") + " --bogus", "bogus"},
  };
  for (const auto& b : bad) {
    const ProcessResult r = run_process(kConvert + " " + b.args + " --quiet", dir);
    EXPECT_GT(r.exit_code, 0) << b.args;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(b.needle), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("x.gguf")));
  }
  const ProcessResult help = run_process(kConvert + " --help", dir);
  EXPECT_EQ(help.exit_code, 0);
}

// A K-quant mix from the command line: the file says so in general.file_type, and `qwenchat-cli info` lists
// its tensors by type (Q4_K for most matrices, Q6_K for the output and the use-more-bits layers' attn_v /
// attn_qkv / ffn_down, Q5_0 where a 128- or 192-value row is not a whole super-block, F32 vectors).
TEST(ImportCli, ConvertsToAKQuantMixAndInfoListsItsTypes) {
  if (!fs::exists(kConvert) || !fs::exists(kCli)) GTEST_SKIP() << "executables not built";
  test::TempDir dir;
  test::TinyHfSpec s;
  s.hidden = 256;
  s.ff = 512;
  test::write_hf_checkpoint(dir.file("ckpt"), s, test::make_hf_weights(s));
  const ProcessResult ok = run_process(
      kConvert + " " + dir.file("ckpt") + " " + dir.file("m.gguf") + " --outtype Q4_K_M --threads 2", dir);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const int status = std::system((kCli + " info --model " + dir.file("m.gguf") + " > " +
                                  dir.file("info.txt") + " 2> " + dir.file("info.err"))
                                     .c_str());
  ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << read_text(dir.file("info.err"));
  const std::string info = read_text(dir.file("info.txt"));
  for (const char* type : {"Q4_K: ", "Q6_K: ", "Q5_0: ", "F32: "})
    EXPECT_NE(info.find(type), std::string::npos) << type << " in\n" << info;
  EXPECT_EQ(info.find("Q8_0: "), std::string::npos) << info;
}

}  // namespace
}  // namespace qc
