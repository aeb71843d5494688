// The bytes of a model file, read-only: a private mapping of a regular file, or an owned copy of a buffer
// (tests and fuzzers, where ASan then sees a read one byte past the end). The GGUF reader and the
// safetensors reader both parse over one; neither ever writes the bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "qwenchat/result.h"

namespace qc {

class MappedBytes {
 public:
  // Maps `path`. Errors name the path and the reason; `expected` completes "is a directory, expected ..."
  // ("a GGUF file"). A FIFO or device is refused before it is read (opened O_NONBLOCK, so it cannot hang).
  static Result<MappedBytes> map(const std::string& path, const std::string& expected);
  static MappedBytes copy(std::span<const uint8_t> bytes);

  MappedBytes() = default;
  MappedBytes(MappedBytes&& o) noexcept;
  MappedBytes& operator=(MappedBytes&& o) noexcept;
  MappedBytes(const MappedBytes&) = delete;
  MappedBytes& operator=(const MappedBytes&) = delete;
  ~MappedBytes();

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  void release();

  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  void* map_ = nullptr;         // the mapping when mapped from a file (munmap on release)
  std::vector<uint8_t> owned_;  // the copy when built from a buffer
};

}  // namespace qc
