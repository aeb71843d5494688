// A loaded model: the mapped file, its config and typed weight views. An object, not a global: it can be
// destroyed and replaced at run time (the GUI loads another file while the app keeps running).
#pragma once

#include <memory>
#include <string>

#include "gguf/reader.h"
#include "model/config.h"
#include "model/weights.h"
#include "qwenchat/result.h"

namespace qc {

class Model {
 public:
  // Opens, validates and binds every tensor. Errors name the file, the tensor, expected and actual.
  static Result<std::unique_ptr<Model>> load(const std::string& path);
  static Result<std::unique_ptr<Model>> from_file(std::unique_ptr<gguf::File> file);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::File& file() const { return *file_; }
  // Bytes of every weight a decoded token reads (all but the embedding table; lm_head counted once even
  // when tied). The number throughput figures are divided into.
  uint64_t bytes_per_token() const;

 private:
  Model() = default;
  std::unique_ptr<gguf::File> file_;
  ModelConfig config_;
  ModelWeights weights_;
};

}  // namespace qc
