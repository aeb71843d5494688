// The GPU backend: qc::Backend on one CUDA device (ARCHITECTURE.md "The backend interface").
//
// Load: the memory estimate first (weights in the device formats of device_model.h, f16 KV caches for
// n_ctx positions, GDN states and conv rings, scratch; buffers.h), checked against cudaMemGetInfo; then one
// allocation per part and the weights uploaded (Q8_0 repacked into the split layout on the way) with a
// progress callback. Nothing is allocated per token.
//
// forward(tokens, pos): up to kMaxTokens (4) tokens run through every kernel in one weight pass (MTP
// verification); longer inputs (prompts) run in chunks of 4. Token ids and the position live in device
// memory, so a step is a captured CUDA graph (one per token count, context bucket and KernelConfig),
// replayed per call; set_kernel_config() takes effect at the next call and drops the graphs. Logits and
// the post-norm hidden state come back in pinned host buffers.
//
// MTP verification rolls back without recomputation: forward_speculative(tokens <= 4) runs the kVerify
// graph, the plain step whose GDN kernels also write the state after tokens 0..M-2 into a history of
// kMaxTokens-1 slots (buffers.h; 151 MB per slot for the 27B, so up to 453 MB of extra writes per pass,
// ~0.1 ms); commit(m) copies slot m-1 over the live states in one device-to-device copy (only when a
// draft was rejected) and needs nothing else: the conv rings survive as they are (a step of M tokens
// writes only the ring slots of its own positions, and the next step reads only slots of accepted
// positions or of positions before the step, which it did not reach -- proof at commit()), and KV entries
// past the kept position are rewritten before they are read. The history exists only for MTP models.
//
// Snapshots copy the recurrent block (GDN states and conv rings, one device-to-device copy of 167 MB for
// the 27B shapes, ~40 us); the generator no longer needs them on this backend. The rings alone would
// survive a rollback of up to kConvRing - (conv_kernel - 1) = 5 positions without a copy, but copying them
// (10% of the snapshot) keeps restore() valid after any number of tokens, as the interface promises. KV
// entries are not copied: the ones past the restored position are rewritten before they are read.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/buffers.h"
#include "cuda/cuda_util.h"
#include "cuda/device_model.h"
#include "cuda/prefill_program.h"
#include "cuda/read_ceiling.h"
#include "cuda/step_program.h"
#include "generate/backend.h"
#include "qwenchat/kernel_config.h"

namespace qc::cuda {

// The prompt path's GEMM for Q8_0 projections (cuda/prefill_program.h).
enum class PrefillGemm {
  kAuto,  // f16 through cuBLASLt when the toolkit's libcublasLt loads and its buffers fit, else int8 (noted)
  kF16,   // f16 or a load error saying why not
  kInt8,  // gemm_q8 on hl activations
};

// Where the f16 prompt path's weights come from (cuda/prefill_weights.h).
enum class PrefillWeights {
  kAuto,      // resident when the copy fits with a quarter of the card's memory still free, else per chunk
  kResident,  // an f16 copy made at load (2 bytes per weight more), or a load error saying why not
  kPerChunk,  // dequantised from Q8_0 for every chunk (no extra memory)
};

struct CudaBackendOptions {
  int n_ctx = 4096;
  int max_batch = 64;  // tokens per forward() call (host logits buffer [max_batch][n_vocab])
  // Tokens per prefill() chunk on the prompt path (cuda/prefill_program.h); 0 = no prompt path, prompts
  // go through forward(). 2048 rows cost 0.9 GiB of buffers for the 27B shapes (1024: 0.45 GiB); the plan
  // halves a chunk of more than 1024 rows that does not fit, then drops the path (with a note). A prompt
  // gives the same bits in chunks of any size. 2048 against 1024 rows, 27B preset, 2026-12-06, H100 with
  // per-chunk f16 weights: 2048-token prompt 7648 -> 8606 tok/s (one weight dequantisation instead of
  // two), 512 tokens 5793 / 5797 (docs/PERFORMANCE.md "2026-12-06 (fourth session)").
  int prefill_rows = 2048;
  PrefillGemm prefill_gemm = PrefillGemm::kAuto;
  PrefillWeights prefill_weights = PrefillWeights::kAuto;
  // The form of the prompt path's Gated DeltaNet scan (kernels/gdn_prefill.h): token by token with the
  // decay as one scale per head (gdn_scaled.h, the default: the GDN phase of a 2048-token 27B prompt 45.95 /
  // 46.48 -> 44.07 / 43.74 ms against the token scan, H100 2026-12-06, docs/PERFORMANCE.md "eighth
  // session"), token by token, in groups of 4 positions (gdn_group.h) or in chunks of 64 on TF32 tensor
  // cores (gdn_chunk.h, slower: docs/PERFORMANCE.md, 2026-12-06 third session). A prompt keeps its bits
  // across calls starting on the form's grid (prefill_grid(): 16, 1, 4, 64 in that order).
  gpu::GdnScan gdn_scan = gpu::GdnScan::kScaled;
  // Query rows per block of the prompt path's attention kernel (AttentionArgs::flash_rows): 64 or 128;
  // 0 = the measured default (kernels/attention_flash.h kFlashRowsDefault). The same bits either way.
  int attention_rows = 0;
  // K / V positions a warp of the decode attention's split kernel loads a batch (AttentionArgs::kv_ahead):
  // 1 or 4; 0 = the kernel's default (kernels/attention.cu kKvAheadDefault). The same bits either way; a
  // knob so that one benchmark process can time both (qwenchat-bench --kv-ahead).
  int attention_kv_ahead = 0;
  KernelConfig kernels;  // probes included (per-layer norms)
  int device = 0;
  // Device memory to plan against (memory_plan.h), at most what cudaMemGetInfo reports free; 0 = that.
  // Also caps the card size the resident f16 weights' headroom is a quarter of, so a limit of 24 GiB plans
  // as a 24 GB card would. Tests set it to provoke the "does not fit" error.
  uint64_t memory_limit = 0;
  // Measure the read ceiling after the upload (read_ceiling.h; ~0.1 s for 27 GB of weights). The
  // benchmarks, which measure their own, turn it off.
  bool measure_ceiling = true;
  std::function<void(uint64_t done, uint64_t total, const std::string& tensor)> progress;
};

// Fills the device tensors of a model: an upload from the file (weight_upload.h) or generated weights.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Enqueues (or performs) the fill of one tensor on `s`. The caller synchronises at the end.
  virtual Status fill(const TensorSlot& slot, cudaStream_t s) = 0;
};

// Device memory kept back for the CUDA context's own allocations, graphs and launch resources.
inline constexpr uint64_t kMemoryReserve = 512ull << 20;

class CudaBackend final : public Backend {
 public:
  // Weights from a loaded model (views into its file; the model must outlive the backend).
  static Result<std::unique_ptr<CudaBackend>> create(const ModelConfig& config, const ModelWeights& weights,
                                                     const CudaBackendOptions& options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  BackendInfo info() const override;
  const ModelConfig& config() const override { return c_; }
  int n_ctx() const override { return n_ctx_; }
  int position() const override { return pos_; }
  int max_batch() const override { return opt_.max_batch; }
  void reset() override;
  Result<StepOutput> forward(std::span<const int32_t> tokens, int pos) override;
  int prefill_rows() const override { return pb_.rows; }
  int prefill_grid() const override;
  Result<StepOutput> prefill(std::span<const int32_t> tokens, int pos, const PrefillMtp& mtp) override;
  bool has_mtp() const override { return model_.has_mtp; }
  Result<StepOutput> mtp_forward(int32_t token, std::span<const float> hidden, int pos) override;
  std::unique_ptr<StateSnapshot> snapshot() const override;
  std::unique_ptr<StateSnapshot> snapshot_context() const override;  // host memory
  Status restore(const StateSnapshot& snap) override;
  // 0 without an MTP block, or when the state history was left out because it did not fit (load_note()).
  int max_speculative_tokens() const override {
    return model_.has_mtp && spec_capable_ ? std::min(gpu::kMaxTokens, opt_.max_batch) : 0;
  }
  Result<StepOutput> forward_speculative(std::span<const int32_t> tokens, int pos) override;
  Status commit(int m) override;
  std::span<const float> layer_norms() const override;

 protected:
  Status apply_kernel_config(const KernelConfig& cfg) override;  // pending until the next call

 private:
  // The benchmark's and the tests' measurement hooks (cuda_probe.h) read and drive the members below.
  friend class CudaProbe;
  CudaBackend() = default;
  static Result<std::unique_ptr<CudaBackend>> build(const ModelConfig& config, const ModelWeights& weights,
                                                    bool have_data, WeightSource* source,
                                                    const CudaBackendOptions& options);
  Status apply_config();
  // kMain: the plain step; kVerify: the same with the GDN state history written (speculative forward).
  enum class Kind { kMain, kVerify, kMtp };
  Result<Graph*> graph_for(Kind kind, int m, int ctx_hint);
  Status enqueue(Kind kind, int m, int ctx_hint, cudaStream_t s);  // the launches, eager or captured
  Status run_step(Kind kind, int m, int ctx_hint);                 // graph or eager, per the config
  Result<StepOutput> run_forward(std::span<const int32_t> tokens, int pos, bool keep);
  class Snapshot;
  class ContextSnapshot;
  struct SnapshotPool;
  // Positions [0, pos) of every KV cache in host memory: one vector per cache, [n_kv][pos][head_dim].
  using HostKv = std::vector<std::vector<uint16_t>>;
  // Copies them on stream_, synchronised: k_in/v_in to the device, or (k_in null) the device into k_out/v_out.
  Status copy_kv(const HostKv* k_in, const HostKv* v_in, HostKv* k_out, HostKv* v_out, int pos) const;

  ModelConfig c_;
  CudaBackendOptions opt_;
  int n_ctx_ = 0;
  int device_ = 0;
  std::string device_name_;
  int sm_count_ = 0;
  MemoryEstimate mem_;
  double read_ceiling_gbs_ = 0.0;
  bool spec_capable_ = true;  // the GDN state history exists (or there is no GDN layer to keep)
  std::string load_note_;     // what the load chose that the user should know (BackendInfo::note)
  DeviceBlock weights_block_, recurrent_block_, history_block_, kv_block_, scratch_block_, prefill_block_;
  DeviceBlock prefill_weights_block_;  // the prompt path's resident f16 weights (prefill_weights.h), or empty
  DeviceModel model_;
  StateBuffers st_;
  Scratch sc_;
  std::unique_ptr<StepProgram> prog_;
  PrefillBuffers pb_;
  std::unique_ptr<gpu::GemmF16> gemm_f16_;  // the prompt path's f16 GEMM; null on the int8 path
  std::unique_ptr<PrefillProgram> prefill_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;
  PinnedBlock host_block_;
  float* h_logits_ = nullptr;  // [max_batch][V]
  float* h_hidden_ = nullptr;  // [max_batch][H]
  int* h_steps_ = nullptr;     // [chunks][8]
  int* h_prefill_ = nullptr;   // [rows + 2] positions, then [rows + 1] tokens (PrefillBuffers)
  int* h_mtp_step_ = nullptr;  // [8]
  float* h_mtp_hin_ = nullptr;
  float* h_mtp_logits_ = nullptr;
  float* h_mtp_hidden_ = nullptr;
  float* h_norms_ = nullptr;
  KernelConfig cfg_;      // what the graphs were captured with
  KernelConfig pending_;  // set_kernel_config(); applied at the next call
  std::map<std::tuple<int, int, int>, Graph> graphs_;
  int pos_ = 0;
  int spec_n_ = 0;    // tokens of the pending speculative forward, 0 = none
  int spec_pos_ = 0;  // its first position
  uint64_t epoch_ = 0;
  bool norms_valid_ = false;
  std::shared_ptr<SnapshotPool> snaps_;
};

}  // namespace qc::cuda
