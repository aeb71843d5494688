// The diagnostics tab: decode tok/s over the generation (sparkline), prefill and decode rates, TTFT,
// MTP acceptance per draft position, per-layer hidden-state L2 norms as bars coloured by layer type
// (Gated DeltaNet vs attention), effective weight bandwidth (bytes per token x tok/s; against a measured
// ceiling only when the backend measured one), memory, and the context meter (amber at 50%, red at 80%).
#pragma once

#include "chat/branch_cache.h"
#include "ui_context.h"

namespace qc::gui {

class DiagnosticsPanel {
 public:
  void draw(UiContext& ctx);

 private:
  bool stored(UiContext& ctx);  // the last stored reply's figures after a restart; false when none
  void rates(UiContext& ctx);
  void mtp(UiContext& ctx);
  void layer_norms(UiContext& ctx);
  void bandwidth_and_memory(UiContext& ctx);
  void context_meter(UiContext& ctx);

  chat::BranchViewCache branch_;  // stored() runs every frame the tab shows
};

}  // namespace qc::gui
