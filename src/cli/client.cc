#include "cli/client.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>

#include "common/strings.h"

namespace allot::cli {

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string& ProfileFlag() {
  static std::string profile;
  return profile;
}

api::Credentials LoadCredentials() {
  const std::string key = Env("AWS_ACCESS_KEY_ID");
  const std::string secret = Env("AWS_SECRET_ACCESS_KEY");
  if (ProfileFlag().empty() && !key.empty() && !secret.empty()) return {key, secret};
  const std::string path = SharedCredentialsPath();
  std::string profile = ProfileFlag().empty() ? Env("AWS_PROFILE") : ProfileFlag();
  if (profile.empty()) profile = "default";
  Result<api::Credentials> creds = api::ReadSharedCredentialsFile(path, profile);
  if (!creds.ok()) {
    throw CliError("no credentials: " + creds.status().message() +
                   " (set AWS_SHARED_CREDENTIALS_FILE to the credentials file `allot server` "
                   "wrote in its data directory, e.g. allot-data/credentials)");
  }
  return creds.value();
}

}  // namespace

std::string SharedCredentialsPath() {
  std::string path = Env("AWS_SHARED_CREDENTIALS_FILE");
  if (path.empty()) {
    const std::string home = Env("HOME");
    return (home.empty() ? std::string(".") : home) + "/.aws/credentials";
  }
  if (path.rfind("~/", 0) == 0) return Env("HOME") + path.substr(1);
  return path;
}

void SetProfileFlag(const std::string& profile) { ProfileFlag() = profile; }

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4U];
      out += kHex[u & 0xFU];
    }
  }
  return out;
}

Endpoint ParseEndpoint(const std::string& url) {
  Endpoint e;
  e.url = url;
  while (!e.url.empty() && e.url.back() == '/') e.url.pop_back();
  const auto scheme_end = e.url.find("://");
  if (scheme_end == std::string::npos) {
    throw CliError("endpoint \"" + url + "\" must look like http://host:port");
  }
  const std::string scheme = AsciiLower(e.url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") {
    throw CliError("endpoint \"" + url + "\" must start with http:// or https://");
  }
  const std::string rest = e.url.substr(scheme_end + 3);
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  e.base_path = slash == std::string::npos ? "" : rest.substr(slash);
  if (authority.empty()) throw CliError("endpoint \"" + url + "\" has no host");
  // The Host header leaves out the scheme's default port, as HTTP clients do.
  std::string host_header = authority;
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    if (port.empty() || !std::all_of(port.begin(), port.end(),
                                     [](unsigned char c) { return std::isdigit(c) != 0; })) {
      throw CliError("endpoint \"" + url + "\" has a bad port \"" + port + "\"");
    }
    if ((scheme == "http" && port == "80") || (scheme == "https" && port == "443")) {
      host_header = authority.substr(0, colon);
    }
  }
  e.scheme_host = scheme + "://" + authority;
  e.host_header = host_header;
  return e;
}

ClientConfig LoadClientConfig(const std::string& endpoint_flag) {
  ClientConfig c;
  std::string url = endpoint_flag;
  if (url.empty()) url = Env("AWS_ENDPOINT_URL_BATCH");
  if (url.empty()) url = Env("AWS_ENDPOINT_URL");
  if (url.empty()) url = kDefaultEndpoint;
  c.endpoint = ParseEndpoint(url);
  c.region = Env("AWS_DEFAULT_REGION");
  if (c.region.empty()) c.region = Env("AWS_REGION");
  if (c.region.empty()) c.region = "local";
  c.credentials = LoadCredentials();
  return c;
}

Timestamp WallClockMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

api::HttpRequest SignedRequest(const ClientConfig& config, std::string_view action,
                               const std::string& body, Timestamp now) {
  api::HttpRequest req;
  req.method = "POST";
  req.path = config.endpoint.base_path + "/v1/" + AsciiLower(action);
  req.headers = {{"Host", config.endpoint.host_header}, {"Content-Type", "application/json"}};
  req.body = body;
  const Status s =
      api::Sign(req, config.credentials, config.region, "batch", api::FormatAmzDate(now));
  if (!s.ok()) throw CliError("cannot sign the request: " + s.message());
  return req;
}

ApiError ErrorFromAnswer(int http_status, const std::string& body) {
  const Json j = Json::parse(body, nullptr, false);
  std::string type = "HTTP " + std::to_string(http_status);
  std::string message =
      body.empty() ? "the server answered HTTP " + std::to_string(http_status) : body;
  if (j.is_object()) {
    if (j.contains("__type") && j["__type"].is_string()) type = j["__type"];
    for (const char* k : {"message", "Message"}) {
      if (j.contains(k) && j[k].is_string()) message = j[k];
    }
  }
  return ApiError(http_status, type, message);
}

Client::Client(ClientConfig config)
    : config_(std::move(config)),
      http_(std::make_unique<httplib::Client>(config_.endpoint.scheme_host)) {
  http_->set_keep_alive(true);
  http_->set_tcp_nodelay(true);
  http_->set_connection_timeout(5, 0);
  http_->set_read_timeout(60, 0);
  http_->set_write_timeout(60, 0);
}

Client::~Client() = default;

std::pair<int, std::string> Client::Post(std::string_view action, const std::string& body) {
  const api::HttpRequest req = SignedRequest(config_, action, body, WallClockMillis());
  httplib::Headers headers;
  for (const auto& [name, value] : req.headers) {
    if (name != "Content-Type") headers.emplace(name, value);
  }
  httplib::Result res = http_->Post(req.path, headers, req.body, "application/json");
  if (!res) {
    throw CliError("cannot reach the allot server at " + config_.endpoint.url + ": " +
                   httplib::to_string(res.error()) +
                   " (is `allot server` running? --endpoint or AWS_ENDPOINT_URL_BATCH says where)");
  }
  return {res->status, res->body};
}

Json Client::Call(std::string_view action, const Json& request) {
  const auto [status, body] = Post(action, request.dump());
  if (status != 200) throw ErrorFromAnswer(status, body);
  if (body.empty()) return Json::object();
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    throw CliError("the server at " + config_.endpoint.url + " answered " + std::string(action) +
                   " with something that is not JSON");
  }
  return j;
}

Json Client::Get(const std::string& path, const std::string& query) {
  return Send("GET", path, query, "");
}

Json Client::Send(std::string_view method, const std::string& path, const std::string& query,
                  const std::string& body) {
  api::HttpRequest req;
  req.method = std::string(method);
  req.path = config_.endpoint.base_path + path;
  req.query = query;
  req.headers = {{"Host", config_.endpoint.host_header}};
  if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  req.body = body;
  const Status s = api::Sign(req, config_.credentials, config_.region, "batch",
                             api::FormatAmzDate(WallClockMillis()));
  if (!s.ok()) throw CliError("cannot sign the request: " + s.message());
  httplib::Request http_req;
  http_req.method = req.method;
  http_req.path = query.empty() ? req.path : req.path + "?" + query;
  for (const auto& [name, value] : req.headers) http_req.headers.emplace(name, value);
  http_req.body = req.body;
  httplib::Result res = http_->send(http_req);
  if (!res) {
    throw CliError("cannot reach the allot server at " + config_.endpoint.url + ": " +
                   httplib::to_string(res.error()));
  }
  if (res->status != 200) {
    ApiError e = ErrorFromAnswer(res->status, res->body);
    // A body without __type: the type from x-amzn-ErrorType ("Type:namespace" in AWS's form).
    const std::string header = res->get_header_value("x-amzn-ErrorType");
    if (e.type().rfind("HTTP ", 0) == 0 && !header.empty()) {
      throw ApiError(res->status, header.substr(0, header.find(':')), e.what());
    }
    throw e;
  }
  if (res->body.empty()) return Json::object();
  Json j = Json::parse(res->body, nullptr, false);
  if (j.is_discarded()) throw CliError("the server answered " + path + " with no JSON");
  return j;
}

Json ListAll(Client& client, std::string_view action, Json request, const char* list) {
  Json all = Json::array();
  for (;;) {
    const Json page = client.Call(action, request);
    for (const Json& item : page.value(list, Json::array())) all.push_back(item);
    if (!page.contains("nextToken") || !page["nextToken"].is_string() ||
        page["nextToken"].get<std::string>().empty()) {
      return all;
    }
    request["nextToken"] = page["nextToken"];
  }
}

}  // namespace allot::cli
