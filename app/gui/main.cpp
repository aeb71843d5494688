// qwenchat: the desktop chat app. Sets up GLFW + OpenGL 3.3 + Dear ImGui and runs the App. Without a
// display it says so and exits with status 1; it never crashes for want of one.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cstdio>

#include "app.h"
#include "startup_error.h"
#include "common/version.h"

namespace {

std::string glfw_error() {
  const char* description = nullptr;
  glfwGetError(&description);
  return description ? description : "no details";
}

int run(int argc, char** argv) {
  if (qc::app::print_version_if_asked("qwenchat", argc, argv)) return 0;
  auto options = qc::gui::parse_gui_options(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "qwenchat: %s\n%s", options.error().describe().c_str(),
                 qc::gui::gui_usage().c_str());
    return 2;
  }
  if (options->help) {
    std::printf("%s", qc::gui::gui_usage().c_str());
    return 0;
  }
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "qwenchat: cannot open a window: no display is available (%s).\n"
                 "Run it in a desktop session (DISPLAY or WAYLAND_DISPLAY set), or use qwenchat-cli.\n",
                 glfw_error().c_str());
    return 1;
  }
  auto app = qc::gui::App::create(*options);
  if (!app.ok()) {
    std::fprintf(stderr, "qwenchat: %s\n", app.error().describe().c_str());
    qc::gui::show_startup_error(app.error());  // the window says it too
    glfwTerminate();
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  // WM_CLASS "qwenchat": the desktop entry's StartupWMClass (packaging/), so the dock groups the window
  // under the app's icon; Wayland shells match the app id the same way.
  glfwWindowHintString(GLFW_X11_CLASS_NAME, "qwenchat");
  glfwWindowHintString(GLFW_X11_INSTANCE_NAME, "qwenchat");
  // The size and place of the last session (config.json "window"), never below the minimum.
  const qc::gui::AppConfig& cfg = (*app)->config();
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);  // shown once placed, so it does not jump
  GLFWwindow* window = glfwCreateWindow(cfg.window_w, cfg.window_h, "qwenchat", nullptr, nullptr);
  if (window == nullptr) {
    std::fprintf(stderr, "qwenchat: cannot create an OpenGL 3.3 window: %s\n", glfw_error().c_str());
    glfwTerminate();
    return 1;
  }
  glfwSetWindowSizeLimits(window, qc::gui::AppConfig::kMinWindowW, qc::gui::AppConfig::kMinWindowH,
                          GLFW_DONT_CARE, GLFW_DONT_CARE);
  if (qc::gui::position_is_visible(cfg.window_x, cfg.window_y, cfg.window_w, cfg.window_h))
    glfwSetWindowPos(window, cfg.window_x, cfg.window_y);
  glfwShowWindow(window);
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  const std::string ini_path = (*app)->ini_path();  // outlives the ImGui context, which writes it last
  io.IniFilename = ini_path.c_str();                // in the config folder, never the working directory
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  glfwSetWindowUserPointer(window, app->get());
  glfwSetKeyCallback(window, [](GLFWwindow* w, int key, int, int action, int mods) {
    static_cast<qc::gui::App*>(glfwGetWindowUserPointer(w))->on_key(key, action, mods);
  });
  glfwSetDropCallback(window, [](GLFWwindow* w, int count, const char** paths) {
    static_cast<qc::gui::App*>(glfwGetWindowUserPointer(w))->on_drop(count, paths);
  });
  ImGui_ImplGlfw_InitForOpenGL(window, true);  // chains to the key callback above
  ImGui_ImplOpenGL3_Init("#version 150");

  (*app)->run(window);

  app->reset();  // stops the worker and saves the configuration while ImGui still exists
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(argc, argv);
}
