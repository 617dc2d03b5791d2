#include "api/routes.h"

#include <type_traits>

#include "api/decode.h"

namespace allot::api {

namespace {

constexpr std::string_view kJobs = "/allot/v1/jobs/";
constexpr std::string_view kUsers = "/allot/v1/users";

// /allot/v1/jobs/{id}<suffix> with an id of one path segment.
bool JobRoute(const std::string& path, std::string_view suffix, std::string* id) {
  if (!path.starts_with(kJobs) || !path.ends_with(suffix) ||
      path.size() <= kJobs.size() + suffix.size()) {
    return false;
  }
  *id = path.substr(kJobs.size(), path.size() - kJobs.size() - suffix.size());
  return id->find('/') == std::string::npos;
}

// The audited name of each users operation that changes something; a read's is "". The only
// place these names are written: the routes of a request not yet decoded and the decoded
// request both read them here.
template <typename R>
constexpr std::string_view kAuditedUserAction = "";
template <>
constexpr std::string_view kAuditedUserAction<CreateUserRequest> = "allot:CreateUser";
template <>
constexpr std::string_view kAuditedUserAction<DeleteUserRequest> = "allot:DeleteUser";
template <>
constexpr std::string_view kAuditedUserAction<PutUserPolicyRequest> = "allot:PutUserPolicy";
template <>
constexpr std::string_view kAuditedUserAction<RotateAccessKeysRequest> = "allot:RotateAccessKeys";

bool LowerCaseWord(std::string_view s) {
  for (char c : s) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

}  // namespace

Route MatchRoute(std::string_view method, const std::string& path) {
  const bool get = method == "GET" || method == "HEAD";
  const bool post = method == "POST";
  if (get && path == "/healthz") return {Route::kHealth, ""};
  if (get && path == "/metrics") return {Route::kMetrics, ""};
  if (get && (path == "/ui" || path.starts_with("/ui/"))) return {Route::kUi, path};
  constexpr std::string_view kTags = "/v1/tags/";
  if ((get || post || method == "DELETE") && path.starts_with(kTags) &&
      path.size() > kTags.size()) {
    return {Route::kTags, path.substr(kTags.size())};
  }
  std::string id;
  if (get && JobRoute(path, "/logs", &id)) return {Route::kLogs, std::move(id)};
  if (get && JobRoute(path, "/explain", &id)) return {Route::kExplain, std::move(id)};
  if (post && path == "/allot/v1/whatif") return {Route::kWhatIf, ""};
  if (path == kUsers || path.starts_with(std::string(kUsers) + "/")) {
    return {Route::kUsers, path.substr(kUsers.size())};
  }
  if (get && path == "/allot/v1/audit") return {Route::kAudit, ""};
  if (get && (path == "/allot/v1/report" || path == "/allot/v1/history/usage" ||
              path == "/allot/v1/history/jobs")) {
    return {Route::kHistory, path};
  }
  constexpr std::string_view kV1 = "/v1/";
  if (post && path.starts_with(kV1) && path.size() > kV1.size() &&
      LowerCaseWord(std::string_view{path}.substr(kV1.size()))) {
    return {Route::kAction, path.substr(kV1.size())};
  }
  return {};
}

std::string CallName(const Route& route) {
  switch (route.kind) {
    case Route::kAction:
      return route.capture;
    case Route::kTags:
      return "tags";
    case Route::kLogs:
      return "logs";
    case Route::kUsers:
      return "users";
    case Route::kAudit:
      return "audit";
    case Route::kExplain:
      return "explain";
    case Route::kWhatIf:
      return "whatif";
    case Route::kHistory:
      return "history";
    case Route::kMetrics:
      return "metrics";
    default:
      return "";
  }
}

std::string AuditedAction(std::string_view route_name) {
  const std::optional<ActionInfo> info = FindAction(route_name);
  return info && info->mutating ? "batch:" + std::string(info->name) : std::string();
}

std::string AuditedActionOf(std::string_view method, const Route& route) {
  switch (route.kind) {
    case Route::kAction:
      return AuditedAction(route.capture);
    case Route::kTags:
      return method == "POST"     ? "batch:TagResource"
             : method == "DELETE" ? "batch:UntagResource"
                                  : "";
    case Route::kUsers:
      if (method == "POST") {
        return std::string(route.capture.empty() || route.capture == "/"
                               ? kAuditedUserAction<CreateUserRequest>
                               : kAuditedUserAction<RotateAccessKeysRequest>);
      }
      if (method == "PUT") return std::string(kAuditedUserAction<PutUserPolicyRequest>);
      if (method == "DELETE") return std::string(kAuditedUserAction<DeleteUserRequest>);
      return "";
    default:
      return "";
  }
}

std::string AuditedUserAction(const UserRequest& request) {
  return std::visit(
      [](const auto& r) { return std::string(kAuditedUserAction<std::decay_t<decltype(r)>>); },
      request);
}

}  // namespace allot::api
