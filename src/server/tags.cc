// TagResource / UntagResource / ListTagsForResource on any Allot ARN.

#include "server/api_error.h"
#include "server/config_codec.h"
#include "server/controller.h"

namespace allot::server {

namespace {

const api::TaggedResource& ResourceOf(const api::TagsRequest& request) {
  return std::visit([](const auto& r) -> const api::TaggedResource& { return r.resource; },
                    request);
}

}  // namespace

Result<Controller::Reply> Controller::TagsLocked(const api::TagsRequest& request) {
  const api::TaggedResource& res = ResourceOf(request);
  using Type = api::TaggedResource::Type;
  // The resource's tags, and how a changed set is kept: a configuration record is stored whole,
  // a job with the call's batch.
  TagList* tags = nullptr;
  std::function<void()> save;
  auto config = [&](auto* record, store::Kind kind, const std::string& key) {
    if (record == nullptr) return;
    tags = &record->tags;
    save = [this, record, kind, key] { pending_.Put(kind, key, Encode(*record)); };
  };
  switch (res.type) {
    case Type::kQuotaShare: {
      auto it = shares_.find(res.name + "/" + res.share);
      config(it == shares_.end() ? nullptr : &it->second, store::Kind::kQuotaShare,
             res.name + "/" + res.share);
      break;
    }
    case Type::kJobQueue:
      config(FindQueue(res.name), store::Kind::kJobQueue, res.name);
      break;
    case Type::kServiceEnvironment:
      config(FindEnvironment(res.name), store::Kind::kServiceEnvironment, res.name);
      break;
    case Type::kSchedulingPolicy:
      config(FindPolicy(res.name), store::Kind::kSchedulingPolicy, res.name);
      break;
    case Type::kServiceJob:
      if (JobRecord* job = FindJob(res.name)) {
        if (std::holds_alternative<api::ListTagsForResourceRequest>(request)) {
          return Reply{api::ListTagsForResourceResponse{job->options().tags}};
        }
        tags = &job->MutableOptions().tags;
        save = [this, job] { Touch(*job); };
      }
      break;
  }
  if (tags == nullptr) {
    return InvalidArgument("resourceArn " + res.arn + " does not name an existing resource");
  }
  if (std::holds_alternative<api::ListTagsForResourceRequest>(request)) {
    return Reply{api::ListTagsForResourceResponse{*tags}};
  }
  std::map<std::string, std::string> changed(tags->begin(), tags->end());
  if (const auto* tag = std::get_if<api::TagResourceRequest>(&request)) {
    for (const auto& [k, v] : tag->tags) changed[k] = v;
    if (changed.size() > 50) return InvalidArgument("a resource can have at most 50 tags");
  } else {
    for (const std::string& k : std::get<api::UntagResourceRequest>(request).keys) {
      changed.erase(k);
    }
  }
  *tags = TagList(changed.begin(), changed.end());  // in key order, as they are stored
  save();
  return Reply{};
}

}  // namespace allot::server
