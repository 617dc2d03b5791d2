#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string_view>

#include "api/sigv4.h"
#include "server/api_error.h"

namespace allot::server {

namespace {

// Every JSON the server writes goes through here: bytes that are not UTF-8 (log text, or a value
// a message quotes) become U+FFFD instead of making dump() throw.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// The length of the well-formed UTF-8 sequence at s[i], or 0 where there is none (an overlong
// form, a surrogate, a code point past U+10FFFF, a stray or missing continuation byte).
std::size_t Utf8SequenceAt(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the first continuation byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (len > s.size() - i) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return len;
}

bool IsUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// A message safe to send whatever it quotes: each byte that starts no UTF-8 sequence becomes
// U+FFFD.
std::string ScrubUtf8(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (std::size_t i = 0; i < message.size();) {
    const std::size_t n = Utf8SequenceAt(message, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(message.substr(i, n));
      i += n;
    }
  }
  return out;
}

// The value of a field read from the path, the query or a header, refused (400) unless UTF-8. The
// message names the field and never echoes the bytes.
std::string Utf8Field(std::string value, const std::string& field) {
  if (!IsUtf8(value)) Refuse(field + " is not valid UTF-8");
  return value;
}

// A whole number of decimal digits from 0 to `max` (no sign, exponent, spaces or empty string).
std::uint64_t WholeNumber(const std::string& value, const std::string& name, std::uint64_t max) {
  std::uint64_t n = 0;
  bool ok = !value.empty() && value.size() <= 20;
  for (char ch : value) {
    if (!ok) break;
    if (ch < '0' || ch > '9') {
      ok = false;
      break;
    }
    const auto digit = static_cast<std::uint64_t>(ch - '0');
    ok = n <= (max - digit) / 10;
    n = n * 10 + digit;
  }
  if (!ok) {
    const std::string shown = value.size() > 32 ? value.substr(0, 32) + "..." : value;
    Refuse(name + " must be a whole number from 0 to " + std::to_string(max) + ", got " +
           Dump(Json(shown)));
  }
  return n;
}

void SendError(httplib::Response& res, int status, const std::string& type,
               const std::string& message) {
  res.status = status;
  res.set_header("x-amzn-ErrorType", type);
  res.set_content(Dump(Json{{"message", message}, {"__type", type}}), "application/json");
}

// A fault of the server: the detail goes to stderr, the caller sees nothing internal.
void SendInternalError(httplib::Response& res, const char* detail) {
  std::fprintf(stderr, "allot server: internal error answering a request: %s\n", detail);
  SendError(res, 500, "ServerException", "internal server error");
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
  res.set_content(Dump(reply.body), "application/json");
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
  // A handler that throws past the guard (it should not) answers a generic 500: cpp-httplib's
  // default would put e.what() in an EXCEPTION_WHAT header.
  http_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          SendInternalError(res, e.what());
        } catch (...) {
          SendInternalError(res, "an exception that is not a std::exception");
        }
      });
  // Authenticates, then runs `handle`, mapping refusals and faults to AWS errors.
  auto guarded = [this](auto handle) {
    return [this, handle](const httplib::Request& req, httplib::Response& res) {
      api::VerifyResult who = api::Verify(
          ViewOf(req),
          [this](std::string_view key) { return controller_.SecretFor(std::string(key)); },
          WallClock());
      if (!who.ok()) {
        // The message may quote a header the caller sent: never echo bytes that are not UTF-8.
        SendError(res, who.error().http_status, who.error().error_code,
                  ScrubUtf8(who.error().message));
        return;
      }
      try {
        Respond(res, handle(req));
      } catch (const ClientError& e) {
        SendError(res, 400, "ClientException", ScrubUtf8(e.what()));
      } catch (const nlohmann::json::exception& e) {
        SendError(res, 400, "ClientException", "malformed request: " + ScrubUtf8(e.what()));
      } catch (const std::exception& e) {
        SendInternalError(res, e.what());
      }
    };
  };
  http_->Post(R"(/v1/tags/(.+))", guarded([this](const httplib::Request& req) {
    return controller_.Tags("POST", Utf8Field(req.matches[1], "resourceArn"),
                            ParseBody(req.body), {});
  }));
  http_->Get(R"(/v1/tags/(.+))", guarded([this](const httplib::Request& req) {
    return controller_.Tags("GET", Utf8Field(req.matches[1], "resourceArn"), Json::object(), {});
  }));
  http_->Delete(R"(/v1/tags/(.+))", guarded([this](const httplib::Request& req) {
    const std::string arn = Utf8Field(req.matches[1], "resourceArn");
    std::vector<std::string> keys;
    for (auto [it, end] = req.params.equal_range("tagKeys"); it != end; ++it) {
      keys.push_back(Utf8Field(it->second, "tagKeys"));
    }
    return controller_.Tags("DELETE", arn, Json::object(), keys);
  }));
  http_->Get(R"(/allot/v1/jobs/([^/]+)/logs)", guarded([this](const httplib::Request& req) {
    auto param = [&req](const char* name, const std::string& fallback) {
      return req.has_param(name) ? Utf8Field(req.get_param_value(name), name) : fallback;
    };
    const std::string job_id = Utf8Field(req.matches[1], "jobId");
    const std::string host = param("host", "algo-1");
    const std::string stream = param("stream", "stdout");
    const auto attempt = static_cast<int>(
        WholeNumber(param("attempt", "0"), "attempt", std::numeric_limits<int>::max()));
    const std::uint64_t offset = WholeNumber(
        param("offset", "0"), "offset",
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    Controller::LogChunk chunk = controller_.Logs(job_id, attempt, host, stream, offset);
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
