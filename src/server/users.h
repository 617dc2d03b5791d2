#pragma once

// Users, their access keys and their IAM policies, as the controller keeps them. A user's
// secrets are plain in memory (SigV4 needs them) and sealed in the store (api/secret_box.h). The
// stored form is compact JSON, versioned like the jobs' (job_codec.h):
//   {"v":1,"created":<ms>,"keys":[{"id":"AKIA...","secret":"v1:...","created":<ms>}],
//    "policy":"<the policy document, canonical JSON text>"}

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/secret_box.h"
#include "api/tenancy_responses.h"
#include "auth/policy.h"
#include "common/status.h"
#include "common/time.h"
#include "server/json.h"

namespace allot::server {

struct AccessKeyRecord {
  std::string id;
  std::string secret;
  Timestamp created = 0;
};

struct UserRecord {
  std::string name;
  Timestamp created = 0;
  std::vector<AccessKeyRecord> keys;
  // Its policy document (one, or none: then every call of the user is denied). Shared with the
  // callers of calls in flight, so a policy put replaces it without touching theirs.
  std::shared_ptr<const std::vector<auth::Policy>> policies;

  bool has_policy() const { return policies && !policies->empty(); }
};

// The name of the user made at first start, whose key is in <data-dir>/credentials.
inline constexpr std::string_view kAdminUser = "admin";

std::string UserArn(std::string_view account, std::string_view name);

// The policy a user made without one gets nothing from; the admin's allows everything.
auth::Policy AdminPolicy();

Result<std::string> EncodeUser(const UserRecord& user, const api::SecretBox& box);
Result<UserRecord> DecodeUser(const std::string& name, const std::string& stored,
                              const api::SecretBox& box);

// A user as /allot/v1/users shows it (no secrets).
api::UserDetail DescribeUser(const UserRecord& user, std::string_view account);
// The policy document as canonical JSON text (auth::PolicyToJson); none without a policy.
std::optional<std::string> PolicyText(const UserRecord& user);

}  // namespace allot::server
