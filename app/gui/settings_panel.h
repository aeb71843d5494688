// The settings tab: sampling (with the Qwen presets), thinking, max tokens, engine (context length,
// threads, probes: applied by rebuilding the backend after the current reply), MTP on/off + draft
// length, kernel variants (CUDA builds), appearance (theme, UI scale). Shows the variant in use.
#pragma once

#include "ui_context.h"

namespace qc::gui {

class SettingsPanel {
 public:
  void draw(UiContext& ctx);

 private:
  void sampling(UiContext& ctx);
  void engine(UiContext& ctx);
  void mtp(UiContext& ctx);
  void kernels(UiContext& ctx);
  void appearance(UiContext& ctx);
  void api_server(UiContext& ctx);

  bool changed_ = false;
  int port_edit_ = 0;     // the API port field's value while it is edited
  float scale_edit_ = 0;  // the UI scale slider's value while it is dragged  // a field changed this frame
                          // (saved to the config)
};

}  // namespace qc::gui
