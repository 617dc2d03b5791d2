#include "server/http_server.h"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/decode.h"
#include "api/fields.h"
#include "api/query.h"
#include "api/routes.h"
#include "api/sigv4.h"
#include "api/tenancy_requests.h"
#include "common/strings.h"
#include "server/admission.h"
#include "server/api_error.h"
#include "server/audit.h"
#include "server/log.h"
#include "server/ui_assets.h"
#include "server/wire_call.h"

// Event-driven HTTP/1.1 on Boost.Beast. A few I/O threads (one per two cores, at most 4; the first
// is the one that calls Serve, and it also accepts) each run an event loop of their own; a new
// connection goes to the next loop in turn and stays there. A request that passed its deadlines
// is run on its connection's loop: its signature is verified and the controller called there,
// with no hand-off to another thread. An answer that must wait for the store's commit is parked;
// the store's writer, settling a commit, asks the call's loop to answer, and the loop answers
// every parked call whose commit is settled by then; so a loop never blocks on the disk, and a
// group commit costs one hand-off (writer to loop) per loop rather than three per call. Calls that
// read files or many records (job logs, the audit trail, users) run on a pool of http_threads
// workers instead. A slow client holds a socket, never a thread: /healthz is answered on the loop
// itself.
//
// Deadlines (Options): a request's headers must arrive within http_header_timeout of its first
// byte (of the accept for a connection's first request), its body within http_body_timeout of
// the headers, and an answer must be written within http_body_timeout; a keep-alive connection
// waits http_idle_timeout for the next request.
//
// Admission (MakeRoom; docs/security.md, "The API port" says it for operators). A client counts
// under its AdmissionKey (server/admission.h): its address, all of loopback being one. Each key
// may hold http_max_connections_per_address connections and the server http_max_connections.
// Within those, connections still reading a request (from the accept, or from the first byte of
// a keep-alive request, until the request is whole) have a smaller budget: kReadingPerAddress
// per key and kReadingInAll in all. A new connection beyond a reading budget closes the oldest
// reading connection (of its key, or of all); one beyond a cap closes an idle keep-alive
// connection (of its key when its key's cap is the one reached), else the oldest reading one,
// else the one whose answer has waited longest (kStalledWrite at least) for a client that does
// not read it, else it is answered 503 and closed at once. So slow or silent clients can hold
// reading slots only until newer connections push them out, while a client that sends its request
// whole is read long before a budget's worth of newer connections arrive after it: it is always
// served. The closed ones get no answer, as on a deadline.

namespace allot::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

using api::Route;

constexpr std::uint64_t kMaxBody = std::uint64_t{64} * 1024;    // a larger body answers 413
constexpr std::size_t kMaxSubmitBody = std::size_t{30} * 1024;  // AWS's SubmitServiceJob limit
constexpr std::uint32_t kMaxHeader = 32 * 1024;
constexpr std::size_t kReadChunk = 4096;
constexpr auto kStopGrace = std::chrono::seconds(10);  // Stop() waits this long for answers
constexpr auto kLinger = std::chrono::seconds(2);      // reading on after an early answer
// An answer its client has not taken for this long may be cut off to make room (MakeRoom): a
// client reading its answers takes a socket buffer's worth (4 MiB at most) in far less.
constexpr auto kStalledWrite = std::chrono::seconds(2);
// The budgets of connections still reading a request (the file's comment, "Admission"). A
// prompt client's request is read within a turn of its loop, so 16 per address is far more than
// it needs, and bounds what one local process (a job) keeps reading at once. In all, 256 bound
// the buffers that clients which have proven nothing hold (up to 96 KiB each).
constexpr std::size_t kReadingPerAddress = 16;
constexpr std::size_t kReadingInAll = 256;

std::chrono::milliseconds Millis(Duration d) { return std::chrono::milliseconds(d); }

// Every JSON the server writes goes through here: bytes that are not UTF-8 (log text, or a value
// a message quotes) become U+FFFD instead of making dump() throw.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// What a route answers.
struct Answer {
  http::status status = http::status::ok;
  std::string content_type;
  std::string error_type;  // x-amzn-ErrorType, for errors
  std::string body;
  std::string request_id;  // x-amzn-RequestId, for API calls
  // More headers (the dashboard's CSP, a redirect's Location).
  std::vector<std::pair<std::string, std::string>> headers;
  // Valid while the answer waits for the store's commit of the call's change: `status` and
  // `body` hold for a commit that succeeds (Settle). For a refusal it is the commit of the
  // call's audit record, and the refusal stands whatever that commit's outcome (`refusal`).
  Durable durable;
  bool refusal = false;
};

Answer ErrorAnswer(http::status status, const std::string& type, const std::string& message) {
  return {status, "application/json", type,
          Dump(Json{{"message", api::ScrubUtf8(message)}, {"__type", type}})};
}

// A fault of the server: the detail goes to stderr, the caller sees nothing internal.
Answer InternalError(const char* detail) {
  std::fprintf(stderr, "allot server: internal error answering a request: %s\n", detail);
  return ErrorAnswer(http::status::internal_server_error, "ServerException",
                     "internal server error");
}

// The answer to a call the controller accepted. It does not wait for the commit: the caller
// settles it (Settle) once reply.durable is ready.
Answer ReplyAnswer(const WireReply& reply) {
  // Log text may hold bytes that are not UTF-8: they are replaced rather than refused.
  Answer answer{http::status::ok, "application/json", "", Dump(reply.body), "", {}};
  answer.durable = reply.durable;
  return answer;
}

bool Pending(const Answer& answer) { return answer.durable.valid() && !answer.durable.ready(); }

// Waits for the commit the answer depends on (if any): a failed one answers 500 instead.
void Settle(Answer& answer) {
  if (!answer.durable.valid()) return;
  const Status s = answer.durable.get();
  answer.durable = {};
  if (s.ok() || answer.refusal) return;
  std::string request_id = std::move(answer.request_id);
  answer = ErrorAnswer(http::status::internal_server_error, "ServerException",
                       "the change could not be stored: " + s.message());
  answer.request_id = std::move(request_id);
}

using Request = http::request<http::string_body>;

api::HttpRequestView ViewOf(const Request& req) {
  api::HttpRequestView v;
  v.method = std::string(req.method_string());
  std::tie(v.path, v.query) = api::SplitRequestTarget(req.target());
  for (const auto& field : req) {
    v.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  v.body = req.body();
  return v;
}

// A request id in the UUID shape AWS uses; random per thread, never reused in practice.
std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::uint64_t a = rng();
  return UuidV4(a, rng());
}

Timestamp WallClock() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Answer PlainAnswer(http::status status, std::string body = "", std::string content_type = "") {
  return {status, std::move(content_type), "", std::move(body)};
}

class Connection;

// What the log line of one API call says (server/log.h): who, what, on which resource.
struct CallLog {
  std::string principal;   // the user, once the signature is verified
  std::string source;      // the client's address
  std::string request_id;  // x-amzn-RequestId
  std::string action;      // "submitservicejob", "tags", "logs"
  std::string resource;    // the job, queue, share, environment, policy or ARN it names
  // The action as the latency metric labels it: only known actions, so that requests for
  // unknown paths cannot grow the series without bound ("other" for the rest).
  std::string metric_label;
};

// The resource a request body names, for the log: the first of the fields AWS uses for it.
std::string ResourceOf(const Json& body) {
  for (const char* key : {"jobId", "quotaShareArn", "jobQueue", "jobQueueName",
                          "serviceEnvironment", "serviceEnvironmentName", "arn", "name"}) {
    auto it = body.find(key);
    if (it != body.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

// The call's log line (server/log.h): who, what, on which resource, the outcome and the latency
// until the answer was ready (its commit included), which the metrics count too.
void LogCall(const CallLog& call, const Answer& answer,
             std::chrono::steady_clock::time_point started, ServerMetrics& metrics) {
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - started;
  metrics.api_latency.With({call.metric_label.empty() ? "other" : call.metric_label})
      .Observe(took.count() / 1000);
  log::Info("api.call", {{"principal", call.principal},
                         {"source", call.source},
                         {"request_id", call.request_id},
                         {"action", call.action},
                         {"resource", call.resource},
                         {"outcome", answer.error_type.empty() ? "ok" : answer.error_type},
                         {"status", static_cast<std::int64_t>(answer.status)},
                         {"latency_ms", took.count()}});
}

}  // namespace

// The listening socket, the event loops, the parked calls, the workers and the registry of
// connections.
class HttpServer::Impl {
 public:
  explicit Impl(Controller& controller);
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  Result<int> Bind(const std::string& host, int port);
  void Serve();
  void Stop();

  // For connections, on their loop (Handle also on a worker).
  Answer Handle(const Request& req, const Route& route, CallLog* call);
  Answer MetricsAnswer(const Request& req, const CallLog& call);
  void Dispatch(std::shared_ptr<Connection> conn, Request req, Route route);
  // The connection began, or ended, reading a request (ReadingConnections).
  void BeganReading(std::uint64_t serial, const asio::ip::address& key);
  void EndedReading(std::uint64_t serial);
  // A connection MakeRoom chose to close had read its request whole by then: it stays, and
  // counts again.
  void KeptOpen(std::uint64_t serial, const asio::ip::address& key);
  void Unregister(std::uint64_t serial, const asio::ip::address& key);
  bool stopping() const { return stopping_.load(); }
  const Options& options() const { return options_; }

 private:
  void Accept();
  void Admit(asio::io_context& loop, tcp::socket socket);
  bool MakeRoom(const asio::ip::address& key);
  // Under mu_: chooses the reading connection `entry` names to be closed; it counts as gone
  // from now on (displaced_).
  void CloseReadingLocked(const ReadingConnections::Entry& entry,
                          std::vector<std::shared_ptr<Connection>>* to_close);
  void DropCountLocked(const asio::ip::address& key);  // one connection fewer from `key`
  void BeginStop();
  Result<WireReply> Run(const Request& req, const Route& route, const Caller& caller,
                        CallLog* call);
  Result<WireReply> Tags(const Request& req, const Route& route, const api::QueryParams& params,
                         const Caller& caller);
  static std::string AuditedActionOf(const Request& req, const Route& route);

  using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;
  // Runs a request on the calling thread (its connection's loop, or a worker) and answers it,
  // or parks it until its commit.
  void RunCall(const std::shared_ptr<Connection>& conn, const Request& req, const Route& route);
  // A call whose answer waits for the store's commit. Its thread goes on to the next request.
  // When the store's writer settles the commit (Durable::OnSet), it asks the call's loop to
  // answer (WakeAnswering), once until the loop has answered: the loop then answers every call
  // parked on it whose commit is settled (AnswerSettled), which is a whole group commit by the
  // time the loop runs. A separate answerer thread did this before: one more thread hand-off per
  // group commit, and its wake-ups, on a machine of two cores.
  struct Parked {
    std::shared_ptr<Connection> conn;
    Answer answer;
    CallLog call;
    std::chrono::steady_clock::time_point started;
    WorkGuard work;  // of the connection's loop, until the answer is written
  };
  void Park(Parked parked);
  void WakeAnswering(asio::io_context& loop);  // any thread
  void AnswerSettled(asio::io_context& loop);  // on that loop
  void DrainParked();  // once the loops have stopped: waits for each commit and logs the call
  asio::io_context& NextLoop();  // for a new connection; the accepting loop only

  Controller& controller_;
  const Options& options_;
  // Declared before the I/O context, so they outlive the connections it still holds.
  std::mutex park_mu_;
  std::vector<Parked> parked_;  // guarded by park_mu_, in the order the calls were parked
  // What the writer calls when it settles a commit: this server while it lives (~Impl clears it
  // before anything the call would touch goes).
  struct ParkedHub {
    std::mutex mu;
    Impl* server = nullptr;  // guarded by mu
  };
  std::shared_ptr<ParkedHub> hub_ = std::make_shared<ParkedHub>();
  // Per loop: an answering is posted and has not begun. Keys fixed at construction.
  std::map<const asio::io_context*, std::unique_ptr<std::atomic<bool>>> answer_posted_;
  std::mutex mu_;
  std::unordered_map<std::uint64_t, std::weak_ptr<Connection>> live_;  // by serial
  // By AdmissionKey: the connections in live_ and not in displaced_.
  std::map<asio::ip::address, int> per_address_;
  // Chosen to be closed by MakeRoom, not yet gone: counted neither in per_address_ nor against
  // http_max_connections, so that connections arriving before the close is done do not close
  // more than their room.
  std::unordered_set<std::uint64_t> displaced_;
  ReadingConnections reading_;
  // The budgets of reading connections: the constants, or the caps where those are smaller.
  const std::size_t reading_per_address_;
  const std::size_t reading_in_all_;
  std::uint64_t next_serial_ = 0;  // the accepting loop only
  std::atomic<bool> stopping_{false};
  bool stop_timer_armed_ = false;  // guarded by mu_; never set once Serve() has returned
  // Loop 0 (run by the thread that calls Serve) accepts and serves connections; the others only
  // serve. Each is run by one thread (concurrency hint 1); others post to it.
  asio::io_context ioc_{1};
  std::vector<std::unique_ptr<asio::io_context>> more_loops_;
  std::vector<WorkGuard> loop_guards_;  // the other loops run until BeginStop releases them
  std::vector<std::thread> loop_threads_;
  std::size_t next_loop_ = 0;  // the accepting loop only
  tcp::acceptor acceptor_{ioc_};
  asio::steady_timer retry_timer_{ioc_};  // accept again after an error (out of descriptors)
  asio::steady_timer stop_timer_{ioc_};   // the bound on a graceful stop
  asio::thread_pool workers_;
};

namespace {

// One client connection, owned by the handlers pending on it; lives on its loop's thread. Other
// threads only read whether it is idle and post to its loop.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `serial` is already counted as reading its first request (Admit).
  Connection(HttpServer::Impl& server, asio::io_context& loop, tcp::socket socket,
             asio::ip::address peer, asio::ip::address key, std::uint64_t serial)
      : server_(server),
        loop_(loop),
        stream_(std::move(socket)),
        peer_(std::move(peer)),
        key_(std::move(key)),
        serial_(serial) {}
  // Only a mutex lock could throw in Unregister; terminating then is right.
  ~Connection() { server_.Unregister(serial_, key_); }  // NOLINT(bugprone-exception-escape)

  void Start() { ReadHeader(server_.options().http_header_timeout); }
  // Any thread: idle between keep-alive requests and not yet chosen to be closed.
  bool idle() const { return state_ == State::kIdle && !doomed_; }
  const asio::ip::address& peer() const { return peer_; }
  const asio::ip::address& key() const { return key_; }
  asio::io_context& loop() const { return loop_; }
  bool on_loop() const { return loop_.get_executor().running_in_this_thread(); }

  // Any thread: closes an idle keep-alive connection to make room for a new one. False when
  // another caller chose it already.
  bool CloseIdle() { return CloseToMakeRoom(State::kIdle); }
  // Any thread: closes the connection if, when its loop gets to it, it is still reading a request
  // or waiting for the next one: a newer connection displaced it (MakeRoom). One that has read
  // its request whole meanwhile is answered as usual.
  void CloseDisplaced() {
    asio::post(loop_, [self = shared_from_this()] {
      if (self->state_ == State::kReading || self->state_ == State::kIdle) return self->Close();
      if (self->state_ != State::kClosing) self->server_.KeptOpen(self->serial_, self->key_);
    });
  }
  // Any thread: when the answer being written has waited for its client since before
  // `stalled_before`, the time it began writing; else nullopt.
  std::optional<std::chrono::steady_clock::time_point> StalledSince(
      std::chrono::steady_clock::time_point stalled_before) const {
    const std::chrono::steady_clock::rep ticks = writing_since_.load();
    if (ticks == 0 || doomed_) return std::nullopt;
    const std::chrono::steady_clock::time_point since{std::chrono::steady_clock::duration(ticks)};
    if (since >= stalled_before) return std::nullopt;
    return since;
  }
  // Any thread: closes a connection whose answer its client does not take, to make room for a
  // new one (MakeRoom). False when another caller chose it already.
  bool CloseStalled() { return CloseToMakeRoom(State::kWriting); }
  // Any thread: closes the connection unless a request on it is being answered (that one ends
  // it).
  void OnStop() {
    asio::post(loop_, [self = shared_from_this()] {
      if (self->state_ == State::kIdle || self->state_ == State::kReading) self->Close();
    });
  }
  void Answered(Answer answer) { Write(std::move(answer), keep_alive_ && !server_.stopping()); }

 private:
  enum class State { kIdle, kReading, kHandling, kWriting, kClosing };

  // Closes the connection if, when its loop gets to it, it is still in `state` (doomed_ until
  // then). False when another caller chose it already.
  bool CloseToMakeRoom(State state) {
    if (doomed_.exchange(true)) return false;
    asio::post(loop_, [self = shared_from_this(), state] {
      if (self->state_ == state) self->Close();
      self->doomed_ = false;
    });
    return true;
  }

  // Waits for the first byte of the next request on a keep-alive connection.
  void WaitForRequest() {
    if (buffer_.size() > 0) return ReadHeader(server_.options().http_header_timeout);
    state_ = State::kIdle;
    stream_.expires_after(Millis(server_.options().http_idle_timeout));
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadHeader(self->server_.options().http_header_timeout);
                            });
  }

  void ReadHeader(Duration deadline) {
    state_ = State::kReading;
    if (!counted_reading_) {
      counted_reading_ = true;
      server_.BeganReading(serial_, key_);
    }
    parser_.emplace();
    parser_->header_limit(kMaxHeader);
    parser_->body_limit(kMaxBody);
    stream_.expires_after(Millis(deadline));
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return Refused(ec);
    if (parser_->is_done()) return OnRequest();
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      stream_.expires_after(Millis(server_.options().http_body_timeout));
      return asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                               [self = shared_from_this()](beast::error_code e, std::size_t) {
                                 if (e) return self->Close();
                                 self->ReadBody();
                               });
    }
    ReadBody();
  }

  void ReadBody() {
    stream_.expires_after(Millis(server_.options().http_body_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->Refused(ec);
                       self->OnRequest();
                     });
  }

  // A request that could not be read: too large (413, as before), malformed (400), or a
  // deadline passed or the client went away (closed without an answer). The first two are
  // answered as AWS errors, so that an SDK reads a ClientException with its message.
  void Refused(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      return Write(ErrorAnswer(http::status::payload_too_large, "ClientException",
                               "the request body is over " + std::to_string(kMaxBody) +
                                   " bytes (SubmitServiceJob takes at most " +
                                   std::to_string(kMaxSubmitBody) + ")"),
                   false, /*linger=*/true);
    }
    if (ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return Write(ErrorAnswer(http::status::bad_request, "ClientException",
                               "the request could not be read as HTTP/1.1: " + ec.message()),
                   false, /*linger=*/true);
    }
    Close();
  }

  void OnRequest() {
    stream_.expires_never();
    counted_reading_ = false;
    server_.EndedReading(serial_);
    Request req = parser_->release();
    parser_.reset();
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    version_ = req.version();
    const std::string path = api::PercentDecode(api::SplitRequestTarget(req.target()).first, false);
    Route route = api::MatchRoute(req.method_string(), path);
    if (route.kind == Route::kHealth) {
      return Answered(PlainAnswer(http::status::ok, "ok\n", "text/plain"));
    }
    if (route.kind == Route::kUi) {  // static files of the binary: no signature, no I/O
      UiAnswer ui = ServeUi(route.capture);
      Answer answer = PlainAnswer(static_cast<http::status>(ui.status), std::string(ui.body),
                                  std::move(ui.content_type));
      answer.headers = std::move(ui.headers);
      return Answered(std::move(answer));
    }
    if (route.kind == Route::kNone) return Answered(PlainAnswer(http::status::not_found));
    state_ = State::kHandling;
    server_.Dispatch(shared_from_this(), std::move(req), std::move(route));
  }

  void Write(Answer answer, bool keep_alive, bool linger = false) {
    state_ = State::kWriting;
    res_ = {};
    res_.version(version_);
    res_.result(answer.status);
    if (!answer.content_type.empty()) res_.set(http::field::content_type, answer.content_type);
    if (!answer.error_type.empty()) res_.set("x-amzn-ErrorType", answer.error_type);
    if (!answer.request_id.empty()) res_.set("x-amzn-RequestId", answer.request_id);
    for (const auto& [name, value] : answer.headers) res_.set(name, value);
    res_.body() = std::move(answer.body);
    res_.keep_alive(keep_alive);
    res_.prepare_payload();
    if (head_) res_.body().clear();  // Content-Length stays that of the GET
    stream_.expires_after(Millis(server_.options().http_body_timeout));
    writing_since_ = std::chrono::steady_clock::now().time_since_epoch().count();
    http::async_write(
        stream_, res_,
        [self = shared_from_this(), keep_alive, linger](beast::error_code ec, std::size_t) {
          self->writing_since_ = 0;
          if (ec) return self->Close();
          if (linger) return self->Linger();
          if (!keep_alive) return self->Close();
          self->head_ = false;
          self->WaitForRequest();
        });
  }

  // After answering a request that was not read to its end: stop sending, then read and drop
  // what the client still sends for a moment, so that closing does not reset the connection
  // before the client has read the answer.
  void Linger() {
    state_ = State::kClosing;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(kLinger);
    Drain();
  }

  void Drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->Close();
                              self->Drain();
                            });
  }

  void Close() {
    state_ = State::kClosing;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  HttpServer::Impl& server_;
  asio::io_context& loop_;
  beast::tcp_stream stream_;
  asio::ip::address peer_;  // for the log and aws:SourceIp
  asio::ip::address key_;   // for the limits: AdmissionKey(peer_)
  const std::uint64_t serial_;
  // On the loop: this connection told the server it is reading a request and has not told it
  // the request is whole. (MakeRoom may have taken it off the server's count since, to close it.)
  bool counted_reading_ = true;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::atomic<State> state_{State::kReading};  // written on the loop only
  std::atomic<bool> doomed_{false};            // CloseIdle or CloseStalled chose it
  // When the answer being written began (steady_clock ticks), 0 while none is: written on the
  // loop, read by MakeRoom.
  std::atomic<std::chrono::steady_clock::rep> writing_since_{0};
  bool keep_alive_ = false;
  bool head_ = false;
  unsigned version_ = 11;
};

// A connection over a cap: a 503 written without waiting, then closed.
void RefuseConnection(tcp::socket& socket) {
  static constexpr std::string_view k503 =
      "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n"
      "Retry-After: 1\r\n\r\n";
  beast::error_code ec;
  socket.non_blocking(true, ec);
  std::array<char, kReadChunk> sink;
  socket.read_some(asio::buffer(sink), ec);  // what already came, so the close is not a reset
  socket.write_some(asio::buffer(k503.data(), k503.size()), ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

}  // namespace

HttpServer::Impl::Impl(Controller& controller)
    : controller_(controller),
      options_(controller.options()),
      reading_per_address_(std::min(
          kReadingPerAddress, static_cast<std::size_t>(options_.http_max_connections_per_address))),
      reading_in_all_(
          std::min(kReadingInAll, static_cast<std::size_t>(options_.http_max_connections))),
      workers_(static_cast<std::size_t>(std::max(1, options_.http_threads))) {
  // One loop per two cores (at most 4): the store's writer needs a core of its own. On the
  // 2-core benchmark machine one loop beat two (the second mostly waited for the controller's
  // lock), docs/benchmarks.md.
  const unsigned loops = options_.http_loops > 0
                             ? static_cast<unsigned>(options_.http_loops)
                             : std::clamp(std::thread::hardware_concurrency() / 2, 1U, 4U);
  for (unsigned i = 1; i < loops; ++i) {
    more_loops_.push_back(std::make_unique<asio::io_context>(1));
    loop_guards_.push_back(asio::make_work_guard(*more_loops_.back()));
  }
  answer_posted_.emplace(&ioc_, std::make_unique<std::atomic<bool>>(false));
  for (auto& loop : more_loops_) {
    answer_posted_.emplace(loop.get(), std::make_unique<std::atomic<bool>>(false));
  }
  hub_->server = this;
}

HttpServer::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> lock(hub_->mu);
    hub_->server = nullptr;
  }
  DrainParked();
}

Result<int> HttpServer::Impl::Bind(const std::string& host, int port) {
  const std::string where = port == 0 ? host : host + ":" + std::to_string(port);
  beast::error_code ec;
  tcp::resolver resolver(ioc_);
  const auto found = resolver.resolve(host, std::to_string(port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) return Internal("cannot listen on " + where);
  const tcp::endpoint endpoint = found.begin()->endpoint();
  // SO_REUSEADDR (a restart may bind while old connections linger in TIME_WAIT), but not
  // SO_REUSEPORT: a second server on the same port must fail to bind, not share it.
  if (acceptor_.open(endpoint.protocol(), ec) ||
      acceptor_.set_option(tcp::acceptor::reuse_address(true), ec) ||
      acceptor_.bind(endpoint, ec) ||
      acceptor_.listen(asio::socket_base::max_listen_connections, ec)) {
    acceptor_.close(ec);
    return Internal("cannot listen on " + where);
  }
  return static_cast<int>(acceptor_.local_endpoint().port());
}

void HttpServer::Impl::Serve() {
  pthread_setname_np(pthread_self(), "allot-http");  // the calling thread runs loop 0
  Accept();
  for (auto& loop : more_loops_) {
    loop_threads_.emplace_back([&loop] {
      pthread_setname_np(pthread_self(), "allot-http");
      loop->run();
    });
  }
  ioc_.run();
  for (std::thread& t : loop_threads_) t.join();
  workers_.join();
  DrainParked();
  std::lock_guard<std::mutex> lock(mu_);
  stop_timer_armed_ = false;  // connections the context still holds may go in ~Impl
}

void HttpServer::Impl::Stop() {
  asio::post(ioc_, [this] { BeginStop(); });
}

// On loop 0: no new connections; idle ones close now, the others after their answer.
void HttpServer::Impl::BeginStop() {
  if (stopping_.exchange(true)) return;
  beast::error_code ec;
  acceptor_.close(ec);
  retry_timer_.cancel();
  loop_guards_.clear();  // the other loops return once their connections are gone
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [raw, weak] : live_) {
      if (auto conn = weak.lock()) live.push_back(std::move(conn));
    }
  }
  for (auto& conn : live) conn->OnStop();
  if (!live.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    stop_timer_armed_ = true;
    stop_timer_.expires_after(kStopGrace);
    stop_timer_.async_wait([this](beast::error_code e) {
      if (e) return;
      ioc_.stop();
      for (auto& loop : more_loops_) loop->stop();
    });
  }
}

asio::io_context& HttpServer::Impl::NextLoop() {
  const std::size_t i = next_loop_++ % (more_loops_.size() + 1);
  return i == 0 ? ioc_ : *more_loops_[i - 1];
}

void HttpServer::Impl::Accept() {
  asio::io_context& loop = NextLoop();
  acceptor_.async_accept(loop, [this, &loop](beast::error_code ec, tcp::socket socket) {
    if (stopping_ || !acceptor_.is_open()) return;
    if (ec) {  // out of descriptors, say: try again in a moment rather than spin
      std::fprintf(stderr, "allot server: accept: %s\n", ec.message().c_str());
      retry_timer_.expires_after(std::chrono::milliseconds(100));
      retry_timer_.async_wait([this](beast::error_code e) {
        if (!e) Accept();
      });
      return;
    }
    Admit(loop, std::move(socket));
    Accept();
  });
}

void HttpServer::Impl::Admit(asio::io_context& loop, tcp::socket socket) {
  beast::error_code ec;
  const asio::ip::address peer = socket.remote_endpoint(ec).address();
  if (ec) return;  // gone already
  const asio::ip::address key = AdmissionKey(peer);
  if (!MakeRoom(key)) return RefuseConnection(socket);
  // Headers and body go out in one write, but a small answer must not wait for Nagle.
  socket.set_option(tcp::no_delay(true), ec);
  const std::uint64_t serial = next_serial_++;
  auto conn = std::make_shared<Connection>(*this, loop, std::move(socket), peer, key, serial);
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_.emplace(serial, conn);
    ++per_address_[key];
    // Reading from its accept: a client that connects and sends nothing holds a reading slot.
    reading_.Begin(serial, key);
  }
  asio::post(loop, [conn = std::move(conn)] { conn->Start(); });
}

// True when there is room for a new connection from `key`, made as the file's comment says
// ("Admission"): the oldest reading connection beyond a reading budget is closed; then, beyond a
// cap, an idle keep-alive connection, else the oldest reading one, else the one whose answer
// has waited longest for its client. False when a cap is reached and every connection under it
// is being answered promptly (or was already chosen to close).
bool HttpServer::Impl::MakeRoom(const asio::ip::address& key) {
  std::vector<std::shared_ptr<Connection>> candidates;
  bool address_full = false;
  bool total_full = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = per_address_.find(key);
    address_full =
        it != per_address_.end() && it->second >= options_.http_max_connections_per_address;
    total_full =
        live_.size() - displaced_.size() >= static_cast<std::size_t>(options_.http_max_connections);
    if (address_full || total_full) {
      // All of them, filtered after the lock: a reference dropped here could be the last one,
      // and the destructor takes mu_.
      for (auto& [serial, weak] : live_) {
        if (auto conn = weak.lock()) candidates.push_back(std::move(conn));
      }
    }
  }
  bool admitted = !address_full && !total_full;
  const auto mine = [&](const std::shared_ptr<Connection>& conn) {
    return !address_full || conn->key() == key;
  };
  for (auto& conn : candidates) {
    if (admitted) break;
    admitted = mine(conn) && conn->idle() && conn->CloseIdle();
  }
  // Whether the newcomer is admitted is decided before any connection still reading a request
  // is closed for it: one that is then answered 503 takes nobody's place.
  std::vector<std::shared_ptr<Connection>> to_close;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!admitted) {
      // No idle connection to close: the oldest one still reading a request goes instead.
      const auto oldest = address_full ? reading_.OldestOf(key) : reading_.Oldest();
      if (oldest) {
        CloseReadingLocked(*oldest, &to_close);
        admitted = true;
      }
    }
  }
  if (!admitted) {
    // Neither: the connection whose answer has waited longest for a client that does not take
    // it (kStalledWrite at least), so that clients that read nothing cannot hold a cap either.
    const auto stalled_before = std::chrono::steady_clock::now() - kStalledWrite;
    std::shared_ptr<Connection> stalled;
    std::chrono::steady_clock::time_point oldest;
    for (auto& conn : candidates) {
      const auto since = mine(conn) ? conn->StalledSince(stalled_before) : std::nullopt;
      if (since && (!stalled || *since < oldest)) {
        stalled = conn;
        oldest = *since;
      }
    }
    if (!stalled || !stalled->CloseStalled()) return false;
  }
  {
    // The newcomer reads a request first: it must fit the budgets of reading connections.
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto displaced = reading_.Displaced(key, reading_per_address_, reading_in_all_)) {
      CloseReadingLocked(*displaced, &to_close);
    }
  }
  for (auto& conn : to_close) conn->CloseDisplaced();
  return true;
}

// A connection whose last reference is going (its destructor waits for mu_) is not closed here:
// it is gone by the time the new one is served.
void HttpServer::Impl::CloseReadingLocked(const ReadingConnections::Entry& entry,
                                          std::vector<std::shared_ptr<Connection>>* to_close) {
  reading_.End(entry.serial);
  const auto it = live_.find(entry.serial);
  if (it == live_.end()) return;
  if (displaced_.insert(entry.serial).second) DropCountLocked(entry.key);
  if (auto conn = it->second.lock()) to_close->push_back(std::move(conn));
}

void HttpServer::Impl::DropCountLocked(const asio::ip::address& key) {
  const auto it = per_address_.find(key);
  if (it != per_address_.end() && --it->second <= 0) per_address_.erase(it);
}

void HttpServer::Impl::KeptOpen(std::uint64_t serial, const asio::ip::address& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (displaced_.erase(serial) > 0) ++per_address_[key];
}

void HttpServer::Impl::BeganReading(std::uint64_t serial, const asio::ip::address& key) {
  std::lock_guard<std::mutex> lock(mu_);
  reading_.Begin(serial, key);
}

void HttpServer::Impl::EndedReading(std::uint64_t serial) {
  std::lock_guard<std::mutex> lock(mu_);
  reading_.End(serial);
}

void HttpServer::Impl::Unregister(std::uint64_t serial, const asio::ip::address& key) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(serial);
  reading_.End(serial);
  if (displaced_.erase(serial) == 0) DropCountLocked(key);
  // The grace timer alone would keep Serve() running once the last connection is gone.
  if (stop_timer_armed_ && live_.empty()) {
    stop_timer_armed_ = false;
    asio::post(ioc_, [this] { stop_timer_.cancel(); });  // the timer belongs to loop 0
  }
}

// On the connection's loop: runs the request right here, unless it reads files or many records
// (then on a worker). The work guard keeps Serve() running until the answer is written.
void HttpServer::Impl::Dispatch(std::shared_ptr<Connection> conn, Request req, Route route) {
  if (route.kind == Route::kAction || route.kind == Route::kTags) return RunCall(conn, req, route);
  WorkGuard work = asio::make_work_guard(conn->loop());
  asio::post(workers_,
             [this, conn = std::move(conn), req = std::move(req), route = std::move(route),
              work = std::move(work)] { RunCall(conn, req, route); });
}

void HttpServer::Impl::RunCall(const std::shared_ptr<Connection>& conn, const Request& req,
                               const Route& route) {
  const auto started = std::chrono::steady_clock::now();
  CallLog call;
  call.source = conn->peer().to_string();
  call.request_id = NewRequestId();
  Answer answer;
  {
    log::Batch lines;         // the lines the call logs (its decisions, its own) in one write
    DeferRefusalWrite defer;  // a refusal's audit record is waited for as a commit is, parked
    answer = Handle(req, route, &call);
    answer.request_id = call.request_id;
    if (Durable written = TakeRefusalWrite(); written.valid() && !answer.durable.valid()) {
      answer.durable = std::move(written);
      answer.refusal = true;
    }
    if (Pending(answer)) {
      lines.LeaveToNextWrite();  // written with its group's lines when its loop answers
      return Park(
          {conn, std::move(answer), std::move(call), started, asio::make_work_guard(conn->loop())});
    }
    Settle(answer);
    LogCall(call, answer, started, controller_.metrics());
  }
  if (conn->on_loop()) return conn->Answered(std::move(answer));
  asio::post(conn->loop(),
             [conn, answer = std::move(answer)]() mutable { conn->Answered(std::move(answer)); });
}

void HttpServer::Impl::Park(Parked parked) {
  const Durable durable = parked.answer.durable;
  asio::io_context& loop = parked.conn->loop();
  {
    std::lock_guard<std::mutex> lock(park_mu_);
    parked_.push_back(std::move(parked));
  }
  durable.OnSet([hub = hub_, &loop] {
    std::lock_guard<std::mutex> lock(hub->mu);
    if (hub->server != nullptr) hub->server->WakeAnswering(loop);
  });
}

void HttpServer::Impl::WakeAnswering(asio::io_context& loop) {
  std::atomic<bool>& posted = *answer_posted_.at(&loop);
  if (posted.exchange(true)) return;  // the answering already posted sees this commit too
  asio::post(loop, [this, &loop, &posted] {
    // An exchange, not a store: it reads the flag the writer set after settling its commit, so
    // every commit settled before that is seen below.
    posted.exchange(false);
    AnswerSettled(loop);
  });
}

// On `loop`: answers every call parked on it whose commit is settled, in the order they were
// parked, with their log lines in one write before the first answer.
void HttpServer::Impl::AnswerSettled(asio::io_context& loop) {
  std::vector<Parked> settled;
  {
    std::lock_guard<std::mutex> lock(park_mu_);
    std::vector<Parked> waiting;
    for (Parked& p : parked_) {
      const bool ready = &p.conn->loop() == &loop && p.answer.durable.ready();
      (ready ? settled : waiting).push_back(std::move(p));
    }
    parked_.swap(waiting);
  }
  {
    log::Batch lines;
    for (Parked& p : settled) {
      Settle(p.answer);
      LogCall(p.call, p.answer, p.started, controller_.metrics());
    }
  }
  for (Parked& p : settled) p.conn->Answered(std::move(p.answer));
}

// Calls still parked when the loops stopped (a stop that outran a commit): their answers can no
// longer be written, but each waits for its commit and is logged with its outcome.
void HttpServer::Impl::DrainParked() {
  std::vector<Parked> left;
  {
    std::lock_guard<std::mutex> lock(park_mu_);
    left.swap(parked_);
  }
  log::Batch lines;
  for (Parked& p : left) {
    Settle(p.answer);
    LogCall(p.call, p.answer, p.started, controller_.metrics());
  }
}

// GET /metrics: for the bearer of the metrics token only (no SigV4 key reads it); a refusal says
// nothing of the figures and is logged.
Answer HttpServer::Impl::MetricsAnswer(const Request& req, const CallLog& call) {
  if (!BearerMatches(req[http::field::authorization], controller_.metrics_token())) {
    controller_.metrics().scrapes_refused.With({}).Add();
    const bool none = req[http::field::authorization].empty();
    log::Warn("metrics.refused", {{"source", call.source},
                                  {"reason", none ? "no Authorization header" : "wrong token"}});
    Answer refused =
        PlainAnswer(http::status::unauthorized, "a bearer token is required\n", "text/plain");
    // RFC 9110 section 11.6.1: a 401 names the scheme it wants (RFC 6750 for bearer tokens).
    refused.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"allot-metrics\"");
    return refused;
  }
  return PlainAnswer(http::status::ok, controller_.MetricsText(),
                     "text/plain; version=0.0.4; charset=utf-8");
}

// Authenticates, then runs the route, mapping refusals and faults to AWS errors.
Answer HttpServer::Impl::Handle(const Request& req, const Route& route, CallLog* call) {
  call->action = api::CallName(route);
  call->metric_label =
      route.kind != Route::kAction || Controller::IsAction(route.capture) ? call->action : "other";
  if (route.kind == Route::kMetrics) return MetricsAnswer(req, *call);
  try {
    api::VerifyResult who = api::Verify(
        ViewOf(req),
        [this](std::string_view key) { return controller_.SecretFor(std::string(key)); },
        WallClock());
    if (!who.ok()) {
      // The message may quote a header the caller sent: ErrorAnswer never echoes bytes that
      // are not UTF-8.
      return ErrorAnswer(static_cast<http::status>(who.error().http_status), who.error().error_code,
                         who.error().message);
    }
    std::optional<Caller> caller = controller_.CallerFor(who->access_key_id);
    if (!caller) {  // the key was deleted or rotated since the signature was checked
      return ErrorAnswer(http::status::forbidden, "UnrecognizedClientException",
                         "The security token included in the request is invalid.");
    }
    caller->source = call->source;
    caller->request_id = call->request_id;
    call->principal = caller->user;
    Result<WireReply> reply = Run(req, route, *caller, call);
    if (!reply.ok()) {
      const ApiError e = ApiErrorFor(reply.status());
      return ErrorAnswer(static_cast<http::status>(e.http_status), e.type, e.message);
    }
    return ReplyAnswer(reply.value());
  } catch (const ClientError& e) {
    return ErrorAnswer(http::status::bad_request, "ClientException", e.what());
  } catch (const nlohmann::json::exception& e) {
    return ErrorAnswer(http::status::bad_request, "ClientException",
                       std::string("malformed request: ") + e.what());
  } catch (const std::exception& e) {
    return InternalError(e.what());
  } catch (...) {
    return InternalError("an exception that is not a std::exception");
  }
}

std::string HttpServer::Impl::AuditedActionOf(const Request& req, const Route& route) {
  return api::AuditedActionOf(req.method_string(), route);
}

Result<WireReply> HttpServer::Impl::Run(const Request& req, const Route& route,
                                        const Caller& caller, CallLog* call) {
  // A mutating call refused here, before the controller saw it, is audited all the same.
  auto refused = [&](const Status& refusal) {
    controller_.AuditRefusal(caller, AuditedActionOf(req, route), refusal.message());
    return refusal;
  };
  call->resource = route.capture;
  if (route.kind == Route::kAction) {
    Result<Json> body = api::ReadBody(req.body());  // first: a deep body is refused for its depth
    if (!body.ok()) return refused(body.status());
    if (route.capture == "submitservicejob" && req.body().size() > kMaxSubmitBody) {
      return refused(InvalidArgument("a SubmitServiceJob request must be at most 30 KiB, got " +
                                     std::to_string(req.body().size()) + " bytes"));
    }
    call->resource = ResourceOf(*body);
    return CallAction(controller_, route.capture, *body, caller);
  }
  const api::QueryParams params = api::ParseQuery(api::SplitRequestTarget(req.target()).second);
  switch (route.kind) {
    case Route::kLogs: {
      ALLOT_ASSIGN_OR_RETURN(const api::LogsRequest r,
                             api::DecodeLogsRequest(route.capture, params));
      return EncodeReply(controller_.Logs(r, caller));
    }
    case Route::kAudit: {
      ALLOT_ASSIGN_OR_RETURN(const api::AuditRequest r, api::DecodeAuditRequest(params));
      return EncodeReply(controller_.Audit(caller, r));
    }
    case Route::kExplain: {
      ALLOT_RETURN_IF_ERROR(api::OnlyParams(params, {}));
      ALLOT_ASSIGN_OR_RETURN(const api::ExplainRequest r, api::DecodeExplainRequest(route.capture));
      return EncodeReply(controller_.Explain(caller, r.job_id));
    }
    case Route::kWhatIf: {
      ALLOT_RETURN_IF_ERROR(api::OnlyParams(params, {}));
      ALLOT_ASSIGN_OR_RETURN(const Json body, api::ReadBody(req.body()));
      ALLOT_ASSIGN_OR_RETURN(const api::WhatIfRequest r, api::DecodeWhatIf(body));
      return EncodeReply(controller_.WhatIf(caller, r));
    }
    case Route::kHistory: {
      ALLOT_ASSIGN_OR_RETURN(const api::HistoryRequest r,
                             api::DecodeHistory(route.capture, params));
      return EncodeReply(controller_.HistoryCall(caller, r));
    }
    case Route::kUsers: {
      if (Status only = api::OnlyParams(params, {}); !only.ok()) return refused(only);
      Result<Json> body = api::ReadBody(req.body());
      if (!body.ok()) return refused(body.status());
      return CallUsers(controller_, req.method_string(), route.capture, *body, caller);
    }
    default:
      return Tags(req, route, params, caller);
  }
}

// /v1/tags/{resourceArn}: TagResource (POST), UntagResource (DELETE), ListTagsForResource (GET).
Result<WireReply> HttpServer::Impl::Tags(const Request& req, const Route& route,
                                         const api::QueryParams& params, const Caller& caller) {
  auto refused = [&](const Status& refusal, const std::string& arn) {
    controller_.AuditRefusal(caller, AuditedActionOf(req, route), refusal.message(), {.sent = arn});
    return refusal;
  };
  Result<std::string> arn = api::Utf8Field(route.capture, "resourceArn");
  if (!arn.ok()) return refused(arn.status(), "");
  std::vector<std::string> keys;
  for (auto [it, end] = params.equal_range("tagKeys"); it != end; ++it) {
    Result<std::string> key = api::Utf8Field(it->second, "tagKeys");
    if (!key.ok()) return refused(key.status(), *arn);
    keys.push_back(std::move(key).value());
  }
  Result<Json> body = req.method() == http::verb::post ? api::ReadBody(req.body()) : Json::object();
  if (!body.ok()) return refused(body.status(), *arn);
  Result<api::TagsRequest> request =
      api::DecodeTags(std::string(req.method_string()), *arn, *body, keys);
  if (!request.ok()) return refused(request.status(), *arn);
  return CallTags(controller_, request.value(), caller);
}

HttpServer::HttpServer(Controller& controller) : impl_(std::make_unique<Impl>(controller)) {}
HttpServer::~HttpServer() = default;

Result<int> HttpServer::Bind(const std::string& host, int port) { return impl_->Bind(host, port); }
void HttpServer::Serve() { impl_->Serve(); }
void HttpServer::Stop() { impl_->Stop(); }

}  // namespace allot::server
