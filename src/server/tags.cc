// TagResource / UntagResource / ListTagsForResource on any Allot ARN.

#include "api/decoders.h"
#include "server/api_error.h"
#include "server/config_wire.h"
#include "server/controller.h"

namespace allot::server {

Controller::Reply Controller::TagsLocked(const std::string& method, const std::string& arn,
                                         const Json& request,
                                         const std::vector<std::string>& tag_keys) {
  // A configuration record's tags change in the record, which is then stored whole.
  auto change = [&](auto* record, store::Kind kind, const std::string& key) {
    if (record == nullptr) Refuse("resourceArn " + arn + " does not name an existing resource");
    Json tags = TagsJson(record->tags);
    return ChangeTags(method, request, tag_keys, &tags, [this, record, kind, key](const Json& t) {
      record->tags = TagsFrom(t);
      pending_.Put(kind, key, Encode(*record));
    });
  };
  if (arn.find("/quota-share/") != std::string::npos) {
    const api::ShareArn share = api::decoders::ShareArnOf(arn, "resourceArn");
    const std::string& q = share.queue;
    const std::string& s = share.share;
    auto it = shares_.find(q + "/" + s);
    return change(it == shares_.end() ? nullptr : &it->second, store::Kind::kQuotaShare,
                  q + "/" + s);
  }
  if (arn.find(":service-job/") != std::string::npos) {
    JobRecord* job = FindJob(arn);
    if (job == nullptr) Refuse("resourceArn " + arn + " does not name an existing resource");
    Json job_tags = TagsJson(job->options().tags);
    return ChangeTags(method, request, tag_keys, &job_tags, [this, job](const Json& tags) {
      job->MutableOptions().tags = TagsFrom(tags);
      Touch(*job);
    });
  }
  if (arn.find(":job-queue/") != std::string::npos) {
    JobQueueRecord* queue =
        FindQueue(api::decoders::NameOrArnOf(arn, "job-queue", "resourceArn").name);
    return change(queue, store::Kind::kJobQueue, queue ? queue->name : "");
  }
  if (arn.find(":service-environment/") != std::string::npos) {
    ServiceEnvironmentRecord* env =
        FindEnvironment(api::decoders::NameOrArnOf(arn, "service-environment", "resourceArn").name);
    return change(env, store::Kind::kServiceEnvironment, env ? env->name : "");
  }
  if (arn.find(":scheduling-policy/") != std::string::npos) {
    SchedulingPolicyRecord* policy =
        FindPolicy(api::decoders::NameOrArnOf(arn, "scheduling-policy", "resourceArn").name);
    return change(policy, store::Kind::kSchedulingPolicy, policy ? policy->name : "");
  }
  Refuse("resourceArn " + arn + " does not name an existing resource");
}

// GET answers `tags`; POST adds to it, DELETE removes keys; then `save` keeps the result.
Controller::Reply Controller::ChangeTags(const std::string& method, const Json& request,
                                         const std::vector<std::string>& tag_keys, Json* tags_in,
                                         const std::function<void(const Json&)>& save) {
  if (tags_in->is_null()) *tags_in = Json::object();
  if (method == "GET") return {{{"tags", *tags_in}}};
  Json tags = *tags_in;
  if (method == "POST") {
    const Json added = api::ReadTags(request);
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
