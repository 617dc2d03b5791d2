#pragma once

// Signed JSON calls to an `allot server` (or anything else speaking the AWS Batch rest-json
// protocol): POST /v1/<lowercase action> with a JSON body, signed with SigV4 like botocore.
//
// Where the settings come from, as with boto3 and the AWS CLI:
//   endpoint     --endpoint, else AWS_ENDPOINT_URL_BATCH, else AWS_ENDPOINT_URL, else
//                http://127.0.0.1:8742
//   region       AWS_DEFAULT_REGION, else AWS_REGION, else "local"
//   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY when both are set, else profile
//                AWS_PROFILE (default "default") of AWS_SHARED_CREDENTIALS_FILE (default
//                ~/.aws/credentials); a command's --profile NAME (SetProfileFlag) reads that
//                profile instead, even when the key variables are set, as the AWS CLI does

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "api/credentials.h"
#include "api/sigv4.h"

namespace httplib {
class Client;
}

namespace allot::cli {

using Json = nlohmann::json;

inline constexpr char kDefaultEndpoint[] = "http://127.0.0.1:8742";

// Anything the command line cannot do; main() prints "allot: <message>" and exits 1.
class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string& message) : std::runtime_error(message) {}
};

// A command line that names something the command cannot take (a bad flag value found after
// parsing, say): exit status 2, as a parse error.
class UsageError : public CliError {
 public:
  using CliError::CliError;
};

// An error answer from the server: its x-amzn-ErrorType / __type and its message.
class ApiError : public CliError {
 public:
  ApiError(int http_status, std::string type, const std::string& message)
      : CliError(message), http_status_(http_status), type_(std::move(type)) {}
  int http_status() const { return http_status_; }
  const std::string& type() const { return type_; }

 private:
  int http_status_;
  std::string type_;
};

struct Endpoint {
  std::string url;          // as given, without a trailing '/'
  std::string scheme_host;  // "http://127.0.0.1:8742", what httplib::Client takes
  std::string host_header;  // "127.0.0.1:8742", what is sent (and signed) as Host
  std::string base_path;    // path prefix of the URL, "" for none
};

// Parses "http://host[:port][/prefix]" (https needs a build of cpp-httplib with OpenSSL).
Endpoint ParseEndpoint(const std::string& url);

struct ClientConfig {
  Endpoint endpoint;
  std::string region;
  api::Credentials credentials;
};

// The shared-credentials file the CLI reads (and `aws configure` writes):
// AWS_SHARED_CREDENTIALS_FILE with a leading "~/" expanded, else ~/.aws/credentials.
std::string SharedCredentialsPath();

// `--profile NAME` of a client command: the profile LoadClientConfig reads from then on. Set while
// the command line is parsed, before any command runs (not thread-safe).
void SetProfileFlag(const std::string& profile);

// Every byte of `s` except A-Z a-z 0-9 - _ . ~ as %XX: a path segment or a query value.
std::string PercentEncode(std::string_view s);

// The settings from the environment (see the top of this file); `endpoint_flag` overrides the
// endpoint when not empty. Throws CliError when no credentials can be found.
ClientConfig LoadClientConfig(const std::string& endpoint_flag = "");

// A signed POST /v1/<action> request for `body`, ready to send (Host, Content-Type, X-Amz-Date
// and Authorization set). `now` is epoch milliseconds.
api::HttpRequest SignedRequest(const ClientConfig& config, std::string_view action,
                               const std::string& body, Timestamp now);

// Epoch milliseconds from the system clock.
Timestamp WallClockMillis();

// One keep-alive connection to the server. Not thread-safe: one per thread.
class Client {
 public:
  explicit Client(ClientConfig config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Calls `action` ("SubmitServiceJob" or "submitservicejob") with `request`; returns the
  // parsed answer. Throws ApiError for an error answer, CliError when the server cannot be
  // reached or answers something that is not JSON.
  Json Call(std::string_view action, const Json& request);

  // The same with the body already serialized; returns the raw HTTP status and body (no throw
  // for error answers; CliError only when no answer came). Used by the load generator.
  std::pair<int, std::string> Post(std::string_view action, const std::string& body);

  // A signed GET of an Allot extension path such as "/allot/v1/jobs/ID/logs" with an already
  // encoded query ("attempt=1&host=algo-1"); returns the parsed JSON answer, throws as Call().
  Json Get(const std::string& path, const std::string& query);

  // A signed `method` ("GET", "POST", "PUT", "DELETE") of an extension path with an encoded
  // query and a JSON body (none when empty); returns the parsed answer ({} for an empty one),
  // throws as Call().
  Json Send(std::string_view method, const std::string& path, const std::string& query,
            const std::string& body);

  const ClientConfig& config() const { return config_; }

 private:
  ClientConfig config_;
  std::unique_ptr<httplib::Client> http_;
};

// Every item of the paged list answer[list], following nextToken.
Json ListAll(Client& client, std::string_view action, Json request, const char* list);

// The error an answer carries: ApiError from {"__type", "message"} (or the HTTP status alone).
ApiError ErrorFromAnswer(int http_status, const std::string& body);

}  // namespace allot::cli
