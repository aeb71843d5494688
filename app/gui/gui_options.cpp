#include "gui_options.h"

#include <vector>

#include "common/args.h"
#include "qwenchat/engine.h"

namespace qc::gui {
namespace {

const std::vector<app::OptionSpec>& specs() {
  static const std::vector<app::OptionSpec> kSpecs = {
      {"db", true, "conversation database (default $XDG_DATA_HOME/qwenchat/qwenchat.db)"},
      {"model", true, "GGUF model to load at start (default: the last one used, else the bundled model)"},
      {"backend", true, "cpu, cpu-f64 or cuda (default: the last one used)"},
      {"screenshot-dir", true, "F12 writes PNG captures of every panel into this folder"},
      {"frame-stats", true, "at exit, write frame-time statistics (JSON) to this file (the frame-time benchmark)"},
      {"help", false, "this text"},
  };
  return kSpecs;
}

}  // namespace

std::string gui_usage() {
  return "usage: qwenchat [--db PATH] [--model FILE] [--backend cpu|cpu-f64|cuda] [--screenshot-dir DIR]\n               [--frame-stats FILE]\n" +
         app::Args::usage(specs());
}

Result<GuiOptions> parse_gui_options(int argc, char** argv) {
  QC_ASSIGN(app::Args a, app::Args::parse(argc, argv, 1, specs()));
  if (!a.positional().empty()) return make_error("unexpected argument \"" + a.positional().front() + "\"");
  GuiOptions o;
  o.help = a.has("help");
  o.db_path = a.get_or("db", "");
  o.model_path = a.get_or("model", "");
  o.backend = a.get_or("backend", "");
  o.screenshot_dir = a.get_or("screenshot-dir", "");
  o.frame_stats = a.get_or("frame-stats", "");
  if (!o.backend.empty()) QC_TRY(parse_backend_kind(o.backend));
  return o;
}

}  // namespace qc::gui
