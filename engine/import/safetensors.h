// Safetensors reader (Hugging Face checkpoints). Layout: 8-byte little-endian header length N, N bytes of
// JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}}), then
// the data section; offsets are relative to its start. Validated as strictly as the reference (Rust)
// implementation and our GGUF reader: header length vs file size, well-formed JSON without duplicate names,
// known dtypes, shapes whose byte size (dtype size x product of dims) fits 64 bits and equals end - begin,
// offsets inside the data section, tensors contiguous and covering it exactly (no overlap, no hole). Every
// error names the file, the tensor and what was expected. The data is mapped, never copied.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/quant.h"
#include "qwenchat/result.h"
#include "util/mapped_bytes.h"

namespace qc::st {

// Every dtype the format defines, so the layout of a file holding any of them can be validated; the
// converter reads only F32, F16 and BF16 and refuses the others by name when a tensor it needs has one.
enum class Dtype : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF64,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kBool,
  kF8_E4M3,
  kF8_E5M2,
  kF8_E8M0,
  kF6_E2M3,
  kF6_E3M2,
  kF4,
  kC64,
};
std::string_view dtype_name(Dtype d);  // "BF16"
// Bits per element (4 and 6 for the sub-byte float formats, 128 for C64 pairs).
uint32_t dtype_bits(Dtype d);
// F32/F16/BF16 as the engine's DType; false for the rest.
bool to_engine_dtype(Dtype d, DType* out);

struct Tensor {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;  // outermost first (PyTorch order): a Linear weight is [out, in]
  uint64_t begin = 0;           // byte offsets relative to the data section
  uint64_t end = 0;
  uint64_t n_elements() const;
  uint64_t nbytes() const { return end - begin; }
  std::string shape_str() const;  // "[6144, 5120]"
};

// Limits against hostile headers; the defaults are the reference implementation's.
struct Limits {
  uint64_t max_header_bytes = 100'000'000;
  uint32_t max_rank = 8;
};

class File {
 public:
  static Result<std::unique_ptr<File>> open(const std::string& path, const Limits& limits = {});
  // Validates an in-memory image (tests, fuzzing); the bytes are copied. `name` is used in messages.
  static Result<std::unique_ptr<File>> from_bytes(std::span<const uint8_t> bytes, std::string name,
                                                  const Limits& limits = {});
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }  // in data order
  const Tensor* find(std::string_view name) const;                 // nullptr when absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The tensor's bytes inside the mapping (valid while the File lives). Not aligned in general.
  std::span<const uint8_t> data(const Tensor& t) const {
    return {bytes_.data() + data_start_ + t.begin, static_cast<size_t>(t.nbytes())};
  }

 private:
  File() = default;
  static Result<std::unique_ptr<File>> adopt(MappedBytes bytes, std::string name, const Limits& limits);
  Status parse(const Limits& limits);

  std::string path_;
  MappedBytes bytes_;  // the mapped file, or the copy from_bytes made
  uint64_t data_start_ = 0;
  std::vector<Tensor> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace qc::st
