// GGUF writer: declaration checks, write order and size checks, value validation, and failure handling
// (full disk, unwritable folder, abandoned writer): an error is returned and no partial file is left.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_gguf_builder.h"

namespace qc::gguf {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

constexpr uint32_t kF32 = static_cast<uint32_t>(TensorType::kF32);
constexpr uint32_t kQ8_0 = static_cast<uint32_t>(TensorType::kQ8_0);

bool exists(const std::string& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

TEST(GgufWriter, RejectsBadDeclarations) {
  Writer w;
  ASSERT_TRUE(w.add_tensor("a", kF32, {4}).ok());
  EXPECT_EQ(w.add_tensor("a", kF32, {4}).error().message,
            "gguf writer: tensor a: duplicate tensor name, expected each name once");
  EXPECT_EQ(w.add_tensor("q", kQ8_0, {40}).error().message,
            "gguf writer: tensor q: expected ne[0] (row length) to be a multiple of the Q8_0 block size 32, "
            "got 40");
  EXPECT_EQ(w.add_tensor("t", 5, {4}).error().message, "gguf writer: tensor t: unknown tensor type id 5");
  EXPECT_EQ(w.add_tensor("d", kF32, {}).error().message,
            "gguf writer: tensor d: expected 1..4 dimensions, got 0");
  EXPECT_FALSE(w.add_tensor("d5", kF32, {1, 1, 1, 1, 1}).ok());
  EXPECT_FALSE(w.add_tensor("", kF32, {1}).ok());
  EXPECT_NE(w.add_tensor("big", kF32, {1ull << 62, 4}).error().message.find("overflows"), std::string::npos);
  Writer bad_alignment(48);
  EXPECT_EQ(bad_alignment.add_tensor("a", kF32, {4}).error().message,
            "gguf writer: alignment: expected a power of two between 1 and 2^31, got 48");
}

TEST(GgufWriter, ChecksOrderAndSize) {
  TempDir dir;
  Writer w;
  ASSERT_TRUE(w.add_tensor("a", kF32, {4}).ok());
  ASSERT_TRUE(w.add_tensor("b", kF32, {2}).ok());
  const std::string path = dir.file("o.gguf");
  ASSERT_TRUE(w.begin(path).ok());
  const std::vector<uint8_t> sixteen(16, 1), eight(8, 2);
  EXPECT_EQ(w.write_tensor("b", eight).error().message,
            path + ".partial: tensor b: expected tensor a next (declaration order)");
  EXPECT_EQ(w.write_tensor("a", eight).error().message,
            path + ".partial: tensor a: expected 16 bytes (F32), got 8");
  ASSERT_TRUE(w.write_tensor("a", sixteen).ok());
  EXPECT_NE(w.finish().error().message.find("expected 2 tensors, 1 written (next: b)"), std::string::npos);
  ASSERT_TRUE(w.write_tensor("b", eight).ok());
  EXPECT_FALSE(w.write_tensor("c", eight).ok());
  EXPECT_FALSE(w.add_tensor("late", kF32, {1}).ok());
  ASSERT_TRUE(w.finish().ok());
  EXPECT_TRUE(exists(path));
  EXPECT_FALSE(exists(path + ".partial"));
  const auto f = File::open(path);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ((*f)->tensor_data((*f)->tensors()[1])[7], 2);
}

TEST(GgufWriter, RejectsValuesItCannotRepresent) {
  TempDir dir;
  auto refuse = [&](const char* key, Value v, const std::string& expected) {
    Writer w;
    w.set(key, std::move(v));
    const Status s = w.begin(dir.file("v.gguf"));
    ASSERT_FALSE(s.ok()) << key;
    EXPECT_EQ(s.error().message, dir.file("v.gguf") + ": metadata " + expected);
    EXPECT_FALSE(exists(dir.file("v.gguf.partial")));  // validated before the file is created
  };
  Value u8 = Value::of_u8(1);
  u8.u64 = 300;
  refuse("k", u8, "k: expected a u8 value at most 255, got 300");
  Value flag = Value::of_bool(true);
  flag.u64 = 2;
  refuse("k", flag, "k: expected a bool value at most 1, got 2");
  Value i8 = Value::of_i8(1);
  i8.i64 = -200;
  refuse("k", i8, "k: expected a i8 value in [-128, 127], got -200");
  refuse("k", Value::array_of(ValueType::kU32, {Value::of_u32(1), Value::of_string("x")}),
         "k[1]: expected an element of the array's type u32, got string");
  Value deep = Value::i32s({1});
  for (int i = 1; i < 9; ++i) deep = Value::array_of(ValueType::kArray, {deep});
  refuse("k", deep, "k[0][0][0][0][0][0][0][0]: arrays nested 9 deep, expected at most 8");
  refuse("general.alignment", Value::of_u32(64),
         "general.alignment: expected u32 32 (the writer's alignment), got u32");
}

TEST(GgufWriter, SetAfterBeginFails) {
  TempDir dir;
  Writer w;
  ASSERT_TRUE(w.begin(dir.file("late.gguf")).ok());
  w.set("late.key", Value::of_u32(1));
  EXPECT_NE(w.finish().error().message.find("metadata late.key: set() after begin()"), std::string::npos);
}

TEST(GgufWriter, ReplacingAKeyKeepsItsPosition) {
  TempDir dir;
  Writer w;
  w.set("a", Value::of_u32(1));
  w.set("b", Value::of_u32(2));
  w.set("a", Value::of_string("one"));
  ASSERT_TRUE(w.write_all(dir.file("r.gguf"), {}).ok());
  const auto f = File::open(dir.file("r.gguf"));
  ASSERT_TRUE(f.ok());
  ASSERT_EQ((*f)->metadata().size(), 2u);
  EXPECT_EQ((*f)->metadata()[0].key, "a");
  EXPECT_EQ((*f)->metadata()[0].value.str, "one");
}

// A full disk: the partial file is a symlink to /dev/full, where every write fails with ENOSPC. A small
// file fails when the buffer is flushed in finish(), a large tensor already in write_tensor(). Either way
// the error says so and the partial file is gone.
TEST(GgufWriter, FullDiskReturnsErrorAndRemovesPartial) {
  if (!exists("/dev/full")) GTEST_SKIP() << "/dev/full is not available";
  TempDir dir;
  for (const uint64_t n : {uint64_t{16}, uint64_t{1} << 20}) {
    SCOPED_TRACE(n);
    const std::string path = dir.file("full.gguf");
    fs::create_symlink("/dev/full", path + ".partial");
    Writer w;
    ASSERT_TRUE(w.add_tensor("x", static_cast<uint32_t>(TensorType::kI8), {n}).ok());
    Status s = w.begin(path);
    if (s.ok()) s = w.write_tensor("x", std::vector<uint8_t>(n, 1));
    if (s.ok()) s = w.finish();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("No space left on device"), std::string::npos) << s.error().message;
    EXPECT_EQ(s.error().message.rfind(path + ".partial: ", 0), 0u) << s.error().message;
    EXPECT_NE(s.error().hint.find("disk is full"), std::string::npos);
    EXPECT_FALSE(exists(path + ".partial"));
    EXPECT_FALSE(exists(path));
    EXPECT_FALSE(w.finish().ok());  // the writer stays failed
  }
}

TEST(GgufWriter, MissingFolderReturnsError) {
  TempDir dir;
  Writer missing;
  const std::string in_missing = dir.file("no/such/folder/m.gguf");
  EXPECT_EQ(missing.begin(in_missing).error().message,
            in_missing + ".partial: cannot create: No such file or directory");
  testing::write_bytes(dir.file("plain"), {1});
  Writer not_dir;
  EXPECT_EQ(not_dir.begin(dir.file("plain/m.gguf")).error().message,
            dir.file("plain/m.gguf") + ".partial: cannot create: Not a directory");
}

TEST(GgufWriter, ReadOnlyFolderReturnsError) {
  // Permission bits do not stop root, so this test only runs as an ordinary user.
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: a read-only folder is still writable";
  TempDir dir;
  const fs::path ro = dir.path() / "ro";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  Writer w;
  const Status s = w.begin((ro / "m.gguf").string());
  fs::permissions(ro, fs::perms::owner_all);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("Permission denied"), std::string::npos) << s.error().message;
}

TEST(GgufWriter, DestructorRemovesUnfinishedPartial) {
  TempDir dir;
  const std::string path = dir.file("u.gguf");
  {
    Writer w;
    ASSERT_TRUE(w.add_tensor("a", kF32, {4}).ok());
    ASSERT_TRUE(w.add_tensor("b", kF32, {4}).ok());
    ASSERT_TRUE(w.begin(path).ok());
    ASSERT_TRUE(w.write_tensor("a", std::vector<uint8_t>(16, 0)).ok());
    EXPECT_TRUE(exists(path + ".partial"));
  }
  EXPECT_FALSE(exists(path + ".partial"));
  EXPECT_FALSE(exists(path));
}

TEST(GgufWriter, FinishReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.file("x.gguf");
  testing::write_bytes(path, {1, 2, 3});
  Writer w;
  w.set("k", Value::of_u32(5));
  ASSERT_TRUE(w.write_all(path, {}).ok());
  const auto f = File::open(path);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(*(*f)->get_u32("k"), 5u);
}

}  // namespace
}  // namespace qc::gguf
