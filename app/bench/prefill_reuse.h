// What a user waits for before the first token: prompt processing (prefill) at several prompt lengths,
// and the time to first token of a message after a long conversation, from scratch and from a kept state
// (runtime/prefix_cache.h). Random token ids: prefill cost does not depend on which tokens they are.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/backend.h"

namespace qc::bench_app {

struct PrefillReuseOptions {
  std::vector<int> prefill = {512, 2048, 8192};  // prompt lengths for the prefill rate
  int history = 8000;  // conversation before the message
  int message = 100;   // the new message's tokens
};

// Prints one line per measurement and returns them as JSON ({"prefill": [...], "reuse": {...}}).
// `out_of_time(what)` is asked before each long step; true skips the rest.
nlohmann::json measure_prefill_and_reuse(Backend& backend, const PrefillReuseOptions& options,
                                         const std::function<bool(const std::string&)>& out_of_time);

}  // namespace qc::bench_app
