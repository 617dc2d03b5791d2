// Users, their keys and policies (/allot/v1/users), and the audit trail's query
// (/allot/v1/audit). Managing users needs allot:ManageUsers on the user's ARN (on "*" to list
// them); reading the audit needs allot:ReadAudit.

#include <filesystem>

#include "api/credentials.h"
#include "api/routes.h"
#include "server/api_error.h"
#include "server/controller.h"
#include "server/log.h"

namespace allot::server {

namespace {

constexpr std::size_t kAuditPage = 500;
constexpr std::size_t kAuditScanBudget = 20'000;

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
api::NewAccessKeyResponse Controller::NewKeyAnswer(const UserRecord& user,
                                                   const api::Credentials& key) const {
  return {DescribeUser(user, options_.account), key.access_key_id, key.secret_access_key};
}

Result<Controller::Reply> Controller::Handle(const api::CreateUserRequest& r) {
  if (users_.contains(r.user_name)) return InvalidArgument("Object already exists");
  UserRecord user;
  user.name = r.user_name;
  user.created = Now();
  if (r.policy) {
    Result<auth::Policy> policy = auth::ParsePolicy(*r.policy);
    if (!policy.ok()) return InvalidArgument("policy: " + policy.status().message());
    user.policies = PoliciesOf(std::move(policy).value());
  }
  ALLOT_ASSIGN_OR_RETURN(const api::Credentials key, api::GenerateCredentials());
  user.keys.push_back({key.access_key_id, key.secret_access_key, Now()});
  ALLOT_RETURN_IF_ERROR(PutUser(user));
  return Reply{NewKeyAnswer(user, key), {}};
}

Result<Controller::Reply> Controller::Handle(const api::DeleteUserRequest& r) {
  if (r.user_name == caller_->user) return InvalidArgument("a user cannot delete itself");
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(r.user_name));
  for (const AccessKeyRecord& key : it->second.keys) key_owner_.erase(key.id);
  users_.erase(it);
  pending_.Delete(store::Kind::kUser, r.user_name);
  return Reply{api::EmptyResponse{}, {}};
}

Result<Controller::Reply> Controller::Handle(const api::RotateAccessKeysRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(r.user_name));
  ALLOT_ASSIGN_OR_RETURN(const api::Credentials key, api::GenerateCredentials());
  UserRecord user = it->second;
  user.keys = {{key.access_key_id, key.secret_access_key, Now()}};
  ALLOT_RETURN_IF_ERROR(PutUser(user));
  return Reply{NewKeyAnswer(user, key), {}};
}

Result<Controller::Reply> Controller::Handle(const api::PutUserPolicyRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(r.user_name));
  Result<auth::Policy> policy = auth::ParsePolicy(r.policy);
  if (!policy.ok()) return InvalidArgument("policy: " + policy.status().message());
  UserRecord user = it->second;
  const std::string old_text = PolicyText(user).value_or("");
  user.policies = PoliciesOf(std::move(policy).value());
  if (audit_) audit_->changes.push_back({"policy", old_text, PolicyText(user).value_or("")});
  ALLOT_RETURN_IF_ERROR(PutUser(user));
  return Reply{api::UserPolicyResponse{r.user_name, PolicyText(user)}, {}};
}

Result<Controller::Reply> Controller::Handle(const api::ListUsersRequest& /*r*/) {
  api::ListUsersResponse out;
  for (const auto& [name, user] : users_) out.users.push_back(DescribeUser(user, options_.account));
  return Reply{std::move(out), {}};
}

Result<Controller::Reply> Controller::Handle(const api::GetUserRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(r.user_name));
  return Reply{api::UserResponse{DescribeUser(it->second, options_.account)}, {}};
}

Result<Controller::Reply> Controller::Handle(const api::GetUserPolicyRequest& r) {
  ALLOT_ASSIGN_OR_RETURN(auto it, UserNamed(r.user_name));
  return Reply{api::UserPolicyResponse{r.user_name, PolicyText(it->second)}, {}};
}

// As AWS checks iam:CreateUser, on the user to be: "user/team-a-*" can be delegated. Listing
// needs the permission on "*".
Result<Controller::Reply> Controller::Users(const Caller& caller, const api::UserRequest& request) {
  const std::string& name = api::UserNameOf(request);
  const std::string resource = name.empty() ? "*" : UserArn(options_.account, name);
  const std::string audited = api::AuditedUserAction(request);
  return RunAs(
      caller, audited,
      [this, &resource] {
        if (audit_) audit_->resource = resource;
        return Allowed(*caller_, "allot:ManageUsers", resource, nullptr, std::nullopt);
      },
      [this, &request] {
        return std::visit([this](const auto& r) { return Handle(r); }, request);
      });
}

Result<Controller::Reply> Controller::Audit(const Caller& caller,
                                            const api::AuditRequest& request) {
  Result<Reply> allowed = RunAs(
      caller, "",
      [this] { return Allowed(*caller_, "allot:ReadAudit", "*", nullptr, std::nullopt); },
      [] { return Result<Reply>(Reply{}); });
  if (!allowed.ok()) return allowed.status();
  const std::string& token = request.next_token;
  if (!token.empty() && (token.size() != AuditKey(0).size() ||
                         token.find_first_not_of("0123456789") != std::string::npos)) {
    return InvalidArgument("nextToken is not one this server gave");
  }
  api::AuditPageResponse out;
  std::string before = token;  // the oldest key examined so far
  std::size_t examined = 0;
  bool exhausted = false;  // nothing older can match
  while (out.records.size() < request.max_results && examined < kAuditScanBudget && !exhausted) {
    Result<std::vector<store::Record>> page = store_->Range(
        store::Kind::kAudit, {.from = "", .to = before, .limit = kAuditPage, .descending = true});
    if (!page.ok()) return page.status();
    std::size_t used = 0;
    for (const store::Record& r : page.value()) {
      Result<AuditRecord> record = DecodeAudit(r.key, r.value);
      if (!record.ok()) return record.status();
      if (record->time < request.since) {
        exhausted = true;  // records are in call order: the rest are older still
        break;
      }
      ++used;
      ++examined;
      before = r.key;
      if (AuditMatches(request, *record)) out.records.push_back(DescribeAudit(*record));
      if (out.records.size() == request.max_results) break;
    }
    if (used == page->size() && page->size() < kAuditPage) exhausted = true;
  }
  if (!exhausted && !before.empty()) out.next_token = before;
  return Reply{std::move(out), {}};
}

}  // namespace allot::server
