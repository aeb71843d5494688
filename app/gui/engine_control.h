// The GUI's one way to the engine for everything but chat (chat goes through ChatController): loading,
// connecting and unloading a model, engine settings, backend and kernel switches. The model and settings
// panels call these instead of building worker commands, so each setting takes one path from its widget to
// the worker. Nothing is validated here: the engine checks a setting once, where it enters (the worker for
// engine settings, Backend::set_kernel_config for kernels), and its WorkerNotice reaches the status line.
#pragma once

#include <string>

#include "qwenchat/engine.h"
#include "qwenchat/kernel_config.h"
#include "qwenchat/session.h"
#include "qwenchat/worker.h"

namespace qc::gui {

class EngineControl {
 public:
  explicit EngineControl(Worker& worker) : worker_(worker) {}

  // Loads a GGUF on `backend` with `settings`; the loaded model replaces the current one only if it works.
  void load(const std::string& path, BackendKind backend, const EngineSettings& settings);
  // Runs the model on an OpenAI-compatible endpoint instead.
  void connect(const RemoteEndpoint& endpoint);
  void unload();
  // Rebuilds the backend with new context, threads or memory settings (after the reply in progress).
  void rebuild(const EngineSettings& settings);
  void switch_backend(BackendKind backend);
  // Kernels and probes: applied at the next token, no rebuild.
  void set_kernels(const KernelConfig& kernels);

 private:
  Worker& worker_;
};

}  // namespace qc::gui
