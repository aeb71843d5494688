// The prompt path of the CUDA backend: a chunk of up to `rows` prompt tokens through the model in one pass
// per layer, on tensor cores, instead of the decode step's four tokens per weight pass (issue #12).
//
// One layer, for the chunk's n token rows (QWEN35.md sections 2-5; the decode step's math, other kernels):
//   x = rmsnorm(h, attn_norm)                                           rmsnorm, n rows
//   in_proj = W x                                                       GEMM (below) / gemm_dense
//   GDN over the n rows in order (gdn_prefill) or attention            (attention_prefill: one call a chunk)
//   h += W_out y                                                        GEMM with the residual epilogue
//   x = rmsnorm(h, post_norm); f = swiglu(W_gate x, W_up x); h += W_down f
// then hidden = rmsnorm(h, output_norm) for every row (the MTP block's input) and logits for the last row
// only: a 2048-token chunk would otherwise write 2 GB of logits nobody reads.
//
// The GEMM of the Q8_0 projections, one of two (CudaBackendOptions::prefill_gemm):
// - f16 (gemm_f16.h): each matrix dequantised to f16 per call and multiplied by the f16-rounded inputs in
//   cuBLASLt, at the f16 tensor-core rate; about 3x the int8 path on an H200 (docs/PERFORMANCE.md). Needs
//   the toolkit's libcublasLt at run time.
// - int8 (gemm_q8.h): the inputs quantised to format hl, int8 MMA per Q8_0 block with the block scales
//   folded in f32. Closer to the decode path's numbers (hl, like the hl-class GEMVs), slower.
// lm_head (one row) always takes gemm_q8.
//
// The MTP cache (QWEN35.md section 6): the entry at position q comes from (token x_{q+1}, hidden h_q).
// With mtp entries requested, the chunk writes them for every q whose next token it knows: q = pos-1 when
// the caller hands the hidden state before the chunk (a conversation continued from a kept state),
// pos .. pos+n-2 from its own tokens, and pos+n-1 when the caller hands the token after the chunk. Only the
// block's K and V are needed for an entry, so the block runs eh_proj, its attention norm, its input
// projection and the attention kernel (which stores k and v); no FFN, no logits.
//
// Bits: every kernel here computes a row from that row's inputs (and, for GDN and attention, the carried
// state and the cache) with fixed reduction orders -- on the f16 path one cuBLASLt algorithm per matrix
// shape, whatever the chunk's size -- so the state after position p and the logits at p do not depend on
// how the prompt was split into chunks. They differ from the decode step's bits: the prefix cache
// therefore restarts from turn-boundary snapshots, which only this path writes, instead of continuing a
// state that decoded tokens reached (runtime/prefix_cache.h).
//
// Attention runs attention_prefill on the whole chunk (positions live in device memory, one per row): f16
// tensor cores over 64-row x 64-position tiles (kernels/attention_flash.h), each row's tiles visited in
// the same order whatever the chunk, so a row's bits depend on its position only.
#pragma once

#include <memory>

#include "cuda/buffers.h"
#include "cuda/cuda_util.h"
#include "cuda/device_model.h"
#include "cuda/prefill_profile.h"
#include "gdn.h"
#include "gemm_f16.h"
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
  gpu::GdnScan gdn_scan = gpu::GdnScan::kToken;  // gdn_prefill's form of the scan (GdnArgs::scan)
  int attn_rows = 0;        // attention_prefill's rows per block (AttentionArgs::flash_rows)
  float* attn_q = nullptr;  // attention_prefill scratch: [rows][n_head][head_dim] rotated queries
  // The f16 GEMM's buffers (gemm_f16.h; null on the int8 path): a chunk's activations in f16, one weight
  // slice dequantised (at most w16_elems elements: a matrix larger than that is dequantised and multiplied
  // in slices of rows), and cuBLASLt's workspace.
  uint16_t* x16 = nullptr;  // [rows][ld_x16]
  int ld_x16 = 0;
  uint16_t* w16 = nullptr;
  size_t w16_elems = 0;
  void* lt_workspace = nullptr;
};

// The most weight elements one f16 slice holds: 96 Mi (192 MiB). A larger matrix (the 27B's FFN gate|up,
// 34816 x 5120) is dequantised and multiplied in slices of rows; a column's slice is fixed by the matrix
// shape, so slices change nothing in how a row's bits depend on the chunking.
inline constexpr size_t kF16SliceElems = size_t{96} << 20;
// Rows per slice of an N x K matrix: the fewest slices that fit, of equal height rounded up to a multiple
// of 128 (17408 for the 27B's gate|up: a GEMM shape the heuristic serves as well as the whole matrix).
int f16_slice_rows(int n, int k);

// The M the f16 GEMM's algorithms are chosen for (GemmF16::create): the chunk size up to 1024 rows. Chunks
// of 2048 keep the 1024-row choice: the heuristic's 2048-row algorithms made 512-token prompts 2-3% slower
// (8011-8295 -> 7885 tok/s on the H200, 2026-12-04; 5757 -> 5589 on an H100, 2026-12-06), and one
// algorithm per shape serves every M with the same bits (gemm_f16.h).
inline constexpr int kF16PlanRows = 1024;

// rows = 0 lays out nothing (the prefill path is off). f16: the gemm_f16 buffers too. gdn_scan: the
// GDN scan whose scratch to lay out (CudaBackendOptions::gdn_scan).
Status layout_prefill(const ModelConfig& c, const DeviceModel& m, int rows, bool f16, gpu::GdnScan gdn_scan,
                      Carver& carver, PrefillBuffers* out);

struct PrefillChunk {
  int pos = 0;               // position of the first token (the caller uploaded pos/tokens)
  int n = 0;                 // tokens, 1 .. rows
  bool mtp = false;          // write MTP cache entries
  bool prev_hidden = false;  // hidden row 0 holds h_{pos-1}: entry pos-1 too
  bool next_token = false;   // tokens[n] holds x_{pos+n}: entry pos+n-1 too
};

class PrefillProgram {
 public:
  // f16: the projections through gemm_f16 (needs pb's f16 buffers); null: gemm_q8 on hl activations.
  PrefillProgram(const ModelConfig& c, const DeviceModel& m, const StateBuffers& st, const Scratch& sc,
                 const PrefillBuffers& pb, int n_ctx, gpu::GemmF16* f16)
      : c_(c), m_(m), st_(st), sc_(sc), pb_(pb), n_ctx_(n_ctx), f16_(f16) {}

  // The chunk on stream s: state and KV caches advanced by n positions, sc.logits row 0 = the last row's
  // logits, pb.hidden row n = its hidden state.
  Status enqueue(const PrefillChunk& chunk, cudaStream_t s) const;
  // Per-phase device time of the following enqueues into `profile` (null: none); the benchmark's breakdown.
  void set_profile(PrefillProfile* profile) { profile_ = profile; }

 private:
  Status layer(const DevLayer& L, float* h, const int* d_pos, int n, cudaStream_t s) const;
  // quantise: also write out's int8 words (what gemm_q8 reads; the f16 path reads out.f only).
  Status norm(const float* x, int ld_x, const float* w, int n, const QBuf& out, bool quantise, cudaStream_t s) const;
  // The norm before `site`: on the f16 path with an all-Q8_0 site it writes the site's f16 inputs (pb.x16,
  // scaled by 2^-f16_shift) instead of out.f, and says so through x16 (the projection skips its rounding).
  Status norm_for(const Site& site, const float* x, int ld_x, const float* w, int n, const QBuf& out, bool quantise,
                  int f16_shift, cudaStream_t s, bool* x16) const;
  // f16_shift: the power of two the f16 path scales the inputs by (gemm_f16.h), per kind of input.
  // x16_ready: pb.x16 holds the site's f16 inputs already (the norm, gated norm or SwiGLU kernel wrote them).
  Status project(const char* label, const Site& site, const QBuf& in, int n, float* y, int ld_y,
                 const float* residual, int f16_shift, cudaStream_t s, bool x16_ready = false) const;
  Status project_site(const char* label, const Site& site, const QBuf& in, int n, float* y, int ld_y,
                      const float* residual, bool f16, int f16_shift, cudaStream_t s, bool x16_ready = false) const;
  Status project_f16(const char* label, const Linear& lin, int n, float* y, int ld_y, const float* residual,
                     int f16_shift, cudaStream_t s) const;
  gpu::QActOut words(const QBuf& b) const;  // b's int8 words for the int8 path, none for the f16 path
  // The GDN layer's mixer; out16: its output as the f16 out projection's input (pb.x16) instead of f32 rows.
  Status gdn(const DevLayer& L, const int* d_pos, int n, bool out16, cudaStream_t s) const;
  // Attention of rows [0, n) of the projections; output f32 (+ quantised when out_q) and/or, with out16, the
  // f16 out projection's input (pb.x16).
  Status attention(const DevLayer& L, const int* d_pos, int n, float* out, int ld_out, const QBuf* out_q,
                   bool out16, cudaStream_t s) const;
  Status mtp_entries(const PrefillChunk& chunk, cudaStream_t s) const;
  Status mtp_batch(int r0, int k, cudaStream_t s) const;  // hidden rows r0..r0+k-1

  const ModelConfig& c_;
  const DeviceModel& m_;
  const StateBuffers& st_;
  const Scratch& sc_;
  const PrefillBuffers& pb_;
  int n_ctx_;
  gpu::GemmF16* f16_;
  PrefillProfile* profile_ = nullptr;
};

}  // namespace qc::cuda
