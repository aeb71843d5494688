// The prompt path of the CUDA backend: a chunk of up to `rows` prompt tokens through the model in one pass
// per layer, on tensor cores, instead of the decode step's four tokens per weight pass (issue #12).
//
// One layer, for the chunk's n token rows (QWEN35.md sections 2-5; the decode step's math, other kernels):
//   x = rmsnorm(h, attn_norm), quantised (format hl)                    rmsnorm, n rows
//   in_proj = W x                                                       gemm_q8 (int8 MMA) / gemm_dense
//   GDN over the n rows in order (gdn_prefill) or attention            (attention_decode per 4 rows, see below)
//   h += W_out y                                                        gemm_q8 with the residual epilogue
//   x = rmsnorm(h, post_norm); f = swiglu(W_gate x, W_up x); h += W_down f
// then hidden = rmsnorm(h, output_norm) for every row (the MTP block's input) and logits for the last row
// only: a 2048-token chunk would otherwise write 2 GB of logits nobody reads.
//
// The MTP cache (QWEN35.md section 6): the entry at position q comes from (token x_{q+1}, hidden h_q).
// With mtp entries requested, the chunk writes them for every q whose next token it knows: q = pos-1 when
// the caller hands the hidden state before the chunk (a conversation continued from a kept state),
// pos .. pos+n-2 from its own tokens, and pos+n-1 when the caller hands the token after the chunk. Only the
// block's K and V are needed for an entry, so the block runs eh_proj, its attention norm, its input
// projection and the attention kernel (which stores k and v); no FFN, no logits.
//
// Bits: every kernel here computes a row from that row's inputs (and, for GDN and attention, the carried
// state and the cache) with fixed reduction orders, so the state after position p and the logits at p do
// not depend on how the prompt was split into chunks. They differ from the decode step's bits (int8 MMA
// over hl activations with the block scales applied per block, not the GEMV family's lane order): the
// prefix cache therefore restarts from turn-boundary snapshots, which only this path writes, instead of
// continuing a state that decoded tokens reached (runtime/prefix_cache.h).
//
// Attention runs attention_decode on groups of up to four rows, each group at its own position (positions
// live in device memory, one per row): per-row split lengths make a row's bits depend on its position
// only. At 8k context a group re-reads the layer's KV cache (32 MB for the 27B), about 20 us per token over
// the 16 attention layers: a flash-attention kernel over the chunk is the next step (docs/PERFORMANCE.md).
#pragma once

#include "cuda/buffers.h"
#include "cuda/cuda_util.h"
#include "cuda/device_model.h"
#include "model/config.h"

namespace qc::cuda {

// Device buffers of one chunk (laid out with Carver, so the memory estimate is the allocation).
struct PrefillBuffers {
  int rows = 0;          // most tokens per chunk
  int* pos = nullptr;    // [rows + 2]: positions pos-1+r for r = 0..rows+1 (row r of `hidden`)
  int* tokens = nullptr;  // [rows + 1]: the chunk's tokens, then the token after it (MTP)
  float* h = nullptr;    // [rows][H] residual stream; the MTP embeddings afterwards
  QBuf x;                // [rows] K = H: normed layer inputs, final norm's quantised words
  float* proj = nullptr;  // [rows][n_proj] input projections, gate|up, the MTP concat (f32)
  int n_proj = 0;
  QBuf mix;               // [rows] K = n_mix: mixer outputs; the MTP block's residual stream
  QBuf ffn;               // [rows] K = n_ffn: SwiGLU outputs; the MTP concat's quantised words
  float* attn_out = nullptr;  // [rows][n_attn]: the MTP block's attention output (not used further)
  float* hidden = nullptr;    // [rows + 1][H]: row 0 the hidden before the chunk, row 1 + i chunk row i
  float* gdn = nullptr;       // gdn_prefill scratch
};

// rows = 0 lays out nothing (the prefill path is off).
Status layout_prefill(const ModelConfig& c, const DeviceModel& m, int rows, Carver& carver, PrefillBuffers* out);

struct PrefillChunk {
  int pos = 0;               // position of the first token (the caller uploaded pos/tokens)
  int n = 0;                 // tokens, 1 .. rows
  bool mtp = false;          // write MTP cache entries
  bool prev_hidden = false;  // hidden row 0 holds h_{pos-1}: entry pos-1 too
  bool next_token = false;   // tokens[n] holds x_{pos+n}: entry pos+n-1 too
};

class PrefillProgram {
 public:
  PrefillProgram(const ModelConfig& c, const DeviceModel& m, const StateBuffers& st, const Scratch& sc,
                 const PrefillBuffers& pb, int n_ctx)
      : c_(c), m_(m), st_(st), sc_(sc), pb_(pb), n_ctx_(n_ctx) {}

  // The chunk on stream s: state and KV caches advanced by n positions, sc.logits row 0 = the last row's
  // logits, pb.hidden row n = its hidden state.
  Status enqueue(const PrefillChunk& chunk, cudaStream_t s) const;

 private:
  Status layer(const DevLayer& L, float* h, const int* d_pos, int n, int ctx_end, cudaStream_t s) const;
  Status norm(const float* x, int ld_x, const float* w, int n, const QBuf& out, cudaStream_t s) const;
  Status project(const char* label, const Site& site, const QBuf& in, int n, float* y, int ld_y,
                 const float* residual, cudaStream_t s) const;
  Status gdn(const DevLayer& L, const int* d_pos, int n, cudaStream_t s) const;
  // Attention of rows [0, n) of the projections, 4 rows per launch; output f32 (+ quantised when out_q).
  Status attention(const DevLayer& L, const int* d_pos, int n, int ctx_end, float* out, int ld_out,
                   const QBuf* out_q, cudaStream_t s) const;
  Status mtp_entries(const PrefillChunk& chunk, cudaStream_t s) const;
  Status mtp_batch(const PrefillChunk& chunk, int r0, int k, cudaStream_t s) const;  // hidden rows r0..r0+k-1

  const ModelConfig& c_;
  const DeviceModel& m_;
  const StateBuffers& st_;
  const Scratch& sc_;
  const PrefillBuffers& pb_;
  int n_ctx_;
};

}  // namespace qc::cuda
