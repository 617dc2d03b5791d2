#pragma once

// The HTTP face of the controller: POST /v1/<action> (rest-json), /v1/tags/{arn}, GET /healthz.
// Every /v1/ call is verified with SigV4 against the stored keys.

#include <memory>

#include "common/status.h"
#include "server/controller.h"

namespace httplib {
class Server;
}

namespace allot::server {

class HttpServer {
 public:
  explicit HttpServer(Controller& controller);
  ~HttpServer();

  // Binds host:port (port 0 picks a free one); returns the bound port.
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop(); blocks.
  void Serve();
  void Stop();

 private:
  void Routes();

  Controller& controller_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace allot::server
