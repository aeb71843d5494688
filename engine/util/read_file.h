// Whole-file reads for the small text and proto files the engine parses (config.json, tokenizer.json,
// tokenizer_config.json, a SentencePiece .model, a checkpoint index). Model weights are never read this
// way: GGUF and safetensors files are mapped.
#pragma once

#include <string>

#include "qwenchat/result.h"

namespace qc {

// The file's bytes. Errors name the path and the system's reason ("x.json: cannot open the file: No such
// file or directory"); `hint` is attached to an open failure (what the caller needs the file for).
Result<std::string> read_whole_file(const std::string& path, const std::string& hint = {});

}  // namespace qc
