// Hugging Face Qwen3.5 checkpoint folder -> qwen35 GGUF (llama.cpp layout), streamed: every tensor is
// declared from the safetensors headers first, then each is read from the mapped shard, transformed,
// encoded and written before the next one is touched, so memory holds one output tensor at a time (the
// largest, the 27B embedding table, is 1.35 GB in Q8_0). The output is written to OUT.partial and renamed
// at the end; any failure (a full disk included) removes the partial file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "import/qwen35_import.h"
#include "qwenchat/result.h"

namespace qc {

struct ConvertProgress {
  size_t done = 0;  // tensors written
  size_t total = 0;
  std::string tensor;       // the one just written
  uint64_t bytes_done = 0;  // tensor bytes written so far
  uint64_t bytes_total = 0;
};

struct ConvertOptions {
  std::string input_dir;
  std::string out_path;
  ImportOptions import;                                  // type mix, MTP, unknown-tensor policy
  int n_threads = 0;  // threads encoding each tensor's rows, 0: default_writer_threads(); same bytes for any
  std::string name;                                      // general.name; default: the folder's name
  std::function<void(const ConvertProgress&)> progress;  // may be empty
  std::function<void(const std::string&)> notice;  // one line per decision worth reporting; may be empty
};

struct ConvertSummary {
  ModelShape shape;
  size_t n_tensors = 0;
  uint64_t tensor_bytes = 0;
  size_t n_tokens = 0;          // tokenizer entries written (padding included)
  std::string template_source;  // where the chat template came from, "" = none
};

Result<ConvertSummary> convert_hf_checkpoint(const ConvertOptions& options);

}  // namespace qc
