// qwenchat-server: the engine behind an OpenAI-compatible HTTP API (server/api_server.h).
//   qwenchat-server [--model FILE] [--host 127.0.0.1] [--port 8080] [--api-key-file F] ...
// Loads the model first (the default model without --model), then prints one line
// "qwenchat-server: listening on http://HOST:PORT (model ID)" on stdout and serves until SIGINT/SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "common/args.h"
#include "common/default_model.h"
#include "qwenchat/worker.h"
#include "server/api_server.h"

namespace {

using namespace qc;

const std::vector<app::OptionSpec> kSpecs = {
    {"model", true, "GGUF model file (default: the model that ships with qwenchat)"},
    {"backend", true, "cpu (default) or cuda"},
    {"ctx", true, "context length to allocate (default 4096)"},
    {"threads", true, "CPU threads (default: all cores)"},
    {"gpu-memory", true, "cuda: GiB of device memory to plan the load against (default: what is free); "
                         "simulates a smaller card"},
    {"host", true, "address to listen on (default 127.0.0.1: this machine only)"},
    {"port", true, "TCP port (default 8080; 0 = any free port, printed at start)"},
    {"api-key-file", true, "require 'Authorization: Bearer KEY', KEY read from this file (first line); "
                           "the environment variable QWENCHAT_API_KEY works too"},
    {"alias", true, "model id in /v1/models and responses (default: the file name without .gguf)"},
    {"max-queue", true, "requests that may wait for the engine (default 16; more get HTTP 503)"},
    {"max-body", true, "largest request body in bytes (default 8388608; larger gets HTTP 413)"},
    {"mtp", true, "on|off: speculative decoding with the model's MTP block (default: on with cuda, off on "
                  "the cpu, where the token-by-token reference makes it slower)"},
    {"draft", true, "MTP draft length 1..3 (default 1)"},
    {"help", false, "this help"},
};

Result<std::string> api_key(const app::Args& args) {
  if (auto file = args.get("api-key-file")) {
    std::ifstream in(*file);
    if (!in) return make_error("--api-key-file: cannot read " + *file);
    std::string key;
    std::getline(in, key);
    while (!key.empty() && (key.back() == '\r' || key.back() == ' ')) key.pop_back();
    if (key.empty()) return make_error("--api-key-file: " + *file + " has no key on its first line");
    return key;
  }
  const char* env = std::getenv("QWENCHAT_API_KEY");
  return std::string(env ? env : "");
}

Status serve(const app::Args& args) {
  // SIGINT/SIGTERM are taken by one thread with sigwait (blocked everywhere else, so the worker and HTTP
  // threads, which inherit the mask, never see them): stopping the server is not async-signal-safe.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::string path;
  if (auto m = args.get("model")) {
    path = *m;
  } else {
    QC_ASSIGN(path, app::default_model_path());
  }
  QC_ASSIGN(const BackendKind backend, parse_backend_kind(args.get_or("backend", "cpu")));
  QC_ASSIGN(const long long ctx, args.get_int("ctx", 4096, 16, 1 << 20));
  QC_ASSIGN(const long long threads, args.get_int("threads", 0, 0, 1024));
  QC_ASSIGN(const uint64_t gpu_memory, args.get_gib("gpu-memory", 0.25, 4096.0));
  QC_ASSIGN(const long long port, args.get_int("port", 8080, 0, 65535));
  QC_ASSIGN(const long long max_queue, args.get_int("max-queue", 16, 1, 1024));
  QC_ASSIGN(const long long max_body, args.get_int("max-body", 8 << 20, 1024, 1LL << 30));
  QC_ASSIGN(const long long draft, args.get_int("draft", 1, 1, kMaxDraftLen));
  const std::string mtp = args.get_or("mtp", backend == BackendKind::kCuda ? "on" : "off");
  if (mtp != "on" && mtp != "off") return make_error("--mtp: expected on or off, got \"" + mtp + "\"");

  server::ServerOptions so;
  so.host = args.get_or("host", "127.0.0.1");
  so.port = static_cast<int>(port);
  QC_ASSIGN(so.api_key, api_key(args));
  so.model_id = args.get_or("alias", "");
  so.max_queue = static_cast<int>(max_queue);
  so.max_body_bytes = static_cast<size_t>(max_body);
  so.mtp.enabled = mtp == "on";
  so.mtp.draft_len = static_cast<int>(draft);

  Worker worker;
  server::ApiServer api(worker, so);

  LoadModelCommand load;
  load.path = path;
  load.backend = backend;
  load.settings.n_ctx = static_cast<int>(ctx);
  load.settings.n_threads = static_cast<int>(threads);
  load.settings.gpu_memory_mb = static_cast<int>(gpu_memory >> 20);
  worker.post(load);
  // The load's outcome, read here before the dispatcher takes over the event stream.
  while (true) {
    auto e = worker.wait_event(std::chrono::milliseconds(500));
    if (!e) continue;
    api.on_worker_event(*e);
    if (const auto* failed = std::get_if<ModelLoadFailed>(&*e)) return failed->error;
    if (const auto* loaded = std::get_if<ModelLoaded>(&*e)) {
      std::fprintf(stderr, "qwenchat-server: %s on %s, context %d\n", loaded->facts.summary.c_str(),
                   loaded->facts.backend.name.c_str(), loaded->facts.n_ctx);
      if (loaded->facts.n_ctx < ctx) {
        std::fprintf(stderr, "qwenchat-server: --ctx %lld is above the model's training context: using %d\n", ctx,
                     loaded->facts.n_ctx);
      }
      break;
    }
  }
  QC_TRY(api.bind());

  std::atomic<bool> quit{false};
  std::thread dispatcher([&] {
    while (!quit.load()) {
      if (auto e = worker.wait_event(std::chrono::milliseconds(200))) api.on_worker_event(*e);
    }
  });
  std::thread signal_waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (!quit.load()) std::fprintf(stderr, "qwenchat-server: signal %d, stopping\n", sig);
    api.stop();
  });

  std::printf("qwenchat-server: listening on http://%s:%d (model %s)\n", so.host.c_str(), api.port(),
              so.model_id.empty() ? std::filesystem::path(path).stem().c_str() : so.model_id.c_str());
  std::fflush(stdout);
  api.run();

  quit.store(true);
  pthread_kill(signal_waiter.native_handle(), SIGTERM);  // wakes sigwait when run() ended otherwise
  signal_waiter.join();
  worker.stop();
  dispatcher.join();
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return app::run_tool("qwenchat-server",
                       "qwenchat-server [--model FILE] [--host ADDR] [--port N] [options]\n"
                       "An OpenAI-compatible HTTP API on the qwenchat engine: POST /v1/chat/completions, "
                       "POST /v1/completions, GET /v1/models, GET /health, GET /metrics.",
                       kSpecs, argc, argv, serve);
}
