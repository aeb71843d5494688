// The desktop app: owns the store, the worker, the chat controller, the configuration and the panels;
// runs the frame loop (drain worker events once per frame, shortcuts, layout, requests, captures).
// The UI thread never waits on the engine: events arrive through Worker::drain(), and the worker wakes
// the loop with glfwPostEmptyEvent.
#pragma once

#include <memory>
#include <string>

#include "api_host.h"
#include "chat_panel.h"
#include "diagnostics_panel.h"
#include "export_dialog.h"
#include "frame_stats.h"
#include "gui_options.h"
#include "layout.h"
#include "model_panel.h"
#include "screenshot.h"
#include "settings_panel.h"
#include "sidebar_panel.h"
#include "store/instance_lock.h"
#include "ui_context.h"

struct GLFWwindow;

namespace qc::gui {

// Whether a window at (x, y) of size w x h would have its title-bar corner on a connected monitor (a
// saved place on a monitor that is gone is not restored). False for x = y = -1 (never placed).
bool position_is_visible(int x, int y, int w, int h);

class App {
 public:
  // Opens the store and the configuration; errors (an unreadable database, a database another qwenchat
  // has open: store/instance_lock.h) end the app before a window is shown.
  static Result<std::unique_ptr<App>> create(const GuiOptions& options);
  ~App();

  // Runs until the window closes. The ImGui context and its GLFW/OpenGL backends must be set up.
  void run(GLFWwindow* window);

  const std::string& ini_path() const { return ini_path_; }

  // GLFW key callback (installed before ImGui's, which chains to it). Shortcuts are taken from these
  // edges rather than ImGui's key state: ImGui 1.86 samples key state once per frame, so a press and
  // release that arrive together (a fast typist, xdotool) would be missed.
  void on_key(int key, int action, int mods);
  // GLFW drop callback: the paths are handled in the next frame (ModelPanel::on_drop).
  void on_drop(int count, const char** paths);
  const AppConfig& config() const { return config_; }

 private:
  App(store::InstanceLock lock, store::Store store, std::string config_dir, const GuiOptions& options);
  void start();
  void frame(GLFWwindow* window);
  void drain_events();
  void apply_api_server();  // starts/stops the API server as the settings say
  void shortcuts();
  void layout();
  void menu_bar();
  void status_bar(float height);
  void handle_requests();
  void update_title(GLFWwindow* window);
  void remember_window(GLFWwindow* window);
  void toggle_sidebar();
  void toggle_inspector();  // size and place into the config (saved when changed)
  void zoom(int step);      // UI scale: +1 / -1 a step of 0.25, 0 back to 1
  // A draggable bar between two columns (x: its left edge); returns the horizontal drag this frame.
  float splitter(const char* id, float x, float y, float w, float h);
  UiContext context();

  GuiOptions options_;
  std::string config_dir_;
  std::string config_path_;
  std::string ini_path_;
  AppConfig config_;
  store::InstanceLock instance_lock_;  // held while the app runs: one app per database
  store::Store store_;
  // Declared before the worker, so destroyed after it: the worker's event hook calls api_ until the
  // worker's thread has ended (~App also stops the server before the worker goes).
  ApiHost api_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<ChatController> chat_;
  std::unique_ptr<EngineControl> engine_;  // the panels' way to the worker for all but chat
  ModelStatus model_;
  DiagnosticsState diag_;
  Fonts fonts_;
  Theme theme_;
  Notices notices_;
  AppRequests requests_;
  struct KeyPress {
    int key = 0;
    int mods = 0;
  };
  std::vector<KeyPress> key_presses_;  // since the last frame
  std::vector<int> frame_keys_;        // this frame's presses, for the panels (UiContext::keys)
  std::vector<std::string> dropped_;   // files dropped since the last frame
  bool key_copy_ = false, key_escape_ = false, key_shift_enter_ = false;  // this frame's, for UiContext
  std::string title_;
  double now_s_ = 0;
  double config_saved_at_ = 0;
  bool config_dirty_ = false;
  // The model the app loads at start, from the recent list: when it fails, the bundled default loads
  // instead (a clean start after any earlier failure). Empty once that load has answered.
  std::string startup_model_;
  // Load and backend outcomes into the saved configuration: the recent list holds models that loaded, and
  // the backend setting stays one that worked.
  void remember_model_events(const WorkerEvent& e);

  SidebarPanel sidebar_;
  ChatPanel chat_panel_;
  ModelPanel model_panel_;
  SettingsPanel settings_panel_;
  DiagnosticsPanel diagnostics_panel_;
  ExportDialog export_dialog_;
  ScreenshotSequence shots_;
  FrameStats frame_stats_;  // kept with --frame-stats
  ImVec4 rect_sidebar_, rect_chat_, rect_inspector_;  // x, y, w, h of the last frame's panels
};

}  // namespace qc::gui
