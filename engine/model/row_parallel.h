// Row-parallel work for the file writers (qwenchat-convert, qwenchat-mkmodel): quantising the 27B preset
// to a K-quant mix is ~27e9 values through ggml's reference search, minutes on one core, so the rows of each
// tensor are spread over std::threads. Every row is encoded on its own (no state crosses rows), so the bytes
// written do not depend on the thread count or on which thread took which rows; errors do not either (the
// one reported is the first failing row's, see for_row_chunks).
#pragma once

#include <cstdint>
#include <functional>

#include "model/kquant_quantize.h"
#include "model/quant.h"
#include "qwenchat/result.h"

namespace qc {

// The thread count the writers use by default: the machine's hardware threads (at least 1).
int default_writer_threads();

// Runs fn(first, end) over consecutive row ranges covering [0, rows) on up to n_threads threads (the
// caller's included; 1 runs everything inline). fn must touch only its rows' outputs. On failure the error
// returned is that of the lowest range that failed, which, fn stopping at its own first failing row, is the
// error of the lowest failing row whatever the thread count: ranges are handed out in increasing order and
// every range below a failed one is still run to its end.
Status for_row_chunks(int64_t rows, int n_threads,
                      const std::function<Status(int64_t first, int64_t end)>& fn);

// Encodes a row-major [rows][cols] f32 matrix as `t` (encode_values row by row) into `out`
// (rows * dtype_bytes(t, cols) bytes) on up to n_threads threads. Errors name the row.
Status encode_matrix(DType t, const float* x, uint8_t* out, int64_t rows, int64_t cols, int n_threads);

}  // namespace qc
