#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "api/sigv4.h"
#include "server/api_error.h"

namespace allot::server {

namespace {

void SendError(httplib::Response& res, int status, const std::string& type,
               const std::string& message) {
  res.status = status;
  res.set_header("x-amzn-ErrorType", type);
  res.set_content(Json{{"message", message}, {"__type", type}}.dump(), "application/json");
}

api::HttpRequestView ViewOf(const httplib::Request& req) {
  api::HttpRequestView v;
  v.method = req.method;
  const std::string& target = req.target;
  const auto q = target.find('?');
  v.path = target.substr(0, q);
  v.query = q == std::string::npos ? "" : target.substr(q + 1);
  for (const auto& [name, value] : req.headers) {
    if (name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" ||
        name == "LOCAL_PORT") {
      continue;  // added by cpp-httplib, not sent by the client
    }
    v.headers.emplace_back(name, value);
  }
  v.body = req.body;
  return v;
}

Timestamp WallClock() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Respond(httplib::Response& res, Controller::Reply reply) {
  if (reply.durable.valid()) {
    const Status s = reply.durable.get();
    if (!s.ok()) {
      SendError(res, 500, "ServerException", "the change could not be stored: " + s.message());
      return;
    }
  }
  res.status = 200;
  // Log text may hold bytes that are not UTF-8: they are replaced rather than refused.
  res.set_content(reply.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

}  // namespace

HttpServer::HttpServer(Controller& controller)
    : controller_(controller), http_(std::make_unique<httplib::Server>()) {
  const int threads = controller.options().http_threads;
  http_->new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<std::size_t>(threads));
  };
  http_->set_payload_max_length(64 * 1024);
  // cpp-httplib writes headers and body in two sends: without TCP_NODELAY every body waits for
  // the client's delayed ACK (about 40 ms a call).
  http_->set_tcp_nodelay(true);
  // Its default closes a keep-alive connection after 5 requests.
  http_->set_keep_alive_max_count(100000);
  // Idle keep-alive connections hold a thread each and delay a shutdown until they time out.
  http_->set_keep_alive_timeout(2);
  // Not cpp-httplib's default SO_REUSEPORT: a second server on the same port must fail to bind,
  // not silently share the port with the first.
  http_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  Routes();
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::Bind(const std::string& host, int port) {
  if (port == 0) {
    const int bound = http_->bind_to_any_port(host);
    if (bound < 0) return Internal("cannot listen on " + host);
    return bound;
  }
  if (!http_->bind_to_port(host, port)) {
    return Internal("cannot listen on " + host + ":" + std::to_string(port));
  }
  return port;
}

void HttpServer::Serve() { http_->listen_after_bind(); }
void HttpServer::Stop() { http_->stop(); }

void HttpServer::Routes() {
  http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  // Authenticates, then runs `handle`, mapping refusals and faults to AWS errors.
  auto guarded = [this](auto handle) {
    return [this, handle](const httplib::Request& req, httplib::Response& res) {
      api::VerifyResult who = api::Verify(
          ViewOf(req),
          [this](std::string_view key) { return controller_.SecretFor(std::string(key)); },
          WallClock());
      if (!who.ok()) {
        SendError(res, who.error().http_status, who.error().error_code, who.error().message);
        return;
      }
      try {
        Respond(res, handle(req));
      } catch (const ClientError& e) {
        SendError(res, 400, "ClientException", e.what());
      } catch (const nlohmann::json::exception& e) {
        SendError(res, 400, "ClientException", std::string("malformed request: ") + e.what());
      } catch (const std::exception& e) {
        SendError(res, 500, "ServerException", e.what());
      }
    };
  };
  http_->Post(R"(/v1/tags/(.+))", guarded([this](const httplib::Request& req) {
    return controller_.Tags("POST", req.matches[1], ParseBody(req.body), {});
  }));
  http_->Get(R"(/v1/tags/(.+))", guarded([this](const httplib::Request& req) {
    return controller_.Tags("GET", req.matches[1], Json::object(), {});
  }));
  http_->Delete(R"(/v1/tags/(.+))", guarded([this](const httplib::Request& req) {
    std::vector<std::string> keys;
    for (auto [it, end] = req.params.equal_range("tagKeys"); it != end; ++it) {
      keys.push_back(it->second);
    }
    return controller_.Tags("DELETE", req.matches[1], Json::object(), keys);
  }));
  http_->Get(R"(/allot/v1/jobs/([^/]+)/logs)", guarded([this](const httplib::Request& req) {
    auto param = [&req](const char* name, const std::string& fallback) {
      return req.has_param(name) ? req.get_param_value(name) : fallback;
    };
    int attempt = 0;
    std::uint64_t offset = 0;
    try {
      attempt = std::stoi(param("attempt", "0"));
      offset = std::stoull(param("offset", "0"));
    } catch (const std::exception&) {
      Refuse("attempt and offset must be whole numbers");
    }
    Controller::LogChunk chunk =
        controller_.Logs(req.matches[1], attempt, param("host", "algo-1"),
                         param("stream", "stdout"), offset);
    Controller::Reply reply;
    reply.body = {{"text", chunk.text}, {"nextOffset", chunk.next_offset},
                  {"complete", chunk.complete}};
    return reply;
  }));
  http_->Post(R"(/v1/([a-z]+))", guarded([this](const httplib::Request& req) {
    return controller_.Call(req.matches[1], ParseBody(req.body));
  }));
}

}  // namespace allot::server
