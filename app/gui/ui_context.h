// What the panels share: the engine control, the chat controller, the store, the configuration, the model and
// diagnostics state, fonts and theme, and the notice line. Owned by App; panels get a reference per frame.
#pragma once

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "app_config.h"
#include "chat_controller.h"
#include "diagnostics_state.h"
#include "engine_control.h"
#include "fonts.h"
#include "model_status.h"
#include "qwenchat/result.h"
#include "theme.h"

namespace qc::gui {

// Messages for the status line at the bottom of the window (errors in red). Every error reaches the user.
struct Notices {
  struct Entry {
    bool error = false;
    std::string text;
    double at_s = 0;
  };
  std::deque<Entry> entries;  // oldest first, at most 100
  double now_s = 0;
  void info(std::string text) { push(false, std::move(text)); }
  void error(std::string text) { push(true, std::move(text)); }
  // Reports a failed Status with a context ("send: ..."); returns s.ok().
  bool check(const Status& s, const char* what) {
    if (!s.ok()) error(std::string(what) + ": " + s.error().describe());
    return s.ok();
  }

 private:
  void push(bool err, std::string text) {
    entries.push_back({err, std::move(text), now_s});
    if (entries.size() > 100) entries.pop_front();
  }
};

// Requests panels make of the app (handled after the frame).
struct AppRequests {
  bool save_config = false;
  bool rebuild_fonts = false;  // UI scale changed
  bool apply_theme = false;
  bool open_export = false;
  bool open_search = false;
  bool open_model_chooser = false;  // Ctrl+O, File > Open model…, the welcome panel's button
  bool new_conversation = false;
  bool apply_api_server = false;  // the API server setting or port changed
};

struct UiContext {
  EngineControl& engine;  // model, settings, backend and kernels (chat: `chat`)
  ChatController& chat;
  store::Store& store;
  AppConfig& config;
  ModelStatus& model;
  DiagnosticsState& diag;
  const Fonts& fonts;
  const Theme& theme;
  Notices& notices;
  AppRequests& requests;
  double now_s = 0;
  std::string api_status;  // ApiHost::status(), shown in Settings
  // This frame's key presses (GLFW key codes) from the key callback: ImGui 1.86 misses a press and release
  // that arrive within one frame (App::on_key), so list keyboard navigation reads these.
  const std::vector<int>* keys = nullptr;

  bool pressed(int glfw_key) const {
    return keys != nullptr && std::find(keys->begin(), keys->end(), glfw_key) != keys->end();
  }

  // Keys pressed this frame, from GLFW's key callback (ImGui 1.86 loses a press and release that arrive
  // between two frames, as xdotool's and fast taps do).
  bool key_copy = false;  // Ctrl+C or Ctrl+Insert
  bool key_escape = false;
  // Enter pressed with Shift held, as the press event says (its modifiers). ImGui 1.86 reads Shift from the
  // keys' current state: when one frame takes longer than the keys are held (a loaded machine), the Shift
  // of a quick Shift+Enter is already released when the frame reads it, and the draft was sent instead of
  // getting a new line (gui_random_input, seed 20261204, 2026-12-04).
  bool key_shift_enter = false;

  float em() const { return fonts.size; }  // sizes are multiples of the font size (STYLE.md)
  ReplySetup reply_setup() const {
    ReplySetup r;
    r.settings = config.settings;
    if (model.facts) {
      r.model_path = model.facts->path;
      r.kernel = model.facts->kernel_variant();
      if (model.facts->n_mtp == 0) r.settings.mtp.enabled = false;  // no "MTP requested but..." notice per reply
    }
    return r;
  }
};

}  // namespace qc::gui
