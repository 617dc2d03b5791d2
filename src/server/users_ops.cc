// Users, their keys and policies (/allot/v1/users), and the audit trail's query
// (/allot/v1/audit). Managing users needs allot:ManageUsers on the user's ARN (on "*" to list
// them); reading the audit needs allot:ReadAudit.

#include <filesystem>

#include "api/credentials.h"
#include "server/api_error.h"
#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

namespace {

constexpr std::size_t kAuditPage = 500;
constexpr std::size_t kAuditScanBudget = 20'000;

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

std::shared_ptr<const std::vector<auth::Policy>> PoliciesOf(auth::Policy policy) {
  return std::make_shared<const std::vector<auth::Policy>>(
      std::vector<auth::Policy>{std::move(policy)});
}

}  // namespace

// At first start: the admin user with a fresh key, written to <data-dir>/credentials. A store
// from before users (bare keys under Kind::kCredential) has them become the admin's keys.
Status Controller::EnsureAdmin() {
  Result<std::vector<store::Record>> users = store_->Load(store::Kind::kUser);
  Result<std::vector<store::Record>> bare = store_->Load(store::Kind::kCredential);
  if (!users.ok()) return users.status();
  if (!bare.ok()) return bare.status();
  std::optional<UserRecord> admin;
  for (const store::Record& r : users.value()) {
    if (r.key != kAdminUser) continue;
    Result<UserRecord> decoded = DecodeUser(r.key, r.value, *box_);
    if (!decoded.ok()) return decoded.status();
    admin = std::move(decoded).value();
  }
  bool changed = false;
  store::Batch batch;
  auto new_admin = [this] {
    UserRecord u;
    u.name = std::string(kAdminUser);
    u.created = Now();
    u.policies = PoliciesOf(AdminPolicy());
    return u;
  };
  if (!bare->empty()) {
    if (!admin) admin = new_admin();
    for (const store::Record& r : bare.value()) {
      admin->keys.push_back({r.key, r.value, Now()});
      batch.Delete(store::Kind::kCredential, r.key);
    }
    changed = true;
  } else if (users->empty()) {
    Result<api::Credentials> key = api::GenerateCredentials();
    if (!key.ok()) return key.status();
    admin = new_admin();
    admin->keys.push_back({key->access_key_id, key->secret_access_key, Now()});
    changed = true;
  }
  if (changed) {
    Result<std::string> encoded = EncodeUser(*admin, *box_);
    if (!encoded.ok()) return encoded.status();
    batch.Put(store::Kind::kUser, admin->name, *encoded);
    ALLOT_RETURN_IF_ERROR(store_->Commit(std::move(batch)));
  }
  if (admin && !admin->keys.empty() &&
      (users->empty() || !std::filesystem::exists(credentials_path_))) {
    const AccessKeyRecord& key = admin->keys.front();
    ALLOT_RETURN_IF_ERROR(api::WriteSharedCredentialsFile(
        credentials_path_, {.access_key_id = key.id, .secret_access_key = key.secret}, "default"));
  }
  return Status::Ok();
}

Status Controller::LoadUsers() {
  Result<std::vector<store::Record>> users = store_->Load(store::Kind::kUser);
  if (!users.ok()) return users.status();
  users_.clear();
  key_owner_.clear();
  for (const store::Record& r : users.value()) {
    Result<UserRecord> user = DecodeUser(r.key, r.value, *box_);
    if (!user.ok()) return user.status();
    for (const AccessKeyRecord& key : user->keys) key_owner_[key.id] = user->name;
    users_.insert_or_assign(r.key, std::move(user).value());
  }
  Result<std::vector<store::Record>> newest =
      store_->Range(store::Kind::kAudit, {.from = "", .to = "", .limit = 1, .descending = true});
  if (!newest.ok()) return newest.status();
  next_audit_seq_ = newest->empty() ? 1 : std::stoull(newest->front().key) + 1;
  return Status::Ok();
}

Status Controller::PutUser(const UserRecord& user) {
  Result<std::string> encoded = EncodeUser(user, *box_);
  if (!encoded.ok()) return encoded.status();
  for (auto it = key_owner_.begin(); it != key_owner_.end();) {
    it = it->second == user.name ? key_owner_.erase(it) : std::next(it);
  }
  for (const AccessKeyRecord& key : user.keys) key_owner_[key.id] = user.name;
  users_.insert_or_assign(user.name, user);
  pending_.Put(store::Kind::kUser, user.name, *encoded);
  return Status::Ok();
}

std::optional<std::string> Controller::SecretFor(const std::string& access_key_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto owner = key_owner_.find(access_key_id);
  if (owner == key_owner_.end()) return std::nullopt;
  for (const AccessKeyRecord& key : users_.at(owner->second).keys) {
    if (key.id == access_key_id) return key.secret;
  }
  return std::nullopt;
}

std::optional<Caller> Controller::CallerFor(const std::string& access_key_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto owner = key_owner_.find(access_key_id);
  if (owner == key_owner_.end()) return std::nullopt;
  const UserRecord& user = users_.at(owner->second);
  Caller caller;
  caller.user = user.name;
  caller.arn = UserArn(options_.account, user.name);
  caller.policies = user.policies;
  return caller;
}

Result<std::map<std::string, UserRecord>::iterator> Controller::UserNamed(const std::string& name) {
  auto it = users_.find(name);
  if (it == users_.end()) return InvalidArgument("user " + name + " does not exist");
  return it;
}

// The answer that hands out a new key: the only time its secret leaves the server.
Controller::Reply Controller::NewKeyReply(const UserRecord& user,
                                          const api::Credentials& key) const {
  return {{{"user", DescribeUser(user, options_.account)},
           {"accessKey",
            {{"accessKeyId", key.access_key_id}, {"secretAccessKey", key.secret_access_key}}}}};
}

Result<Controller::Reply> Controller::CreateUser(const Json& body) {
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  auto name_it = body.find("userName");
  if (name_it == body.end() || !name_it->is_string()) {
    return InvalidArgument("userName is required (a string)");
  }
  const std::string name = name_it->get<std::string>();
  if (Status s = CheckUserName(name); !s.ok()) return InvalidArgument(s.message());
  if (audit_) audit_->resource = UserArn(options_.account, name);
  if (users_.contains(name)) return InvalidArgument("Object already exists");
  UserRecord user;
  user.name = name;
  user.created = Now();
  if (auto p = body.find("policy"); p != body.end() && !p->is_null()) {
    Result<auth::Policy> policy = auth::ParsePolicy(p->dump());
    if (!policy.ok()) return InvalidArgument("policy: " + policy.status().message());
    user.policies = PoliciesOf(std::move(policy).value());
  }
  ALLOT_ASSIGN_OR_RETURN(const api::Credentials key, api::GenerateCredentials());
  user.keys.push_back({key.access_key_id, key.secret_access_key, Now()});
  ALLOT_RETURN_IF_ERROR(PutUser(user));
  return NewKeyReply(user, key);
}

Result<Controller::Reply> Controller::DeleteUser(const std::string& name) {
  if (name == caller_->user) return InvalidArgument("a user cannot delete itself");
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(name));
  for (const AccessKeyRecord& key : it->second.keys) key_owner_.erase(key.id);
  users_.erase(it);
  pending_.Delete(store::Kind::kUser, name);
  return Reply{};
}

Result<Controller::Reply> Controller::RotateKeys(const std::string& name) {
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(name));
  ALLOT_ASSIGN_OR_RETURN(const api::Credentials key, api::GenerateCredentials());
  UserRecord user = it->second;
  user.keys = {{key.access_key_id, key.secret_access_key, Now()}};
  ALLOT_RETURN_IF_ERROR(PutUser(user));
  return NewKeyReply(user, key);
}

Result<Controller::Reply> Controller::PutUserPolicy(const std::string& name, const Json& body) {
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(name));
  Result<auth::Policy> policy = auth::ParsePolicy(body.dump());
  if (!policy.ok()) return InvalidArgument("policy: " + policy.status().message());
  UserRecord user = it->second;
  const std::string old_text = user.has_policy() ? PolicyJson(user).dump() : "";
  user.policies = PoliciesOf(std::move(policy).value());
  if (audit_) audit_->changes.push_back({"policy", old_text, PolicyJson(user).dump()});
  ALLOT_RETURN_IF_ERROR(PutUser(user));
  return Reply{{{"userName", name}, {"policy", PolicyJson(user)}}};
}

Result<Controller::Reply> Controller::UserCall(const Caller& caller, const std::string& method,
                                               const std::string& path, const Json& body) {
  const std::vector<std::string> parts = SplitPath(path);
  const std::string name = parts.empty() ? "" : parts[0];
  std::string resource = name.empty() ? "*" : UserArn(options_.account, name);
  if (parts.empty() && method == "POST") {
    // As AWS checks iam:CreateUser: on the user to be, so "user/team-a-*" can be delegated.
    auto named = body.is_object() ? body.find("userName") : body.end();
    resource = UserArn(options_.account, named != body.end() && named->is_string()
                                             ? named->get<std::string>()
                                             : std::string());
  }
  const std::string tail = parts.size() > 1 ? path.substr(path.find('/', 1)) : "";
  std::string audited;
  std::function<Result<Reply>()> run;
  if (parts.empty() && method == "GET") {
    run = [this]() -> Result<Reply> {
      Json list = Json::array();
      for (const auto& [n, user] : users_) list.push_back(DescribeUser(user, options_.account));
      return Reply{{{"users", list}}};
    };
  } else if (parts.empty() && method == "POST") {
    audited = "allot:CreateUser";
    run = [this, &body] { return CreateUser(body); };
  } else if (parts.size() == 1 && method == "GET") {
    run = [this, name]() -> Result<Reply> {
      ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(name));
      return Reply{{{"user", DescribeUser(it->second, options_.account)}}};
    };
  } else if (parts.size() == 1 && method == "DELETE") {
    audited = "allot:DeleteUser";
    run = [this, name] { return DeleteUser(name); };
  } else if (tail == "/policy" && method == "GET") {
    run = [this, name]() -> Result<Reply> {
      ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(name));
      return Reply{{{"userName", name}, {"policy", PolicyJson(it->second)}}};
    };
  } else if (tail == "/policy" && method == "PUT") {
    audited = "allot:PutUserPolicy";
    run = [this, name, &body] { return PutUserPolicy(name, body); };
  } else if (tail == "/keys/rotate" && method == "POST") {
    audited = "allot:RotateAccessKeys";
    run = [this, name] { return RotateKeys(name); };
  } else {
    return NotFound("no such users operation: " + method + " /allot/v1/users" + path);
  }
  return RunAs(
      caller, audited,
      [this, resource] {
        if (audit_) audit_->resource = resource;
        return Allowed(*caller_, "allot:ManageUsers", resource, nullptr, std::nullopt);
      },
      run);
}

Result<Controller::Reply> Controller::Audit(const Caller& caller, const AuditFilter& filter,
                                            std::size_t max, const std::string& token) {
  Result<Reply> allowed = RunAs(
      caller, "",
      [this] { return Allowed(*caller_, "allot:ReadAudit", "*", nullptr, std::nullopt); },
      [] { return Result<Reply>(Reply{}); });
  if (!allowed.ok()) return allowed.status();
  if (!token.empty() && (token.size() != AuditKey(0).size() ||
                         token.find_first_not_of("0123456789") != std::string::npos)) {
    return InvalidArgument("nextToken is not one this server gave");
  }
  Json records = Json::array();
  std::string before = token;  // the oldest key examined so far
  std::size_t examined = 0;
  bool exhausted = false;  // nothing older can match
  while (records.size() < max && examined < kAuditScanBudget && !exhausted) {
    Result<std::vector<store::Record>> page = store_->Range(
        store::Kind::kAudit, {.from = "", .to = before, .limit = kAuditPage, .descending = true});
    if (!page.ok()) return page.status();
    std::size_t used = 0;
    for (const store::Record& r : page.value()) {
      Result<AuditRecord> record = DecodeAudit(r.key, r.value);
      if (!record.ok()) return record.status();
      if (record->time < filter.since) {
        exhausted = true;  // records are in call order: the rest are older still
        break;
      }
      ++used;
      ++examined;
      before = r.key;
      if (filter.Matches(*record)) records.push_back(DescribeAudit(*record));
      if (records.size() == max) break;
    }
    if (used == page->size() && page->size() < kAuditPage) exhausted = true;
  }
  Reply reply;
  reply.body = {{"records", records}};
  if (!exhausted && !before.empty()) reply.body["nextToken"] = before;
  return reply;
}

}  // namespace allot::server
