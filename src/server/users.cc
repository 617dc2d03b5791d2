#include "server/users.h"

namespace allot::server {

namespace {

constexpr int kUserRecordVersion = 1;

}  // namespace

std::string UserArn(std::string_view account, std::string_view name) {
  return "arn:aws:iam::" + std::string(account) + ":user/" + std::string(name);
}

auth::Policy AdminPolicy() {
  auth::Statement all;
  all.sid = "Admin";
  all.actions = {"*"};
  all.resources = {"*"};
  auth::Policy policy;
  policy.statements = {all};
  return policy;
}

Result<std::string> EncodeUser(const UserRecord& user, const api::SecretBox& box) {
  Json keys = Json::array();
  for (const AccessKeyRecord& key : user.keys) {
    Result<std::string> sealed = box.Seal(key.secret, key.id);
    if (!sealed.ok()) return sealed.status();
    keys.push_back({{"id", key.id}, {"secret", *sealed}, {"created", key.created}});
  }
  Json out = {{"v", kUserRecordVersion}, {"created", user.created}, {"keys", keys}};
  if (user.has_policy()) out["policy"] = auth::PolicyToJson(user.policies->front());
  return out.dump();
}

Result<UserRecord> DecodeUser(const std::string& name, const std::string& stored,
                              const api::SecretBox& box) {
  const std::string where = "the stored user " + name;
  try {
    const Json doc = Json::parse(stored);
    if (doc.value("v", 0) != kUserRecordVersion) {
      return Internal(where + " has a record version this server does not know");
    }
    UserRecord user;
    user.name = name;
    user.created = doc.at("created").get<Timestamp>();
    for (const Json& k : doc.at("keys")) {
      AccessKeyRecord key{k.at("id").get<std::string>(), "", k.at("created").get<Timestamp>()};
      Result<std::string> secret = box.Open(k.at("secret").get<std::string>(), key.id);
      if (!secret.ok()) {
        return Internal(where + ": the secret of " + key.id + " does not open (" +
                        secret.status().message() +
                        "); is this the master key it was sealed with?");
      }
      key.secret = std::move(secret).value();
      user.keys.push_back(std::move(key));
    }
    if (auto it = doc.find("policy"); it != doc.end()) {
      Result<auth::Policy> policy = auth::ParsePolicy(it->get<std::string>());
      if (!policy.ok())
        return Internal(where +
                        " has a policy that no longer parses: " + policy.status().message());
      user.policies = std::make_shared<const std::vector<auth::Policy>>(
          std::vector<auth::Policy>{std::move(policy).value()});
    }
    return user;
  } catch (const Json::exception& e) {
    return Internal(where + " is not a user record: " + e.what());
  }
}

api::UserDetail DescribeUser(const UserRecord& user, std::string_view account) {
  api::UserDetail out{user.name, UserArn(account, user.name), user.created, {}, user.has_policy()};
  for (const AccessKeyRecord& key : user.keys) out.access_key_ids.push_back(key.id);
  return out;
}

std::optional<std::string> PolicyText(const UserRecord& user) {
  if (!user.has_policy()) return std::nullopt;
  return auth::PolicyToJson(user.policies->front());
}

}  // namespace allot::server
