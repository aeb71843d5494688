// ImGui's user configuration for the app's own translation units (IMGUI_USER_CONFIG, app/gui/CMakeLists.txt):
// IM_ASSERT on in every build type. Debian's libimgui.a is compiled without NDEBUG, so the asserts inside
// imgui.cpp (the ones API misuse meets: unbalanced Begin/End, KeyMods against KeyCtrl, ...) always abort
// with glibc's "Assertion `...' failed."; the inline ones of imgui.h / imgui_internal.h (ImVector bounds,
// ImSpan, ...) are compiled here and would vanish under the release builds' -DNDEBUG. With this header
// they log and abort as well, in Release too, so tests/gui/gui_random_input.sh finds either on stderr.
#pragma once

#include <cstdio>
#include <cstdlib>

[[noreturn]] inline void qc_imgui_assert_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "qwenchat: ImGui assertion failed: %s (%s:%d)\n", expr, file, line);
  std::fflush(stderr);
  std::abort();
}

#define IM_ASSERT(_EXPR) ((_EXPR) ? (void)0 : qc_imgui_assert_failed(#_EXPR, __FILE__, __LINE__))
