#include "qwenchat/session.h"

namespace qc {

Status EngineSettings::validate() const {
  auto bad = [](const char* field, const std::string& range, int got) {
    return make_error(std::string("engine setting ") + field + " must be in " + range + ", got " +
                      std::to_string(got));
  };
  const auto range = [](int lo, int hi, const char* note) {
    return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]" + note;
  };
  if (n_ctx < kMinCtx || n_ctx > kMaxCtx) return bad("n_ctx", range(kMinCtx, kMaxCtx, ""), n_ctx);
  if (n_threads < 0 || n_threads > kMaxThreads)
    return bad("n_threads", range(0, kMaxThreads, " (0 = all cores)"), n_threads);
  if (state_cache_mb < 0 || state_cache_mb > kMaxStateCacheMb)
    return bad("state_cache_mb", range(0, kMaxStateCacheMb, " (0 = live state only)"), state_cache_mb);
  if (gpu_memory_mb < 0 || gpu_memory_mb > kMaxGpuMemoryMb)
    return bad("gpu_memory_mb", range(0, kMaxGpuMemoryMb, " (0 = the free device memory)"), gpu_memory_mb);
  if (const std::string k = kernels.validate(); !k.empty()) return make_error("engine setting kernels: " + k);
  return {};
}

}  // namespace qc
