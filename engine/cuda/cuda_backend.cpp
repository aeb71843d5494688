#include "cuda/cuda_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cublaslt.h"
#include "gdn_prefill.h"
#include "cuda/make_cuda_backend.h"
#include "cuda/device_plan.h"
#include "cuda/prefill_weights.h"
#include "cuda/weight_upload.h"
#include "model/cuda_weight_types.h"

namespace qc::cuda {
namespace {

// Fields that change the captured kernels (all but the MTP settings, which the generator reads).
bool same_program(const KernelConfig& a, const KernelConfig& b) {
  return a.gemv == b.gemv && a.split_k == b.split_k && a.tile_rows_per_warp == b.tile_rows_per_warp &&
         a.tile_unroll == b.tile_unroll && a.tile_blocks_per_sm == b.tile_blocks_per_sm &&
         a.block_engine == b.block_engine &&
         a.fuse_residual_norm_quant == b.fuse_residual_norm_quant && a.fuse_gate_up == b.fuse_gate_up &&
         a.cuda_graph == b.cuda_graph && a.programmatic_launch == b.programmatic_launch &&
         a.probes == b.probes;
}

}  // namespace

// ---- snapshots ----

struct CudaBackend::SnapshotPool {
  std::vector<DeviceBlock> slots;
  std::vector<bool> used;
};

class CudaBackend::Snapshot final : public StateSnapshot {
 public:
  Snapshot(std::shared_ptr<SnapshotPool> pool, size_t slot, const CudaBackend* owner, uint64_t epoch, int pos)
      : pool_(std::move(pool)), slot_(slot), owner_(owner), epoch_(epoch), pos_(pos) {}
  ~Snapshot() override { pool_->used[slot_] = false; }
  int position() const override { return pos_; }
  uint64_t bytes() const override { return pool_->slots[slot_].size(); }
  const void* data() const { return pool_->slots[slot_].get(); }
  const CudaBackend* owner() const { return owner_; }
  uint64_t epoch() const { return epoch_; }

 private:
  std::shared_ptr<SnapshotPool> pool_;
  size_t slot_;
  const CudaBackend* owner_;
  uint64_t epoch_;
  int pos_;
};

// snapshot_context(): everything in host memory, owned by the snapshot.
class CudaBackend::ContextSnapshot final : public StateSnapshot {
 public:
  int position() const override { return pos; }
  uint64_t bytes() const override {
    uint64_t b = recurrent.size();
    for (size_t i = 0; i < k.size(); ++i) b += (k[i].size() + v[i].size()) * sizeof(uint16_t);
    return b;
  }
  const CudaBackend* owner = nullptr;
  int pos = 0;
  std::vector<uint8_t> recurrent;
  std::vector<std::vector<uint16_t>> k, v;  // per cache: [n_kv][pos][head_dim]
};

// ---- construction ----

Result<std::unique_ptr<CudaBackend>> CudaBackend::create(const ModelConfig& config,
                                                         const ModelWeights& weights,
                                                         const CudaBackendOptions& options) {
  return build(config, weights, true, nullptr, options);
}

Result<std::unique_ptr<CudaBackend>> CudaBackend::build(const ModelConfig& config,
                                                        const ModelWeights& weights, bool have_data,
                                                        WeightSource* source,
                                                        const CudaBackendOptions& options) {
  if (options.max_batch < 1)
    return make_error("CUDA backend: max_batch must be positive, got " + std::to_string(options.max_batch));
  // Construction is the other door a KernelConfig enters by (set_kernel_config() is the first).
  const KernelConfig& kc = options.kernels;
  if (const std::string bad = kc.validate(); !bad.empty()) return make_error("kernel config: " + bad);

  // 1. The plan (device_plan.h: device checks, free memory, memory_plan.h), before any allocation.
  QC_ASSIGN(const DevicePlan dp, plan_on_device(config, weights, have_data, options));
  if (!dp.plan.fits) return dp.does_not_fit();
  const MemoryPlan& plan = dp.plan;

  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->c_ = config;
  b->opt_ = options;
  b->n_ctx_ = options.n_ctx;
  b->device_ = options.device;
  b->cfg_ = kc;
  b->pending_ = kc;
  b->snaps_ = std::make_shared<SnapshotPool>();
  b->device_name_ = dp.device_name;
  b->sm_count_ = dp.req.sm_count;
  b->mem_ = plan.mem;
  b->load_note_ = plan.note;
  b->spec_capable_ = plan.with_history;  // false only where a history was needed (GDN layers and an MTP block)
  const bool with_history = plan.with_history, prefill_f16 = plan.prefill_f16, f16_resident = plan.f16_resident;
  const int prefill_rows = plan.prefill_rows;

  // 2. Allocation and layout (the same functions as the estimate, now with base pointers).
  QC_TRY(b->weights_block_.allocate(b->mem_.weights, "weights"));
  QC_TRY(b->recurrent_block_.allocate(b->mem_.recurrent, "GDN states"));
  QC_TRY(b->history_block_.allocate(b->mem_.history, "MTP state history"));
  QC_TRY(b->kv_block_.allocate(b->mem_.kv_cache, "KV cache"));
  QC_TRY(b->scratch_block_.allocate(b->mem_.scratch, "scratch"));
  QC_TRY(b->prefill_block_.allocate(b->mem_.prefill, "prompt path buffers"));
  QC_TRY(b->prefill_weights_block_.allocate(b->mem_.prefill_weights, "prompt path f16 weights"));
  Carver wc(b->weights_block_.get()), rc(b->recurrent_block_.get()), hc2(b->history_block_.get()),
      kc2(b->kv_block_.get()), sc(b->scratch_block_.get()), pc(b->prefill_block_.get());
  QC_ASSIGN(b->model_, layout_model(config, weights, have_data, wc));
  QC_TRY(layout_state(config, b->model_, b->n_ctx_, rc, hc2, kc2, &b->st_, with_history));
  QC_TRY(layout_scratch(config, b->model_, b->sm_count_, sc, &b->sc_));
  QC_TRY(layout_prefill(config, b->model_, prefill_rows, prefill_f16, options.gdn_scan, pc, &b->pb_));
  b->pb_.attn_rows = options.attention_rows;
  Carver fc(b->prefill_weights_block_.get());
  if (f16_resident) place_prefill_f16_weights(b->model_, fc);
  if (wc.bytes() != b->mem_.weights || rc.bytes() != b->mem_.recurrent || hc2.bytes() != b->mem_.history ||
      kc2.bytes() != b->mem_.kv_cache || sc.bytes() != b->mem_.scratch || pc.bytes() != b->mem_.prefill ||
      fc.bytes() != b->mem_.prefill_weights)
    return make_error("CUDA backend: internal: the layout differs from the estimate");
  b->prog_ = std::make_unique<StepProgram>(b->c_, b->model_, b->st_, b->sc_, b->n_ctx_,
                                           options.attention_kv_ahead);
  if (prefill_f16) {
    std::string why;
    b->gemm_f16_ = gpu::GemmF16::create(std::min(prefill_rows, kF16PlanRows), b->pb_.lt_workspace, &why);
    if (!b->gemm_f16_) {
      if (options.prefill_gemm == PrefillGemm::kF16)
        return make_error("CUDA backend: f16 prompt path: " + why);
      b->load_note_ += (b->load_note_.empty() ? "" : "; ") +
                       ("the prompt path runs on int8 tensor cores (its f16 buffers stay unused): " + why);
    }
  }
  b->prefill_ = std::make_unique<PrefillProgram>(b->c_, b->model_, b->st_, b->sc_, b->pb_, b->n_ctx_,
                                                 b->gemm_f16_.get());

  QC_CU(cudaStreamCreateWithFlags(&b->stream_, cudaStreamNonBlocking));
  QC_CU(cudaStreamCreateWithFlags(&b->capture_stream_, cudaStreamNonBlocking));

  // 3. Pinned host buffers for the outputs and the per-chunk step records.
  const size_t V = static_cast<size_t>(config.n_vocab), H = static_cast<size_t>(config.n_embd);
  const size_t chunks = static_cast<size_t>(options.max_batch + gpu::kMaxTokens - 1) / gpu::kMaxTokens;
  Carver hc;
  for (int pass = 0; pass < 2; ++pass) {
    hc = Carver(pass ? b->host_block_.get() : nullptr);
    b->h_logits_ = hc.take<float>(static_cast<size_t>(options.max_batch) * V);
    b->h_hidden_ = hc.take<float>(static_cast<size_t>(options.max_batch) * H);
    b->h_steps_ = hc.take<int>(chunks * 8);
    b->h_prefill_ = hc.take<int>(2 * static_cast<size_t>(prefill_rows) + 3);
    b->h_mtp_step_ = hc.take<int>(8);
    b->h_mtp_hin_ = hc.take<float>(H);
    b->h_mtp_logits_ = hc.take<float>(V);
    b->h_mtp_hidden_ = hc.take<float>(H);
    b->h_norms_ = hc.take<float>(static_cast<size_t>(std::max(config.n_layer, 1)));
    if (!pass) QC_TRY(b->host_block_.allocate(hc.bytes(), "pinned output buffers"));
  }

  // 4. Weights.
  uint64_t total = 0, done = 0;
  for (const TensorSlot& t : b->model_.slots) total += t.device_bytes();
  UploadSource upload;
  if (!source) {
    QC_TRY(upload.init());
    source = &upload;
  }
  for (const TensorSlot& t : b->model_.slots) {
    QC_TRY(source->fill(t, b->stream_));
    done += t.device_bytes();
    if (options.progress) options.progress(done, total, t.name);
  }
  QC_CU(cudaMemsetAsync(b->scratch_block_.get(), 0, b->scratch_block_.size(), b->stream_));
  if (f16_resident) QC_TRY(fill_prefill_f16_weights(b->model_, b->stream_));
  if (options.measure_ceiling) {
    QC_ASSIGN(const ReadCeiling ceiling,
              measure_read_ceiling(b->weights_block_.get(), b->weights_block_.size(), b->sm_count_,
                                   kMemoryReserve, b->stream_));
    b->read_ceiling_gbs_ = ceiling.gbs;
  }
  b->reset();
  QC_CU(cudaStreamSynchronize(b->stream_));
  return b;
}

CudaBackend::~CudaBackend() {
  if (stream_) cudaStreamSynchronize(stream_);
  graphs_.clear();
  if (capture_stream_) cudaStreamDestroy(capture_stream_);
  if (stream_) cudaStreamDestroy(stream_);
}

int CudaBackend::prefill_grid() const {
  return pb_.rows > 0 ? gpu::gdn_prefill_grid(pb_.gdn_scan) : 1;
}

BackendInfo CudaBackend::info() const {
  BackendInfo i;
  i.name = "cuda";
  i.device = device_name_ + " (" + std::to_string(sm_count_) + " SMs)";
  i.memory_bytes = mem_.resident();
  i.read_ceiling_gbs = read_ceiling_gbs_;
  i.note = load_note_;
  for (const DeviceBlock& s : snaps_->slots) i.memory_bytes += s.size();
  return i;
}

void CudaBackend::reset() {
  pos_ = 0;
  ++epoch_;
  spec_n_ = 0;
  norms_valid_ = false;
  // GDN states and conv rings must start at zero; KV entries are written before they are read, but
  // zeroing them keeps even an MTP call at an unseen position independent of earlier conversations.
  if (recurrent_block_.get())
    (void)cudaMemsetAsync(recurrent_block_.get(), 0, recurrent_block_.size(), stream_);
  if (kv_block_.get()) (void)cudaMemsetAsync(kv_block_.get(), 0, kv_block_.size(), stream_);
}

Status CudaBackend::apply_kernel_config(const KernelConfig& cfg) {
  pending_ = cfg;
  return Status::success();
}

Status CudaBackend::apply_config() {
  QC_CU(cudaSetDevice(device_));
  if (!same_program(pending_, cfg_)) graphs_.clear();
  if (pending_.probes != cfg_.probes) norms_valid_ = false;
  cfg_ = pending_;
  return Status::success();
}

// ---- graphs ----

Result<Graph*> CudaBackend::graph_for(Kind kind, int m, int ctx_hint) {
  const auto key = std::make_tuple(static_cast<int>(kind), m, ctx_hint);
  if (auto it = graphs_.find(key); it != graphs_.end()) return &it->second;
  Graph g;
  QC_CU(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeRelaxed));
  const Status st = enqueue(kind, m, ctx_hint, capture_stream_);
  const cudaError_t end = cudaStreamEndCapture(capture_stream_, &g.graph_);
  if (!st.ok()) {
    (void)cudaGetLastError();
    return make_error("CUDA graph capture: " + st.error().message);
  }
  QC_CU(end);
  QC_CU(cudaGraphInstantiate(&g.exec_, g.graph_, 0));
  size_t n = 0;
  QC_CU(cudaGraphGetNodes(g.graph_, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  if (n) QC_CU(cudaGraphGetNodes(g.graph_, nodes.data(), &n));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t{};
    QC_CU(cudaGraphNodeGetType(node, &t));
    if (t == cudaGraphNodeTypeKernel) ++g.kernel_nodes;
  }
  Graph& slot = graphs_[key];
  std::swap(slot.graph_, g.graph_);
  std::swap(slot.exec_, g.exec_);
  slot.kernel_nodes = g.kernel_nodes;
  return &slot;
}

Status CudaBackend::enqueue(Kind kind, int m, int ctx_hint, cudaStream_t s) {
  switch (kind) {
    case Kind::kMain:
      return prog_->enqueue_main(m, ctx_hint, cfg_, s, nullptr);
    case Kind::kVerify:
      return prog_->enqueue_main(m, ctx_hint, cfg_, s, nullptr, /*keep_states=*/true);
    case Kind::kMtp:
      return prog_->enqueue_mtp(ctx_hint, cfg_, s, nullptr);
  }
  return make_error("CUDA backend: internal: unknown step kind");
}

Status CudaBackend::run_step(Kind kind, int m, int ctx_hint) {
  if (cfg_.cuda_graph) {
    QC_ASSIGN(Graph * g, graph_for(kind, m, ctx_hint));
    QC_CU(cudaGraphLaunch(g->exec_, stream_));
    return Status::success();
  }
  return enqueue(kind, m, ctx_hint, stream_);
}

// ---- forward ----

Result<StepOutput> CudaBackend::forward(std::span<const int32_t> tokens, int pos) {
  return run_forward(tokens, pos, false);
}

// Speculative forward (backend.h): at most kMaxTokens tokens, i.e. one chunk and one weight pass, run by
// the kVerify program, whose GDN kernels also write the states after tokens 0..n-2 into the history
// slots. Everything else -- GEMVs, attention, conv rings, outputs -- is the plain step's, so the rows and
// the final state are the bits forward() gives.
Result<StepOutput> CudaBackend::forward_speculative(std::span<const int32_t> tokens, int pos) {
  if (max_speculative_tokens() == 0)
    return make_error(
        "cuda forward_speculative: the model has no MTP block, so no state history was allocated");
  if (tokens.size() > static_cast<size_t>(max_speculative_tokens()))
    return make_error(
        "cuda forward_speculative: " + std::to_string(static_cast<long long>(tokens.size())) +
        " tokens, at most max_speculative_tokens() = " + std::to_string(max_speculative_tokens()));
  return run_forward(tokens, pos, true);
}

// commit(m) (backend.h). History slot m-1 holds every GDN layer's state after token m-1, laid out like the
// live states: one device-to-device copy of n_gdn * state_floats floats (151 MB for the 27B, ~70 us),
// only when a draft was rejected (m < n). The conv rings need no copy: the input of position t lives in
// slot t % kConvRing, the speculative step wrote only the slots of its positions P..P+n-1, and the next
// step at P+m reads the slots of P+m-kc+1 .. P+m-1: accepted positions (their true inputs) or positions
// before P, whose slots no write of the step reached (a slot of P..P+n-1 equals that of an earlier
// position only 8 or more back, and P+n-1-8 < P+m-kc+1 because n + kc - 1 <= kConvRing, which gdn_step
// checks). KV entries past P+m-1 are rewritten before they are read, as after restore().
Status CudaBackend::commit(int m) {
  if (spec_n_ == 0) return make_error("cuda commit: no speculative forward is pending");
  if (m < 1 || m > spec_n_)
    return make_error("cuda commit: m = " + std::to_string(m) + ", expected 1.." + std::to_string(spec_n_) +
                      " (tokens of the pending speculative forward)");
  if (m < spec_n_ && st_.history_slot_floats > 0)
    QC_CU(cudaMemcpyAsync(st_.gdn_state,
                          st_.gdn_history + static_cast<size_t>(m - 1) * st_.history_slot_floats,
                          st_.history_slot_floats * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  pos_ = spec_pos_ + m;
  spec_n_ = 0;
  return Status::success();
}

Result<StepOutput> CudaBackend::run_forward(std::span<const int32_t> tokens, int pos, bool keep) {
  const int n = static_cast<int>(tokens.size());
  const char* who = keep ? "cuda forward_speculative: " : "cuda forward: ";
  if (spec_n_ > 0)
    return make_error(who + std::string("a speculative forward of ") + std::to_string(spec_n_) +
                          " tokens at position " + std::to_string(spec_pos_) + " is pending",
                      "commit(m) it (or reset) first");
  if (n == 0) return make_error(who + std::string("expected at least one token, got none"));
  if (pos != pos_)
    return make_error(who + std::string("position ") + std::to_string(pos) +
                          " does not continue the context (expected " + std::to_string(pos_) + ")",
                      "the recurrent state has no random access: restore a snapshot or reset first");
  if (n > opt_.max_batch)
    return make_error(who + std::to_string(n) +
                          " tokens in one call, at most max_batch = " + std::to_string(opt_.max_batch),
                      "split the prompt into chunks of max_batch tokens");
  if (static_cast<long long>(pos) + n > n_ctx_)
    return make_error(who + std::string("context full: ") + std::to_string(pos) + " + " + std::to_string(n) +
                          " tokens exceed n_ctx = " + std::to_string(n_ctx_),
                      "start a new conversation or raise --ctx");
  for (int i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= c_.n_vocab)
      return make_error(who + std::string("token ") + std::to_string(i) + " = " + std::to_string(tokens[i]) +
                        " is outside the vocabulary 0.." + std::to_string(c_.n_vocab - 1));
  QC_TRY(apply_config());
  const size_t V = static_cast<size_t>(c_.n_vocab), H = static_cast<size_t>(c_.n_embd);
  for (int c0 = 0, chunk = 0; c0 < n; c0 += gpu::kMaxTokens, ++chunk) {
    const int m = std::min(gpu::kMaxTokens, n - c0);
    int* hs = h_steps_ + static_cast<size_t>(chunk) * 8;
    hs[0] = pos + c0;
    for (int i = 0; i < m; ++i) hs[1 + i] = tokens[static_cast<size_t>(c0 + i)];
    const int ctx = ctx_bucket(pos + c0 + m, n_ctx_);
    // keep: n <= kMaxTokens, so this is the only chunk; with one token there is no state to keep.
    const Kind kind = keep && m > 1 ? Kind::kVerify : Kind::kMain;
    if (cfg_.cuda_graph) QC_TRY(graph_for(kind, m, ctx));  // capture before the copies are enqueued
    QC_CU(cudaMemcpyAsync(sc_.step, hs, 8 * sizeof(int), cudaMemcpyHostToDevice, stream_));
    QC_TRY(run_step(kind, m, ctx));
    QC_CU(cudaMemcpyAsync(h_logits_ + static_cast<size_t>(c0) * V, sc_.logits, static_cast<size_t>(m) * V * 4,
                          cudaMemcpyDeviceToHost, stream_));
    QC_CU(cudaMemcpyAsync(h_hidden_ + static_cast<size_t>(c0) * H, sc_.hidden, static_cast<size_t>(m) * H * 4,
                          cudaMemcpyDeviceToHost, stream_));
  }
  if (cfg_.probes)
    QC_CU(cudaMemcpyAsync(h_norms_, sc_.norms, static_cast<size_t>(c_.n_layer) * 4, cudaMemcpyDeviceToHost,
                          stream_));
  QC_CU(cudaStreamSynchronize(stream_));
  pos_ = pos + n;
  norms_valid_ = cfg_.probes;
  if (keep) {
    spec_n_ = n;
    spec_pos_ = pos;
  }
  StepOutput out;
  out.n_tokens = n;
  out.n_vocab = c_.n_vocab;
  out.n_embd = c_.n_embd;
  out.logits = std::span<const float>(h_logits_, static_cast<size_t>(n) * V);
  out.hidden = std::span<const float>(h_hidden_, static_cast<size_t>(n) * H);
  return out;
}

// The prompt path (backend.h, cuda/prefill_program.h): eager launches (a chunk is thousands of rows'
// work; a graph would save little and need one capture per chunk length), the last row's logits and
// hidden state back in the pinned buffers. A failure part-way leaves the state unknown: the caller resets.
Result<StepOutput> CudaBackend::prefill(std::span<const int32_t> tokens, int pos, const PrefillMtp& mtp) {
  const int n = static_cast<int>(tokens.size());
  const char* who = "cuda prefill: ";
  if (pb_.rows == 0) return make_error(who + std::string("the prompt path is off (prefill_rows = 0)"));
  if (spec_n_ > 0)
    return make_error(who + std::string("a speculative forward is pending"), "commit(m) it (or reset) first");
  if (n < 1 || n > pb_.rows)
    return make_error(
        who + std::to_string(n) + " tokens in one call, expected 1.." + std::to_string(pb_.rows),
        "split the prompt into chunks of prefill_rows() tokens");
  if (pos != pos_)
    return make_error(who + std::string("position ") + std::to_string(pos) +
                          " does not continue the context (expected " + std::to_string(pos_) + ")",
                      "the recurrent state has no random access: restore a snapshot or reset first");
  if (static_cast<long long>(pos) + n > n_ctx_)
    return make_error(who + std::string("context full: ") + std::to_string(pos) + " + " + std::to_string(n) +
                          " tokens exceed n_ctx = " + std::to_string(n_ctx_),
                      "start a new conversation or raise --ctx");
  for (int i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= c_.n_vocab)
      return make_error(who + std::string("token ") + std::to_string(i) + " = " + std::to_string(tokens[i]) +
                        " is outside the vocabulary 0.." + std::to_string(c_.n_vocab - 1));
  const bool entries = mtp.entries && model_.has_mtp;
  if (entries && mtp.next_token >= c_.n_vocab)
    return make_error(who + std::string("next token ") + std::to_string(mtp.next_token) +
                      " is outside the vocabulary");
  if (entries && !mtp.prev_hidden.empty() && mtp.prev_hidden.size() != static_cast<size_t>(c_.n_embd))
    return make_error(who + std::string("prev_hidden has ") +
                      std::to_string(static_cast<long long>(mtp.prev_hidden.size())) +
                      " values, expected n_embd = " + std::to_string(c_.n_embd));
  if (entries && !mtp.prev_hidden.empty() && pos == 0)
    return make_error(who + std::string("prev_hidden at position 0: there is no position before it"));
  QC_TRY(apply_config());
  const size_t V = static_cast<size_t>(c_.n_vocab), H = static_cast<size_t>(c_.n_embd);
  const int rows = pb_.rows;
  int* hp = h_prefill_;             // positions pos-1+r, r = 0..rows+1
  int* ht = h_prefill_ + rows + 2;  // tokens, then the next one
  for (int r = 0; r < n + 2; ++r) hp[r] = pos - 1 + r;
  for (int i = 0; i < n; ++i) ht[i] = tokens[static_cast<size_t>(i)];
  ht[n] = entries && mtp.next_token >= 0 ? mtp.next_token : 0;
  QC_CU(cudaMemcpyAsync(pb_.pos, hp, static_cast<size_t>(n + 2) * sizeof(int), cudaMemcpyHostToDevice,
                        stream_));
  QC_CU(cudaMemcpyAsync(pb_.tokens, ht, static_cast<size_t>(n + 1) * sizeof(int), cudaMemcpyHostToDevice,
                        stream_));
  PrefillChunk ch;
  ch.pos = pos;
  ch.n = n;
  ch.mtp = entries;
  ch.prev_hidden = entries && !mtp.prev_hidden.empty();
  ch.next_token = entries && mtp.next_token >= 0;
  if (ch.prev_hidden) {
    std::memcpy(h_mtp_hin_, mtp.prev_hidden.data(), H * sizeof(float));
    QC_CU(cudaMemcpyAsync(pb_.hidden, h_mtp_hin_, H * sizeof(float), cudaMemcpyHostToDevice, stream_));
  }
  QC_TRY(prefill_->enqueue(ch, stream_));
  QC_CU(cudaMemcpyAsync(h_logits_, sc_.logits, V * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  QC_CU(cudaMemcpyAsync(h_hidden_, pb_.hidden + static_cast<size_t>(n) * H, H * sizeof(float),
                        cudaMemcpyDeviceToHost, stream_));
  QC_CU(cudaStreamSynchronize(stream_));
  pos_ = pos + n;
  norms_valid_ = false;  // the prompt path has no probes; the diagnostics show decode tokens' norms
  StepOutput out;
  out.n_tokens = 1;
  out.n_vocab = c_.n_vocab;
  out.n_embd = c_.n_embd;
  out.logits = std::span<const float>(h_logits_, V);
  out.hidden = std::span<const float>(h_hidden_, H);
  return out;
}

Result<StepOutput> CudaBackend::mtp_forward(int32_t token, std::span<const float> hidden, int pos) {
  if (!model_.has_mtp) return make_error("cuda mtp_forward: the model has no MTP block (nextn layer)");
  if (spec_n_ > 0)
    return make_error("cuda mtp_forward: a speculative forward is pending", "commit(m) it first");
  if (token < 0 || token >= c_.n_vocab)
    return make_error("cuda mtp_forward: token " + std::to_string(token) + " is outside the vocabulary 0.." +
                      std::to_string(c_.n_vocab - 1));
  if (hidden.size() != static_cast<size_t>(c_.n_embd))
    return make_error("cuda mtp_forward: hidden state has " +
                      std::to_string(static_cast<long long>(hidden.size())) +
                      " values, expected n_embd = " + std::to_string(c_.n_embd));
  if (pos < 0 || pos >= n_ctx_)
    return make_error("cuda mtp_forward: position " + std::to_string(pos) + " is outside 0.." +
                      std::to_string(n_ctx_ - 1));
  QC_TRY(apply_config());
  const size_t V = static_cast<size_t>(c_.n_vocab), H = static_cast<size_t>(c_.n_embd);
  // `hidden` may be this backend's own output buffer (chained drafts): staged before anything is written.
  std::memmove(h_mtp_hin_, hidden.data(), H * sizeof(float));
  h_mtp_step_[0] = pos;
  h_mtp_step_[1] = token;
  const int ctx = ctx_bucket(pos + 1, n_ctx_);
  if (cfg_.cuda_graph) QC_TRY(graph_for(Kind::kMtp, 1, ctx));
  QC_CU(cudaMemcpyAsync(sc_.mtp_step, h_mtp_step_, 8 * sizeof(int), cudaMemcpyHostToDevice, stream_));
  QC_CU(cudaMemcpyAsync(sc_.mtp_hin, h_mtp_hin_, H * 4, cudaMemcpyHostToDevice, stream_));
  QC_TRY(run_step(Kind::kMtp, 1, ctx));
  QC_CU(cudaMemcpyAsync(h_mtp_logits_, sc_.mtp_logits, V * 4, cudaMemcpyDeviceToHost, stream_));
  QC_CU(cudaMemcpyAsync(h_mtp_hidden_, sc_.mtp_hidden, H * 4, cudaMemcpyDeviceToHost, stream_));
  QC_CU(cudaStreamSynchronize(stream_));
  StepOutput out;
  out.n_tokens = 1;
  out.n_vocab = c_.n_vocab;
  out.n_embd = c_.n_embd;
  out.logits = std::span<const float>(h_mtp_logits_, V);
  out.hidden = std::span<const float>(h_mtp_hidden_, H);
  return out;
}

// ---- state ----

std::unique_ptr<StateSnapshot> CudaBackend::snapshot() const {
  if (spec_n_ > 0) return nullptr;  // the state of a pending speculation is not a context
  SnapshotPool& pool = *snaps_;
  size_t slot = pool.slots.size();
  for (size_t i = 0; i < pool.slots.size(); ++i)
    if (!pool.used[i]) slot = i;
  if (slot == pool.slots.size()) {
    DeviceBlock blk;
    if (!blk.allocate(std::max<size_t>(st_.recurrent_bytes, 1), "state snapshot").ok()) return nullptr;
    pool.slots.push_back(std::move(blk));
    pool.used.push_back(false);
  }
  if (st_.recurrent_bytes && cudaMemcpyAsync(pool.slots[slot].get(), st_.recurrent_base, st_.recurrent_bytes,
                                             cudaMemcpyDeviceToDevice, stream_) != cudaSuccess)
    return nullptr;
  pool.used[slot] = true;
  return std::make_unique<Snapshot>(snaps_, slot, this, epoch_, pos_);
}

Status CudaBackend::copy_kv(const HostKv* k_in, const HostKv* v_in, HostKv* k_out, HostKv* v_out,
                            int pos) const {
  const size_t n = st_.k_cache.size();
  const bool to_host = k_in == nullptr;
  if (to_host) {
    k_out->assign(n, {});
    v_out->assign(n, {});
  } else if (k_in->size() != n || v_in->size() != n) {
    return make_error("cuda restore: the context snapshot has " +
                      std::to_string(static_cast<long long>(k_in->size())) + " KV caches, this backend " +
                      std::to_string(static_cast<long long>(n)));
  }
  for (size_t i = 0; i < n; ++i) {
    // Layout [n_kv][n_ctx][head_dim]: positions [0, pos) of each head are one contiguous run.
    const size_t heads = static_cast<size_t>(std::max(st_.kv_heads[i], 1));
    const size_t per_head = st_.kv_elems[i] / heads;  // n_ctx * head_dim
    const size_t hd = per_head / static_cast<size_t>(std::max(n_ctx_, 1));
    const size_t elems = heads * static_cast<size_t>(pos) * hd;
    const size_t run = static_cast<size_t>(pos) * hd * sizeof(uint16_t), pitch = per_head * sizeof(uint16_t);
    if (to_host) {
      (*k_out)[i].resize(elems);
      (*v_out)[i].resize(elems);
    } else if ((*k_in)[i].size() != elems || (*v_in)[i].size() != elems) {
      return make_error("cuda restore: the context snapshot's KV cache " +
                        std::to_string(static_cast<long long>(i)) + " does not match this backend's shape");
    }
    if (run == 0) continue;
    if (to_host) {
      QC_CU(cudaMemcpy2DAsync((*k_out)[i].data(), run, st_.k_cache[i], pitch, run, heads,
                              cudaMemcpyDeviceToHost, stream_));
      QC_CU(cudaMemcpy2DAsync((*v_out)[i].data(), run, st_.v_cache[i], pitch, run, heads,
                              cudaMemcpyDeviceToHost, stream_));
    } else {
      QC_CU(cudaMemcpy2DAsync(st_.k_cache[i], pitch, (*k_in)[i].data(), run, run, heads,
                              cudaMemcpyHostToDevice, stream_));
      QC_CU(cudaMemcpy2DAsync(st_.v_cache[i], pitch, (*v_in)[i].data(), run, run, heads,
                              cudaMemcpyHostToDevice, stream_));
    }
  }
  QC_CU(cudaStreamSynchronize(stream_));  // pageable host memory: the copies end before it can change
  return Status::success();
}

std::unique_ptr<StateSnapshot> CudaBackend::snapshot_context() const {
  if (spec_n_ > 0) return nullptr;
  auto s = std::make_unique<ContextSnapshot>();
  s->owner = this;
  s->pos = pos_;
  try {
    s->recurrent.resize(st_.recurrent_bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  if (st_.recurrent_bytes && cudaMemcpyAsync(s->recurrent.data(), st_.recurrent_base, st_.recurrent_bytes,
                                             cudaMemcpyDeviceToHost, stream_) != cudaSuccess)
    return nullptr;
  try {
    if (!copy_kv(nullptr, nullptr, &s->k, &s->v, pos_).ok()) return nullptr;
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  return s;
}

Status CudaBackend::restore(const StateSnapshot& snap) {
  if (const auto* c = dynamic_cast<const ContextSnapshot*>(&snap)) {
    if (c->owner != this) return make_error("cuda restore: the snapshot was taken from another backend");
    if (spec_n_ > 0)
      return make_error("cuda restore: a speculative forward is pending", "commit(m) it (or reset) first");
    if (c->pos > n_ctx_ || c->recurrent.size() != st_.recurrent_bytes)
      return make_error("cuda restore: the context snapshot does not fit this backend's state");
    if (st_.recurrent_bytes)
      QC_CU(cudaMemcpyAsync(st_.recurrent_base, c->recurrent.data(), st_.recurrent_bytes,
                            cudaMemcpyHostToDevice, stream_));
    QC_TRY(copy_kv(&c->k, &c->v, nullptr, nullptr, c->pos));
    pos_ = c->pos;
    return Status::success();
  }
  const auto* s = dynamic_cast<const Snapshot*>(&snap);
  if (!s || s->owner() != this)
    return make_error("cuda restore: the snapshot was taken from another backend");
  if (spec_n_ > 0)
    return make_error("cuda restore: a speculative forward is pending", "commit(m) it (or reset) first");
  if (s->epoch() != epoch_)
    return make_error("cuda restore: the snapshot (position " + std::to_string(s->position()) +
                      ") predates the last reset(); its KV cache entries are gone");
  if (st_.recurrent_bytes)
    QC_CU(cudaMemcpyAsync(st_.recurrent_base, s->data(), st_.recurrent_bytes, cudaMemcpyDeviceToDevice,
                          stream_));
  pos_ = s->position();
  return Status::success();
}

std::span<const float> CudaBackend::layer_norms() const {
  if (!norms_valid_) return {};
  return std::span<const float>(h_norms_, static_cast<size_t>(c_.n_layer));
}

}  // namespace qc::cuda

namespace qc {

namespace {

cuda::CudaBackendOptions backend_options(const CudaLoadOptions& options) {
  cuda::CudaBackendOptions o;
  o.n_ctx = options.n_ctx;
  o.kernels = options.kernels;
  o.memory_limit = options.memory_limit;
  o.progress = options.progress;
  return o;
}

}  // namespace

Result<std::unique_ptr<Backend>> make_cuda_backend(const ModelConfig& config, const ModelWeights& weights,
                                                   const CudaLoadOptions& options) {
  QC_ASSIGN(auto b, cuda::CudaBackend::create(config, weights, backend_options(options)));
  return std::unique_ptr<Backend>(std::move(b));
}

Result<CudaLoadEstimate> estimate_cuda_load(const ModelConfig& config, const ModelWeights& weights,
                                            const CudaLoadOptions& options) {
  QC_ASSIGN(const cuda::DevicePlan d, cuda::plan_on_device(config, weights, true, backend_options(options)));
  CudaLoadEstimate e;
  e.device = d.device_name;
  e.needs = d.plan.mem.total();
  e.avail = d.req.avail;
  e.fits = d.plan.fits;
  e.fit_ctx = d.fit_ctx;
  e.parts = d.plan.mem.describe();
  return e;
}

}  // namespace qc
