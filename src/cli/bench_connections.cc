#include "cli/bench_connections.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <optional>

#include "common/strings.h"

namespace allot::cli {

namespace {

// The value of header `name` in `head` (the status line and headers), compared without case.
std::optional<std::string_view> Header(std::string_view head, std::string_view name) {
  for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;) {
    const std::size_t start = at + 2;
    const std::size_t end = head.find("\r\n", start);
    const std::string_view line =
        head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && EqualsIgnoreCase(line.substr(0, colon), name)) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
      return value;
    }
    at = end;
  }
  return std::nullopt;
}

std::optional<std::size_t> ContentLength(std::string_view head) {
  const std::optional<std::string_view> v = Header(head, "content-length");
  std::size_t n = 0;
  if (!v || v->empty() || std::from_chars(v->data(), v->data() + v->size(), n).ec != std::errc()) {
    return std::nullopt;
  }
  return n;
}

// Host and port of "http://host[:port]" ("[v6]" unbracketed), port 80 by default.
std::pair<std::string, std::string> HostAndPort(const Endpoint& endpoint) {
  const std::string authority = endpoint.scheme_host.substr(endpoint.scheme_host.find("://") + 3);
  const std::size_t colon = authority.rfind(':');
  const bool has_port =
      colon != std::string::npos && authority.find(']', colon) == std::string::npos;
  std::string host = has_port ? authority.substr(0, colon) : authority;
  std::string port = has_port ? authority.substr(colon + 1) : "80";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {host, port};
}

std::string Where(const Endpoint& endpoint) {
  const auto [host, port] = HostAndPort(endpoint);
  return host + ":" + port;
}

}  // namespace

AnswerAt ParseAnswer(std::string_view in) {
  AnswerAt answer;
  const std::size_t header_end = in.find("\r\n\r\n");
  if (header_end == std::string_view::npos) return answer;
  const std::string_view head = in.substr(0, header_end);
  if (head.size() < 12 || head.substr(0, 5) != "HTTP/" ||
      std::from_chars(head.data() + 9, head.data() + 12, answer.status).ec != std::errc()) {
    answer.error = "a malformed answer";
    return answer;
  }
  const std::optional<std::size_t> length = ContentLength(head);
  if (!length) {
    answer.error = "an answer without Content-Length";
    return answer;
  }
  const std::optional<std::string_view> connection = Header(head, "connection");
  answer.close = connection && EqualsIgnoreCase(*connection, "close");
  answer.size = header_end + 4 + *length;
  if (in.size() < answer.size) return answer;
  answer.body = in.substr(header_end + 4, *length);
  answer.complete = true;
  return answer;
}

int ConnectTo(const Endpoint& endpoint) {
  const auto [host, port] = HostAndPort(endpoint);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    throw CliError("cannot resolve " + host + ":" + port);
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw CliError("cannot connect to " + host + ":" + port);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int RawConnection::Exchange(std::string_view request, std::string* body) {
  if (fd_ < 0) {
    fd_ = ConnectTo(endpoint_);
    in_.clear();
  }
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Fail("send");
    sent += static_cast<std::size_t>(n);
  }
  for (;;) {
    const AnswerAt answer = ParseAnswer(in_);
    if (!answer.error.empty()) Fail(answer.error);
    if (answer.complete) {
      body->assign(answer.body);
      in_.erase(0, answer.size);
      if (answer.close) Close();
      return answer.status;
    }
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Fail(n == 0 ? "the server closed the connection" : "recv");
    in_.append(chunk, static_cast<std::size_t>(n));
  }
}

void RawConnection::Fail(const std::string& what) {
  Close();
  throw CliError("HTTP exchange with " + Where(endpoint_) + " failed: " + what);
}

void RawConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
}

PolledConnections::~PolledConnections() {
  for (Conn& c : conns_) {
    if (c.fd >= 0) ::close(c.fd);
  }
}

void PolledConnections::Run(const Calls& calls) {
  const int count = static_cast<int>(conns_.size());
  for (int i = 0; i < count; ++i) Advance(i, calls, "");
  std::vector<pollfd> fds;
  std::vector<int> which;
  for (;;) {
    fds.clear();
    which.clear();
    for (int i = 0; i < count; ++i) {
      const Conn& c = conns_[static_cast<std::size_t>(i)];
      if (!c.active) continue;
      const short events = c.sent < c.out.size() ? POLLOUT : POLLIN;
      fds.push_back({c.fd, events, 0});
      which.push_back(i);
    }
    if (fds.empty()) return;
    const int ready = ::poll(fds.data(), fds.size(), stall_ms_);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw CliError("poll failed");
    }
    if (ready == 0) {  // nothing moved on any connection: every call in flight fails
      for (const int i : which) {
        Advance(i, calls, "no progress for " + std::to_string(stall_ms_) + " ms");
      }
      continue;
    }
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      const int i = which[k];
      const bool sending =
          conns_[static_cast<std::size_t>(i)].sent < conns_[static_cast<std::size_t>(i)].out.size();
      std::string error = sending ? Send(i) : Receive(i, calls);
      if (!error.empty()) Advance(i, calls, std::move(error));
    }
  }
}

// Ends connection i's call with `failure` (none: it was answered), then begins its next one:
// connected if it is not, and sent as far as the socket takes it at once. A failed call closes
// the connection. A loop, not a recursion: a server that refuses every connection fails each
// call in turn.
void PolledConnections::Advance(int i, const Calls& calls, std::string failure) {
  Conn& c = conns_[static_cast<std::size_t>(i)];
  for (;;) {
    if (!failure.empty()) {
      if (c.fd >= 0) ::close(c.fd);
      c.fd = -1;
      c.in.clear();
      calls.failed(i, "HTTP exchange with " + Where(endpoint_) + " failed: " + failure);
    }
    c.active = calls.next(i, &c.out);
    c.sent = 0;
    if (!c.active) return;
    failure = Start(i);
    if (failure.empty()) return;
  }
}

std::string PolledConnections::Start(int i) {
  Conn& c = conns_[static_cast<std::size_t>(i)];
  if (c.fd < 0) {
    try {
      c.fd = ConnectTo(endpoint_);
    } catch (const CliError& e) {
      return e.what();
    }
    ::fcntl(c.fd, F_SETFL, ::fcntl(c.fd, F_GETFL) | O_NONBLOCK);
    c.in.clear();
  }
  return Send(i);
}

std::string PolledConnections::Send(int i) {
  Conn& c = conns_[static_cast<std::size_t>(i)];
  while (c.sent < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return "";  // poll says when
    if (n <= 0) return "send";
    c.sent += static_cast<std::size_t>(n);
  }
  return "";
}

std::string PolledConnections::Receive(int i, const Calls& calls) {
  Conn& c = conns_[static_cast<std::size_t>(i)];
  char chunk[4096];
  bool closed = false;  // by the server, after what was read
  // Until a read comes back short: the socket held no more then, and poll() says when more
  // comes. Reading on to EAGAIN cost a second recv() per answer, a third of the load
  // generator's system calls on the server's cores. A server that closes after an answer says
  // so (`Connection: close`, as Allot's does); one that closes silently fails the next call.
  for (;;) {
    const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) return "recv";
    if (n == 0) {
      closed = true;
      break;
    }
    c.in.append(chunk, static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < sizeof chunk) break;
  }
  const AnswerAt answer = ParseAnswer(c.in);
  if (!answer.error.empty()) return answer.error;
  if (!answer.complete) return closed ? "the server closed the connection" : "";
  calls.answered(i, answer.status, answer.body);
  c.in.erase(0, answer.size);
  if (answer.close || closed) {
    ::close(c.fd);
    c.fd = -1;
  }
  Advance(i, calls, "");
  return "";
}

}  // namespace allot::cli
