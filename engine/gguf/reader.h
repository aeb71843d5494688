// GGUF reader: maps a file (or takes a byte buffer), validates every field before use, and exposes the
// metadata and the tensor table. Nothing is trusted: counts, string and array lengths, tensor dims,
// offsets, sizes, alignment and duplicate names are all checked, and each failure names the file, the
// field and what was expected. The tensor data is not copied: views point into the mapping, which lives as
// long as the File.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/types.h"
#include "qwenchat/result.h"
#include "util/mapped_bytes.h"

namespace qc::gguf {

// Limits that keep a hostile header from making us allocate unbounded memory before the data is seen.
struct ReaderLimits {
  uint64_t max_string_bytes = 1ull << 26;  // one string: 64 MiB (chat templates are a few KiB)
  uint64_t max_array_elems = 1ull << 27;   // one array: 134M elements (a 256k vocabulary is far below)
  uint32_t max_array_depth = 8;            // nested arrays
  uint64_t max_kv = 1ull << 20;            // metadata entries
  uint64_t max_tensors = 1ull << 20;       // tensor table entries
  // Elements of all arrays together (nested ones included). Each costs sizeof(Value) (~100 bytes) in
  // memory but as little as 1 byte in the file, so this caps memory at ~1.7 GB whatever the file says;
  // a 256k vocabulary with scores, types and merges is about 1M elements.
  uint64_t max_total_array_elems = 1ull << 24;
};

class File {
 public:
  // Maps and validates `path`. The error names the file.
  static Result<std::unique_ptr<File>> open(const std::string& path, const ReaderLimits& limits = {});
  // Validates an in-memory image (tests, fuzzing). `name` is used in messages. The bytes are copied.
  static Result<std::unique_ptr<File>> from_bytes(std::span<const uint8_t> bytes, std::string name,
                                                  const ReaderLimits& limits = {});
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t file_size() const { return bytes_.size(); }
  uint64_t data_offset() const { return data_offset_; }  // start of the tensor data section

  const std::vector<KeyValue>& metadata() const { return kv_; }
  const Value* find(std::string_view key) const;  // nullptr when absent

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;  // nullptr when absent
  // Pointer to the first byte of a tensor's data (inside the mapping).
  const uint8_t* tensor_data(const TensorInfo& t) const { return bytes_.data() + data_offset_ + t.offset; }

  // Typed metadata access with errors that name the key and the expected type.
  Result<uint32_t> get_u32(std::string_view key) const;  // any non-negative integer that fits
  Result<float> get_f32(std::string_view key) const;     // any number
  Result<std::string> get_string(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::vector<std::string>> get_strings(std::string_view key) const;
  Result<std::vector<int64_t>> get_ints(std::string_view key) const;  // array of integers (or bools)
  Result<std::vector<float>> get_floats(std::string_view key) const;  // array of numbers

 private:
  File() = default;
  static Result<std::unique_ptr<File>> adopt(MappedBytes bytes, std::string name, const ReaderLimits& limits);
  Status parse(const ReaderLimits& limits);

  std::string path_;
  MappedBytes bytes_;  // the mapped file, or the copy from_bytes made
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kv_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace qc::gguf
