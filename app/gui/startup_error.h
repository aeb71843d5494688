// A start-up failure (a corrupt database, one written by a newer qwenchat, an unreadable config folder)
// shown in a window of its own: a user who starts the app from the desktop never sees stderr.
#pragma once

#include "qwenchat/result.h"

namespace qc::gui {

// Opens a small window with the error, its hint and Copy / Quit buttons, and returns when the user closes
// it. Needs glfwInit() done; creates and destroys its own window and ImGui context. false: no window could
// be opened (stderr then has to do).
bool show_startup_error(const Error& error);

}  // namespace qc::gui
