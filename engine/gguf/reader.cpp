// GGUF parsing and validation. Order of work: header, metadata, tensor table, then the checks that need the
// whole table (alignment, data-section bounds, overlaps). Every length read from the file is compared with
// the bytes left before anything is allocated, so memory use is bounded by a small multiple of the file
// size (an array element costs sizeof(Value), about 100 bytes, per 1..12 file bytes; ReaderLimits caps
// the total).
#include "gguf/reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "gguf/cursor.h"

namespace qc::gguf {

namespace {

constexpr uint64_t kHeaderBytes = 4 + 4 + 8 + 8;  // magic, version, tensor_count, kv_count
// Smallest possible entries, used to refuse counts the file cannot hold before reserving memory.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;              // key length, 1-byte key, type, u8 value
constexpr uint64_t kMinTensorBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name length, name, n_dims, ne[0], type, offset
// Recursion depth guard independent of the caller's limits: each level costs a stack frame.
constexpr uint32_t kHardMaxArrayDepth = 64;

// Bytes of one scalar value in the file; 0 for string and array.
uint64_t scalar_bytes(ValueType t) {
  switch (t) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool:
      return 1;
    case ValueType::kU16:
    case ValueType::kI16:
      return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32:
      return 4;
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64:
      return 8;
    case ValueType::kString:
    case ValueType::kArray:
      return 0;
  }
  return 0;
}

// Fewest file bytes one array element of type t can take (a string has its length, an array its header).
uint64_t min_elem_bytes(ValueType t) {
  if (t == ValueType::kString) return 8;
  if (t == ValueType::kArray) return 4 + 8;
  return scalar_bytes(t);
}

// Keys and names come from the file: show control and non-ASCII bytes escaped, and cut very long ones.
std::string printable(std::string_view s) {
  constexpr size_t kMax = 120;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > kMax) out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string hex4(const uint8_t* p) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 4; ++i) {
    if (i) s += ' ';
    s += kHex[p[i] >> 4];
    s += kHex[p[i] & 15];
  }
  return s;
}

// Names the value being parsed: "metadata tokenizer.ggml.tokens[7]", built only when an error needs it.
struct FieldPath {
  std::string base;
  std::vector<uint64_t> index;
  std::string str() const {
    std::string s = base;
    for (uint64_t i : index) s += "[" + std::to_string(i) + "]";
    return s;
  }
};

class Parser {
 public:
  Parser(const std::string& file, const uint8_t* base, uint64_t size, const ReaderLimits& limits)
      : file_(file), cur_(base, size), size_(size), limits_(limits) {}

  Cursor& cur() { return cur_; }

  Error fail(std::string_view field, std::string_view what) const {
    return make_error(file_ + ": " + std::string(field) + ": " + std::string(what));
  }
  Error truncated(std::string_view field, uint64_t need) const {
    return fail(field, "truncated: expected " + std::to_string(need) + " bytes at offset " +
                           std::to_string(cur_.pos()) + ", the file has " + std::to_string(cur_.left()) +
                           " left (file size " + std::to_string(size_) + ")");
  }

  // Readers take the field name as a function, called only on an error (the hot paths are per array
  // element), or as a string.
  template <class FieldFn>
  Result<uint32_t> u32(const FieldFn& field) {
    uint32_t v = 0;
    if (!cur_.u32(&v)) return truncated(field(), 4);
    return v;
  }
  template <class FieldFn>
  Result<uint64_t> u64(const FieldFn& field) {
    uint64_t v = 0;
    if (!cur_.u64(&v)) return truncated(field(), 8);
    return v;
  }
  Result<uint32_t> u32(const std::string& field) {
    return u32([&] { return field; });
  }
  Result<uint64_t> u64(const std::string& field) {
    return u64([&] { return field; });
  }

  // A GGUF string: u64 length then bytes (any bytes, NUL included). `field()` names it in errors; it is
  // only called on an error, so a 250k-entry vocabulary does not build 250k field names.
  template <class FieldFn>
  Result<std::string> string(const FieldFn& field) {
    uint64_t n = 0;
    if (!cur_.u64(&n)) return truncated(field(), 8);
    if (n > limits_.max_string_bytes) {
      return fail(field(), "string length " + std::to_string(n) + " exceeds the limit of " +
                               std::to_string(limits_.max_string_bytes) + " bytes");
    }
    const uint8_t* p = nullptr;
    if (!cur_.bytes(n, &p)) {
      return fail(field(), "string length " + std::to_string(n) + " runs past the end of the file (" +
                               std::to_string(cur_.left()) + " bytes left at offset " +
                               std::to_string(cur_.pos()) + ")");
    }
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  Result<std::string> string(const std::string& field) {
    return string([&] { return field; });
  }

  Result<ValueType> value_type(const FieldPath& path, std::string_view what) {
    QC_ASSIGN(const uint32_t t, u32([&] { return path.str() + " " + std::string(what); }));
    if (!is_known_value_type(t)) {
      return fail(path.str(), "unknown " + std::string(what) + " " + std::to_string(t) + " (expected 0..12)");
    }
    return static_cast<ValueType>(t);
  }

  Status value(ValueType t, Value* out, FieldPath& path, uint32_t depth) {
    out->type = t;
    switch (t) {
      case ValueType::kU8:
      case ValueType::kU16:
      case ValueType::kU32:
      case ValueType::kU64:
      case ValueType::kBool:
      case ValueType::kI8:
      case ValueType::kI16:
      case ValueType::kI32:
      case ValueType::kI64:
        return integer(t, out, path);
      case ValueType::kF32: {
        uint32_t bits = 0;
        if (!cur_.u32(&bits)) return truncated(path.str(), 4);
        float f;
        std::memcpy(&f, &bits, 4);
        out->f64 = f;
        return {};
      }
      case ValueType::kF64: {
        uint64_t bits = 0;
        if (!cur_.u64(&bits)) return truncated(path.str(), 8);
        std::memcpy(&out->f64, &bits, 8);
        return {};
      }
      case ValueType::kString: {
        QC_ASSIGN(out->str, string([&] { return path.str(); }));
        return {};
      }
      case ValueType::kArray:
        return array(out, path, depth + 1);
    }
    return fail(path.str(), "unknown value type");  // unreachable: types are checked when read
  }

  uint64_t total_array_elems = 0;

 private:
  // Integers of every width: unsigned ones (and bool) land in u64, signed ones sign-extended in i64.
  Status integer(ValueType t, Value* out, FieldPath& path) {
    const auto n = static_cast<unsigned>(scalar_bytes(t));
    uint64_t v = 0;
    if (!cur_.uint(n, &v)) return truncated(path.str(), n);
    if (t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 || t == ValueType::kI64) {
      const unsigned shift = 64 - 8 * n;  // arithmetic right shift of a negative value is defined in C++20
      out->i64 = static_cast<int64_t>(v << shift) >> shift;
    } else {
      out->u64 = v;
    }
    if (t == ValueType::kBool && v > 1) {
      return fail(path.str(), "expected a bool (0 or 1), got " + std::to_string(v));
    }
    return {};
  }

  Status array(Value* out, FieldPath& path, uint32_t depth) {
    const uint32_t max_depth = std::min(limits_.max_array_depth, kHardMaxArrayDepth);
    if (depth > max_depth) {
      return fail(path.str(), "arrays nested " + std::to_string(depth) + " deep, expected at most " +
                                  std::to_string(max_depth));
    }
    QC_ASSIGN(out->elem_type, value_type(path, "array element type"));
    QC_ASSIGN(const uint64_t n, u64([&] { return path.str() + " array length"; }));
    if (n > limits_.max_array_elems) {
      return fail(path.str(), "array length " + std::to_string(n) + " exceeds the limit of " +
                                  std::to_string(limits_.max_array_elems) + " elements");
    }
    if (n > limits_.max_total_array_elems - std::min(total_array_elems, limits_.max_total_array_elems)) {
      return fail(path.str(), "array length " + std::to_string(n) +
                                  " brings the file's array elements past the limit of " +
                                  std::to_string(limits_.max_total_array_elems));
    }
    const uint64_t min_bytes = min_elem_bytes(out->elem_type);
    if (n > cur_.left() / min_bytes) {
      return fail(path.str(), "array of " + std::to_string(n) + " " +
                                  std::string(value_type_name(out->elem_type)) + " needs at least " +
                                  std::to_string(n) + " x " + std::to_string(min_bytes) +
                                  " bytes, the file has " + std::to_string(cur_.left()) + " left at offset " +
                                  std::to_string(cur_.pos()));
    }
    total_array_elems += n;
    out->array.resize(n);
    path.index.push_back(0);
    for (uint64_t i = 0; i < n; ++i) {
      path.index.back() = i;
      QC_TRY(value(out->elem_type, &out->array[i], path, depth));
    }
    path.index.pop_back();
    return {};
  }

  const std::string& file_;
  Cursor cur_;
  uint64_t size_;
  const ReaderLimits& limits_;
};

Status check_version(const std::string& file, uint32_t v) {
  if (v == 2 || v == 3) return {};
  const std::string got = "expected version 2 or 3, got " + std::to_string(v);
  if (v == 1) {
    return make_error(file + ": header version: " + got + " (GGUF v1 is not supported; supported: 2, 3)",
                      "convert the model again with a current llama.cpp converter");
  }
  if (v == 0x02000000u || v == 0x03000000u) {
    return make_error(
        file + ": header version: " + got + " (a byte-swapped 2 or 3: big-endian GGUF is not supported)",
        "use a little-endian GGUF file");
  }
  return make_error(file + ": header version: " + got + " (supported: 2, 3)");
}

std::string tensor_field(uint64_t index, std::string_view name) {
  return "tensor " + printable(name) + " (#" + std::to_string(index) + ")";
}

// "Q6_K [256,8]": the declared type and shape the byte size was derived from (a wrong type id in an
// otherwise good file shows up as a size that no longer fits, so the message names both).
std::string type_and_shape(const TensorInfo& t) {
  std::string s = type_label(t.type) + " [";
  for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? "," : "") + std::to_string(t.ne[d]);
  return s + "]";
}

}  // namespace

Result<std::unique_ptr<File>> File::open(const std::string& path, const ReaderLimits& limits) {
  QC_ASSIGN(MappedBytes bytes, MappedBytes::map(path, "a GGUF file"));
  return adopt(std::move(bytes), path, limits);
}

Result<std::unique_ptr<File>> File::from_bytes(std::span<const uint8_t> bytes, std::string name,
                                               const ReaderLimits& limits) {
  return adopt(MappedBytes::copy(bytes), std::move(name), limits);
}

Result<std::unique_ptr<File>> File::adopt(MappedBytes bytes, std::string name, const ReaderLimits& limits) {
  std::unique_ptr<File> f(new File());
  f->path_ = std::move(name);
  f->bytes_ = std::move(bytes);
  QC_TRY(f->parse(limits));
  return f;
}

const Value* File::find(std::string_view key) const {
  const auto it = kv_index_.find(std::string(key));
  return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Status File::parse(const ReaderLimits& limits) {
  const uint8_t* base = bytes_.data();
  const uint64_t size = bytes_.size();
  Parser p(path_, base, size, limits);
  const std::string& file = path_;

  // ---- header ----
  if (size >= 4 && std::memcmp(base, "GGUF", 4) != 0) {
    return make_error(file + ": header magic: expected \"GGUF\" (47 47 55 46), got " + hex4(base),
                      "not a GGUF file");
  }
  if (size < kHeaderBytes) {
    return make_error(file + ": header: truncated: the file is " + std::to_string(size) +
                      " bytes, a GGUF header needs " + std::to_string(kHeaderBytes));
  }
  // The header's 24 bytes are present: these reads cannot fail.
  uint32_t magic = 0;
  p.cur().u32(&magic);
  p.cur().u32(&version_);
  QC_TRY(check_version(file, version_));
  uint64_t n_tensors = 0, n_kv = 0;
  p.cur().u64(&n_tensors);
  p.cur().u64(&n_kv);
  if (n_tensors > limits.max_tensors) {
    return p.fail("header tensor_count", "expected at most " + std::to_string(limits.max_tensors) + ", got " +
                                             std::to_string(n_tensors));
  }
  if (n_kv > limits.max_kv) {
    return p.fail("header kv_count",
                  "expected at most " + std::to_string(limits.max_kv) + ", got " + std::to_string(n_kv));
  }
  // Both counts are at most 2^64 / 64 under sane limits, but the limits are the caller's: check overflow.
  uint64_t need_kv = 0, need_tensors = 0, need = 0;
  const bool overflow = __builtin_mul_overflow(n_kv, kMinKvBytes, &need_kv) ||
                        __builtin_mul_overflow(n_tensors, kMinTensorBytes, &need_tensors) ||
                        __builtin_add_overflow(need_kv, need_tensors, &need);
  if (overflow || need > p.cur().left()) {
    return p.fail("header", "kv_count " + std::to_string(n_kv) + " and tensor_count " +
                                std::to_string(n_tensors) + " need at least " +
                                (overflow ? std::string("2^64") : std::to_string(need)) +
                                " bytes, the file has " + std::to_string(p.cur().left()) +
                                " after the header (truncated file or corrupt counts)");
  }

  // ---- metadata ----
  kv_.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string entry = "metadata #" + std::to_string(i);
    KeyValue kv;
    QC_ASSIGN(kv.key, p.string(entry + " key"));
    if (kv.key.empty()) return p.fail(entry + " key", "expected a non-empty key, got an empty string");
    FieldPath path{"metadata " + printable(kv.key), {}};
    QC_ASSIGN(const ValueType t, p.value_type(path, "value type"));
    QC_TRY(p.value(t, &kv.value, path, 0));
    const auto [it, inserted] = kv_index_.emplace(kv.key, kv_.size());
    if (!inserted) {
      return p.fail(path.base, "duplicate key (entries #" + std::to_string(it->second) + " and #" +
                                   std::to_string(i) + "), expected each key once");
    }
    kv_.push_back(std::move(kv));
  }

  // general.alignment: ggml reads it as u32 and needs a power of two (offsets are padded to it).
  if (const Value* a = find("general.alignment")) {
    if (a->type != ValueType::kU32) {
      return p.fail("metadata general.alignment", "expected u32, got " + a->describe_type());
    }
    if (a->u64 == 0 || (a->u64 & (a->u64 - 1)) != 0) {
      return p.fail("metadata general.alignment",
                    "expected a non-zero power of two, got " + std::to_string(a->u64));
    }
    alignment_ = a->u64;
  }

  // ---- tensor table ----
  if (n_tensors > p.cur().left() / kMinTensorBytes) {
    return p.fail("header tensor_count", "expected at most " +
                                             std::to_string(p.cur().left() / kMinTensorBytes) +
                                             " tensor entries in the " + std::to_string(p.cur().left()) +
                                             " bytes after the metadata, got " + std::to_string(n_tensors));
  }
  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    QC_ASSIGN(t.name, p.string("tensor #" + std::to_string(i) + " name"));
    if (t.name.empty()) return p.fail("tensor #" + std::to_string(i) + " name", "expected a non-empty name");
    const std::string field = tensor_field(i, t.name);
    QC_ASSIGN(t.n_dims, p.u32(field + " n_dims"));
    if (t.n_dims < 1 || t.n_dims > static_cast<uint32_t>(kMaxDims)) {
      return p.fail(
          field, "expected n_dims in 1.." + std::to_string(kMaxDims) + ", got " + std::to_string(t.n_dims));
    }
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      QC_ASSIGN(t.ne[d], p.u64(field + " ne[" + std::to_string(d) + "]"));
    }
    QC_ASSIGN(t.type, p.u32(field + " type"));
    QC_ASSIGN(t.offset, p.u64(field + " offset"));
    const std::string bad = check_tensor_shape(t.type, t.ne, t.n_dims, &t.nbytes);
    if (!bad.empty()) return p.fail(field, bad);
    if (t.offset % alignment_ != 0) {
      return p.fail(field, "expected an offset that is a multiple of the alignment " +
                               std::to_string(alignment_) + ", got " + std::to_string(t.offset));
    }
    const auto [it, inserted] = tensor_index_.emplace(t.name, tensors_.size());
    if (!inserted) {
      return p.fail(field, "duplicate tensor name (also tensor #" + std::to_string(it->second) +
                               "), expected each name once");
    }
    tensors_.push_back(std::move(t));
  }

  // ---- data section ----
  const uint64_t table_end = p.cur().pos();
  data_offset_ = table_end + (alignment_ - table_end % alignment_) % alignment_;
  if (data_offset_ < table_end) return p.fail("data section", "offset overflows");  // alignment near 2^32
  if (!tensors_.empty() && data_offset_ > size) {
    return p.fail("data section", "truncated: expected the data to start at offset " +
                                      std::to_string(data_offset_) + " (padded to " +
                                      std::to_string(alignment_) + "), the file is " + std::to_string(size) +
                                      " bytes");
  }
  const uint64_t data_bytes = tensors_.empty() ? 0 : size - data_offset_;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorInfo& t = tensors_[i];
    if (t.offset > data_bytes || t.nbytes > data_bytes - t.offset) {
      return p.fail(tensor_field(i, t.name),
                    "expected data [" + std::to_string(t.offset) + ", " + std::to_string(t.offset) + " + " +
                        std::to_string(t.nbytes) + ") inside the data section of " +
                        std::to_string(data_bytes) +
                        " bytes, it runs past the end of the file (truncated?; " + std::to_string(t.nbytes) +
                        " bytes is the size of " + type_and_shape(t) + ")");
    }
  }
  // Overlaps: sort by offset and compare neighbours. Empty tensors occupy no bytes and never overlap.
  std::vector<size_t> order;
  order.reserve(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].nbytes > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = tensors_[order[k - 1]];
    const TensorInfo& cur = tensors_[order[k]];
    if (prev.offset + prev.nbytes > cur.offset) {
      return p.fail(tensor_field(order[k], cur.name),
                    "data [" + std::to_string(cur.offset) + ", " + std::to_string(cur.offset + cur.nbytes) +
                        ") overlaps " + tensor_field(order[k - 1], prev.name) + " at [" +
                        std::to_string(prev.offset) + ", " + std::to_string(prev.offset + prev.nbytes) +
                        "), expected disjoint tensors (sizes from the declared types: " +
                        type_and_shape(cur) + ", " + type_and_shape(prev) + ")");
    }
  }
  return {};
}

}  // namespace qc::gguf
