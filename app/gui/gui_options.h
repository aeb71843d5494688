// The desktop app's command line: qwenchat [--db PATH] [--model FILE] [--backend cpu|cpu-f64|cuda]
// [--screenshot-dir DIR].
#pragma once

#include <string>

#include "qwenchat/result.h"

namespace qc::gui {

struct GuiOptions {
  std::string db_path;         // empty: store::default_db_path()
  std::string model_path;      // empty: the last model used, else the bundled default model
  std::string backend;         // empty: the configured one
  std::string screenshot_dir;  // F12 writes panel captures here
  std::string frame_stats;     // at exit, frame-time statistics as JSON here (frame_stats.h)
  bool help = false;
};

Result<GuiOptions> parse_gui_options(int argc, char** argv);
std::string gui_usage();

}  // namespace qc::gui
