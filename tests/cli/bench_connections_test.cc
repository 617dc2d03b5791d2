// The load generator's connections: answers parsed from the wire, and many connections driven
// by one thread against a real socket on loopback.
#include "cli/bench_connections.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace allot::cli {
namespace {

TEST(ParseAnswer, NeedsTheWholeBodyAndSaysWhatItTakes) {
  const std::string wire = "HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1";
  EXPECT_FALSE(ParseAnswer("HTTP/1.1 200 OK\r\nContent-Len").complete);
  EXPECT_FALSE(ParseAnswer(wire.substr(0, 44)).complete);
  const AnswerAt a = ParseAnswer(wire);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body, "hello");
  EXPECT_EQ(a.size, wire.size() - 8);
  EXPECT_FALSE(a.close);
  EXPECT_TRUE(
      ParseAnswer("HTTP/1.1 200 OK\r\nconnection:  Close \r\ncontent-length: 0\r\n\r\n").close);
}

TEST(ParseAnswer, NamesAMalformedHead) {
  EXPECT_EQ(ParseAnswer("SMTP ready\r\n\r\n").error, "a malformed answer");
  EXPECT_EQ(ParseAnswer("HTTP/1.1 200 OK\r\n\r\n").error, "an answer without Content-Length");
}

// A loopback server answering every request with its body ("ok" unless told); every third
// answer closes its connection. A silent one reads requests and never answers.
class OkServer {
 public:
  // `split`: each answer's first 1,000 bytes, a pause, then the rest.
  explicit OkServer(bool silent = false, std::string body = "ok", bool split = false)
      : silent_(silent), body_(std::move(body)), split_(split) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 64), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accepter_ = std::thread([this] { Accept(); });
  }
  ~OkServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accepter_.join();
    for (std::thread& t : served_) t.join();
  }
  OkServer(const OkServer&) = delete;
  OkServer& operator=(const OkServer&) = delete;

  Endpoint endpoint() const {
    const std::string hp = "127.0.0.1:" + std::to_string(port_);
    return {"http://" + hp, "http://" + hp, hp, ""};
  }

 private:
  void Accept() {
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      served_.emplace_back([this, c] { Serve(c); });
    }
  }
  void Serve(int c) {
    std::string in;
    char chunk[4096];
    for (;;) {
      const std::size_t end = in.find("\r\n\r\n");
      if (end == std::string::npos) {
        const ssize_t n = ::recv(c, chunk, sizeof chunk, 0);
        if (n <= 0) break;
        in.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      in.erase(0, end + 4);  // the requests here have no body
      if (silent_) continue;
      const bool close = ++answers_ % 3 == 0;
      const std::string out = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body_.size()) +
                              "\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n" + body_;
      const std::size_t first = split_ ? std::min<std::size_t>(1000, out.size()) : out.size();
      if (!SendAll(c, std::string_view(out).substr(0, first))) break;
      if (first < out.size()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!SendAll(c, std::string_view(out).substr(first))) break;
      }
      if (close) break;
    }
    ::close(c);
  }

  static bool SendAll(int c, std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(c, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  bool silent_ = false;
  std::string body_;
  bool split_ = false;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> answers_{0};
  std::thread accepter_;
  std::vector<std::thread> served_;  // the accepter's only, joined after it
};

struct Tally {
  int next = 0;
  std::vector<int> answered_by;  // per connection
  std::vector<std::string> failures;
};

PolledConnections::Calls Counting(Tally& tally, int requests, const std::string& host,
                                  std::string body = "ok") {
  return {.next =
              [&tally, requests, host](int, std::string* out) {
                if (tally.next >= requests) return false;
                ++tally.next;
                *out = "GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
                return true;
              },
          .answered =
              [&tally, body](int c, int status, std::string_view got) {
                EXPECT_EQ(status, 200);
                EXPECT_EQ(got, body);
                ++tally.answered_by[static_cast<std::size_t>(c)];
              },
          .failed = [&tally](int, const std::string& error) { tally.failures.push_back(error); }};
}

TEST(PolledConnections, OneThreadKeepsACallInFlightOnEachConnection) {
  OkServer server;
  Tally tally;
  tally.answered_by.assign(4, 0);
  PolledConnections conns(server.endpoint(), 4);
  conns.Run(Counting(tally, 90, server.endpoint().host_header));
  int answered = 0;
  for (int n : tally.answered_by) {
    EXPECT_GT(n, 0);  // every connection took part, closed and connected again on the way
    answered += n;
  }
  EXPECT_EQ(answered, 90);
  EXPECT_TRUE(tally.failures.empty()) << tally.failures.front();
}

// An answer is read until a read comes back short; one longer than a read, or arriving in
// pieces, is read on when poll() reports the rest.
TEST(PolledConnections, AnAnswerLongerThanAReadOrInPiecesIsReadWhole) {
  // Bodies of 4,055 bytes make answers of exactly one read (4,096 bytes, or 4,115 with
  // `Connection: close`).
  for (const bool split : {false, true}) {
    for (const std::size_t size : {std::size_t{4055}, std::size_t{4096}, std::size_t{10000}}) {
      std::string body(size, 'x');
      body.back() = 'y';
      OkServer server(/*silent=*/false, body, split);
      Tally tally;
      tally.answered_by.assign(2, 0);
      PolledConnections conns(server.endpoint(), 2, /*stall_ms=*/5000);
      conns.Run(Counting(tally, 8, server.endpoint().host_header, body));
      EXPECT_EQ(tally.answered_by[0] + tally.answered_by[1], 8) << size << " split " << split;
      EXPECT_TRUE(tally.failures.empty()) << tally.failures.front();
    }
  }
}

TEST(PolledConnections, ARefusedConnectionFailsEachCallInTurnAndEnds) {
  Endpoint nowhere;
  {
    OkServer closed;  // a port that was just free, closed again when this scope ends
    nowhere = closed.endpoint();
  }
  Tally tally;
  tally.answered_by.assign(2, 0);
  PolledConnections conns(nowhere, 2);
  conns.Run(Counting(tally, 5000, nowhere.host_header));  // a loop, not a recursion per call
  EXPECT_EQ(tally.next, 5000);
  ASSERT_EQ(tally.failures.size(), 5000U);
  EXPECT_NE(tally.failures.front().find("cannot connect to 127.0.0.1:"), std::string::npos)
      << tally.failures.front();
}

TEST(PolledConnections, CallsToAServerThatNeverAnswersFailOnceNothingMoves) {
  OkServer server(/*silent=*/true);
  Tally tally;
  tally.answered_by.assign(3, 0);
  PolledConnections conns(server.endpoint(), 3, /*stall_ms=*/100);
  conns.Run(Counting(tally, 6, server.endpoint().host_header));
  EXPECT_EQ(tally.next, 6);
  ASSERT_EQ(tally.failures.size(), 6U);
  EXPECT_NE(tally.failures.front().find("no progress for 100 ms"), std::string::npos)
      << tally.failures.front();
}

}  // namespace
}  // namespace allot::cli
