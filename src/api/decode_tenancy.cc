#include <nlohmann/json.hpp>

#include "api/tenancy_requests.h"

namespace allot::api {

namespace {

using Json = nlohmann::json;

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at < path.size()) {
    const std::size_t slash = path.find('/', at);
    const std::size_t end = slash == std::string::npos ? path.size() : slash;
    if (end > at) parts.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

bool UserNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("+=,.@_-").find(c) != std::string_view::npos;
}

Result<UserRequest> DecodeCreateUser(const Json& body) {
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  auto name = body.find("userName");
  if (name == body.end() || !name->is_string()) {
    return InvalidArgument("userName is required (a string)");
  }
  CreateUserRequest r;
  r.user_name = name->get<std::string>();
  ALLOT_RETURN_IF_ERROR(CheckUserName(r.user_name));
  if (auto p = body.find("policy"); p != body.end() && !p->is_null()) {
    r.policy = p->dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return UserRequest(std::move(r));
}

}  // namespace

Status CheckUserName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return InvalidArgument("userName must be 1 to 64 characters, got " +
                           std::to_string(name.size()));
  }
  for (char c : name) {
    if (!UserNameChar(c)) {
      return InvalidArgument("userName may hold only letters, digits and + = , . @ _ -");
    }
  }
  return Status::Ok();
}

const std::string& UserNameOf(const UserRequest& request) {
  static const std::string kNone;
  return std::visit(
      [](const auto& r) -> const std::string& {
        if constexpr (requires { r.user_name; }) {
          return r.user_name;
        } else {
          return kNone;
        }
      },
      request);
}

Result<UserRequest> DecodeUserRequest(std::string_view method, const std::string& path,
                                      const Json& body) {
  ALLOT_ASSIGN_OR_RETURN(const std::string utf8, Utf8Field(path, "path"));
  const std::vector<std::string> parts = SplitPath(utf8);
  if (parts.empty() && method == "GET") return UserRequest(ListUsersRequest{});
  if (parts.empty() && method == "POST") return DecodeCreateUser(body);
  const std::string name = parts.empty() ? "" : parts[0];
  const std::string tail = parts.size() > 1 ? utf8.substr(utf8.find('/', 1)) : "";
  if (parts.size() == 1 && method == "GET") return UserRequest(GetUserRequest{name});
  if (parts.size() == 1 && method == "DELETE") return UserRequest(DeleteUserRequest{name});
  if (tail == "/policy" && method == "GET") return UserRequest(GetUserPolicyRequest{name});
  if (tail == "/policy" && method == "PUT") {
    return UserRequest(
        PutUserPolicyRequest{name, body.dump(-1, ' ', false, Json::error_handler_t::replace)});
  }
  if (tail == "/keys/rotate" && method == "POST") {
    return UserRequest(RotateAccessKeysRequest{name});
  }
  return NotFound("no such users operation: " + std::string(method) + " /allot/v1/users" + utf8);
}

// GET /allot/v1/audit?principal=&resource=&action=&since=&until=&maxResults=&nextToken=
Result<AuditRequest> DecodeAuditRequest(const QueryParams& params) {
  // An optional whole number from `min` to `max`; `fallback` when absent.
  auto number = [&params](const char* name, std::uint64_t max, std::uint64_t fallback,
                          std::uint64_t min = 0) -> Result<std::uint64_t> {
    ALLOT_ASSIGN_OR_RETURN(const std::string text, QueryParam(params, name));
    return text.empty() ? fallback : WholeNumber(text, name, max, min);
  };
  ALLOT_RETURN_IF_ERROR(OnlyParams(
      params, {"principal", "resource", "action", "since", "until", "maxResults", "nextToken"}));
  constexpr auto kMaxTime = static_cast<std::uint64_t>(std::numeric_limits<Timestamp>::max());
  AuditRequest r;
  ALLOT_ASSIGN_OR_RETURN(r.principal, QueryParam(params, "principal"));
  ALLOT_ASSIGN_OR_RETURN(r.resource, QueryParam(params, "resource"));
  ALLOT_ASSIGN_OR_RETURN(r.action, QueryParam(params, "action"));
  ALLOT_ASSIGN_OR_RETURN(const std::uint64_t since,
                         number("since", kMaxTime, static_cast<std::uint64_t>(r.since)));
  ALLOT_ASSIGN_OR_RETURN(const std::uint64_t until,
                         number("until", kMaxTime, static_cast<std::uint64_t>(r.until)));
  r.since = static_cast<Timestamp>(since);
  r.until = static_cast<Timestamp>(until);
  ALLOT_ASSIGN_OR_RETURN(const std::uint64_t n, number("maxResults", 1000, r.max_results, 1));
  r.max_results = static_cast<std::size_t>(n);
  ALLOT_ASSIGN_OR_RETURN(r.next_token, QueryParam(params, "nextToken"));
  return r;
}

Result<LogsRequest> DecodeLogsRequest(const std::string& job_id, const QueryParams& params) {
  LogsRequest r;
  ALLOT_ASSIGN_OR_RETURN(r.job_id, Utf8Field(job_id, "jobId"));
  ALLOT_RETURN_IF_ERROR(OnlyParams(params, {"host", "stream", "attempt", "offset"}));
  ALLOT_ASSIGN_OR_RETURN(r.host, QueryParam(params, "host", r.host));
  ALLOT_ASSIGN_OR_RETURN(r.stream, QueryParam(params, "stream", r.stream));
  ALLOT_ASSIGN_OR_RETURN(const std::string attempt, QueryParam(params, "attempt", "0"));
  ALLOT_ASSIGN_OR_RETURN(const std::uint64_t n,
                         WholeNumber(attempt, "attempt", std::numeric_limits<int>::max()));
  r.attempt = static_cast<int>(n);
  ALLOT_ASSIGN_OR_RETURN(const std::string offset, QueryParam(params, "offset", "0"));
  // A file offset is a signed 64-bit std::streamoff: anything larger would seek backwards.
  ALLOT_ASSIGN_OR_RETURN(
      r.offset, WholeNumber(offset, "offset",
                            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
  return r;
}

Result<ExplainRequest> DecodeExplainRequest(const std::string& job_id) {
  ExplainRequest r;
  ALLOT_ASSIGN_OR_RETURN(r.job_id, Utf8Field(job_id, "jobId"));
  return r;
}

}  // namespace allot::api
