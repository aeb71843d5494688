#include "cuda/memory_plan.h"

#include <algorithm>
#include <cstdio>

#include "cuda/prefill_weights.h"

namespace qc::cuda {
namespace {

void add_note(std::string& notes, const std::string& n) {
  notes += (notes.empty() ? "" : "; ") + n;
}

}  // namespace

Result<MemoryPlan> plan_memory(const MemoryPlanRequest& r) {
  const ModelConfig& c = *r.config;
  const ModelWeights& w = *r.weights;
  MemoryPlan p;
  auto fits = [&](uint64_t bytes) { return bytes + kMemoryReserve <= r.avail; };
  auto estimate = [&]() {
    return estimate_memory(c, w, r.have_data, r.n_ctx, p.with_history, r.sm_count, p.prefill_rows, p.prefill_f16,
                           r.gdn_scan);
  };
  // The prompt path's chunk never exceeds the context (a small model's 512 positions need no 1024 rows).
  p.prefill_rows = std::min(r.prefill_rows, r.n_ctx);
  if (p.prefill_rows > 0 && r.prefill_gemm != PrefillGemm::kInt8) {
    p.prefill_f16 = r.cublaslt;
    if (!p.prefill_f16 && r.prefill_gemm == PrefillGemm::kF16)
      return make_error("CUDA backend: the f16 prompt path needs cuBLASLt: " + r.cublaslt_why);
    if (!p.prefill_f16)
      add_note(p.note, "the prompt path runs on int8 tensor cores (about 3x slower than f16): " + r.cublaslt_why);
  }
  QC_ASSIGN(p.mem, estimate());
  // Chunks of more than 1024 rows are the first thing to give up: 1024-row chunks lose only the second
  // chunk's weight pass of a long prompt (CudaBackendOptions::prefill_rows) and give the same bits.
  if (!fits(p.mem.total()) && p.prefill_rows > kFallbackPrefillRows) {
    const int asked = p.prefill_rows;
    p.prefill_rows = kFallbackPrefillRows;
    QC_ASSIGN(p.mem, estimate());
    add_note(p.note, "prompt chunks of " + std::to_string(kFallbackPrefillRows) + " tokens (" +
                         std::to_string(asked) + " do not fit)");
  }
  // The MTP state history (432 MiB for the 27B) is worth a model that loads: without it, MTP verification
  // falls back to snapshot + restore + re-run (one extra weight pass per rejection), still exact.
  if (!fits(p.mem.total()) && p.mem.history > 0 && fits(p.mem.total() - p.mem.history)) {
    char note[200];
    std::snprintf(note, sizeof note,
                  "the MTP state history (%.2f GiB) does not fit: MTP verification re-runs accepted tokens "
                  "after a rejection instead (exact, one extra weight pass per rejection)",
                  gib(p.mem.history));
    add_note(p.note, note);
    p.with_history = false;
    QC_ASSIGN(p.mem, estimate());
  }
  // The f16 GEMM's buffers (a weight slice of up to 192 MiB) before the whole prompt path.
  if (p.prefill_f16 && !fits(p.mem.total())) {
    p.prefill_f16 = false;
    QC_ASSIGN(const MemoryEstimate int8, estimate());
    if (fits(int8.total())) {
      if (r.prefill_gemm == PrefillGemm::kF16)
        return make_error("CUDA backend: the f16 prompt path's buffers (" +
                          std::to_string(static_cast<long long>((p.mem.prefill - int8.prefill) >> 20)) +
                          " MiB) do not fit");
      add_note(p.note, "the f16 prompt path's buffers do not fit: prompts run on int8 tensor cores");
      p.mem = int8;
    } else {
      p.prefill_f16 = true;
    }
  }
  // Then the prompt path's buffers: without them prompts run at decode speed, but the model loads.
  if (!fits(p.mem.total()) && p.mem.prefill > 0 && fits(p.mem.total() - p.mem.prefill)) {
    char note[200];
    std::snprintf(note, sizeof note,
                  "the prompt path's buffers (%.2f GiB) do not fit: prompts are processed at decode speed",
                  gib(p.mem.prefill));
    add_note(p.note, note);
    p.prefill_rows = 0;
    p.prefill_f16 = false;
    QC_ASSIGN(p.mem, estimate());
  }
  // The f16 path's resident weights (prefill_weights.h): only where a quarter of the card stays free after
  // them (kept conversation states, other programs), unless asked for.
  if (p.prefill_f16 && r.prefill_weights != PrefillWeights::kPerChunk) {
    Carver dry;
    QC_ASSIGN(const DeviceModel shape, layout_model(c, w, r.have_data, dry));
    const uint64_t bytes = prefill_f16_weight_bytes(shape);
    const uint64_t headroom = r.prefill_weights == PrefillWeights::kResident ? 0 : r.card / 4;
    p.f16_resident = fits(p.mem.total() + bytes + headroom);
    if (p.f16_resident) {
      p.mem.prefill_weights = bytes;
    } else if (r.prefill_weights == PrefillWeights::kResident) {
      return make_error("CUDA backend: the prompt path's resident f16 weights (" +
                            std::to_string(static_cast<long long>(bytes >> 20)) + " MiB) do not fit beside " +
                            p.mem.describe(),
                        "let them be dequantised per chunk (prefill weights: auto or per-chunk)");
    }
  }
  p.fits = fits(p.mem.total());
  return p;
}

Result<int> largest_fitting_context(const MemoryPlanRequest& r) {
  auto fits_at = [&](int n_ctx) -> Result<bool> {
    MemoryPlanRequest q = r;
    q.n_ctx = n_ctx;
    auto p = plan_memory(q);
    if (!p.ok()) return false;  // an explicit request that cannot be had at this context
    return p->fits;
  };
  QC_ASSIGN(const bool at_max, fits_at(r.n_ctx));
  if (at_max) return r.n_ctx;
  int lo = 0, hi = r.n_ctx;  // fits_at(lo) (or lo = 0), !fits_at(hi)
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    QC_ASSIGN(const bool ok, fits_at(mid));
    (ok ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace qc::cuda
