// GGUF writer -> reader round trips: every value type, nested and empty arrays, strings with NUL bytes,
// alignments other than 32, tensors of several types, a hand-built v2 image, typed getters and the
// file/field naming of errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_gguf_builder.h"

namespace qc::gguf {
namespace {

using testing::Image;
using testing::TempDir;

std::vector<KeyValue> every_value_type() {
  std::vector<KeyValue> kv;
  kv.push_back({"t.u8", Value::of_u8(200)});
  kv.push_back({"t.i8", Value::of_i8(-100)});
  kv.push_back({"t.u16", Value::of_u16(60000)});
  kv.push_back({"t.i16", Value::of_i16(-30000)});
  kv.push_back({"t.u32", Value::of_u32(4000000000u)});
  kv.push_back({"t.i32", Value::of_i32(-2000000000)});
  kv.push_back({"t.f32", Value::of_f32(0.1f)});
  kv.push_back({"t.bool_true", Value::of_bool(true)});
  kv.push_back({"t.bool_false", Value::of_bool(false)});
  kv.push_back({"t.string", Value::of_string("qwen35")});
  kv.push_back({"t.u64", Value::of_u64((1ull << 63) + 5)});
  kv.push_back({"t.i64", Value::of_i64(-(1ll << 40) - 3)});
  kv.push_back({"t.f64", Value::of_f64(3.141592653589793)});
  kv.push_back({"t.f32_special", Value::f32s({-0.0f, std::numeric_limits<float>::infinity(), 1e-45f})});
  kv.push_back({"t.u8s", Value::array_of(ValueType::kU8, {Value::of_u8(0), Value::of_u8(255)})});
  kv.push_back({"t.i8s", Value::array_of(ValueType::kI8, {Value::of_i8(-128), Value::of_i8(127)})});
  kv.push_back({"t.u16s", Value::array_of(ValueType::kU16, {Value::of_u16(65535)})});
  kv.push_back({"t.i16s", Value::array_of(ValueType::kI16, {Value::of_i16(-32768)})});
  kv.push_back({"t.u32s", Value::array_of(ValueType::kU32, {Value::of_u32(7), Value::of_u32(8)})});
  kv.push_back({"t.i32s", Value::i32s({-1, 0, 1})});
  kv.push_back({"t.u64s", Value::array_of(ValueType::kU64, {Value::of_u64(UINT64_MAX)})});
  kv.push_back({"t.i64s", Value::array_of(ValueType::kI64, {Value::of_i64(INT64_MIN)})});
  kv.push_back({"t.f64s", Value::array_of(ValueType::kF64, {Value::of_f64(-2.5), Value::of_f64(1e300)})});
  kv.push_back({"t.bools", Value::array_of(ValueType::kBool, {Value::of_bool(true), Value::of_bool(false)})});
  kv.push_back({"t.strings", Value::strings({"a", "", "\xff\xfe not utf-8"})});
  kv.push_back({"t.empty", Value::array_of(ValueType::kU8, {})});
  kv.push_back({"t.empty_strings", Value::array_of(ValueType::kString, {})});
  kv.push_back({"t.empty_nested", Value::array_of(ValueType::kArray, {})});
  // Nested: inner arrays carry their own element types, one of them empty.
  kv.push_back({"t.nested", Value::array_of(ValueType::kArray, {Value::i32s({1, 2}), Value::strings({"x"}),
                                                                Value::array_of(ValueType::kF64, {})})});
  // Eight levels, the most the default ReaderLimits accept.
  Value deep = Value::i32s({42});
  for (int i = 1; i < 8; ++i) deep = Value::array_of(ValueType::kArray, {deep});
  kv.push_back({"t.deep", deep});
  return kv;
}

TEST(GgufRoundTrip, EveryValueType) {
  TempDir dir;
  Writer w;
  const std::vector<KeyValue> kv = every_value_type();
  for (const KeyValue& e : kv) w.set(e.key, e.value);
  ASSERT_TRUE(w.write_all(dir.file("v.gguf"), {}).ok());

  const auto f = File::open(dir.file("v.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ((*f)->version(), 3u);
  ASSERT_EQ((*f)->metadata().size(), kv.size());
  for (size_t i = 0; i < kv.size(); ++i) {
    EXPECT_EQ((*f)->metadata()[i].key, kv[i].key);
    EXPECT_TRUE((*f)->metadata()[i].value == kv[i].value) << kv[i].key;
  }
  // f32 travels as 4 bytes: 0.1f comes back as the same float, not as the double 0.1.
  EXPECT_EQ((*f)->find("t.f32")->f64, static_cast<double>(0.1f));
  EXPECT_EQ((*f)->find("t.i8")->i64, -100);
  EXPECT_EQ((*f)->find("t.deep")->array[0].array[0].array[0].array[0].array[0].array[0].array[0].array[0].i64,
            42);
  EXPECT_TRUE((*f)->tensors().empty());
  EXPECT_EQ((*f)->find("absent"), nullptr);
}

TEST(GgufRoundTrip, StringsWithNulBytes) {
  TempDir dir;
  const std::string value("a\0b\0\0c", 6);
  const std::string key("key.with\0nul", 12);
  Writer w;
  w.set(key, Value::of_string(value));
  w.set("list", Value::strings({std::string("\0", 1), value}));
  ASSERT_TRUE(w.write_all(dir.file("s.gguf"), {}).ok());
  const auto f = File::open(dir.file("s.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_NE((*f)->find(key), nullptr);
  EXPECT_EQ((*f)->find(key)->str, value);
  EXPECT_EQ((*f)->find(key)->str.size(), 6u);
  const auto list = (*f)->get_strings("list");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::vector<std::string>{std::string("\0", 1), value}));
}

struct TensorCase {
  const char* name;
  TensorType type;
  std::vector<uint64_t> shape;
  uint64_t nbytes;  // from the block table: elements / block_elems * block_bytes
};

std::vector<TensorCase> tensor_cases() {
  return {
      {"f32", TensorType::kF32, {3, 2}, 6 * 4},       {"f16", TensorType::kF16, {5}, 5 * 2},
      {"bf16", TensorType::kBF16, {4, 1, 2}, 8 * 2},  {"q8_0", TensorType::kQ8_0, {64, 3}, 2 * 3 * 34},
      {"q4_k", TensorType::kQ4_K, {256, 2}, 2 * 144}, {"i32", TensorType::kI32, {7}, 7 * 4},
      {"empty", TensorType::kQ8_0, {0, 4}, 0},        {"f32_4d", TensorType::kF32, {2, 3, 1, 2}, 12 * 4},
      {"q6_k", TensorType::kQ6_K, {256}, 210},
  };
}

// Writes the cases with random bytes (fixed seed) and checks what the reader sees.
void round_trip_tensors(uint64_t alignment) {
  TempDir dir;
  Writer w(alignment);
  w.set("general.architecture", Value::of_string("test"));
  std::mt19937 rng(1234);
  std::vector<std::vector<uint8_t>> data;
  for (const TensorCase& c : tensor_cases()) {
    ASSERT_TRUE(w.add_tensor(c.name, static_cast<uint32_t>(c.type), c.shape).ok()) << c.name;
    std::vector<uint8_t> d(c.nbytes);
    for (uint8_t& b : d) b = static_cast<uint8_t>(rng());
    data.push_back(std::move(d));
  }
  const std::string path = dir.file("t.gguf");
  const Status st = w.write_all(path, data);
  ASSERT_TRUE(st.ok()) << st.error().message;

  const auto f = File::open(path);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ((*f)->alignment(), alignment);
  EXPECT_EQ((*f)->data_offset() % alignment, 0u);
  EXPECT_EQ((*f)->file_size() % alignment, 0u);  // the writer pads after the last tensor, like ggml
  if (alignment != kDefaultAlignment) {
    const auto a = (*f)->get_u32("general.alignment");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(*a, alignment);
  } else {
    EXPECT_EQ((*f)->find("general.alignment"), nullptr);
  }
  const auto cases = tensor_cases();
  ASSERT_EQ((*f)->tensors().size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const TensorInfo& t = (*f)->tensors()[i];
    EXPECT_EQ(t.name, cases[i].name);
    EXPECT_EQ(t.type, static_cast<uint32_t>(cases[i].type));
    EXPECT_EQ(t.n_dims, cases[i].shape.size());
    for (size_t d = 0; d < cases[i].shape.size(); ++d) EXPECT_EQ(t.ne[d], cases[i].shape[d]);
    EXPECT_EQ(t.nbytes, cases[i].nbytes) << t.name;
    EXPECT_EQ(t.offset % alignment, 0u);
    EXPECT_EQ((*f)->find_tensor(t.name), &t);
    EXPECT_TRUE(std::equal(data[i].begin(), data[i].end(), (*f)->tensor_data(t))) << t.name;
  }
  // The reader sees exactly the offsets the writer computed.
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ((*f)->tensors()[i].offset, w.tensors()[i].offset);
}

TEST(GgufRoundTrip, TensorsOfSeveralTypes) {
  round_trip_tensors(kDefaultAlignment);
}

TEST(GgufRoundTrip, AlignmentOtherThan32) {
  for (uint64_t a : {1ull, 8ull, 64ull, 4096ull}) {
    SCOPED_TRACE(a);
    round_trip_tensors(a);
  }
}

TEST(GgufRoundTrip, OpenAndFromBytesAgree) {
  TempDir dir;
  Writer w;
  w.set("k", Value::of_u32(1));
  ASSERT_TRUE(w.add_tensor("x", static_cast<uint32_t>(TensorType::kF32), {4}).ok());
  ASSERT_TRUE(w.write_all(dir.file("a.gguf"), {std::vector<uint8_t>(16, 7)}).ok());
  const auto bytes = testing::read_bytes(dir.file("a.gguf"));
  const auto a = File::open(dir.file("a.gguf"));
  const auto b = File::from_bytes(bytes, "mem");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->file_size(), bytes.size());
  EXPECT_EQ((*a)->data_offset(), (*b)->data_offset());
  EXPECT_EQ((*b)->path(), "mem");
  EXPECT_EQ((*a)->tensor_data((*a)->tensors()[0])[3], 7);
}

// v2 differs from v3 only in the version number (v3 added big-endian files, which we refuse).
TEST(GgufRoundTrip, ReadsVersion2) {
  Image img;
  img.header(1, 3, /*version=*/2);
  img.kv_str("general.architecture", "llama");
  img.kv_u32("llama.block_count", 12);
  img.key("tokenizer.ggml.scores", ValueType::kArray).u32(static_cast<uint32_t>(ValueType::kF32)).u64(2);
  img.f32(-1.5f).f32(2.0f);
  img.tensor("w", {2, 2}, static_cast<uint32_t>(TensorType::kF32), 0);
  img.pad(32);
  for (int i = 0; i < 4; ++i) img.f32(static_cast<float>(i) + 0.5f);

  const auto f = testing::parse(img);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ((*f)->version(), 2u);
  EXPECT_EQ(*(*f)->get_string("general.architecture"), "llama");
  EXPECT_EQ(*(*f)->get_u32("llama.block_count"), 12u);
  EXPECT_EQ(*(*f)->get_floats("tokenizer.ggml.scores"), (std::vector<float>{-1.5f, 2.0f}));
  ASSERT_EQ((*f)->tensors().size(), 1u);
  EXPECT_EQ((*f)->data_offset() % 32, 0u);
  float x[4];
  std::memcpy(x, (*f)->tensor_data((*f)->tensors()[0]), sizeof(x));
  EXPECT_EQ(x[3], 3.5f);
}

TEST(GgufGetters, AcceptCompatibleTypesAndRefuseOthers) {
  Image img;
  img.header(0, 12);
  img.key("u8", ValueType::kU8).u8(9);
  img.key("i32_pos", ValueType::kI32).u32(77);
  img.key("i32_neg", ValueType::kI32).u32(static_cast<uint32_t>(-5));
  img.key("u64_big", ValueType::kU64).u64(1ull << 32);
  img.key("f64", ValueType::kF64).u64(0x3ff8000000000000ull);       // 1.5
  img.key("f64_huge", ValueType::kF64).u64(0x7fefffffffffffffull);  // DBL_MAX: no f32 holds it
  img.kv_str("s", "text");
  img.key("flag", ValueType::kBool).u8(1);
  img.key("flags", ValueType::kArray).u32(static_cast<uint32_t>(ValueType::kBool)).u64(3).u8(1).u8(0).u8(1);
  img.key("u64s", ValueType::kArray).u32(static_cast<uint32_t>(ValueType::kU64)).u64(1).u64(UINT64_MAX);
  img.key("i16s", ValueType::kArray)
      .u32(static_cast<uint32_t>(ValueType::kI16))
      .u64(2)
      .uint(0xffff, 2)
      .uint(3, 2);
  img.key("nested", ValueType::kArray).u32(static_cast<uint32_t>(ValueType::kArray)).u64(0);
  const auto r = testing::parse(img);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const File& f = **r;

  EXPECT_EQ(*f.get_u32("u8"), 9u);
  EXPECT_EQ(*f.get_u32("i32_pos"), 77u);
  EXPECT_EQ(f.get_u32("i32_neg").error().message,
            "test.gguf: metadata i32_neg: expected an unsigned integer below 2^32, got i32 -5");
  EXPECT_NE(f.get_u32("u64_big").error().message.find("below 2^32, got u64 4294967296"), std::string::npos);
  EXPECT_NE(f.get_u32("f64").error().message.find("got f64"), std::string::npos);
  EXPECT_NE(f.get_u32("flag").error().message.find("got bool"), std::string::npos);
  EXPECT_EQ(*f.get_f32("f64"), 1.5f);
  EXPECT_EQ(*f.get_f32("i32_neg"), -5.0f);
  EXPECT_NE(f.get_f32("f64_huge").error().message.find("f32 range"), std::string::npos);
  EXPECT_EQ(*f.get_string("s"), "text");
  EXPECT_EQ(*f.get_bool("flag"), true);
  EXPECT_EQ(f.get_bool("u8").error().message, "test.gguf: metadata u8: expected a bool, got u8");
  EXPECT_EQ(*f.get_ints("flags"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(*f.get_ints("i16s"), (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(*f.get_floats("i16s"), (std::vector<float>{-1.0f, 3.0f}));
  EXPECT_EQ(f.get_ints("u64s").error().message,
            "test.gguf: metadata u64s[0]: expected an integer below 2^63, got u64 18446744073709551615");
  EXPECT_EQ(f.get_strings("flags").error().message,
            "test.gguf: metadata flags: expected an array of string, got array of bool");
  EXPECT_EQ(f.get_ints("nested").error().message,
            "test.gguf: metadata nested: expected an array of integers, got array of array");
  EXPECT_EQ(f.get_floats("s").error().message,
            "test.gguf: metadata s: expected an array of numbers, got string");
  EXPECT_EQ(f.get_u32("nope").error().message,
            "test.gguf: metadata nope: missing, expected an unsigned integer");
}

TEST(GgufErrors, TextNamesFileAndField) {
  TempDir dir;
  Writer w;
  w.set("qwen35.block_count", Value::of_string("forty"));
  ASSERT_TRUE(w.write_all(dir.file("model.gguf"), {}).ok());
  const auto f = File::from_bytes(testing::read_bytes(dir.file("model.gguf")), "model.gguf");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->get_u32("qwen35.block_count").error().message,
            "model.gguf: metadata qwen35.block_count: expected an unsigned integer, got string");

  // A structural error names the path given to open(), the tensor and its index, expected and found.
  Image img;
  img.header(2, 0);
  img.tensor("blk.0.ok", {32}, static_cast<uint32_t>(TensorType::kQ8_0), 0);
  img.tensor("blk.0.attn_q.weight", {33, 2}, static_cast<uint32_t>(TensorType::kQ8_0), 64);
  img.pad(32).zeros(256);
  testing::write_bytes(dir.file("bad.gguf"), img.bytes);
  const auto bad = File::open(dir.file("bad.gguf"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, dir.file("bad.gguf") +
                                     ": tensor blk.0.attn_q.weight (#1): expected ne[0] (row length) to be a "
                                     "multiple of the Q8_0 block size 32, got 33");
}

TEST(GgufOpen, DirectoryMissingAndEmptyFiles) {
  TempDir dir;
  const auto d = File::open(dir.path().string());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message, dir.path().string() + ": is a directory, expected a GGUF file");

  const auto missing = File::open(dir.file("missing.gguf"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, dir.file("missing.gguf") + ": cannot open: No such file or directory");

  testing::write_bytes(dir.file("empty.gguf"), {});
  const auto empty = File::open(dir.file("empty.gguf"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("truncated"), std::string::npos) << empty.error().message;

  testing::write_bytes(dir.file("short.gguf"), {'G', 'G', 'U', 'F', 3, 0, 0});
  const auto short_file = File::open(dir.file("short.gguf"));
  ASSERT_FALSE(short_file.ok());
  EXPECT_EQ(short_file.error().message,
            dir.file("short.gguf") + ": header: truncated: the file is 7 bytes, a GGUF header needs 24");
}

}  // namespace
}  // namespace qc::gguf
