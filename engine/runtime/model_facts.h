// What the app shows about a loaded engine (model panel, diagnostics), gathered in one place.
#pragma once

#include "qwenchat/engine.h"
#include "qwenchat/events.h"

namespace qc {

ModelFacts describe_model(const Engine& engine);

}  // namespace qc
