// GGUF writer (v3). Streams: the header (metadata and tensor table) is written first from declared shapes,
// then each tensor's bytes in declaration order, so a converter never holds more than one tensor. Writes to
// `path + ".partial"` and renames on finish(), so a full disk or a crash never leaves a truncated file under
// the final name.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "gguf/types.h"
#include "qwenchat/result.h"

namespace qc::gguf {

class Writer {
 public:
  explicit Writer(uint64_t alignment = kDefaultAlignment) : alignment_(alignment) {}
  ~Writer();  // removes an unfinished .partial file
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void set(std::string key, Value value);  // replaces an existing key, keeps insertion order
  // Declares a tensor; shape is innermost first ({in, out} for a weight). Error on a duplicate name,
  // a bad type, or a row length that is not a multiple of the type's block.
  Status add_tensor(std::string name, uint32_t type, std::vector<uint64_t> shape);

  Status begin(const std::string& path);  // writes header + table
  // Writes the next declared tensor's bytes; `bytes.size()` must equal its nbytes. Tensors come in order.
  Status write_tensor(std::string_view name, std::span<const uint8_t> bytes);
  Status finish();  // pads, flushes, fsyncs, renames

  // Convenience for small files: begin + every tensor from `data` (same order as declared) + finish.
  Status write_all(const std::string& path, const std::vector<std::vector<uint8_t>>& data);

  const std::vector<TensorInfo>& tensors() const { return tensors_; }

 private:
  uint64_t alignment_;
  std::vector<KeyValue> kv_;
  std::vector<TensorInfo> tensors_;
  size_t next_tensor_ = 0;
  std::FILE* f_ = nullptr;
  std::string path_, partial_path_;
  uint64_t written_ = 0;  // bytes written so far (for padding)
};

}  // namespace qc::gguf
