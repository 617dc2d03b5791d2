// TagResource / UntagResource / ListTagsForResource on any Allot ARN.

#include "server/api_error.h"
#include "server/controller.h"

namespace allot::server {

Controller::Reply Controller::Tags(const std::string& method, const std::string& arn,
                                   const Json& request, const std::vector<std::string>& tag_keys) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_) return Refused();
  Json* doc = nullptr;
  store::Kind kind = store::Kind::kMeta;
  std::string key;
  if (arn.find("/quota-share/") != std::string::npos) {
    const auto [q, s] = ShareKeyFromArn(arn);
    key = q + "/" + s;
    auto it = shares_.find(key);
    doc = it == shares_.end() ? nullptr : &it->second;
    kind = store::Kind::kQuotaShare;
  } else if (arn.find(":service-job/") != std::string::npos) {
    JobRecord* job = FindJob(arn);
    if (job == nullptr) Refuse("resourceArn " + arn + " does not name an existing resource");
    Json job_tags = Json::object();
    for (const auto& [k, v] : job->options().tags) job_tags[k] = v;
    doc = &job_tags;
    return ChangeTags(method, request, tag_keys, doc, [this, job](const Json& tags) {
      std::vector<std::pair<std::string, std::string>>& kept = job->MutableOptions().tags;
      kept.clear();
      for (const auto& [k, v] : tags.items()) kept.emplace_back(k, v.get<std::string>());
      Touch(*job);
    });
  } else if (arn.find(":job-queue/") != std::string::npos) {
    doc = FindQueue(arn);
    kind = store::Kind::kJobQueue;
  } else if (arn.find(":service-environment/") != std::string::npos) {
    doc = FindEnvironment(arn);
    kind = store::Kind::kServiceEnvironment;
  } else if (arn.find(":scheduling-policy/") != std::string::npos) {
    doc = FindPolicy(arn);
    kind = store::Kind::kSchedulingPolicy;
  }
  if (doc == nullptr) Refuse("resourceArn " + arn + " does not name an existing resource");
  if (key.empty() && kind == store::Kind::kJobQueue) key = (*doc)["jobQueueName"];
  if (kind == store::Kind::kServiceEnvironment) key = (*doc)["serviceEnvironmentName"];
  if (kind == store::Kind::kSchedulingPolicy) key = (*doc)["name"];
  return ChangeTags(method, request, tag_keys, &(*doc)["tags"], [this, kind, key, doc](const Json&) {
    pending_.Put(kind, key, doc->dump());
  });
}

// GET answers `tags`; POST adds to it, DELETE removes keys; then `save` keeps the result.
Controller::Reply Controller::ChangeTags(const std::string& method, const Json& request,
                                         const std::vector<std::string>& tag_keys, Json* tags_in,
                                         const std::function<void(const Json&)>& save) {
  if (tags_in->is_null()) *tags_in = Json::object();
  if (method == "GET") return {{{"tags", *tags_in}}};
  Json tags = *tags_in;
  if (method == "POST") {
    const Json added = ReadTags(request);
    if (added.empty()) Refuse("tags must contain at least one tag");
    for (const auto& [k, v] : added.items()) tags[k] = v;
    if (tags.size() > 50) Refuse("a resource can have at most 50 tags");
  } else {
    if (tag_keys.empty()) Refuse("tagKeys is required");
    for (const std::string& k : tag_keys) tags.erase(k);
  }
  *tags_in = tags;
  save(tags);
  return Finish();
}

}  // namespace allot::server
