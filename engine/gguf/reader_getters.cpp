// Typed metadata access. Each getter accepts every stored width that represents the requested value
// exactly enough (a u32 getter takes u8..u64 and i8..i64 when the value fits) and otherwise fails with
// "<file>: metadata <key>: expected <what>, got <type or value>".
#include <cmath>
#include <limits>

#include "gguf/reader.h"

namespace qc::gguf {

namespace {

bool is_signed(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 || t == ValueType::kI64;
}

bool is_float(ValueType t) {
  return t == ValueType::kF32 || t == ValueType::kF64;
}

// A number that is not a bool (bools are integers for get_ints only: layer flag arrays use them).
bool is_plain_number(const Value& v) {
  return v.is_number() && v.type != ValueType::kBool;
}

std::string show(const Value& v) {
  if (is_float(v.type)) return v.describe_type() + " " + std::to_string(v.f64);
  if (is_signed(v.type)) return v.describe_type() + " " + std::to_string(v.i64);
  return v.describe_type() + " " + std::to_string(v.u64);
}

// f64 -> f32 that refuses finite values outside the float range (they would become inf).
bool to_float(const Value& v, float* out) {
  const double d = v.as_double();
  if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) return false;
  *out = static_cast<float>(d);
  return true;
}

struct Lookup {
  const Value* value;
  Error error;
};

Lookup lookup(const File& f, std::string_view key, std::string_view expected) {
  const Value* v = f.find(key);
  if (v) return {v, {}};
  return {nullptr, make_error(f.path() + ": metadata " + std::string(key) + ": missing, expected " +
                              std::string(expected))};
}

Error wrong(const File& f, std::string_view key, std::string_view expected, const std::string& got) {
  return make_error(f.path() + ": metadata " + std::string(key) + ": expected " + std::string(expected) +
                    ", got " + got);
}

}  // namespace

Result<uint32_t> File::get_u32(std::string_view key) const {
  constexpr std::string_view kWhat = "an unsigned integer";
  const Lookup l = lookup(*this, key, kWhat);
  if (!l.value) return l.error;
  const Value& v = *l.value;
  if (!is_plain_number(v) || is_float(v.type)) return wrong(*this, key, kWhat, v.describe_type());
  const bool fits = is_signed(v.type) ? v.i64 >= 0 && v.i64 <= int64_t{UINT32_MAX} : v.u64 <= UINT32_MAX;
  if (!fits) return wrong(*this, key, "an unsigned integer below 2^32", show(v));
  return static_cast<uint32_t>(is_signed(v.type) ? static_cast<uint64_t>(v.i64) : v.u64);
}

Result<float> File::get_f32(std::string_view key) const {
  constexpr std::string_view kWhat = "a number";
  const Lookup l = lookup(*this, key, kWhat);
  if (!l.value) return l.error;
  if (!is_plain_number(*l.value)) return wrong(*this, key, kWhat, l.value->describe_type());
  float f = 0;
  if (!to_float(*l.value, &f)) return wrong(*this, key, "a number in the f32 range", show(*l.value));
  return f;
}

Result<std::string> File::get_string(std::string_view key) const {
  constexpr std::string_view kWhat = "a string";
  const Lookup l = lookup(*this, key, kWhat);
  if (!l.value) return l.error;
  if (l.value->type != ValueType::kString) return wrong(*this, key, kWhat, l.value->describe_type());
  return l.value->str;
}

Result<bool> File::get_bool(std::string_view key) const {
  constexpr std::string_view kWhat = "a bool";
  const Lookup l = lookup(*this, key, kWhat);
  if (!l.value) return l.error;
  if (l.value->type != ValueType::kBool) return wrong(*this, key, kWhat, l.value->describe_type());
  return l.value->u64 != 0;
}

Result<std::vector<std::string>> File::get_strings(std::string_view key) const {
  constexpr std::string_view kWhat = "an array of string";
  const Lookup l = lookup(*this, key, kWhat);
  if (!l.value) return l.error;
  const Value& v = *l.value;
  if (v.type != ValueType::kArray || v.elem_type != ValueType::kString) {
    return wrong(*this, key, kWhat, v.describe_type());
  }
  std::vector<std::string> out;
  out.reserve(v.array.size());
  for (const Value& e : v.array) out.push_back(e.str);
  return out;
}

Result<std::vector<int64_t>> File::get_ints(std::string_view key) const {
  constexpr std::string_view kWhat = "an array of integers";
  const Lookup l = lookup(*this, key, kWhat);
  if (!l.value) return l.error;
  const Value& v = *l.value;
  Value elem;
  elem.type = v.elem_type;
  if (v.type != ValueType::kArray || !elem.is_integer()) return wrong(*this, key, kWhat, v.describe_type());
  std::vector<int64_t> out;
  out.reserve(v.array.size());
  for (size_t i = 0; i < v.array.size(); ++i) {
    const Value& e = v.array[i];
    if (!is_signed(e.type) && e.u64 > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return wrong(*this, std::string(key) + "[" + std::to_string(i) + "]", "an integer below 2^63", show(e));
    }
    out.push_back(e.as_int());
  }
  return out;
}

Result<std::vector<float>> File::get_floats(std::string_view key) const {
  constexpr std::string_view kWhat = "an array of numbers";
  const Lookup l = lookup(*this, key, kWhat);
  if (!l.value) return l.error;
  const Value& v = *l.value;
  Value elem;
  elem.type = v.elem_type;
  if (v.type != ValueType::kArray || !is_plain_number(elem))
    return wrong(*this, key, kWhat, v.describe_type());
  std::vector<float> out(v.array.size());
  for (size_t i = 0; i < v.array.size(); ++i) {
    if (!to_float(v.array[i], &out[i])) {
      return wrong(*this, std::string(key) + "[" + std::to_string(i) + "]", "a number in the f32 range",
                   show(v.array[i]));
    }
  }
  return out;
}

}  // namespace qc::gguf
