// Frame captures for tests and documentation: reads the back buffer after ImGui rendered it
// (glReadPixels) and writes PNG files of the whole frame or of a panel's rectangle.
#pragma once

#include <string>

#include "qwenchat/result.h"

namespace qc::gui {

struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;  // framebuffer pixels, origin top-left
};

// Writes the current GL read buffer's `rect` (clamped to the framebuffer) as an RGB PNG.
Status write_framebuffer_png(const std::string& path, int fb_width, int fb_height, PixelRect rect);

}  // namespace qc::gui

namespace qc::gui {

// The --screenshot-dir sequence (F12): shows each inspector tab in turn for a few frames and captures the
// frame and each panel's rectangle: sidebar.png, chat.png, model.png, settings.png, diagnostics.png and
// full_<tab>.png, then writes an empty "done" file (what the end-to-end test waits for). A hidden panel
// (Ctrl+B, Ctrl+I) has no capture of its own.
class ScreenshotSequence {
 public:
  enum class Tab { kNone, kModel, kSettings, kDiagnostics };

  explicit ScreenshotSequence(std::string dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  bool active() const { return step_ > 0; }
  // Creates the folder (and its parents) when it does not exist; an error names the folder and why.
  Status start();
  // The tab the inspector must show this frame (kNone when not capturing).
  Tab tab() const;
  // Call after rendering, before swapping buffers. Rects are in framebuffer pixels.
  Status after_render(int fb_w, int fb_h, PixelRect sidebar, PixelRect chat, PixelRect inspector);

 private:
  Status capture(int fb_w, int fb_h, PixelRect sidebar, PixelRect chat, PixelRect inspector);
  static constexpr int kFramesPerTab = 3;  // a tab selected by code shows from the next frame on
  std::string dir_;
  int step_ = 0;  // 0 idle, 1 model, 2 settings, 3 diagnostics
  int frame_ = 0;
};

}  // namespace qc::gui
