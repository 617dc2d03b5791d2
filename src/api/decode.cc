#include "api/decode.h"

#include <map>

#include "api/decoders.h"
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

api::TaggedResource ReadTaggedResource(const std::string& arn) {
  using Type = TaggedResource::Type;
  if (arn.find("/quota-share/") != std::string::npos) {
    ShareArn share = decoders::ShareArnOf(arn, "resourceArn");
    return {Type::kQuotaShare, arn, std::move(share.queue), std::move(share.share)};
  }
  constexpr std::pair<std::string_view, Type> kTypes[] = {
      {"service-job", Type::kServiceJob},
      {"job-queue", Type::kJobQueue},
      {"service-environment", Type::kServiceEnvironment},
      {"scheduling-policy", Type::kSchedulingPolicy}};
  for (const auto& [type_name, type] : kTypes) {
    if (arn.find(":" + std::string(type_name) + "/") == std::string::npos) continue;
    if (type != Type::kServiceJob) {
      return {type, arn, decoders::NameOrArnOf(arn, type_name, "resourceArn").name, ""};
    }
    if (!decoders::IsBatchArn(arn)) break;
    return {type, arn, arn.substr(arn.find(":service-job/") + 13), ""};
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
      return UntagResourceRequest{std::move(resource), keys};
    }
    return ListTagsForResourceRequest{std::move(resource)};
  });
}

std::string_view ActionOf(const Request& request) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kAction; }, request);
}

namespace decoders {

// "arn:<partition>:batch:<region>:<account>:<resource>": an ARN of another service never names
// a Batch resource, whatever its resource part says.
bool IsBatchArn(std::string_view arn) {
  if (!arn.starts_with("arn:")) return false;
  std::size_t at = 0;
  for (int colon = 0; colon < 5; ++colon) {
    at = arn.find(':', at);
    if (at == std::string_view::npos) return false;
    if (colon == 1 && arn.substr(at + 1, 6) != "batch:") return false;
    ++at;
  }
  return true;
}

NameOrArn NameOrArnOf(const std::string& sent, std::string_view type, const std::string& field) {
  std::string name = sent;
  const std::string type_name(type);
  if (sent.rfind("arn:", 0) == 0) {
    const std::string marker = ":" + type_name + "/";
    auto pos = sent.find(marker);
    if (pos == std::string::npos || !IsBatchArn(sent)) {
      Refuse(field + " must be a " + type_name + " name or ARN, got " + Quoted(Json(sent)));
    }
    name = sent.substr(pos + marker.size());
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
  const std::string q = ":job-queue/";
  const std::string s = "/quota-share/";
  auto qp = arn.find(q);
  auto sp = arn.find(s);
  if (!IsBatchArn(arn) || qp == std::string::npos || sp == std::string::npos || sp < qp) {
    Refuse(field +
           " must look like arn:aws:batch:<region>:<account>:job-queue/<queue>/"
           "quota-share/<share>, got " +
           Quoted(Json(arn)));
  }
  std::string queue = arn.substr(qp + q.size(), sp - qp - q.size());
  std::string share = arn.substr(sp + s.size());
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

AskedChanges Asked(const Json& r, std::initializer_list<const char*> fields) {
  AskedChanges out;
  for (const char* field : fields) {
    auto it = r.find(field);
    if (it == r.end()) continue;
    out.emplace_back(field, it->dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  return out;
}

}  // namespace decoders

}  // namespace allot::api
