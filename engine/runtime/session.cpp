#include "qwenchat/session.h"

namespace qc {

Status EngineSettings::validate() const {
  auto bad = [](const char* field, const char* range, int got) {
    return make_error(std::string("engine setting ") + field + " must be in " + range + ", got " +
                      std::to_string(got));
  };
  if (n_ctx < 16 || n_ctx > (1 << 20)) return bad("n_ctx", "[16, 1048576]", n_ctx);
  if (n_threads < 0 || n_threads > 1024) return bad("n_threads", "[0, 1024] (0 = all cores)", n_threads);
  if (state_cache_mb < 0 || state_cache_mb > (1 << 20))
    return bad("state_cache_mb", "[0, 1048576] (0 = live state only)", state_cache_mb);
  if (gpu_memory_mb < 0 || gpu_memory_mb > (1 << 22))
    return bad("gpu_memory_mb", "[0, 4194304] (0 = the free device memory)", gpu_memory_mb);
  if (const std::string k = kernels.validate(); !k.empty()) return make_error("engine setting kernels: " + k);
  return {};
}

}  // namespace qc
