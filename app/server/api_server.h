// qwenchat's OpenAI-compatible HTTP server (cpp-httplib) in front of one engine Worker:
//   POST /v1/chat/completions, POST /v1/completions (streaming as server-sent events, or whole),
//   GET /v1/models, GET /health, GET /metrics (Prometheus text).
// It never loads models: its owner does (qwenchat-server at start, the GUI from its model panel), and
// the server follows the worker's ModelLoaded/unload events. Requests queue on the worker in arrival
// order; each owns its generation id, so a client that goes away cancels only its own generation
// (Worker::cancel). The owner feeds every worker event to on_worker_event(), from whatever thread
// drains the worker; events of generations the server did not start are ignored.
//
// Safety: binds 127.0.0.1 unless told otherwise; optional API key (Authorization: Bearer, compared in
// constant time) on everything but /health; body size limit (413), JSON depth limit, a queue limit (503),
// read timeouts; every error is an OpenAI error object.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "qwenchat/result.h"
#include "qwenchat/session.h"
#include "server/api_request.h"
#include "server/event_router.h"
#include "server/server_metrics.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace qc {
class Worker;
}

namespace qc::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;               // 0 = any free port (port() says which)
  std::string api_key;           // empty = no key required
  size_t max_body_bytes = 8u << 20;  // a 4,096-message conversation of long turns fits; larger is 413
  int max_queue = 16;            // requests waiting for the engine beyond the one running; more: 503
  int read_timeout_s = 30;       // a client that sends its request slower than this is dropped
  std::string model_id;          // the name /v1/models and every response carry; empty = the file's stem
  MtpOptions mtp;                // speculative decoding for every request (the model must have an MTP block)
  RequestLimits limits;
};

class ApiServer {
 public:
  ApiServer(Worker& worker, ServerOptions options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds the socket (errors: the address is taken, not allowed); then run() serves until stop().
  Status bind();
  int port() const { return port_; }
  void run();
  void stop();  // from any thread: cancels the generations of requests in progress; run() returns

  // Every event of the worker, in order (generation events of other owners are ignored).
  void on_worker_event(const WorkerEvent& event);

  // The first id the server uses for its generations (the GUI's own ids stay below it).
  static constexpr uint64_t kFirstGenerationId = uint64_t{1} << 62;

 private:
  struct ModelState {
    bool loaded = false;
    std::string id;
    int n_ctx = 0;
    bool has_mtp = false;
  };
  void routes();
  bool authorized(const httplib::Request& req, httplib::Response& res);
  void handle_generate(const httplib::Request& req, httplib::Response& res, bool chat);
  ModelState model() const;
  void answer_error(httplib::Response& res, const ApiError& e);

  Worker& worker_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
  EventRouter router_;
  ServerMetrics metrics_;
  int port_ = 0;
  int64_t started_at_ = 0;
  std::atomic<uint64_t> next_id_{kFirstGenerationId};

  mutable std::mutex model_mutex_;
  ModelState model_;  // requires model_mutex_
};

// Constant-time comparison of a presented key with the expected one: the time depends only on the
// expected key's length, not on where the first difference is.
bool keys_equal(const std::string& presented, const std::string& expected);

}  // namespace qc::server
