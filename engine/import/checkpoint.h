// A Hugging Face checkpoint folder's weights: one `model.safetensors`, or shards listed by
// `model.safetensors.index.json` ({"weight_map": {tensor: file}}). Every shard is mapped (not read), so a
// 27B checkpoint costs address space, not memory; pages are read as tensors are converted.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/safetensors.h"
#include "qwenchat/result.h"

namespace qc {

struct CheckpointTensor {
  const st::File* file = nullptr;
  const st::Tensor* tensor = nullptr;
};

class Checkpoint {
 public:
  // Opens `dir`: the index when present (every file it names must exist and hold the tensors mapped to
  // it; file names must be plain names inside the folder), else model.safetensors. A tensor stored in two
  // shards is an error.
  static Result<std::unique_ptr<Checkpoint>> open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // nullptr when the checkpoint has no such tensor.
  const CheckpointTensor* find(std::string_view name) const;
  // Every tensor name, sorted.
  std::vector<std::string> names() const;
  size_t n_files() const { return files_.size(); }

  // The tensor's values as f32 (F32, F16 and BF16 are read exactly; other dtypes are refused with the
  // tensor's name). Used by tests and for small tensors; the converter reads rows in place.
  Result<std::vector<float>> read_f32(std::string_view name) const;

 private:
  Checkpoint() = default;
  Status add_file(const std::string& file_name);

  std::string dir_;
  std::vector<std::unique_ptr<st::File>> files_;
  std::unordered_map<std::string, CheckpointTensor> tensors_;
};

// The tensor's dtype as the engine's DType; an error naming the file, tensor and dtype otherwise.
Result<DType> checkpoint_dtype(const CheckpointTensor& t);

}  // namespace qc
