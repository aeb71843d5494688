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

  // Replaces an existing key, keeps insertion order. Values are checked in begin() (element types of an
  // array, integer ranges, bool 0/1, nesting depth). Must come before begin(); a later call makes
  // write_tensor()/finish() fail.
  void set(std::string key, Value value);
  // Declares a tensor; shape is innermost first ({in, out} for a weight). Error on a duplicate name,
  // a bad type, or a row length that is not a multiple of the type's block.
  Status add_tensor(std::string name, uint32_t type, std::vector<uint64_t> shape);

  // Writes header + table to `path + ".partial"`. A non-default alignment is stored as general.alignment
  // (u32); a general.alignment set by the caller must agree with the constructor's.
  Status begin(const std::string& path);
  // Writes the next declared tensor's bytes; `bytes.size()` must equal its nbytes. Tensors come in order.
  Status write_tensor(std::string_view name, std::span<const uint8_t> bytes);
  // Pads, flushes, fsyncs, renames. Any I/O failure (here or in write_tensor) removes the partial file.
  Status finish();

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
  uint64_t written_ = 0;     // bytes written so far (for padding)
  uint64_t data_start_ = 0;  // file offset of the data section (a multiple of the alignment)
  std::string late_key_;     // first key set() after begin(), reported by write_tensor()/finish()

  Status check_alignment() const;
  Status put(const void* data, size_t n);  // fwrite; on failure removes the partial file
  Status pad_to(uint64_t pos);
  Error io_error(const std::string& what, int err);  // closes and removes the partial file
  void abandon();
};

}  // namespace qc::gguf
