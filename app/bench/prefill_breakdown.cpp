#include "prefill_breakdown.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "cuda/cuda_probe.h"
#include "cuda/prefill_profile.h"

namespace qc::bench_app {

nlohmann::json profile_prefill(cuda::CudaBackend& backend, int tokens, int after, const std::string& setup) {
  tokens = std::max(1, std::min(tokens, backend.n_ctx() - 1 - after));
  std::mt19937 rng(77);
  std::uniform_int_distribution<int32_t> d(0, std::min(backend.config().n_vocab, 100000) - 1);
  std::vector<int32_t> t(static_cast<size_t>(after + tokens));
  for (int32_t& x : t) x = d(rng);
  cuda::PrefillProfile prof;
  backend.reset();
  std::string err;
  auto run = [&](int from, int to) {
    for (int at = from; at < to && err.empty(); at += backend.prefill_rows()) {
      const int n = std::min(backend.prefill_rows(), to - at);
      Backend::PrefillMtp m;
      m.entries = true;
      if (at + n < static_cast<int>(t.size())) m.next_token = t[static_cast<size_t>(at + n)];
      auto r = backend.prefill(std::span<const int32_t>(t.data() + at, static_cast<size_t>(n)), at, m);
      if (!r.ok()) err = r.error().describe();
    }
  };
  // Warm-up with MTP entries (the rate measurements write none): the first launch of a kernel loads its
  // module (CUDA's lazy loading), and the MTP block's eh_proj GEMM (K = 2H, a shape of its own) had its
  // first launch inside this profile, a likely reason for its 0.4-20 ms against 0.15 ms alone
  // (docs/PERFORMANCE.md, 2026-12-06 fourth and fifth sessions; not yet measured with this warm-up).
  run(0, std::min(tokens, 64));
  backend.reset();
  run(0, after);
  cuda::CudaProbe::set_prefill_profile(backend, &prof);
  const auto t0 = std::chrono::steady_clock::now();
  run(after, after + tokens);
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  cuda::CudaProbe::set_prefill_profile(backend, nullptr);
  if (!err.empty()) {
    std::printf("  prefill breakdown: ERROR %s\n", err.c_str());
    return nullptr;
  }
  const auto totals = prof.totals();
  double sum = 0.0;
  for (const auto& [phase, ms] : totals) sum += ms;
  std::printf("\n== where a %d-token prompt's time goes%s (device time per phase, %s) ==\n", tokens,
              after ? (" after " + std::to_string(after) + " tokens").c_str() : "", setup.c_str());
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [phase, ms] : totals) {
    std::printf("  %-28s %9.2f ms %5.1f%%\n", phase.c_str(), ms, sum > 0 ? 100.0 * ms / sum : 0.0);
    rows.push_back({{"phase", phase}, {"ms", ms}});
  }
  std::printf("  %-28s %9.2f ms (wall %.2f ms, %.0f tok/s with the events)\n", "sum", sum, wall_ms,
              tokens / (wall_ms / 1e3));
  // Which cuBLASLt algorithm each projection's shape ran (the f16 GEMM; none on the int8 path).
  for (const std::string& n : prof.notes()) std::printf("  cuBLASLt %s\n", n.c_str());
  return {{"tokens", tokens},
          {"after", after},
          {"phases", rows},
          {"wall_ms", wall_ms},
          {"gemm_algorithms", prof.notes()}};
}

}  // namespace qc::bench_app
