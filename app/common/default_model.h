// Where the model that ships with the app lives: next to the build (build/assets) or the install
// (share/qwenchat). The path can be overridden with QWENCHAT_DEFAULT_MODEL.
#pragma once

#include <string>

#include "qwenchat/result.h"

namespace qc::app {

inline constexpr const char* kDefaultModelFile = "qwenchat-default.gguf";

Result<std::string> default_model_path();

}  // namespace qc::app
