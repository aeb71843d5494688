#include "engine_control.h"

namespace qc::gui {

void EngineControl::load(const std::string& path, BackendKind backend, const EngineSettings& settings) {
  LoadModelCommand c;
  c.path = path;
  c.backend = backend;
  c.settings = settings;
  worker_.post(std::move(c));
}

void EngineControl::connect(const RemoteEndpoint& endpoint) {
  LoadModelCommand c;
  c.remote = endpoint;
  c.path = endpoint.url;
  worker_.post(std::move(c));
}

void EngineControl::unload() { worker_.post(UnloadModelCommand{}); }

void EngineControl::rebuild(const EngineSettings& settings) { worker_.post(UpdateSettingsCommand{settings}); }

void EngineControl::switch_backend(BackendKind backend) { worker_.post(SwitchBackendCommand{backend}); }

void EngineControl::set_kernels(const KernelConfig& kernels) { worker_.post(SetKernelConfigCommand{kernels}); }

}  // namespace qc::gui
