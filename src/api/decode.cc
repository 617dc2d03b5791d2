#include "api/decode.h"

#include <map>

#include "api/decoders.h"
#include "api/query.h"
#include "api/wire_error.h"
#include "model/rules.h"

namespace allot::api {

namespace {

struct Entry {
  ActionInfo info;
  Request (*decode)(const Json&);
};

template <auto kDecoder>
Request As(const Json& r) {
  return kDecoder(r);
}

const std::map<std::string_view, Entry>& Actions() {
  namespace d = decoders;
  static const std::map<std::string_view, Entry> kActions = {
      {"createserviceenvironment",
       {{"CreateServiceEnvironment", true}, &As<d::CreateServiceEnvironment>}},
      {"updateserviceenvironment",
       {{"UpdateServiceEnvironment", true}, &As<d::UpdateServiceEnvironment>}},
      {"describeserviceenvironments",
       {{"DescribeServiceEnvironments", false}, &As<d::DescribeServiceEnvironments>}},
      {"deleteserviceenvironment",
       {{"DeleteServiceEnvironment", true}, &As<d::DeleteServiceEnvironment>}},
      {"createschedulingpolicy",
       {{"CreateSchedulingPolicy", true}, &As<d::CreateSchedulingPolicy>}},
      {"updateschedulingpolicy",
       {{"UpdateSchedulingPolicy", true}, &As<d::UpdateSchedulingPolicy>}},
      {"describeschedulingpolicies",
       {{"DescribeSchedulingPolicies", false}, &As<d::DescribeSchedulingPolicies>}},
      {"listschedulingpolicies",
       {{"ListSchedulingPolicies", false}, &As<d::ListSchedulingPolicies>}},
      {"deleteschedulingpolicy",
       {{"DeleteSchedulingPolicy", true}, &As<d::DeleteSchedulingPolicy>}},
      {"createjobqueue", {{"CreateJobQueue", true}, &As<d::CreateJobQueue>}},
      {"updatejobqueue", {{"UpdateJobQueue", true}, &As<d::UpdateJobQueue>}},
      {"describejobqueues", {{"DescribeJobQueues", false}, &As<d::DescribeJobQueues>}},
      {"deletejobqueue", {{"DeleteJobQueue", true}, &As<d::DeleteJobQueue>}},
      {"createquotashare", {{"CreateQuotaShare", true}, &As<d::CreateQuotaShare>}},
      {"updatequotashare", {{"UpdateQuotaShare", true}, &As<d::UpdateQuotaShare>}},
      {"describequotashare", {{"DescribeQuotaShare", false}, &As<d::DescribeQuotaShare>}},
      {"listquotashares", {{"ListQuotaShares", false}, &As<d::ListQuotaShares>}},
      {"deletequotashare", {{"DeleteQuotaShare", true}, &As<d::DeleteQuotaShare>}},
      {"submitservicejob", {{"SubmitServiceJob", true}, &As<d::SubmitServiceJob>}},
      {"updateservicejob", {{"UpdateServiceJob", true}, &As<d::UpdateServiceJob>}},
      {"describeservicejob", {{"DescribeServiceJob", false}, &As<d::DescribeServiceJob>}},
      {"listservicejobs", {{"ListServiceJobs", false}, &As<d::ListServiceJobs>}},
      {"terminateservicejob", {{"TerminateServiceJob", true}, &As<d::TerminateServiceJob>}},
      {"getjobqueuesnapshot", {{"GetJobQueueSnapshot", false}, &As<d::GetJobQueueSnapshot>}},
  };
  return kActions;
}

}  // namespace

std::optional<ActionInfo> FindAction(std::string_view route_name) {
  auto it = Actions().find(route_name);
  if (it == Actions().end()) return std::nullopt;
  return it->second.info;
}

Result<Request> DecodeRequest(std::string_view route_name, const Json& body) {
  auto it = Actions().find(route_name);
  if (it == Actions().end()) return InvalidArgument("unknown action " + std::string(route_name));
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  return Decoded([&] { return it->second.decode(body); });
}

RefusalTarget TargetOf(std::string_view route_name, const Json& body) {
  struct Aim {
    std::string_view route;
    const char* field;
    std::string_view type;
  };
  static constexpr Aim kAims[] = {
      {"createserviceenvironment", "serviceEnvironmentName", "service-environment"},
      {"updateserviceenvironment", "serviceEnvironment", "service-environment"},
      {"deleteserviceenvironment", "serviceEnvironment", "service-environment"},
      {"createschedulingpolicy", "name", "scheduling-policy"},
      {"updateschedulingpolicy", "arn", "scheduling-policy"},
      {"deleteschedulingpolicy", "arn", "scheduling-policy"},
      {"createjobqueue", "jobQueueName", "job-queue"},
      {"updatejobqueue", "jobQueue", "job-queue"},
      {"deletejobqueue", "jobQueue", "job-queue"},
      {"createquotashare", "jobQueue", "job-queue"},
      {"updatequotashare", "quotaShareArn", ""},
      {"deletequotashare", "quotaShareArn", ""},
      {"submitservicejob", "jobQueue", "job-queue"},
      {"updateservicejob", "jobId", "service-job"},
      {"terminateservicejob", "jobId", "service-job"},
  };
  RefusalTarget out;
  if (!body.is_object()) return out;
  auto string_of = [&body](const char* field) {
    auto it = body.find(field);
    return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const Aim& aim : kAims) {
    if (aim.route != route_name) continue;
    out.sent = string_of(aim.field);
    out.type = std::string(aim.type);
  }
  if (route_name == "createquotashare" || route_name == "submitservicejob") {
    out.share = string_of("quotaShareName");
  }
  if (route_name == "submitservicejob" || route_name == "updateservicejob") {
    auto it = body.find("schedulingPriority");
    if (it != body.end() && it->is_number_integer() &&
        (!it->is_number_unsigned() ||
         it->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX))) {
      out.priority = it->get<std::int64_t>();
    }
    if (!out.priority && route_name == "submitservicejob") out.priority = 0;
  }
  return out;
}

Result<WhatIfRequest> DecodeWhatIf(const Json& body) {
  return Decoded([&]() -> WhatIfRequest {
    if (!body.is_object()) Refuse("a what-if body must be a JSON object");
    constexpr const char* kKinds[] = {"submit", "updatePriority", "updateQuotaShare"};
    const char* kind = nullptr;
    for (const char* k : kKinds) {
      if (body.contains(k) && kind == nullptr) kind = k;
    }
    if (kind == nullptr || body.size() != 1) {
      Refuse("a what-if body takes exactly one of submit, updatePriority, updateQuotaShare");
    }
    const Json& r = body.at(kind);
    if (!r.is_object()) Refuse(std::string(kind) + " must be a JSON object");
    if (kind == kKinds[0]) return decoders::SubmitServiceJob(r);
    if (kind == kKinds[1]) return decoders::UpdateServiceJob(r);
    return decoders::UpdateQuotaShare(r);
  });
}

namespace {

// The resource part's type decides: "job-queue/q/quota-share/s", "service-job/<id>", ...
api::TaggedResource ReadTaggedResource(const std::string& arn) {
  using Type = TaggedResource::Type;
  const std::optional<std::string_view> resource = decoders::BatchResource(arn);
  if (resource && resource->find("/quota-share/") != std::string_view::npos) {
    ShareArn share = decoders::ShareArnOf(arn, "resourceArn");
    return {Type::kQuotaShare, arn, std::move(share.queue), std::move(share.share)};
  }
  constexpr std::pair<std::string_view, Type> kTypes[] = {
      {"service-job", Type::kServiceJob},
      {"job-queue", Type::kJobQueue},
      {"service-environment", Type::kServiceEnvironment},
      {"scheduling-policy", Type::kSchedulingPolicy}};
  for (const auto& [type_name, type] : kTypes) {
    if (!resource || !resource->starts_with(std::string(type_name) + "/")) continue;
    if (type != Type::kServiceJob) {
      return {type, arn, decoders::NameOrArnOf(arn, type_name, "resourceArn").name, ""};
    }
    const std::string_view id = resource->substr(type_name.size() + 1);
    if (id.empty() || id.size() > 128 || id.find_first_of(":/") != std::string_view::npos) break;
    return {type, arn, std::string(id), ""};
  }
  Refuse("resourceArn " + Quoted(Json(arn)) +
         " is not the ARN of a service environment, scheduling policy, job queue, quota share "
         "or service job");
}

}  // namespace

Result<TagsRequest> DecodeTags(std::string_view method, const std::string& resource_arn,
                               const Json& body, const std::vector<std::string>& keys) {
  return Decoded([&]() -> TagsRequest {
    TaggedResource resource = ReadTaggedResource(resource_arn);
    if (method == "POST") {
      if (!body.is_object()) Refuse("the request body must be a JSON object");
      TagList tags = decoders::ReadTagList(body);
      if (tags.empty()) Refuse("tags must contain at least one tag");
      return TagResourceRequest{std::move(resource), std::move(tags)};
    }
    if (method == "DELETE") {
      if (keys.empty()) Refuse("tagKeys is required");
      if (keys.size() > 50) {
        Refuse("tagKeys allows at most 50 keys, got " + std::to_string(keys.size()));
      }
      for (const std::string& key : keys) {
        RequireLength(key, "tagKeys entries", 1, model::rules::kMaxTagKeyLength);
        RefuseReservedTagKey(key, "tagKeys entries");
      }
      return UntagResourceRequest{std::move(resource), keys};
    }
    return ListTagsForResourceRequest{std::move(resource)};
  });
}

std::string_view ActionOf(const Request& request) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kAction; }, request);
}

namespace decoders {

std::optional<std::string_view> BatchResource(std::string_view arn) {
  if (!arn.starts_with("arn:")) return std::nullopt;
  std::size_t at = 0;
  for (int colon = 0; colon < 5; ++colon) {
    at = arn.find(':', at);
    if (at == std::string_view::npos) return std::nullopt;
    if (colon == 1 && arn.substr(at + 1, 6) != "batch:") return std::nullopt;
    ++at;
  }
  return arn.substr(at);
}

NameOrArn NameOrArnOf(const std::string& sent, std::string_view type, const std::string& field) {
  std::string name = sent;
  const std::string type_name(type);
  if (sent.rfind("arn:", 0) == 0) {
    // The name is what follows "<type>/" at the start of the resource part: a marker found
    // elsewhere ("...:job-queue/mine:service-environment/theirs") names nothing.
    const std::optional<std::string_view> resource = BatchResource(sent);
    if (!resource || !resource->starts_with(type_name + "/")) {
      Refuse(field + " must be a " + type_name + " name or ARN, got " + Quoted(Json(sent)));
    }
    name = std::string(resource->substr(type_name.size() + 1));
  }
  if (!model::rules::CheckName(name, field).ok()) {
    Refuse(field + " must be a " + type_name +
           " name (1 to 128 letters, digits, hyphens and underscores) or its ARN, got " +
           Quoted(Json(sent)));
  }
  return {sent, std::move(name)};
}

NameOrArn ReadNameOrArn(const Json& r, const char* field, std::string_view type) {
  return NameOrArnOf(RequireString(r, field), type, field);
}

// "arn:...:job-queue/<queue>/quota-share/<share>"
ShareArn ShareArnOf(const std::string& arn, const std::string& field) {
  constexpr std::string_view q = "job-queue/";
  constexpr std::string_view s = "/quota-share/";
  const std::optional<std::string_view> resource = BatchResource(arn);
  const std::size_t sp = resource ? resource->find(s) : std::string_view::npos;
  if (!resource || !resource->starts_with(q) || sp == std::string_view::npos) {
    Refuse(field +
           " must look like arn:aws:batch:<region>:<account>:job-queue/<queue>/"
           "quota-share/<share>, got " +
           Quoted(Json(arn)));
  }
  std::string queue(resource->substr(q.size(), sp - q.size()));
  std::string share(resource->substr(sp + s.size()));
  if (!model::rules::CheckName(queue, "").ok() || !model::rules::CheckName(share, "").ok()) {
    Refuse(field +
           " must name a job queue and a quota share (1 to 128 letters, digits, hyphens and "
           "underscores each), got " +
           Quoted(Json(arn)));
  }
  return {arn, std::move(queue), std::move(share)};
}

ShareArn ReadShareArn(const Json& r) {
  return ShareArnOf(RequireString(r, "quotaShareArn"), "quotaShareArn");
}

std::optional<model::State> ReadState(const Json& r) {
  std::optional<std::string> state = OptionalEnum(r, "state", {"ENABLED", "DISABLED"});
  if (!state) return std::nullopt;
  return model::ParseState(*state);
}

PageRequest ReadPage(const Json& r) {
  return {.max_results = OptionalInt(r, "maxResults", 1, model::rules::kMaxPageSize).value_or(100),
          .next_token = OptionalString(r, "nextToken").value_or("")};
}

TagList ReadTagList(const Json& r) {
  const Json tags = ReadTags(r);  // kept: items() refers into it
  TagList out;
  for (const auto& [k, v] : tags.items()) out.emplace_back(k, v.get<std::string>());
  return out;  // a JSON object iterates in key order
}

}  // namespace decoders

}  // namespace allot::api
