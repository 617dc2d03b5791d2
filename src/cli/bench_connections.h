#pragma once

// The load generator's HTTP/1.1 connections (http:// only). The load generator shares the
// machine with the server it measures, so its own cost per call matters: cpp-httplib's (header
// maps, a response object per call) was most of it, and a thread per connection blocked in
// recv() cost a context switch per answer, which in the VMs measured here was most of the rest.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client.h"

namespace allot::cli {

// A complete answer at the front of `in`: its status and body, and how many bytes of `in` it
// takes. `complete` is false while more bytes are needed; `error` says why a head is malformed.
struct AnswerAt {
  std::string error;
  bool complete = false;
  int status = 0;
  std::string_view body;
  std::size_t size = 0;
  bool close = false;  // the server closes the connection after it
};
AnswerAt ParseAnswer(std::string_view in);

// A TCP connection to the endpoint's host with TCP_NODELAY; throws CliError when it fails.
int ConnectTo(const Endpoint& endpoint);

// One keep-alive connection on a blocking socket: a request goes out in one send(), the answer
// is read into a buffer the connection keeps.
class RawConnection {
 public:
  explicit RawConnection(const Endpoint& endpoint) : endpoint_(endpoint) {}
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Sends `request` (a whole HTTP/1.1 request) and reads the answer: its status, its body into
  // `body`. Throws CliError when the exchange fails (the connection is closed then).
  int Exchange(std::string_view request, std::string* body);

 private:
  [[noreturn]] void Fail(const std::string& what);
  void Close();

  Endpoint endpoint_;
  int fd_ = -1;
  std::string in_;
};

// Many keep-alive connections driven by the calling thread with poll(), each with one request in
// flight at a time: a client each, without a thread each.
class PolledConnections {
 public:
  // next(i, &request): connection i's next request (a whole HTTP/1.1 request), false when it has
  // none left. answered(i, status, body): its answer. failed(i, message): its exchange failed;
  // the connection is closed, and connected again for its next request.
  struct Calls {
    std::function<bool(int, std::string*)> next;
    std::function<void(int, int, std::string_view)> answered;
    std::function<void(int, const std::string&)> failed;
  };

  // A call with no progress on any connection for `stall_ms` fails (a hung server ends the run
  // with failures rather than hanging it).
  PolledConnections(const Endpoint& endpoint, int count, int stall_ms = 60000)
      : endpoint_(endpoint), conns_(static_cast<std::size_t>(count)), stall_ms_(stall_ms) {}
  ~PolledConnections();
  PolledConnections(const PolledConnections&) = delete;
  PolledConnections& operator=(const PolledConnections&) = delete;

  // Until no connection has a request left.
  void Run(const Calls& calls);

 private:
  struct Conn {
    int fd = -1;
    bool active = false;
    std::string out;
    std::size_t sent = 0;
    std::string in;
  };
  void Advance(int i, const Calls& calls, std::string failure);
  // "" or what failed.
  std::string Start(int i);
  std::string Send(int i);
  std::string Receive(int i, const Calls& calls);

  Endpoint endpoint_;
  std::vector<Conn> conns_;
  int stall_ms_;
};

}  // namespace allot::cli
