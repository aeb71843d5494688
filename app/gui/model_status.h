// What the app knows about the model the worker holds, rebuilt from worker events: loading (with the
// stage), the loaded model's facts, the last load error. No ImGui: tested without a window.
#pragma once

#include <optional>
#include <string>

#include "qwenchat/events.h"

namespace qc::gui {

struct ModelStatus {
  bool loading = false;
  std::string loading_path;
  std::string stage;
  double fraction = -1;        // -1 = no measurable progress (an indeterminate bar)
  double loading_since_s = 0;  // app clock when the load started
  std::optional<ModelFacts> facts;
  std::optional<Error> error;  // the last failed load or backend switch
  std::string error_path;

  // Returns true when the event was about the model (load, switch, settings notices).
  bool on_event(const WorkerEvent& event, double now_s);
};

}  // namespace qc::gui
