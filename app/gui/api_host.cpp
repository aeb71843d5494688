#include "api_host.h"

#include <cstdlib>

#include "server/api_server.h"
#include "server/event_router.h"

namespace qc::gui {

Status ApiHost::start(Worker& worker, int port, const std::optional<ModelFacts>& facts) {
  stop();
  server::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  if (const char* key = std::getenv("QWENCHAT_API_KEY")) o.api_key = key;
  auto s = std::make_shared<server::ApiServer>(worker, o);
  if (Status bound = s->bind(); !bound.ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = "not serving: " + bound.error().describe();
    return bound.error();
  }
  if (facts) s->on_worker_event(ModelLoaded{*facts});  // the model loaded before the server started
  {
    std::lock_guard<std::mutex> lock(mutex_);
    server_ = s;
    status_ = "serving http://127.0.0.1:" + std::to_string(s->port()) + "/v1" +
              (o.api_key.empty() ? "" : " (key from QWENCHAT_API_KEY)");
  }
  thread_ = std::thread([s] { s->run(); });
  return {};
}

void ApiHost::stop() {
  std::shared_ptr<server::ApiServer> s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = server_;
  }
  // The server keeps receiving events until run() has returned: its HTTP threads finish their requests
  // (stop() cancels their generations) and are joined inside run().
  if (s) s->stop();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  if (server_) status_ = "off";
  server_.reset();
}

bool ApiHost::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return server_ != nullptr;
}

std::string ApiHost::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

void ApiHost::on_worker_event(const WorkerEvent& event) {
  std::shared_ptr<server::ApiServer> s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = server_;
  }
  if (s) s->on_worker_event(event);
}

bool ApiHost::is_server_generation(const WorkerEvent& event) {
  const auto id = server::generation_of(event);
  return id && *id >= server::ApiServer::kFirstGenerationId;
}

}  // namespace qc::gui
