#include "frame_stats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace qc::gui {

double FrameStats::quantile(double q, size_t skip) const {
  if (ms_.size() <= skip) return 0.0;
  std::vector<double> v(ms_.begin() + static_cast<std::ptrdiff_t>(skip), ms_.end());
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size()));
  const size_t i = rank < 1.0 ? 0 : static_cast<size_t>(rank) - 1;
  return v[std::min(i, v.size() - 1)];
}

Status FrameStats::write(const std::string& path, size_t skip) const {
  double sum = 0.0;
  for (size_t i = skip; i < ms_.size(); ++i) sum += ms_[i];
  const size_t n = ms_.size() > skip ? ms_.size() - skip : 0;
  nlohmann::json j = {{"frames", n},
                      {"skipped", std::min(skip, ms_.size())},
                      {"median_ms", quantile(0.5, skip)},
                      {"p90_ms", quantile(0.9, skip)},
                      {"p99_ms", quantile(0.99, skip)},
                      {"max_ms", quantile(1.0, skip)},
                      {"mean_ms", n ? sum / static_cast<double>(n) : 0.0}};
  std::ofstream f(path, std::ios::trunc);
  if (!f) return make_error("frame stats: cannot write " + path);
  f << j.dump(2) << "\n";
  f.close();
  if (!f) return make_error("frame stats: writing " + path + " failed");
  return Status::success();
}

}  // namespace qc::gui
