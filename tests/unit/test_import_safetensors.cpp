// The safetensors reader and the sharded checkpoint: valid files read back exactly; every class of
// malformed file is refused with a message naming the file (and the tensor where there is one), never a
// crash; sharded checkpoints resolve through their index.
#include <gtest/gtest.h>

#include <filesystem>

#include "import/checkpoint.h"
#include "import/safetensors.h"
#include "temp_dir.h"
#include "test_import_checkpoint.h"

namespace qc {
namespace {

using test::safetensors_bytes;
using test::safetensors_raw;
using test::StEntry;

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Result<std::unique_ptr<st::File>> parse(const std::vector<uint8_t>& b) {
  return st::File::from_bytes(b, "t.safetensors");
}

// Expects a refusal whose message names the file and contains `needle`.
void expect_error(const std::vector<uint8_t>& b, const std::string& needle) {
  auto f = parse(b);
  ASSERT_FALSE(f.ok()) << "accepted, expected an error mentioning: " << needle;
  const std::string& m = f.error().message;
  EXPECT_EQ(m.rfind("t.safetensors: ", 0), 0u) << m;
  EXPECT_NE(m.find(needle), std::string::npos) << m;
}

TEST(ImportSafetensors, ReadsDtypesShapesAndMetadata) {
  std::vector<StEntry> e;
  e.push_back({"a.weight", "F32", {2, 3}, f32_bytes({1, 2, 3, 4, 5, 6})});
  std::vector<uint8_t> half(8);
  for (int i = 0; i < 4; ++i) {
    const uint16_t h = f32_to_f16(0.5f * static_cast<float>(i));
    std::memcpy(half.data() + 2 * i, &h, 2);
  }
  e.push_back({"b", "F16", {4}, half});
  std::vector<uint8_t> bf(4);
  const uint16_t x = f32_to_bf16(-3.0f), y = f32_to_bf16(0.25f);
  std::memcpy(bf.data(), &x, 2);
  std::memcpy(bf.data() + 2, &y, 2);
  e.push_back({"c", "BF16", {1, 2}, bf});
  e.push_back({"empty", "F32", {0, 7}, {}});
  e.push_back({"ids", "I64", {1}, std::vector<uint8_t>(8, 1)});
  auto f = parse(safetensors_bytes(e, {{"format", "pt"}}));
  ASSERT_TRUE(f.ok()) << f.error().describe();
  ASSERT_EQ((*f)->tensors().size(), 5u);
  EXPECT_EQ((*f)->metadata().at("format"), "pt");
  const st::Tensor* a = (*f)->find("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(a->shape_str(), "[2, 3]");
  float got[6];
  std::memcpy(got, (*f)->data(*a).data(), 24);
  EXPECT_EQ(got[5], 6.0f);
  const st::Tensor* c = (*f)->find("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->dtype, st::Dtype::kBF16);
  float cv[2];
  decode_row(DType::kBF16, (*f)->data(*c).data(), cv, 2);
  EXPECT_EQ(cv[0], -3.0f);
  EXPECT_EQ(cv[1], 0.25f);
  EXPECT_EQ((*f)->find("empty")->nbytes(), 0u);
  EXPECT_EQ((*f)->find("ids")->dtype, st::Dtype::kI64);
  EXPECT_EQ((*f)->find("missing"), nullptr);
}

TEST(ImportSafetensors, OpensAMappedFile) {
  test::TempDir dir;
  const std::string path = dir.file("m.safetensors");
  test::write_file(path, safetensors_bytes({{"w", "F32", {3}, f32_bytes({7, 8, 9})}}));
  auto f = st::File::open(path);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  float v[3];
  std::memcpy(v, (*f)->data(*(*f)->find("w")).data(), 12);
  EXPECT_EQ(v[2], 9.0f);
  auto missing = st::File::open(dir.file("nope.safetensors"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope.safetensors"), std::string::npos);
  // A folder given where a shard belongs (a common slip with checkpoint folders) is named as such.
  auto folder = st::File::open(dir.path().string());
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.error().message, dir.path().string() + ": is a directory, expected a safetensors file");
  // The mapping outlives moves of the File's owner: the view is still readable after the open call.
  auto again = st::File::open(path);
  ASSERT_TRUE(again.ok());
  std::unique_ptr<st::File> moved = std::move(*again);
  std::memcpy(v, moved->data(*moved->find("w")).data(), 12);
  EXPECT_EQ(v[0], 7.0f);
}

// ---- one test per class of malformed file ----

TEST(ImportSafetensors, RefusesFilesShorterThanTheLengthField) {
  expect_error({1, 2, 3}, "too short");
  expect_error({}, "too short");
}

TEST(ImportSafetensors, RefusesAHeaderLengthBeyondTheFile) {
  const std::string h = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  expect_error(safetensors_raw(h, 4, h.size() + 5), "exceeds the file");
  expect_error(safetensors_raw(h, 4, ~uint64_t{0}), "exceeds the limit");
}

TEST(ImportSafetensors, RefusesBadJson) {
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32",)", 0), "not valid JSON");
  expect_error(safetensors_raw("[1,2,3]", 0), "does not start with '{'");
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} xx)", 4),
               "not valid JSON");
  expect_error(safetensors_raw("{\"w\xff\":1}", 0), "not valid JSON");
  expect_error(safetensors_raw(R"({"w":5})", 0), "tensor \"w\": expected an object");
  expect_error(safetensors_raw(R"({"__metadata__":{"a":1}})", 0), "__metadata__[\"a\"]");
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                               8),
               "names \"w\" twice");
}

TEST(ImportSafetensors, RefusesUnknownDtypes) {
  expect_error(safetensors_raw(R"({"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,1]}})", 1),
               "tensor \"w\": unknown dtype \"Q4\"");
  expect_error(safetensors_raw(R"({"w":{"dtype":7,"shape":[2],"data_offsets":[0,1]}})", 1),
               "\"dtype\" is missing");
}

TEST(ImportSafetensors, RefusesBadShapes) {
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
               "non-negative");
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4),
               "non-negative");
  expect_error(
      safetensors_raw(R"({"w":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})", 4),
      "9 dimensions");
  // 2^32 * 2^32 elements overflow before any size check could pass.
  expect_error(
      safetensors_raw(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4),
      "overflows");
  expect_error(safetensors_raw(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})", 1),
               "whole number of bytes");
}

TEST(ImportSafetensors, RefusesWrongSizes) {
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20),
               "tensor \"w\": F32 [2, 3] needs 24 bytes, data_offsets [0, 20) hold 20");
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8), "end before");
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4), "data_offsets");
}

TEST(ImportSafetensors, RefusesOffsetsOutOfRange) {
  expect_error(safetensors_raw(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4),
               "tensor \"w\": data_offsets [0, 8) run past the data section (4 bytes)");
  expect_error(
      safetensors_raw(
          R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,18446744073709551616]}})",
          4),
      "data_offsets");
}

TEST(ImportSafetensors, RefusesOverlapsHolesAndTails) {
  expect_error(safetensors_raw(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                               12),
               "overlap");
  expect_error(safetensors_raw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                               12),
               "belong to no tensor");
  expect_error(safetensors_raw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 12),
               "tensors cover 4");
}

// Every single-byte corruption of a valid file's header and every truncation: an answer, never a crash
// (ASan/UBSan builds run this too; the fuzz target explores further).
TEST(ImportSafetensors, CorruptionsNeverCrash) {
  const std::vector<uint8_t> good = safetensors_bytes(
      {{"a", "F32", {2}, f32_bytes({1, 2})}, {"b", "BF16", {1, 3}, std::vector<uint8_t>(6, 0x40)}},
      {{"k", "v"}});
  int refused = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t x : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{'"'}, uint8_t{'9'}, uint8_t{'}'}}) {
      std::vector<uint8_t> b = good;
      b[i] = x;
      refused += parse(b).ok() ? 0 : 1;
    }
  }
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(parse(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(n))).ok())
        << n;
  }
  EXPECT_GT(refused, 0);
}

// ---- checkpoints ----

TEST(ImportCheckpoint, SingleFileAndShardsWithIndex) {
  test::TempDir dir;
  test::write_file(dir.file("model.safetensors"), safetensors_bytes({{"x", "F32", {2}, f32_bytes({1, -1})}}));
  auto one = Checkpoint::open(dir.path().string());
  ASSERT_TRUE(one.ok()) << one.error().describe();
  auto x = (*one)->read_f32("x");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ((*x)[1], -1.0f);

  test::TempDir sharded;
  test::write_file(sharded.file("s1.safetensors"), safetensors_bytes({{"a", "F32", {1}, f32_bytes({3})}}));
  test::write_file(sharded.file("s2.safetensors"),
                   safetensors_bytes({{"b", "F32", {1}, f32_bytes({4})}, {"c", "I32", {1}, {1, 0, 0, 0}}}));
  test::write_file(
      sharded.file("model.safetensors.index.json"),
      R"({"metadata":{},"weight_map":{"a":"s1.safetensors","b":"s2.safetensors","c":"s2.safetensors"}})");
  auto c = Checkpoint::open(sharded.path().string());
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_EQ((*c)->n_files(), 2u);
  EXPECT_EQ((*c)->names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ((*(*c)->read_f32("b"))[0], 4.0f);
  auto bad_dtype = (*c)->read_f32("c");
  ASSERT_FALSE(bad_dtype.ok());
  EXPECT_NE(bad_dtype.error().message.find("tensor \"c\" has dtype I32: expected F32, F16 or BF16"),
            std::string::npos)
      << bad_dtype.error().message;
}

TEST(ImportCheckpoint, RefusesBadIndexes) {
  test::TempDir dir;
  test::write_file(dir.file("s1.safetensors"), safetensors_bytes({{"a", "F32", {1}, f32_bytes({3})}}));
  test::write_file(dir.file("s2.safetensors"), safetensors_bytes({{"a", "F32", {1}, f32_bytes({3})}}));
  const auto open_with = [&](const std::string& index) {
    test::write_file(dir.file("model.safetensors.index.json"), index);
    return Checkpoint::open(dir.path().string());
  };
  const auto fails_with = [&](const std::string& index, const std::string& needle) {
    auto c = open_with(index);
    ASSERT_FALSE(c.ok()) << index;
    EXPECT_NE(c.error().message.find(needle), std::string::npos) << c.error().message;
  };
  fails_with(R"({"weight_map":{"a":"../s1.safetensors"}})", "expected a file name inside the folder");
  fails_with(R"({"weight_map":{"a":"s1.safetensors","b":"s1.safetensors"}})", "tensor \"b\" is not in");
  fails_with(R"({"weight_map":{"a":"s1.safetensors","z":"s2.safetensors"}})", "stored twice");
  fails_with(R"({"weight_map":{"a":"missing.safetensors"}})", "missing.safetensors");
  fails_with(R"({"weight_map":{}})", "weight_map");
  fails_with("not json", "not a JSON object");
  test::TempDir empty;
  auto none = Checkpoint::open(empty.path().string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no model.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace qc
