// One test per class of malformed GGUF file. Each builds the smallest image that shows the fault (with the
// byte builder; no binary files in the repository) and requires an error naming the field and the values.
#include <gtest/gtest.h>

#include <random>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_gguf_builder.h"

namespace qc::gguf {
namespace {

using testing::expect_error;
using testing::Image;
using testing::TempDir;

constexpr uint32_t kF32 = static_cast<uint32_t>(TensorType::kF32);
constexpr uint32_t kQ8_0 = static_cast<uint32_t>(TensorType::kQ8_0);

uint32_t vt(ValueType t) {
  return static_cast<uint32_t>(t);
}

// One F32 tensor `name` of shape `ne` at `offset`, then `data_bytes` bytes of data.
Image one_tensor(std::vector<uint64_t> ne, uint32_t type, uint64_t offset, uint64_t data_bytes) {
  Image img;
  img.header(1, 0).tensor("w", std::move(ne), type, offset).pad(32).zeros(data_bytes);
  return img;
}

TEST(GgufMalformed, ValidBaselineParses) {
  // The fixtures below are the same shapes with one fault each; make sure the fault is the only problem.
  ASSERT_TRUE(testing::parse(one_tensor({8}, kF32, 0, 32)).ok());
  ASSERT_TRUE(testing::parse(one_tensor({0, 3}, kQ8_0, 0, 0)).ok());  // empty tensor: ne 0, 0 bytes
  EXPECT_EQ((*testing::parse(one_tensor({0, 3}, kQ8_0, 0, 0)))->tensors()[0].nbytes, 0u);
}

TEST(GgufMalformed, BadMagic) {
  Image img;
  img.raw("GGML").u32(3).u64(0).u64(0);
  expect_error(img, {"test.gguf: header magic: expected \"GGUF\" (47 47 55 46), got 47 47 4d 4c"});
  Image tiny;
  tiny.raw("PK");  // shorter than the magic: reported as truncated
  expect_error(tiny, {"header: truncated: the file is 2 bytes"});
}

TEST(GgufMalformed, BadVersion) {
  for (uint32_t v : {0u, 1u, 4u, 0x03000000u}) {
    SCOPED_TRACE(v);
    Image img;
    img.header(0, 0, v);
    expect_error(img, {"header version: expected version 2 or 3, got " + std::to_string(v)});
  }
  Image v1;
  v1.header(0, 0, 1);
  expect_error(v1, {"GGUF v1 is not supported; supported: 2, 3"});
  Image swapped;
  swapped.header(0, 0, 0x03000000u);
  expect_error(swapped, {"big-endian GGUF is not supported"});
}

// A file with every section (header, scalars, strings, nested arrays, tensor table, padding, data) cut at
// every length must be refused, never read out of bounds. from_bytes copies into an exactly sized buffer,
// so under ASan a read past the end would be caught too.
TEST(GgufMalformed, TruncatedAtEveryLength) {
  TempDir dir;
  Writer w(64);
  w.set("general.architecture", Value::of_string("qwen35"));
  w.set("a.u64", Value::of_u64(5));
  w.set("a.f32", Value::of_f32(1.0f));
  w.set("a.bool", Value::of_bool(true));
  w.set("a.tokens", Value::strings({"hello", "world"}));
  w.set("a.nested", Value::array_of(ValueType::kArray, {Value::i32s({1, 2, 3}), Value::f32s({})}));
  ASSERT_TRUE(w.add_tensor("x", kQ8_0, {32, 2}).ok());
  ASSERT_TRUE(w.add_tensor("y", kF32, {3}).ok());
  std::mt19937 rng(7);
  std::vector<uint8_t> x(68), y(12);
  for (uint8_t& b : x) b = static_cast<uint8_t>(rng());
  for (uint8_t& b : y) b = static_cast<uint8_t>(rng());
  const std::string path = dir.file("full.gguf");
  ASSERT_TRUE(w.write_all(path, {x, y}).ok());
  const std::vector<uint8_t> full = testing::read_bytes(path);

  const auto whole = File::from_bytes(full, "full.gguf");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  uint64_t data_end = 0;  // past the last tensor byte; after it comes only the final padding
  for (const TensorInfo& t : (*whole)->tensors()) {
    data_end = std::max(data_end, (*whole)->data_offset() + t.offset + t.nbytes);
  }
  ASSERT_LT(data_end, full.size());
  for (size_t len = 0; len < full.size(); ++len) {
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    const auto r = File::from_bytes(cut, "cut.gguf");
    if (len < data_end) {
      ASSERT_FALSE(r.ok()) << "length " << len << " of " << full.size() << " was accepted";
      EXPECT_EQ(r.error().message.rfind("cut.gguf: ", 0), 0u) << r.error().message;
    } else {
      EXPECT_TRUE(r.ok()) << "only trailing padding is missing at length " << len;
    }
  }
  // The mmap path too (a few lengths: each is a file on disk).
  for (size_t len : {size_t{3}, size_t{30}, full.size() / 2, static_cast<size_t>(data_end - 1)}) {
    testing::write_bytes(dir.file("cut.gguf"), std::vector<uint8_t>(full.begin(), full.begin() + len));
    const auto r = File::open(dir.file("cut.gguf"));
    ASSERT_FALSE(r.ok()) << len;
    EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
  }
}

TEST(GgufMalformed, HugeStringLength) {
  Image key;
  key.header(0, 1).u64(1ull << 62).raw("key").zeros(8);
  expect_error(key,
               {"metadata #0 key: string length 4611686018427387904 exceeds the limit of 67108864 bytes"});
  Image value;
  value.header(0, 1).key("k", ValueType::kString).u64(1000).raw("short");
  expect_error(value, {"metadata k: string length 1000 runs past the end of the file (5 bytes left"});
  Image name;
  name.header(1, 0).u64(UINT64_MAX).zeros(40);
  expect_error(name, {"tensor #0 name: string length 18446744073709551615 exceeds the limit"});
  ReaderLimits small;
  small.max_string_bytes = 4;
  Image limited;
  limited.header(0, 1).kv_str("k", "12345");
  expect_error(limited, {"metadata k: string length 5 exceeds the limit of 4 bytes"}, small);
}

TEST(GgufMalformed, HugeArrayLength) {
  Image over_limit;
  over_limit.header(0, 1).key("a", ValueType::kArray).u32(vt(ValueType::kU8)).u64(1ull << 40).zeros(16);
  expect_error(over_limit,
               {"metadata a: array length 1099511627776 exceeds the limit of 134217728 elements"});
  Image past_end;
  past_end.header(0, 1).key("a", ValueType::kArray).u32(vt(ValueType::kU32)).u64(1000).zeros(16);
  expect_error(past_end,
               {"metadata a: array of 1000 u32 needs at least 1000 x 4 bytes, the file has 16 left"});
  // Strings and arrays as elements need at least their 8- or 12-byte headers.
  Image strings;
  strings.header(0, 1).key("a", ValueType::kArray).u32(vt(ValueType::kString)).u64(3).zeros(16);
  expect_error(strings, {"array of 3 string needs at least 3 x 8 bytes"});
  // The total over all arrays is capped as well (memory per element is ~100 bytes, file cost 1 byte).
  ReaderLimits small;
  small.max_total_array_elems = 5;
  Image total;
  total.header(0, 2);
  total.key("a", ValueType::kArray).u32(vt(ValueType::kU8)).u64(3).zeros(3);
  total.key("b", ValueType::kArray).u32(vt(ValueType::kU8)).u64(3).zeros(3);
  expect_error(total, {"metadata b: array length 3 brings the file's array elements past the limit of 5"},
               small);
}

TEST(GgufMalformed, NestedArrayDepth) {
  auto nested = [](int depth) {
    Image img;
    img.header(0, 1).key("deep", ValueType::kArray);
    for (int i = 1; i < depth; ++i) img.u32(vt(ValueType::kArray)).u64(1);
    img.u32(vt(ValueType::kU8)).u64(1).u8(7);
    return img;
  };
  ASSERT_TRUE(testing::parse(nested(8)).ok());
  expect_error(nested(9),
               {"metadata deep[0][0][0][0][0][0][0][0]: arrays nested 9 deep, expected at most 8"});
  // A caller's limit above the hard recursion guard is clamped to it (64 levels).
  ReaderLimits deep;
  deep.max_array_depth = 1000;
  expect_error(nested(65), {"arrays nested 65 deep, expected at most 64"}, deep);
}

TEST(GgufMalformed, UnknownValueType) {
  Image scalar;
  scalar.header(0, 1).str("k").u32(13).u32(0);
  expect_error(scalar, {"metadata k: unknown value type 13 (expected 0..12)"});
  Image elem;
  elem.header(0, 1).key("arr", ValueType::kArray).u32(99).u64(1).u32(0);
  expect_error(elem, {"metadata arr: unknown array element type 99 (expected 0..12)"});
}

TEST(GgufMalformed, EmptyKey) {
  Image img;
  img.header(0, 1).key("", ValueType::kU8).u8(1).zeros(4);  // room for the 14-byte minimum entry
  expect_error(img, {"metadata #0 key: expected a non-empty key, got an empty string"});
}

TEST(GgufMalformed, DuplicateKey) {
  Image img;
  img.header(0, 3).kv_u32("a", 1).kv_u32("b", 2).kv_str("a", "again");
  expect_error(img, {"metadata a: duplicate key (entries #0 and #2), expected each key once"});
}

TEST(GgufMalformed, DuplicateTensor) {
  Image img;
  img.header(2, 0).tensor("w", {8}, kF32, 0).tensor("w", {8}, kF32, 32).pad(32).zeros(64);
  expect_error(img, {"tensor w (#1): duplicate tensor name (also tensor #0), expected each name once"});
}

TEST(GgufMalformed, BadNDims) {
  Image zero;
  zero.header(1, 0).str("w").u32(0).u32(kF32).u64(0).zeros(64);
  expect_error(zero, {"tensor w (#0): expected n_dims in 1..4, got 0"});
  Image five;
  five.header(1, 0).tensor("w", {1, 1, 1, 1, 1}, kF32, 0).pad(32).zeros(32);
  expect_error(five, {"tensor w (#0): expected n_dims in 1..4, got 5"});
}

TEST(GgufMalformed, DimsOverflow) {
  // 2^32 * 2^32 elements overflows uint64; 2^62 * 2 fits uint64 but not int64 (ggml counts signed);
  // 2^61 F32 elements fit int64 but their 2^63 bytes * 4 overflow.
  expect_error(one_tensor({1ull << 32, 1ull << 32}, kF32, 0, 32),
               {"tensor w (#0): shape [4294967296,4294967296] overflows"});
  expect_error(one_tensor({1ull << 62, 2}, kF32, 0, 32), {"shape [4611686018427387904,2] overflows"});
  expect_error(one_tensor({1ull << 31, 1ull << 31, 4}, kF32, 0, 32), {"overflows"});
  expect_error(one_tensor({UINT64_MAX}, kF32, 0, 32), {"overflows"});
  // Huge but representable: refused because it does not fit in the file.
  expect_error(one_tensor({1ull << 40}, kF32, 0, 32),
               {"tensor w (#0): expected data [0, 0 + 4398046511104)"});
}

TEST(GgufMalformed, UnknownTensorType) {
  expect_error(one_tensor({8}, 4, 0, 32), {"tensor w (#0): unknown tensor type id 4"});  // removed Q4_2
  expect_error(one_tensor({8}, 1000, 0, 32), {"unknown tensor type id 1000"});
}

TEST(GgufMalformed, RowNotMultipleOfBlock) {
  expect_error(
      one_tensor({33, 2}, kQ8_0, 0, 128),
      {"tensor w (#0): expected ne[0] (row length) to be a multiple of the Q8_0 block size 32, got 33"});
  expect_error(one_tensor({128}, static_cast<uint32_t>(TensorType::kQ4_K), 0, 256),
               {"multiple of the Q4_K block size 256, got 128"});
}

TEST(GgufMalformed, MisalignedOffset) {
  Image img;
  img.header(2, 0).tensor("a", {4}, kF32, 0).tensor("b", {4}, kF32, 16).pad(32).zeros(64);
  expect_error(img, {"tensor b (#1): expected an offset that is a multiple of the alignment 32, got 16"});
}

TEST(GgufMalformed, TensorPastEndOfFile) {
  expect_error(one_tensor({16}, kF32, 0, 63),
               {"tensor w (#0): expected data [0, 0 + 64) inside the data section of 63 bytes"});
  expect_error(one_tensor({1}, kF32, 1ull << 60, 64), {"expected data [1152921504606846976, "});
  // Offset + nbytes wrapping around 2^64 must not pass the bounds check.
  expect_error(one_tensor({1ull << 40, 1ull << 20}, kF32, UINT64_MAX - 31, 64), {"runs past the end"});
  // The table ends right where the data should start: nothing for the padding or the tensor.
  Image no_data;
  no_data.header(1, 0).tensor("w", {8}, kF32, 0);
  expect_error(no_data, {"data section: truncated: expected the data to start at offset 64"});
}

TEST(GgufMalformed, OverlappingTensors) {
  Image img;
  img.header(3, 0);
  img.tensor("a", {16}, kF32, 0).tensor("empty", {0}, kF32, 32).tensor("b", {8}, kF32, 32).pad(32).zeros(128);
  expect_error(img,
               {"tensor b (#2): data [32, 64) overlaps tensor a (#0) at [0, 64), expected disjoint tensors"});
}

TEST(GgufMalformed, BadAlignmentValue) {
  for (uint32_t a : {0u, 48u, 3u}) {
    SCOPED_TRACE(a);
    Image img;
    img.header(0, 1).kv_u32("general.alignment", a);
    expect_error(img,
                 {"metadata general.alignment: expected a non-zero power of two, got " + std::to_string(a)});
  }
  Image wrong_type;
  wrong_type.header(0, 1).key("general.alignment", ValueType::kU64).u64(32);
  expect_error(wrong_type, {"metadata general.alignment: expected u32, got u64"});
  // A valid non-default alignment changes what counts as aligned.
  Image a64;
  a64.header(1, 1).kv_u32("general.alignment", 64).tensor("w", {8}, kF32, 32).pad(64).zeros(128);
  expect_error(a64, {"multiple of the alignment 64, got 32"});
}

TEST(GgufMalformed, BoolNotZeroOrOne) {
  Image scalar;
  scalar.header(0, 1).key("b", ValueType::kBool).u8(2);
  expect_error(scalar, {"metadata b: expected a bool (0 or 1), got 2"});
  Image in_array;
  in_array.header(0, 1).key("bs", ValueType::kArray).u32(vt(ValueType::kBool)).u64(3).u8(0).u8(1).u8(255);
  expect_error(in_array, {"metadata bs[2]: expected a bool (0 or 1), got 255"});
}

TEST(GgufMalformed, CountsBeyondFileOrLimits) {
  Image kv;
  kv.header(0, 1000).kv_u32("a", 1);
  expect_error(kv, {"header: kv_count 1000 and tensor_count 0 need at least 14000 bytes, the file has 17 "
                    "after the header (truncated"});
  Image tensors;
  tensors.header(UINT64_MAX / 2, 0);
  expect_error(tensors, {"header tensor_count: expected at most 1048576, got 9223372036854775807"});
  Image kvs;
  kvs.header(0, UINT64_MAX);
  expect_error(kvs, {"header kv_count: expected at most 1048576, got 18446744073709551615"});
  // With limits lifted, the byte estimate itself must not overflow.
  ReaderLimits open;
  open.max_kv = UINT64_MAX;
  open.max_tensors = UINT64_MAX;
  Image both;
  both.header(UINT64_MAX, UINT64_MAX);
  expect_error(both, {"need at least 2^64 bytes"}, open);
  // Metadata that leaves too little room for the declared tensor table.
  Image table;
  table.header(2, 1).kv_str("k", std::string(60, 'x'));
  expect_error(table, {"header tensor_count: expected at most 0 tensor entries"});
}

}  // namespace
}  // namespace qc::gguf
