// The size estimate of one shape (qwenchat/model_sizes.h computes the released sizes through it; the tests
// check it against a file of the tiny shape that the engine writes and reads).
#pragma once

#include "model/presets.h"
#include "qwenchat/model_sizes.h"

namespace qc {

// One shape (tested against a file of the tiny shape that the engine writes and reads).
SizeEstimate estimate_for_shape(const ModelShape& shape, int n_ctx);

}  // namespace qc
