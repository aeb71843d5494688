#include "startup_error.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <string>

namespace qc::gui {

bool show_startup_error(const Error& error) {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHintString(GLFW_X11_CLASS_NAME, "qwenchat");
  glfwWindowHintString(GLFW_X11_INSTANCE_NAME, "qwenchat");
  GLFWwindow* window = glfwCreateWindow(720, 320, "qwenchat · could not start", nullptr, nullptr);
  if (window == nullptr) return false;
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // nothing of this window is worth remembering
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 150");

  const std::string details = error.describe();
  bool quit = false;
  while (!quit && !glfwWindowShouldClose(window)) {
    glfwWaitEventsTimeout(0.5);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::Begin("##startup_error", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings);
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "qwenchat could not start");
    ImGui::Separator();
    ImGui::TextWrapped("%s", error.message.c_str());
    if (!error.hint.empty()) {
      ImGui::Spacing();
      ImGui::TextWrapped("What to do: %s", error.hint.c_str());
    }
    ImGui::Spacing();
    ImGui::TextDisabled("The same message is on the terminal (stderr).");
    ImGui::Spacing();
    if (ImGui::Button("Copy the message")) ImGui::SetClipboardText(details.c_str());
    ImGui::SameLine();
    if (ImGui::Button("Quit") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) quit = true;
    ImGui::End();
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(0.1f, 0.1f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glfwSwapBuffers(window);
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  return true;
}

}  // namespace qc::gui
