#pragma once

// The HTTP face of the controller: POST /v1/<action> (rest-json), /v1/tags/{arn},
// GET /allot/v1/jobs/{id}/logs and GET /healthz. Every call but /healthz is verified with SigV4
// against the stored keys. Event-driven (Boost.Beast): a slow client holds a socket, not a
// thread, and is closed after the header and body deadlines of Options; each client address and
// the server as a whole have a cap on connections (src/server/http_server.cc says how).

#include <memory>
#include <string>

#include "common/status.h"
#include "server/controller.h"

namespace allot::server {

// Thread-safety: Bind, then Serve on one thread; Stop from any thread, once Bind succeeded.
class HttpServer {
 public:
  explicit HttpServer(Controller& controller);
  ~HttpServer();

  // Binds host:port (port 0 picks a free one); returns the bound port.
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop(); blocks. Returns once every request in progress was answered (or after
  // a grace of 10 s).
  void Serve();
  // Stops accepting, closes idle connections and lets the requests in progress be answered.
  void Stop();

  class Impl;  // internal to http_server.cc

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace allot::server
