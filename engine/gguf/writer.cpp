// GGUF v3 writer. The header is serialised into memory first (it is small: metadata plus one entry per
// tensor), so every value is validated before a byte reaches the disk; tensor bytes then stream straight
// through stdio. Tensor offsets are fixed at add_tensor() time from the declared shapes.
#include "gguf/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "gguf/reader.h"

namespace qc::gguf {

namespace {

constexpr uint32_t kWriteVersion = 3;

uint64_t align_up(uint64_t x, uint64_t a) {
  return x + (a - x % a) % a;
}

class HeaderBuffer {
 public:
  std::vector<uint8_t> bytes;

  void uint(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u32(uint32_t v) { uint(v, 4); }
  void u64(uint64_t v) { uint(v, 8); }
  void string(std::string_view s) {
    u64(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }

  // Names the value being serialised in errors: `field` plus the array indices on the way down. The name is
  // built only on an error (a vocabulary has 250k elements).
  std::string field;
  std::string name() const {
    std::string s = field;
    for (size_t i : index_) s += "[" + std::to_string(i) + "]";
    return s;
  }

  // Serialises v, checking that it can be represented as its declared type.
  Status value(const Value& v, uint32_t depth) {
    switch (v.type) {
      case ValueType::kU8:
        return unsigned_value(v, 1, UINT8_MAX);
      case ValueType::kU16:
        return unsigned_value(v, 2, UINT16_MAX);
      case ValueType::kU32:
        return unsigned_value(v, 4, UINT32_MAX);
      case ValueType::kU64:
        return unsigned_value(v, 8, UINT64_MAX);
      case ValueType::kBool:
        return unsigned_value(v, 1, 1);
      case ValueType::kI8:
        return signed_value(v, 1, INT8_MIN, INT8_MAX);
      case ValueType::kI16:
        return signed_value(v, 2, INT16_MIN, INT16_MAX);
      case ValueType::kI32:
        return signed_value(v, 4, INT32_MIN, INT32_MAX);
      case ValueType::kI64:
        return signed_value(v, 8, INT64_MIN, INT64_MAX);
      case ValueType::kF32: {
        const float f = static_cast<float>(v.f64);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        u32(bits);
        return {};
      }
      case ValueType::kF64: {
        uint64_t bits;
        std::memcpy(&bits, &v.f64, 8);
        u64(bits);
        return {};
      }
      case ValueType::kString:
        string(v.str);
        return {};
      case ValueType::kArray:
        return array(v, depth + 1);
    }
    return make_error(name() + ": unknown value type " + std::to_string(static_cast<uint32_t>(v.type)));
  }

 private:
  Status unsigned_value(const Value& v, unsigned n, uint64_t max) {
    if (v.u64 > max) {
      return make_error(name() + ": expected a " + std::string(value_type_name(v.type)) + " value at most " +
                        std::to_string(max) + ", got " + std::to_string(v.u64));
    }
    uint(v.u64, n);
    return {};
  }
  Status signed_value(const Value& v, unsigned n, int64_t min, int64_t max) {
    if (v.i64 < min || v.i64 > max) {
      return make_error(name() + ": expected a " + std::string(value_type_name(v.type)) + " value in [" +
                        std::to_string(min) + ", " + std::to_string(max) + "], got " + std::to_string(v.i64));
    }
    uint(static_cast<uint64_t>(v.i64), n);
    return {};
  }
  Status array(const Value& v, uint32_t depth) {
    // Never write what the reader refuses with its default limits.
    const ReaderLimits limits;
    if (depth > limits.max_array_depth) {
      return make_error(name() + ": arrays nested " + std::to_string(depth) + " deep, expected at most " +
                        std::to_string(limits.max_array_depth));
    }
    if (static_cast<uint32_t>(v.elem_type) > static_cast<uint32_t>(ValueType::kF64)) {
      return make_error(name() + ": unknown array element type " +
                        std::to_string(static_cast<uint32_t>(v.elem_type)));
    }
    u32(static_cast<uint32_t>(v.elem_type));
    u64(v.array.size());
    index_.push_back(0);
    for (size_t i = 0; i < v.array.size(); ++i) {
      index_.back() = i;
      if (v.array[i].type != v.elem_type) {
        return make_error(name() + ": expected an element of the array's type " +
                          std::string(value_type_name(v.elem_type)) + ", got " +
                          std::string(value_type_name(v.array[i].type)));
      }
      QC_TRY(value(v.array[i], depth));
    }
    index_.pop_back();
    return {};
  }

  std::vector<size_t> index_;
};

}  // namespace

Writer::~Writer() {
  abandon();
}

void Writer::abandon() {
  if (f_) {
    std::fclose(f_);
    f_ = nullptr;
    std::remove(partial_path_.c_str());
  }
}

Error Writer::io_error(const std::string& what, int err) {
  abandon();
  return make_error(partial_path_ + ": " + what + ": " + std::system_category().message(err),
                    err == ENOSPC   ? "the disk is full; free space and convert again"
                    : err == EACCES ? "check that the folder is writable"
                                    : "");
}

Status Writer::check_alignment() const {
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0 || alignment_ > (1ull << 31)) {
    return make_error("gguf writer: alignment: expected a power of two between 1 and 2^31, got " +
                      std::to_string(alignment_));
  }
  return {};
}

void Writer::set(std::string key, Value value) {
  if (f_ && late_key_.empty()) late_key_ = key;
  for (KeyValue& kv : kv_) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  kv_.push_back(KeyValue{std::move(key), std::move(value)});
}

Status Writer::add_tensor(std::string name, uint32_t type, std::vector<uint64_t> shape) {
  const std::string field = "gguf writer: tensor " + name;
  if (f_ || !path_.empty()) return make_error(field + ": add_tensor() after begin(), expected it before");
  QC_TRY(check_alignment());
  if (name.empty())
    return make_error("gguf writer: tensor #" + std::to_string(tensors_.size()) + ": empty name");
  for (const TensorInfo& t : tensors_) {
    if (t.name == name) return make_error(field + ": duplicate tensor name, expected each name once");
  }
  TensorInfo t;
  t.name = std::move(name);
  t.type = type;
  t.n_dims = static_cast<uint32_t>(shape.size());
  if (shape.empty() || shape.size() > static_cast<size_t>(kMaxDims)) {
    return make_error(field + ": expected 1.." + std::to_string(kMaxDims) + " dimensions, got " +
                      std::to_string(shape.size()));
  }
  for (size_t d = 0; d < shape.size(); ++d) t.ne[d] = shape[d];
  const std::string bad = check_tensor_shape(type, t.ne, t.n_dims, &t.nbytes);
  if (!bad.empty()) return make_error(field + ": " + bad);
  if (!tensors_.empty()) {
    const TensorInfo& prev = tensors_.back();
    uint64_t end = 0;
    if (__builtin_add_overflow(prev.offset, prev.nbytes, &end) || end > UINT64_MAX - alignment_) {
      return make_error(field + ": data section offset overflows 64 bits");
    }
    t.offset = align_up(end, alignment_);
  }
  tensors_.push_back(std::move(t));
  return {};
}

Status Writer::put(const void* data, size_t n) {
  if (n == 0) return {};
  if (std::fwrite(data, 1, n, f_) != n) {
    return io_error("write failed after " + std::to_string(written_) + " bytes", errno);
  }
  written_ += n;
  return {};
}

Status Writer::pad_to(uint64_t pos) {
  static constexpr uint8_t kZeros[64] = {};
  while (written_ < pos) {
    const uint64_t n = std::min<uint64_t>(pos - written_, sizeof(kZeros));
    QC_TRY(put(kZeros, static_cast<size_t>(n)));
  }
  return {};
}

Status Writer::begin(const std::string& path) {
  if (f_ || !path_.empty()) return make_error(path + ": gguf writer: begin() called twice");
  QC_TRY(check_alignment());

  // A non-default alignment must be in the file for readers to find the data; a caller-set key must agree.
  if (const auto it = std::find_if(kv_.begin(), kv_.end(),
                                   [](const KeyValue& kv) { return kv.key == "general.alignment"; });
      it != kv_.end()) {
    if (it->value.type != ValueType::kU32 || it->value.u64 != alignment_) {
      return make_error(path + ": metadata general.alignment: expected u32 " + std::to_string(alignment_) +
                        " (the writer's alignment), got " + it->value.describe_type());
    }
  } else if (alignment_ != kDefaultAlignment) {
    kv_.push_back(KeyValue{"general.alignment", Value::of_u32(static_cast<uint32_t>(alignment_))});
  }

  HeaderBuffer h;
  h.u32(kMagic);  // "GGUF" in file order
  h.u32(kWriteVersion);
  h.u64(tensors_.size());
  h.u64(kv_.size());
  for (const KeyValue& kv : kv_) {
    if (kv.key.empty()) return make_error(path + ": metadata: expected a non-empty key");
    h.string(kv.key);
    h.u32(static_cast<uint32_t>(kv.value.type));
    h.field = path + ": metadata " + kv.key;
    QC_TRY(h.value(kv.value, 0));
  }
  for (const TensorInfo& t : tensors_) {
    h.string(t.name);
    h.u32(t.n_dims);
    for (uint32_t d = 0; d < t.n_dims; ++d) h.u64(t.ne[d]);
    h.u32(t.type);
    h.u64(t.offset);
  }

  path_ = path;
  partial_path_ = path + ".partial";
  f_ = std::fopen(partial_path_.c_str(), "wb");
  if (!f_) {
    const int e = errno;
    return make_error(partial_path_ + ": cannot create: " + std::system_category().message(e),
                      "check that the folder exists and is writable");
  }
  written_ = 0;
  QC_TRY(put(h.bytes.data(), h.bytes.size()));
  QC_TRY(pad_to(align_up(written_, alignment_)));
  data_start_ = written_;
  next_tensor_ = 0;
  return {};
}

Status Writer::write_tensor(std::string_view name, std::span<const uint8_t> bytes) {
  if (!f_)
    return make_error("gguf writer: tensor " + std::string(name) +
                      ": write_tensor() without an open file (begin() missing or an earlier failure)");
  if (!late_key_.empty())
    return make_error(partial_path_ + ": metadata " + late_key_ +
                      ": set() after begin(), expected it before");
  if (next_tensor_ >= tensors_.size()) {
    return make_error(partial_path_ + ": tensor " + std::string(name) + ": all " +
                      std::to_string(tensors_.size()) + " declared tensors are already written");
  }
  const TensorInfo& t = tensors_[next_tensor_];
  if (name != t.name) {
    return make_error(partial_path_ + ": tensor " + std::string(name) + ": expected tensor " + t.name +
                      " next (declaration order)");
  }
  if (bytes.size() != t.nbytes) {
    return make_error(partial_path_ + ": tensor " + t.name + ": expected " + std::to_string(t.nbytes) +
                      " bytes (" + type_label(t.type) + "), got " + std::to_string(bytes.size()));
  }
  QC_TRY(pad_to(data_start_ + t.offset));
  QC_TRY(put(bytes.data(), bytes.size()));
  ++next_tensor_;
  return {};
}

Status Writer::finish() {
  if (!f_)
    return make_error(path_ +
                      ": gguf writer: finish() without an open file (begin() missing or an earlier failure)");
  if (!late_key_.empty())
    return make_error(partial_path_ + ": metadata " + late_key_ +
                      ": set() after begin(), expected it before");
  if (next_tensor_ != tensors_.size()) {
    return make_error(partial_path_ + ": expected " + std::to_string(tensors_.size()) + " tensors, " +
                      std::to_string(next_tensor_) + " written (next: " + tensors_[next_tensor_].name + ")");
  }
  QC_TRY(pad_to(align_up(written_, alignment_)));  // ggml pads after the last tensor too
  if (std::fflush(f_) != 0)
    return io_error("flush failed after " + std::to_string(written_) + " bytes", errno);
  // fsync before rename: otherwise a crash can leave the final name pointing at unwritten blocks.
  if (::fsync(::fileno(f_)) != 0) return io_error("fsync failed", errno);
  const int closed = std::fclose(f_);
  f_ = nullptr;
  if (closed != 0) {
    const int e = errno;
    std::remove(partial_path_.c_str());
    return make_error(partial_path_ + ": close failed: " + std::system_category().message(e));
  }
  if (std::rename(partial_path_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    std::remove(partial_path_.c_str());
    return make_error(path_ + ": cannot rename " + partial_path_ +
                      " to it: " + std::system_category().message(e));
  }
  // Make the rename itself durable. Best effort: the data is already safe, and some filesystems refuse
  // fsync on a directory.
  const size_t slash = path_.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

Status Writer::write_all(const std::string& path, const std::vector<std::vector<uint8_t>>& data) {
  if (data.size() != tensors_.size()) {
    return make_error(path + ": gguf writer: expected data for " + std::to_string(tensors_.size()) +
                      " declared tensors, got " + std::to_string(data.size()));
  }
  QC_TRY(begin(path));
  for (size_t i = 0; i < data.size(); ++i) QC_TRY(write_tensor(tensors_[i].name, data[i]));
  return finish();
}

}  // namespace qc::gguf
