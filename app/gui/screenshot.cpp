#include "screenshot.h"

#include <GL/gl.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace qc::gui {

Status write_framebuffer_png(const std::string& path, int fb_width, int fb_height, PixelRect r) {
  r.x = std::clamp(r.x, 0, fb_width);
  r.y = std::clamp(r.y, 0, fb_height);
  r.w = std::clamp(r.w, 0, fb_width - r.x);
  r.h = std::clamp(r.h, 0, fb_height - r.y);
  if (r.w == 0 || r.h == 0) return make_error(path + ": empty capture rectangle");
  std::vector<unsigned char> pixels(static_cast<size_t>(r.w) * r.h * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  // GL's origin is bottom-left.
  glReadPixels(r.x, fb_height - r.y - r.h, r.w, r.h, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  if (glGetError() != GL_NO_ERROR) return make_error(path + ": glReadPixels failed");
  // Rows come bottom-up; PNG wants them top-down.
  const size_t stride = static_cast<size_t>(r.w) * 3;
  std::vector<unsigned char> flipped(pixels.size());
  for (int y = 0; y < r.h; ++y) {
    std::copy_n(pixels.data() + static_cast<size_t>(r.h - 1 - y) * stride, stride,
                flipped.data() + y * stride);
  }
  if (!stbi_write_png(path.c_str(), r.w, r.h, 3, flipped.data(), static_cast<int>(stride))) {
    return make_error(path + ": cannot write the PNG file");
  }
  return {};
}

}  // namespace qc::gui

namespace qc::gui {

Status ScreenshotSequence::start() {
  if (!enabled()) return {};
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return make_error("cannot create the capture folder " + dir_ + ": " + ec.message());
  if (!std::filesystem::is_directory(dir_, ec))
    return make_error("cannot write captures to " + dir_ + ": it is not a folder");
  step_ = 1;
  frame_ = 0;
  return {};
}

ScreenshotSequence::Tab ScreenshotSequence::tab() const {
  switch (step_) {
    case 1:
      return Tab::kModel;
    case 2:
      return Tab::kSettings;
    case 3:
      return Tab::kDiagnostics;
    default:
      return Tab::kNone;
  }
}

Status ScreenshotSequence::after_render(int fb_w, int fb_h, PixelRect sidebar, PixelRect chat,
                                        PixelRect inspector) {
  Status s = capture(fb_w, fb_h, sidebar, chat, inspector);
  if (!s.ok()) step_ = 0;  // one error, not one per frame
  return s;
}

Status ScreenshotSequence::capture(int fb_w, int fb_h, PixelRect sidebar, PixelRect chat, PixelRect inspector) {
  if (step_ == 0) return {};
  if (++frame_ < kFramesPerTab) return {};
  frame_ = 0;
  const char* names[] = {"", "model", "settings", "diagnostics"};
  const std::string name = names[step_];
  auto panel = [&](const std::string& file, PixelRect r) -> Status {
    if (r.w <= 0 || r.h <= 0) return {};  // hidden
    return write_framebuffer_png(dir_ + "/" + file, fb_w, fb_h, r);
  };
  QC_TRY(panel(name + ".png", inspector));
  QC_TRY(write_framebuffer_png(dir_ + "/full_" + name + ".png", fb_w, fb_h, PixelRect{0, 0, fb_w, fb_h}));
  if (step_ == 3) {
    QC_TRY(panel("sidebar.png", sidebar));
    QC_TRY(panel("chat.png", chat));
    std::FILE* f = std::fopen((dir_ + "/done").c_str(), "w");
    if (f == nullptr) return make_error(dir_ + "/done: cannot write the marker file");
    std::fclose(f);
    step_ = 0;
    return {};
  }
  ++step_;
  return {};
}

}  // namespace qc::gui
