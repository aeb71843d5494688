// The model tab: a GGUF path (text field + recent list kept in the config), Load with a progress bar,
// the backend choice (CUDA disabled with the reason when it is not available), the memory estimate and
// the loaded model's facts, and load errors in the window.
#pragma once

#include <future>
#include <optional>
#include <string>
#include <vector>

#include "file_browser.h"
#include "qwenchat/engine.h"
#include "ui_context.h"

namespace qc::gui {

class ModelPanel {
 public:
  void draw(UiContext& ctx);
  // Posts a load of `path` with the configured backend and engine settings; remembers it as recent.
  static void load(UiContext& ctx, const std::string& typed);
  // Connects to the configured remote endpoint (config.remote_url/remote_model, the key typed here or
  // QWENCHAT_REMOTE_API_KEY); the endpoint then runs every reply.
  static void connect(UiContext& ctx);
  // The model file chooser (Browse…, Ctrl+O, File > Open model…, the welcome panel): open it, and draw it
  // every frame (App, at the top level: it works with the inspector hidden).
  void open_chooser(UiContext& ctx);
  void draw_chooser(UiContext& ctx);
  // Files dropped on the window (glfwSetDropCallback): the first .gguf is chosen (files::choose_dropped).
  void on_drop(UiContext& ctx, const std::vector<std::string>& paths);
  // A file picked in the chooser or dropped: it becomes the path, its header gives the memory estimate
  // (a file that is not a model this app can load is reported and not loaded), then it loads. The recent
  // list takes it only once it has loaded.
  void choose(UiContext& ctx, const std::string& path, const std::string& how);

 private:
  void file_section(UiContext& ctx);
  void backend_section(UiContext& ctx);
  void remote_section(UiContext& ctx);
  void progress(UiContext& ctx);
  void facts(UiContext& ctx);
  void estimate(UiContext& ctx);  // the memory a load of path_ would take (qwenchat/engine.h estimate_load)
  void device_estimate(UiContext& ctx, const LoadEstimate& e);  // its CUDA part

  std::string path_;
  static inline std::string remote_key_;  // typed API key, this session only
  bool path_initialised_ = false;
  std::string estimate_key_;  // path, context, backend and mtime the estimate is for
  std::optional<Result<LoadEstimate>> estimate_;
  // The estimate runs off the GUI thread: its CUDA part opens the device (the first time a CUDA context,
  // 0.1-0.5 s) and asks for its free memory, which must not stall a frame. One at a time; a key that changed
  // meanwhile starts the next one when it is done.
  std::future<Result<LoadEstimate>> pending_;
  std::string pending_key_;
  FileChooser chooser_{"model_file"};
  std::string choose_error_;       // the last dropped or picked file that could not be loaded, shown in the tab
  std::string choose_error_path_;  // its path (empty: a drop with no model file in it)
};

}  // namespace qc::gui
