// Writes the GGUF fuzzer's seed corpus (small valid files: every value type, nested arrays, several
// tensor types, two alignments, a v2 file) into the folder given as argv[1], creating it and the working
// corpus folder argv[2]. Generated at test time so no binary file is committed. Seeds stay under ~4 KiB:
// libFuzzer derives its default maximum input length from the largest seed.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gguf/writer.h"

namespace {

using qc::Status;
using qc::gguf::TensorType;
using qc::gguf::Value;
using qc::gguf::ValueType;
using qc::gguf::Writer;

uint32_t id(TensorType t) {
  return static_cast<uint32_t>(t);
}

// Bytes 1..n in a simple pattern (never all zeros).
std::vector<uint8_t> pattern(uint64_t n) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 37 + 11);
  return v;
}

Status tensors_seed(const std::string& path, uint64_t alignment) {
  Writer w(alignment);
  w.set("general.architecture", Value::of_string("qwen35"));
  w.set("qwen35.block_count", Value::of_u32(2));
  std::vector<std::vector<uint8_t>> data;
  struct T {
    const char* name;
    TensorType type;
    std::vector<uint64_t> shape;
  };
  for (const T& t : {T{"token_embd.weight", TensorType::kQ8_0, {32, 2}}, T{"norm", TensorType::kF32, {8}},
                     T{"h", TensorType::kF16, {4, 2}}, T{"b", TensorType::kBF16, {2, 1, 2}},
                     T{"k", TensorType::kQ4_K, {256}}, T{"e", TensorType::kI32, {0}},
                     T{"d4", TensorType::kF32, {1, 2, 1, 2}}}) {
    QC_TRY(w.add_tensor(t.name, id(t.type), t.shape));
    data.push_back(pattern(w.tensors().back().nbytes));
  }
  return w.write_all(path, data);
}

Status values_seed(const std::string& path) {
  Writer w;
  w.set("u8", Value::of_u8(7));
  w.set("i8", Value::of_i8(-7));
  w.set("u16", Value::of_u16(700));
  w.set("i16", Value::of_i16(-700));
  w.set("u32", Value::of_u32(70000));
  w.set("i32", Value::of_i32(-70000));
  w.set("f32", Value::of_f32(0.5f));
  w.set("bool", Value::of_bool(true));
  w.set("string", Value::of_string(std::string("nul\0inside", 10)));
  w.set("u64", Value::of_u64(1ull << 40));
  w.set("i64", Value::of_i64(-(1ll << 40)));
  w.set("f64", Value::of_f64(1e-300));
  w.set("general.alignment", Value::of_u32(32));
  w.set("tokens", Value::strings({"<s>", "</s>", "hello"}));
  w.set("scores", Value::f32s({-1.0f, 0.0f, 2.5f}));
  w.set("types", Value::i32s({1, 3, 1}));
  w.set("flags", Value::array_of(ValueType::kBool, {Value::of_bool(true), Value::of_bool(false)}));
  w.set("empty", Value::array_of(ValueType::kU64, {}));
  w.set("nested", Value::array_of(ValueType::kArray, {Value::i32s({1}), Value::strings({"x", "y"}),
                                                      Value::array_of(ValueType::kArray, {})}));
  // Eight levels (the reader's default limit): one mutation away from the depth error.
  Value deep = Value::i32s({5});
  for (int i = 1; i < 8; ++i) deep = Value::array_of(ValueType::kArray, {deep});
  w.set("deep", deep);
  return w.write_all(path, {});
}

// The same layout with version 2 in the header (v2 and v3 differ only there).
Status v2_seed(const std::string& v3_path, const std::string& path) {
  std::ifstream in(v3_path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (b.size() < 8) return qc::make_error(v3_path + ": expected a GGUF file to copy");
  b[4] = 2;
  std::ofstream out(path, std::ios::binary);
  out.write(b.data(), static_cast<std::streamsize>(b.size()));
  if (!out) return qc::make_error(path + ": cannot write");
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SEED_DIR CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  ::mkdir(argv[1], 0755);
  ::mkdir(argv[2], 0755);
  Writer empty;
  Status s = empty.write_all(dir + "/empty.gguf", {});
  if (s.ok()) s = values_seed(dir + "/values.gguf");
  if (s.ok()) s = tensors_seed(dir + "/tensors.gguf", 32);
  if (s.ok()) s = tensors_seed(dir + "/tensors_align8.gguf", 8);
  if (s.ok()) s = v2_seed(dir + "/tensors.gguf", dir + "/tensors_v2.gguf");
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.error().describe().c_str());
    return 1;
  }
  return 0;
}
