// Frame times of the GUI, for the frame-time benchmark (tests/gui/frame_time_bench.sh, docs/PERFORMANCE.md):
// the wall time of each App::frame() -- events, layout, ImGui render, GL draw and swap; not the idle wait
// between frames -- kept when `qwenchat --frame-stats PATH` asks, written as JSON at exit.
#pragma once

#include <string>
#include <vector>

#include "qwenchat/result.h"

namespace qc::gui {

class FrameStats {
 public:
  void add(double ms) { ms_.push_back(ms); }
  size_t count() const { return ms_.size(); }
  // The q-quantile (0..1, nearest rank) of the frames after the first `skip` (start-up: font atlas,
  // the first layout of the conversation); 0 when there are none.
  double quantile(double q, size_t skip) const;
  // {"frames": n, "skipped": skip, "median_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms"} to path.
  Status write(const std::string& path, size_t skip) const;

 private:
  std::vector<double> ms_;
};

}  // namespace qc::gui
