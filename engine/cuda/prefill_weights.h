// The prompt path's resident f16 weights: an f16 copy of every Q8_0 (and block-quantised) matrix the prompt path multiplies on
// f16 tensor cores, made once at load, so a chunk no longer dequantises 25.6 GB of Q8_0 into f16 before
// its GEMMs (41.6 ms of a 2048-token prompt's 275 ms on the H200, the 27B shapes; 20 ms of a 100-token
// message's 76 ms, docs/PERFORMANCE.md). Cost: two bytes per weight beside the Q8_0 copy that decode
// reads (51 GB for the 27B), so it is made only where the card has that room to spare
// (CudaBackendOptions::prefill_weights); otherwise each chunk dequantises into the slice buffer as before.
// The values are the same bits either way (the same dequant_q8_f16 kernel), and the GEMMs run on the same
// slices with the same algorithms, so the prompt path's results do not depend on the choice.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/cuda_util.h"
#include "cuda/device_model.h"
#include "qwenchat/result.h"

namespace qc::cuda {

// Every Q8_0 or block-quantised projection the prompt path runs on the f16 GEMM (prefill_program.cpp
// project()): the layers' four sites, the MTP block's eh_proj and attention input. lm_head stays a one-row
// product (gemm_q8 / gemv_block).
template <class Model, class Fn>
void for_each_prefill_f16_linear(Model& m, Fn&& fn) {
  auto site = [&](auto& s) {
    for (auto& lin : s.parts)
      if (lin.f16_gemm()) fn(lin);
  };
  for (auto& L : m.layers) {
    site(L.in_proj);
    site(L.out_proj);
    site(L.gate_up);
    site(L.down);
  }
  if (m.has_mtp) {
    site(m.mtp_eh_proj);
    site(m.mtp_layer.in_proj);
  }
}

// Rows [row0, row0 + rows) of a Q8_0 or block-quantised matrix as f16 (dequant_q8_f16 / dequant_block_f16).
gpu::GpuStatus dequant_linear_f16(const Linear& lin, int row0, int rows, uint16_t* out, int ld_out,
                                  cudaStream_t stream);

// Bytes of the f16 copies (the Carver's alignment included).
uint64_t prefill_f16_weight_bytes(const DeviceModel& m);
// Points every such Linear's w16 into `carver`'s block.
void place_prefill_f16_weights(DeviceModel& m, Carver& carver);
// Fills the copies from the uploaded Q8_0 weights (in slices of f16_slice_rows, on `stream`).
Status fill_prefill_f16_weights(const DeviceModel& m, cudaStream_t stream);

}  // namespace qc::cuda
