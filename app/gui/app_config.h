// The per-user configuration: settings, recent models, last backend, panel widths. A JSON file in
// $XDG_CONFIG_HOME/qwenchat/ (else ~/.config/qwenchat/), next to ImGui's layout file, never in the CWD.
#pragma once

#include <string>
#include <vector>

#include "qwenchat/events.h"
#include "qwenchat/result.h"
#include "settings.h"

namespace qc::gui {

// $XDG_CONFIG_HOME/qwenchat, else $HOME/.config/qwenchat (created on demand). Error when neither variable
// is usable.
Result<std::string> config_dir();

struct AppConfig {
  Settings settings;
  std::vector<std::string> recent_models;  // most recent first, at most kMaxRecent
  std::string backend = "cpu";             // "cpu", "cpu-f64", "cuda"
  // The model source: a local GGUF (recent_models.front()) or, with use_remote, an OpenAI-compatible
  // endpoint. Its API key is not written here (a config file is not a secret store): it is typed in the
  // Model panel, or comes from QWENCHAT_REMOTE_API_KEY.
  bool use_remote = false;
  std::string remote_url;    // "http://host:8000/v1"
  std::string remote_model;  // empty = the first model the endpoint lists
  float sidebar_em = 17.0f;                // panel widths in multiples of the font size
  float inspector_em = 30.0f;
  bool show_sidebar = true;    // Ctrl+B
  bool show_inspector = true;  // Ctrl+I
  // The window as it was at the last exit (screen coordinates; x/y -1 = let the window manager place
  // it). The size is never below the minimum.
  int window_x = -1, window_y = -1;
  int window_w = 1600, window_h = 1000;
  static constexpr int kMinWindowW = 800, kMinWindowH = 500;  // docs/GUI.md "Layout and keys"
  static constexpr float kMinSidebarEm = 8, kMaxSidebarEm = 60, kMinInspectorEm = 12, kMaxInspectorEm = 80;

  static constexpr size_t kMaxRecent = 10;
  void add_recent(const std::string& path);
  // What a load or backend switch teaches the configuration: a model that loaded goes first in the recent
  // list (a path that failed never enters it) and its backend becomes the setting; after a failed load
  // or switch the setting goes back to the backend of the model still loaded (`loaded`; none loaded: the
  // CPU backend, the one that always exists), so a failed CUDA switch is not what the next start tries.
  // Returns true when something changed.
  bool on_model_loaded(const ModelFacts& facts);
  bool on_model_failure(const ModelFacts* loaded);
  // A recent model whose file is gone leaves the list (one that failed otherwise, e.g. out of GPU
  // memory, stays: the file is still good). Returns true when it was removed.
  bool forget_if_missing(const std::string& path);

  // A missing file gives the defaults; a broken one gives the defaults and a warning (the app starts).
  static AppConfig load(const std::string& path, std::vector<std::string>* warnings);
  // Written to "<path>.tmp" then renamed over path, so a crash never leaves half a file.
  Status save(const std::string& path) const;
};

}  // namespace qc::gui
