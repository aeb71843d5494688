#include "gguf/types.h"

#include <cmath>
#include <limits>

namespace qc::gguf {

namespace {

struct TypeGeometry {
  uint32_t id;
  std::string_view name;
  uint64_t block_elems;
  uint64_t block_bytes;
};

// ggml's type_traits (ggml.c): values per block and bytes per block. Ids 4, 5 (removed Q4_2/Q4_3) and the
// IQ* / TQ* families are not listed: a file using them is refused with the id in the message.
constexpr TypeGeometry kTypes[] = {
    {0, "F32", 1, 4},       {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},    {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},    {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},  {11, "Q3_K", 256, 110}, {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210}, {15, "Q8_K", 256, 292}, {24, "I8", 1, 1},       {25, "I16", 1, 2},
    {26, "I32", 1, 4},      {27, "I64", 1, 8},      {28, "F64", 1, 8},      {30, "BF16", 1, 2},
};

const TypeGeometry* find_type(uint32_t id) {
  for (const TypeGeometry& t : kTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

}  // namespace

bool type_block_size(uint32_t type_id, uint64_t* block_elems, uint64_t* block_bytes) {
  const TypeGeometry* t = find_type(type_id);
  if (!t) return false;
  *block_elems = t->block_elems;
  *block_bytes = t->block_bytes;
  return true;
}

std::string_view type_name(uint32_t type_id) {
  const TypeGeometry* t = find_type(type_id);
  return t ? t->name : std::string_view("unknown");
}

std::string type_label(uint32_t type_id) {
  const TypeGeometry* t = find_type(type_id);
  return t ? std::string(t->name) : "type#" + std::to_string(type_id);
}

bool is_known_value_type(uint32_t id) {
  return id <= static_cast<uint32_t>(ValueType::kF64);
}

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kU8:
      return "u8";
    case ValueType::kI8:
      return "i8";
    case ValueType::kU16:
      return "u16";
    case ValueType::kI16:
      return "i16";
    case ValueType::kU32:
      return "u32";
    case ValueType::kI32:
      return "i32";
    case ValueType::kF32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kU64:
      return "u64";
    case ValueType::kI64:
      return "i64";
    case ValueType::kF64:
      return "f64";
  }
  return "unknown";
}

std::string check_tensor_shape(uint32_t type_id, const uint64_t* ne, uint32_t n_dims, uint64_t* nbytes) {
  uint64_t block_elems = 0, block_bytes = 0;
  if (!type_block_size(type_id, &block_elems, &block_bytes)) {
    return "unknown tensor type id " + std::to_string(type_id);
  }
  if (n_dims < 1 || n_dims > static_cast<uint32_t>(kMaxDims)) {
    return "expected n_dims in 1.." + std::to_string(kMaxDims) + ", got " + std::to_string(n_dims);
  }
  if (ne[0] % block_elems != 0) {
    return "expected ne[0] (row length) to be a multiple of the " + std::string(type_name(type_id)) +
           " block size " + std::to_string(block_elems) + ", got " + std::to_string(ne[0]);
  }
  // ggml keeps element counts in int64_t: the product must fit there, not just in uint64_t.
  uint64_t elems = 1;
  bool overflow = false;
  for (uint32_t d = 0; d < n_dims; ++d) overflow |= __builtin_mul_overflow(elems, ne[d], &elems);
  uint64_t bytes = ne[0] / block_elems * block_bytes;  // one row
  for (uint32_t d = 1; d < n_dims; ++d) overflow |= __builtin_mul_overflow(bytes, ne[d], &bytes);
  if (overflow || elems > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    std::string shape;
    for (uint32_t d = 0; d < n_dims; ++d) shape += (d ? "," : "") + std::to_string(ne[d]);
    return "shape [" + shape + "] overflows: expected an element count below 2^63 and a byte size below 2^64";
  }
  *nbytes = bytes;
  return {};
}

Value Value::of_u8(uint8_t v) {
  Value x;
  x.type = ValueType::kU8;
  x.u64 = v;
  return x;
}
Value Value::of_i8(int8_t v) {
  Value x;
  x.type = ValueType::kI8;
  x.i64 = v;
  return x;
}
Value Value::of_u16(uint16_t v) {
  Value x;
  x.type = ValueType::kU16;
  x.u64 = v;
  return x;
}
Value Value::of_i16(int16_t v) {
  Value x;
  x.type = ValueType::kI16;
  x.i64 = v;
  return x;
}
Value Value::of_u32(uint32_t v) {
  Value x;
  x.type = ValueType::kU32;
  x.u64 = v;
  return x;
}
Value Value::of_i32(int32_t v) {
  Value x;
  x.type = ValueType::kI32;
  x.i64 = v;
  return x;
}
Value Value::of_u64(uint64_t v) {
  Value x;
  x.type = ValueType::kU64;
  x.u64 = v;
  return x;
}
Value Value::of_i64(int64_t v) {
  Value x;
  x.type = ValueType::kI64;
  x.i64 = v;
  return x;
}
Value Value::of_f32(float v) {
  Value x;
  x.type = ValueType::kF32;
  x.f64 = v;
  return x;
}
Value Value::of_f64(double v) {
  Value x;
  x.type = ValueType::kF64;
  x.f64 = v;
  return x;
}
Value Value::of_bool(bool v) {
  Value x;
  x.type = ValueType::kBool;
  x.u64 = v ? 1 : 0;
  return x;
}

Value Value::of_string(std::string v) {
  Value x;
  x.type = ValueType::kString;
  x.str = std::move(v);
  return x;
}

Value Value::array_of(ValueType elem, std::vector<Value> items) {
  Value x;
  x.type = ValueType::kArray;
  x.elem_type = elem;
  x.array = std::move(items);
  return x;
}

Value Value::strings(const std::vector<std::string>& items) {
  std::vector<Value> v;
  v.reserve(items.size());
  for (const std::string& s : items) v.push_back(of_string(s));
  return array_of(ValueType::kString, std::move(v));
}

Value Value::i32s(const std::vector<int32_t>& items) {
  std::vector<Value> v;
  v.reserve(items.size());
  for (int32_t i : items) v.push_back(of_i32(i));
  return array_of(ValueType::kI32, std::move(v));
}

Value Value::f32s(const std::vector<float>& items) {
  std::vector<Value> v;
  v.reserve(items.size());
  for (float f : items) v.push_back(of_f32(f));
  return array_of(ValueType::kF32, std::move(v));
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kU16:
    case ValueType::kI16:
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kBool:
      return true;
    default:
      return false;
  }
}

bool Value::is_number() const {
  return is_integer() || type == ValueType::kF32 || type == ValueType::kF64;
}

namespace {
bool is_signed(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 || t == ValueType::kI64;
}
}  // namespace

double Value::as_double() const {
  if (type == ValueType::kF32 || type == ValueType::kF64) return f64;
  if (is_signed(type)) return static_cast<double>(i64);
  return static_cast<double>(u64);
}

int64_t Value::as_int() const {
  if (type == ValueType::kF32 || type == ValueType::kF64) {
    // Casting an out-of-range double to int64 is undefined behaviour: saturate instead.
    if (std::isnan(f64)) return 0;
    if (f64 >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
    if (f64 <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(f64);
  }
  if (is_signed(type)) return i64;
  return static_cast<int64_t>(u64);
}

std::string Value::describe_type() const {
  if (type != ValueType::kArray) return std::string(value_type_name(type));
  return "array of " + std::string(value_type_name(elem_type));
}

}  // namespace qc::gguf
