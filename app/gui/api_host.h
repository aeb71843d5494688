// The API server (server/api_server.h) run inside the app, on the app's own worker, so that editors and
// scripts talk to the model the window has loaded without loading it twice. Bound to 127.0.0.1 only; a
// key from QWENCHAT_API_KEY when set. Its generations are the server's: the window ignores their events
// (their ids are at or above ApiServer::kFirstGenerationId).
//
// Threads: start()/stop()/status() on the UI thread; on_worker_event() on the worker thread (the worker's
// event hook), which takes a reference to the running server under a mutex, so stop() never destroys a
// server the hook is using.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "qwenchat/events.h"
#include "qwenchat/result.h"

namespace qc {
class Worker;
namespace server {
class ApiServer;
}
}  // namespace qc

namespace qc::gui {

class ApiHost {
 public:
  ~ApiHost() { stop(); }
  // Starts serving on 127.0.0.1:port (stops a running server first). `facts`: the model loaded now.
  Status start(Worker& worker, int port, const std::optional<ModelFacts>& facts);
  void stop();
  bool running() const;
  std::string status() const;  // "serving http://127.0.0.1:8080/v1", "off", or the start error
  void on_worker_event(const WorkerEvent& event);
  static bool is_server_generation(const WorkerEvent& event);

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<server::ApiServer> server_;  // requires mutex_
  std::thread thread_;                         // runs server_->run()
  std::string status_ = "off";                 // requires mutex_
};

}  // namespace qc::gui
