// The measurement hooks (cuda_probe.h), moved out of CudaBackend unchanged (#11).
#include "cuda/cuda_probe.h"

#include <algorithm>
#include <string>

namespace qc::cuda {

Result<std::unique_ptr<CudaBackend>> CudaProbe::create_generated(const ModelConfig& config,
                                                                 const ModelWeights& described,
                                                                 WeightSource& source,
                                                                 const CudaBackendOptions& options) {
  return CudaBackend::build(config, described, false, &source, options);
}

uint64_t CudaProbe::weight_bytes_per_token(const CudaBackend& b) {
  uint64_t total = 0;
  for (const TensorSlot& t : b.model_.slots) total += t.device_bytes();
  // The table is read one row per token; when tied, lm_head reads all of it once.
  const uint64_t row = b.model_.embedding_bytes / static_cast<uint64_t>(std::max(b.c_.n_vocab, 1));
  total -= b.model_.embedding_bytes;
  total += row + (b.model_.tied ? b.model_.embedding_bytes : 0);
  // The MTP block does not run in a plain decode step.
  if (b.model_.has_mtp) {
    uint64_t mtp = b.model_.mtp_eh_proj.bytes();
    const DevLayer& L = b.model_.mtp_layer;
    mtp += L.in_proj.bytes() + L.out_proj.bytes() + L.gate_up.bytes() + L.down.bytes();
    total -= mtp;
  }
  return total;
}

uint64_t CudaProbe::kv_bytes_per_token(const CudaBackend& b, int pos) {
  uint64_t total = 0;
  for (const DevLayer& L : b.model_.layers)
    if (!L.recurrent) total += 2ull * L.n_kv * static_cast<uint64_t>(pos + 1) * b.c_.head_dim * 2;
  return total;
}

uint64_t CudaProbe::recurrent_bytes_per_step(const CudaBackend& b) {
  int n_gdn = 0;
  for (const DevLayer& L : b.model_.layers) n_gdn += L.recurrent ? 1 : 0;
  return 2ull * static_cast<uint64_t>(n_gdn) * b.st_.state_floats * 4;
}

std::vector<CudaProbe::Region> CudaProbe::state_regions(const CudaBackend& b) {
  std::vector<Region> r;
  for (size_t i = 0; i < b.st_.k_cache.size(); ++i) {
    r.push_back(Region{b.st_.k_cache[i], b.st_.kv_elems[i], true});
    r.push_back(Region{b.st_.v_cache[i], b.st_.kv_elems[i], true});
  }
  int n_gdn = 0;
  for (const DevLayer& L : b.model_.layers) n_gdn += L.recurrent ? 1 : 0;
  if (n_gdn) r.push_back(Region{b.st_.gdn_state, b.st_.state_floats * static_cast<size_t>(n_gdn), false});
  return r;
}

Status CudaProbe::set_position_unchecked(CudaBackend& b, int pos) {
  if (pos < 0 || pos >= b.n_ctx_)
    return make_error("set_position_unchecked: " + std::to_string(pos) + " outside 0.." +
                      std::to_string(b.n_ctx_ - 1));
  b.pos_ = pos;
  return Status::success();
}

Result<double> CudaProbe::time_steps(CudaBackend& b, int m, int reps, int trials, bool keep_states) {
  if (m < 1 || m > gpu::kMaxTokens)
    return make_error("time_steps: M must be in [1, 4], got " + std::to_string(m));
  if (b.pos_ + m > b.n_ctx_)
    return make_error("time_steps: position " + std::to_string(b.pos_) + " + " + std::to_string(m) +
                      " exceeds n_ctx");
  QC_TRY(b.apply_config());
  int* hs = b.h_steps_;
  hs[0] = b.pos_;
  for (int i = 0; i < m; ++i) hs[1 + i] = (1 + 7919 * i) % b.c_.n_vocab;
  QC_CU(cudaMemcpyAsync(b.sc_.step, hs, 8 * sizeof(int), cudaMemcpyHostToDevice, b.stream_));
  if (keep_states && m > 1 && b.max_speculative_tokens() < m)
    return make_error("time_steps: this backend keeps no per-position states (no MTP block)");
  const CudaBackend::Kind kind = keep_states && m > 1 ? CudaBackend::Kind::kVerify : CudaBackend::Kind::kMain;
  return time_replays(b, kind, m, ctx_bucket(b.pos_ + m, b.n_ctx_), reps, trials);
}

Result<double> CudaProbe::time_mtp_steps(CudaBackend& b, int reps, int trials) {
  if (!b.model_.has_mtp) return make_error("time_mtp_steps: the model has no MTP block");
  if (b.pos_ + 1 > b.n_ctx_)
    return make_error("time_mtp_steps: position " + std::to_string(b.pos_) + " is at n_ctx");
  QC_TRY(b.apply_config());
  // The block's input hidden state is whatever the scratch holds (zeros after load, or the last step's):
  // its value does not change the time.
  b.h_mtp_step_[0] = b.pos_;
  b.h_mtp_step_[1] = 1 % b.c_.n_vocab;
  QC_CU(cudaMemcpyAsync(b.sc_.mtp_step, b.h_mtp_step_, 8 * sizeof(int), cudaMemcpyHostToDevice, b.stream_));
  return time_replays(b, CudaBackend::Kind::kMtp, 1, ctx_bucket(b.pos_ + 1, b.n_ctx_), reps, trials);
}

Result<double> CudaProbe::time_replays(CudaBackend& b, CudaBackend::Kind kind, int m, int ctx, int reps,
                                       int trials) {
  if (b.cfg_.cuda_graph) QC_TRY(b.graph_for(kind, m, ctx));
  QC_TRY(b.run_step(kind, m, ctx));  // warm-up
  Event start, stop;
  QC_TRY(start.create());
  QC_TRY(stop.create());
  std::vector<double> t;
  for (int tr = 0; tr < std::max(trials, 1); ++tr) {
    QC_CU(cudaEventRecord(start.get(), b.stream_));
    for (int i = 0; i < reps; ++i) QC_TRY(b.run_step(kind, m, ctx));
    QC_CU(cudaEventRecord(stop.get(), b.stream_));
    QC_CU(cudaEventSynchronize(stop.get()));
    float ms = 0.0f;
    QC_CU(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    t.push_back(ms * 1e-3 / std::max(reps, 1));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Result<int> CudaProbe::graph_kernel_nodes(CudaBackend& b, int m) {
  if (m < 1 || m > gpu::kMaxTokens) return make_error("graph_kernel_nodes: M must be in [1, 4]");
  QC_TRY(b.apply_config());
  const bool was = b.cfg_.cuda_graph;
  b.cfg_.cuda_graph = true;  // capture even when replays are off; the key does not depend on the flag
  auto g = b.graph_for(CudaBackend::Kind::kMain, m, ctx_bucket(std::min(b.pos_ + m, b.n_ctx_), b.n_ctx_));
  b.cfg_.cuda_graph = was;
  if (!g.ok()) return g.error();
  return (*g)->kernel_nodes;
}

Result<std::vector<LaunchProfiler::Entry>> CudaProbe::profile_step(CudaBackend& b, int m) {
  if (m < 1 || m > gpu::kMaxTokens) return make_error("profile_step: M must be in [1, 4]");
  if (b.pos_ + m > b.n_ctx_) return make_error("profile_step: position + M exceeds n_ctx");
  QC_TRY(b.apply_config());
  int* hs = b.h_steps_;
  hs[0] = b.pos_;
  for (int i = 0; i < m; ++i) hs[1 + i] = (1 + 7919 * i) % b.c_.n_vocab;
  QC_CU(cudaMemcpyAsync(b.sc_.step, hs, 8 * sizeof(int), cudaMemcpyHostToDevice, b.stream_));
  LaunchProfiler prof;
  const int ctx = ctx_bucket(b.pos_ + m, b.n_ctx_);
  QC_TRY(b.prog_->enqueue_main(m, ctx, b.cfg_, b.stream_, nullptr));  // warm-up
  QC_TRY(b.prog_->enqueue_main(m, ctx, b.cfg_, b.stream_, &prof));
  QC_TRY(prof.collect(b.stream_));
  return prof.entries();
}

}  // namespace qc::cuda
