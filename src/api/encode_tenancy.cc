// The tenancy endpoints' and the logs' answers as documents (api/tenancy_responses.h).

#include "api/encode_bodies.h"

namespace allot::api::bodies {

namespace {

using Json = nlohmann::json;

Json Encode(const UserDetail& u) {
  return {{"userName", u.user_name},
          {"arn", u.arn},
          {"createdAt", u.created_at},
          {"accessKeyIds", u.access_key_ids},
          {"hasPolicy", u.has_policy}};
}

// Recorded JSON text back as a value: null where nothing was recorded. Text that does not parse
// (a value clipped to the audit's 512 bytes) is shown as the string it is: a discarded parse
// would write "<discarded>" and make the whole document invalid.
Json ParseOrNull(const std::string& text) {
  if (text.empty()) return nullptr;
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? Json(text) : value;
}

Json Encode(const AuditRecordDetail& r) {
  Json out = {{"time", r.time},           {"userName", r.user_name},
              {"principal", r.principal}, {"sourceAddress", r.source_address},
              {"action", r.action},       {"resource", r.resource},
              {"outcome", r.outcome},     {"requestId", r.request_id}};
  if (!r.changes.empty()) {
    Json changes = Json::object();
    for (const AuditChangeDetail& c : r.changes) {
      changes[c.field] = {{"old", ParseOrNull(c.old_value)}, {"new", ParseOrNull(c.new_value)}};
    }
    out["changes"] = std::move(changes);
  }
  return out;
}

}  // namespace

Json Body(const ListUsersResponse& r) {
  Json users = Json::array();
  for (const UserDetail& u : r.users) users.push_back(Encode(u));
  return {{"users", std::move(users)}};
}

Json Body(const UserResponse& r) { return {{"user", Encode(r.user)}}; }

Json Body(const NewAccessKeyResponse& r) {
  return {
      {"user", Encode(r.user)},
      {"accessKey", {{"accessKeyId", r.access_key_id}, {"secretAccessKey", r.secret_access_key}}}};
}

Json Body(const UserPolicyResponse& r) {
  return {{"userName", r.user_name}, {"policy", r.policy ? ParseOrNull(*r.policy) : Json()}};
}

Json Body(const AuditPageResponse& r) {
  Json records = Json::array();
  for (const AuditRecordDetail& one : r.records) records.push_back(Encode(one));
  Json out = {{"records", std::move(records)}};
  if (r.next_token) out["nextToken"] = *r.next_token;
  return out;
}

Json Body(const LogChunkResponse& r) {
  return {{"text", r.text}, {"nextOffset", r.next_offset}, {"complete", r.complete}};
}

}  // namespace allot::api::bodies
