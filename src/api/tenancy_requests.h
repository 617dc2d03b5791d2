#pragma once

// Allot's own endpoints that are not AWS actions, as typed requests: the users and their keys
// and policies (/allot/v1/users), the audit trail's query (/allot/v1/audit), a job's logs and its
// explanation (/allot/v1/jobs/{id}/logs|explain). Decoded from the path, the query and the body
// (decode_tenancy.cc), with refusals that name the field, as the AWS actions' are.

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

#include "api/query.h"
#include "common/status.h"
#include "common/time.h"

namespace allot::api {

// --- /allot/v1/users ---

struct ListUsersRequest {};
struct GetUserRequest {
  std::string user_name;
};
struct CreateUserRequest {
  std::string user_name;  // IAM's user names: 1-64 of letters, digits and + = , . @ _ -
  // The policy document as the caller sent it (JSON text); the controller parses it as IAM does
  // (auth/policy.h). None: every call of the user is denied until a policy is put.
  std::optional<std::string> policy;
};
struct DeleteUserRequest {
  std::string user_name;
};
struct GetUserPolicyRequest {
  std::string user_name;
};
struct PutUserPolicyRequest {
  std::string user_name;
  std::string policy;  // the body: the policy document (JSON text)
};
struct RotateAccessKeysRequest {
  std::string user_name;
};

using UserRequest =
    std::variant<ListUsersRequest, GetUserRequest, CreateUserRequest, DeleteUserRequest,
                 GetUserPolicyRequest, PutUserPolicyRequest, RotateAccessKeysRequest>;

// The user a request names ("" for ListUsers).
const std::string& UserNameOf(const UserRequest& request);

// `path` is what follows /allot/v1/users ("", "/alice", "/alice/policy", "/alice/keys/rotate"),
// `body` the request body, already read (ReadBody). kNotFound for an operation the users
// endpoint does not have.
Result<UserRequest> DecodeUserRequest(std::string_view method, const std::string& path,
                                      const nlohmann::json& body);

// IAM's user names: 1-64 of letters, digits and + = , . @ _ -.
Status CheckUserName(std::string_view name);

// --- /allot/v1/audit ---

struct AuditRequest {
  std::string principal;  // the user's name or ARN; empty: any
  std::string resource;   // the ARN, or its last path part (a job id); empty: any
  std::string action;     // "batch:SubmitServiceJob" or "SubmitServiceJob", any case; empty: any
  Timestamp since = 0;
  Timestamp until = std::numeric_limits<Timestamp>::max();
  std::size_t max_results = 100;  // 1 to 1000
  std::string next_token;         // the page before's; empty: the newest
};

Result<AuditRequest> DecodeAuditRequest(const QueryParams& params);

// --- /allot/v1/jobs/{id}/logs and /explain ---

struct LogsRequest {
  std::string job_id;
  int attempt = 0;  // 0: the latest
  std::string host = "algo-1";
  std::string stream = "stdout";  // or "stderr"
  std::uint64_t offset = 0;       // a byte offset, at most a file offset's largest
};

Result<LogsRequest> DecodeLogsRequest(const std::string& job_id, const QueryParams& params);

struct ExplainRequest {
  std::string job_id;
};

Result<ExplainRequest> DecodeExplainRequest(const std::string& job_id);

}  // namespace allot::api
