// What the app shows about a loaded engine (model panel, diagnostics), gathered in one place.
#pragma once

#include "qwenchat/events.h"
#include "runtime/engine.h"

namespace qc {

// `kernels` is the kernel config in use (the engine's options hold the one it was opened with).
ModelFacts describe_model(const Engine& engine, const KernelConfig& kernels);

}  // namespace qc
