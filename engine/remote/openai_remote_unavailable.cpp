// Builds without cpp-httplib (the GPU machine's minimal build): remote endpoints answer with an error
// that says why, everything else works.
#include "remote/openai_remote.h"

namespace qc {

bool remote_endpoints_compiled() { return false; }

Result<RemoteModel> connect_remote(const RemoteEndpoint& endpoint) {
  return make_error(endpoint.url + ": this build has no HTTP client",
                    "rebuild with cpp-httplib installed (Debian: libcpp-httplib-dev)");
}

ModelFacts describe_remote(const RemoteModel& model) {
  ModelFacts f;
  f.remote = true;
  f.path = model.origin + model.base_path;
  return f;
}

void run_remote_generation(const GenerateCommand& command, const RemoteModel&, const GenerationContext& ctx) {
  GenerationFinished f;
  f.id = command.id;
  f.stop_reason = StopReason::error;
  f.error = "this build has no HTTP client for remote endpoints";
  ctx.emit(std::move(f));
}

}  // namespace qc
