// FrameStats (app/gui/frame_stats.h): nearest-rank quantiles after the skipped start-up frames, and the
// JSON the frame-time benchmark reads.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

#include "frame_stats.h"

namespace qc::gui {
namespace {

TEST(GuiFrameStats, QuantilesByNearestRankAfterTheSkippedFrames) {
  FrameStats f;
  f.add(1000.0);  // a start-up frame: skipped below
  for (int i = 1; i <= 100; ++i) f.add(static_cast<double>(i));
  EXPECT_EQ(f.count(), 101u);
  EXPECT_DOUBLE_EQ(f.quantile(0.5, 1), 50.0);
  EXPECT_DOUBLE_EQ(f.quantile(0.9, 1), 90.0);
  EXPECT_DOUBLE_EQ(f.quantile(0.99, 1), 99.0);
  EXPECT_DOUBLE_EQ(f.quantile(1.0, 1), 100.0);
  EXPECT_DOUBLE_EQ(f.quantile(0.0, 1), 1.0);
  EXPECT_DOUBLE_EQ(f.quantile(1.0, 0), 1000.0);
  EXPECT_DOUBLE_EQ(f.quantile(0.5, 101), 0.0);  // nothing left
}

TEST(GuiFrameStats, WritesTheFiguresAsJsonAndReportsAnUnwritablePath) {
  FrameStats f;
  for (double ms : {5.0, 3.0, 4.0, 100.0}) f.add(ms);
  const std::string path = ::testing::TempDir() + "frame_stats_test.json";
  ASSERT_TRUE(f.write(path, 1).ok());
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["frames"], 3);
  EXPECT_EQ(j["skipped"], 1);
  EXPECT_DOUBLE_EQ(j["median_ms"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["max_ms"].get<double>(), 100.0);
  EXPECT_NEAR(j["mean_ms"].get<double>(), 107.0 / 3.0, 1e-12);
  std::remove(path.c_str());
  const Status bad = f.write("/nonexistent-folder-qwenchat/x.json", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("/nonexistent-folder-qwenchat/x.json"), std::string::npos);
}

}  // namespace
}  // namespace qc::gui
