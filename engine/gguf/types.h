// GGUF vocabulary: metadata value types, tensor types and the in-memory metadata value.
//
// Spec: ggml's docs/gguf.md. Versions 2 and 3 share the layout (v1 used 32-bit counts and is refused).
// All integers are little-endian. Tensor shapes are written innermost dimension first ("ne"): a matrix
// stored row-major as [rows][cols] has shape {cols, rows}; for a weight that is {in, out}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qc::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr int kMaxDims = 4;

enum class ValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// ggml tensor type ids. Only the types the engine computes with are named; the reader still accepts a file
// with other types in its table (their sizes are known) so `info` can describe it, and the model loader
// refuses them by name.
enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kBF16 = 30,
};

// Block geometry of a tensor type: `block_elems` values take `block_bytes` bytes. Returns false for an
// id this build does not know (the file is then refused with the id in the message).
bool type_block_size(uint32_t type_id, uint64_t* block_elems, uint64_t* block_bytes);
std::string_view type_name(uint32_t type_id);   // "Q8_0", "F16", ... or "unknown" (see type_label)
std::string type_label(uint32_t type_id);       // type_name, or "type#N" for an unknown id
std::string_view value_type_name(ValueType t);  // "u32", "string", ... or "unknown"
bool is_known_value_type(uint32_t id);          // 0..12

// Checks a tensor's type and shape (innermost first) and computes its byte size. Returns an empty string
// on success, otherwise what is wrong ("ne[0] = 33 is not a multiple of the Q8_0 block size 32"): an
// unknown type, n_dims outside 1..4, a row that is not a whole number of blocks, or an element count or
// byte size that overflows (elements must fit int64_t, as ggml counts them signed). Writer and reader
// share it so both apply the same rules. A dimension of 0 is allowed (an empty tensor, 0 bytes).
std::string check_tensor_shape(uint32_t type_id, const uint64_t* ne, uint32_t n_dims, uint64_t* nbytes);

// One metadata value. Arrays hold their elements as Values of one element type (nested arrays allowed).
struct Value {
  ValueType type = ValueType::kU8;
  // Scalars: integers of every width live in u64/i64 (sign by type), floats in f64, bool in u64.
  uint64_t u64 = 0;
  int64_t i64 = 0;
  double f64 = 0.0;
  std::string str;
  ValueType elem_type = ValueType::kU8;  // for kArray
  std::vector<Value> array;              // for kArray

  static Value of_u8(uint8_t v);
  static Value of_i8(int8_t v);
  static Value of_u16(uint16_t v);
  static Value of_i16(int16_t v);
  static Value of_u32(uint32_t v);
  static Value of_i32(int32_t v);
  static Value of_u64(uint64_t v);
  static Value of_i64(int64_t v);
  static Value of_f32(float v);
  static Value of_f64(double v);
  static Value of_bool(bool v);
  static Value of_string(std::string v);
  static Value array_of(ValueType elem, std::vector<Value> items);
  static Value strings(const std::vector<std::string>& items);
  static Value i32s(const std::vector<int32_t>& items);
  static Value f32s(const std::vector<float>& items);

  bool is_integer() const;  // any integer type or bool
  bool is_number() const;   // integer or float
  // Numeric value as double/int64 regardless of the stored width (caller checks is_number()). as_int
  // wraps a u64 above INT64_MAX and saturates a float (NaN gives 0); the typed getters check ranges.
  double as_double() const;
  int64_t as_int() const;
  // "u32", "string", "array of u8", "array of array" (for messages).
  std::string describe_type() const;

  bool operator==(const Value&) const = default;
};

struct KeyValue {
  std::string key;
  Value value;
};

struct TensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  uint64_t ne[kMaxDims] = {1, 1, 1, 1};  // innermost first; unused dims are 1
  uint32_t type = 0;                     // ggml type id (TensorType)
  uint64_t offset = 0;                   // from the start of the data section
  uint64_t nbytes = 0;                   // derived from type and shape, overflow-checked
  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

}  // namespace qc::gguf
