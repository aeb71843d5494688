// Fonts from the system: DejaVu Sans (regular, bold, oblique, mono) at the UI scale, with Noto Sans CJK
// merged into the regular face when a NotoSansCJK file is installed. Rebuilt when the scale changes.
#pragma once

#include <string>
#include <vector>

struct ImFont;

namespace qc::gui {

struct Fonts {
  ImFont* regular = nullptr;
  ImFont* bold = nullptr;
  ImFont* italic = nullptr;
  ImFont* mono = nullptr;
  ImFont* h1 = nullptr;  // headings: bold at 1.5x / 1.25x / 1.1x
  ImFont* h2 = nullptr;
  ImFont* h3 = nullptr;
  float size = 16.0f;    // pixels of the regular face
  std::string cjk_file;  // merged CJK font, empty when none was found
  std::vector<std::string>
      notes;  // what was missing ("DejaVuSans-Bold.ttf not found: bold uses the regular face")
};

// Loads into ImGui's font atlas (cleared first); call between frames, then recreate the backend's font
// texture. Never fails: a missing file falls back to another face or ImGui's built-in font.
Fonts load_fonts(float ui_scale);

}  // namespace qc::gui
