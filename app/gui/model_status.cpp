#include "model_status.h"

namespace qc::gui {

bool ModelStatus::on_event(const WorkerEvent& event, double now_s) {
  if (const auto* l = std::get_if<ModelLoading>(&event)) {
    if (!loading) loading_since_s = now_s;
    loading = true;
    loading_path = l->path;
    stage = l->stage;
    fraction = l->fraction;
    return true;
  }
  if (const auto* m = std::get_if<ModelLoaded>(&event)) {
    loading = false;
    facts = m->facts;
    error.reset();
    error_path.clear();
    return true;
  }
  if (const auto* f = std::get_if<ModelLoadFailed>(&event)) {
    loading = false;
    error = f->error;
    error_path = f->path;
    return true;
  }
  if (const auto* n = std::get_if<WorkerNotice>(&event)) {
    if (n->ok && n->what == "unload") facts.reset();  // the worker holds no model any more
    if (!n->ok) {
      error = make_error(n->what + ": " + n->message);
      error_path.clear();
    }
    return true;
  }
  return false;
}

}  // namespace qc::gui
