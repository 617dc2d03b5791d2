#pragma once

// The answers of Allot's tenancy endpoints (/allot/v1/users, /allot/v1/audit) and of
// GET /allot/v1/jobs/{id}/logs, typed. encode_tenancy.cc writes them as docs/server.md
// documents them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"

namespace allot::api {

// A user as /allot/v1/users shows it: never a secret.
struct UserDetail {
  std::string user_name;
  std::string arn;
  Timestamp created_at = 0;
  std::vector<std::string> access_key_ids;
  bool has_policy = false;
};

struct ListUsersResponse {
  std::vector<UserDetail> users;
};

struct UserResponse {
  UserDetail user;
};

// CreateUser's and RotateAccessKeys' answer: the only time a secret leaves the server.
struct NewAccessKeyResponse {
  UserDetail user;
  std::string access_key_id;
  std::string secret_access_key;
};

struct UserPolicyResponse {
  std::string user_name;
  std::optional<std::string> policy;  // the document as canonical JSON text; none: null
};

// One audit record. A change's values are JSON text as recorded ("1", "[{...}]"); empty when
// there was none, which the document shows as null.
struct AuditChangeDetail {
  std::string field;
  std::string old_value;
  std::string new_value;
};

struct AuditRecordDetail {
  Timestamp time = 0;
  std::string user_name;
  std::string principal;
  std::string source_address;
  std::string action;
  std::string resource;
  std::string outcome;
  std::string request_id;
  std::vector<AuditChangeDetail> changes;
};

struct AuditPageResponse {
  std::vector<AuditRecordDetail> records;  // the newest first
  std::optional<std::string> next_token;
};

// A piece of an attempt's log stream, from the offset asked. The text is the file's bytes; the
// document replaces those that are not UTF-8.
struct LogChunkResponse {
  std::string text;
  std::uint64_t next_offset = 0;
  bool complete = false;  // the attempt has ended: nothing more will be written
};

}  // namespace allot::api
