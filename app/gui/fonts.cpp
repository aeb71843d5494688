#include "fonts.h"

#include <imgui.h>

#include <filesystem>

namespace qc::gui {
namespace {

constexpr const char* kDejaVuDir = "/usr/share/fonts/truetype/dejavu/";

// Latin, spacing modifier letters and combining accents, Greek, Cyrillic, phonetic extensions (superscript
// and subscript letters), general punctuation, super/subscripts, currency, combining marks for symbols,
// letterlike symbols and number forms (ℝ ℕ ½), arrows, math operators, technical (⌊ ⌈), box drawing,
// shapes, symbols, dingbats, math brackets and long arrows (⟨ ⟩ ⟹), supplemental operators, Latin
// Extended-C (ⱼ), U+FFFD. The math text of latex_text.h uses these.
const ImWchar* text_ranges() {
  static const ImWchar kRanges[] = {0x0020, 0x036F, 0x0370, 0x03FF, 0x0400, 0x04FF, 0x1D00, 0x1DBF,
                                    0x2000, 0x209F, 0x20A0, 0x20FF, 0x2100, 0x218F, 0x2190, 0x23FF,
                                    0x2500, 0x25FF, 0x2600, 0x26FF, 0x2700, 0x27FF, 0x2A00, 0x2AFF,
                                    0x2C60, 0x2C7F, 0xFFFD, 0xFFFD, 0};
  return kRanges;
}

std::string find_cjk_font() {
  const char* candidates[] = {
      "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
      "/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf",
      "/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc",
      "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
      "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
  };
  std::error_code ec;
  for (const char* c : candidates) {
    if (std::filesystem::exists(c, ec)) return c;
  }
  return {};
}

}  // namespace

Fonts load_fonts(float ui_scale) {
  Fonts f;
  f.size = 16.0f * ui_scale;
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  f.cjk_file = find_cjk_font();

  auto add = [&](const char* file, float px, bool merge_cjk) -> ImFont* {
    const std::string path = std::string(kDejaVuDir) + file;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      f.notes.push_back(path + " not found");
      return nullptr;
    }
    ImFontConfig cfg;
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    ImFont* font = io.Fonts->AddFontFromFileTTF(path.c_str(), px, &cfg, text_ranges());
    if (font && merge_cjk && !f.cjk_file.empty()) {
      ImFontConfig merge;
      merge.MergeMode = true;
      merge.OversampleH = 1;
      // The common simplified set (2500 ideographs) + kana keeps the atlas near 4096^2 at 2x scale; the
      // full 21000-glyph set would not fit comfortably in one texture.
      io.Fonts->AddFontFromFileTTF(f.cjk_file.c_str(), px, &merge,
                                   io.Fonts->GetGlyphRangesChineseSimplifiedCommon());
    }
    return font;
  };

  f.regular = add("DejaVuSans.ttf", f.size, true);
  if (f.regular == nullptr) {
    ImFontConfig cfg;
    cfg.SizePixels = 13.0f * ui_scale;
    f.regular = io.Fonts->AddFontDefault(&cfg);
    f.notes.push_back("using ImGui's built-in font");
  }
  f.bold = add("DejaVuSans-Bold.ttf", f.size, false);
  f.italic = add("DejaVuSans-Oblique.ttf", f.size, false);
  f.mono = add("DejaVuSansMono.ttf", f.size * 0.95f, false);
  f.h1 = add("DejaVuSans-Bold.ttf", f.size * 1.5f, false);
  f.h2 = add("DejaVuSans-Bold.ttf", f.size * 1.25f, false);
  f.h3 = add("DejaVuSans-Bold.ttf", f.size * 1.1f, false);
  for (ImFont** p : {&f.bold, &f.italic, &f.mono, &f.h1, &f.h2, &f.h3}) {
    if (*p == nullptr) *p = f.regular;
  }
  io.FontDefault = f.regular;
  return f;
}

}  // namespace qc::gui
