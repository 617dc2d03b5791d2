#pragma once

// Which endpoint a request goes to, matched on its method and percent-decoded path: the AWS
// Batch actions (POST /v1/<action>), the tags (/v1/tags/<arn>) and Allot's own endpoints
// (/allot/v1/...). The HTTP server dispatches on the route; this file knows no transport.

#include <string>
#include <string_view>

#include "api/tenancy_requests.h"

namespace allot::api {

struct Route {
  enum Kind {
    kNone,
    kHealth,
    kTags,
    kLogs,
    kAction,
    kUsers,
    kAudit,
    kUi,
    kMetrics,
    kHistory,
    kExplain,
    kWhatIf
  } kind = kNone;
  std::string capture;  // the resource ARN, the job id, the action, the users path, the path
};

// `method` as sent ("GET", "HEAD", "POST", "PUT", "DELETE"); kNone when nothing matches.
Route MatchRoute(std::string_view method, const std::string& path);

// The call's name in logs and metrics: the action ("submitservicejob") or the endpoint ("tags",
// "logs", "users", ...).
std::string CallName(const Route& route);

// How the audit names the action of a request that changes something ("batch:TagResource",
// "allot:CreateUser"); "" for a read, which is not audited. A users request is named by the
// operation its method and path ask for, as AuditedUserAction names it once decoded.
std::string AuditedActionOf(std::string_view method, const Route& route);
// The same for an AWS action's route name ("submitservicejob" is "batch:SubmitServiceJob").
std::string AuditedAction(std::string_view route_name);
// The same for a decoded users request ("allot:CreateUser"; "" for ListUsers, GetUser and
// GetUserPolicy). The users operations' audited names are written once, in routes.cc.
std::string AuditedUserAction(const UserRequest& request);

}  // namespace allot::api
