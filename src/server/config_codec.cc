#include "server/config_codec.h"

#include <limits>
#include <stdexcept>

#include "api/encode.h"

namespace allot::server {

namespace {

// --- reading: each helper throws Corrupt, which Decode turns into an Internal error ---

struct Corrupt : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const Json& Field(const Json& in, const char* key) {
  auto it = in.find(key);
  if (it == in.end()) throw Corrupt(std::string(key) + " is missing");
  return *it;
}

std::string String(const Json& in, const char* key) {
  const Json& v = Field(in, key);
  if (!v.is_string()) throw Corrupt(std::string(key) + " is not a string");
  return v.get<std::string>();
}

const Json& Object(const Json& in, const char* key) {
  const Json& v = Field(in, key);
  if (!v.is_object()) throw Corrupt(std::string(key) + " is not an object");
  return v;
}

// Only the type's range is checked, not the API's: a rule narrowed later must not make an older
// record unreadable.
template <typename T>
T Integer(const Json& in, const char* key) {
  const Json& v = Field(in, key);
  const bool fits =
      v.is_number_integer() &&
      (v.is_number_unsigned()
           ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
           : v.get<std::int64_t>() >= std::numeric_limits<T>::min() &&
                 v.get<std::int64_t>() <= std::numeric_limits<T>::max());
  if (!fits) throw Corrupt(std::string(key) + " is not an integer in range, got " + v.dump());
  return static_cast<T>(v.get<std::int64_t>());
}

// An array field; a missing one reads as empty when `optional`.
const Json& Array(const Json& in, const char* key, bool optional = false) {
  static const Json kEmpty = Json::array();
  if (optional && !in.contains(key)) return kEmpty;
  const Json& v = Field(in, key);
  if (!v.is_array()) throw Corrupt(std::string(key) + " is not an array");
  for (const Json& e : v) {
    if (!e.is_object()) throw Corrupt(std::string(key) + " holds an entry that is not an object");
  }
  return v;
}

model::State StateIn(const Json& in, const char* key = "state") {
  const std::string s = String(in, key);
  std::optional<model::State> state = model::ParseState(s);
  if (!state) throw Corrupt(std::string(key) + " is neither ENABLED nor DISABLED: " + s);
  return *state;
}

std::vector<model::CapacityLimit> LimitsIn(const Json& in) {
  std::vector<model::CapacityLimit> out;
  for (const Json& l : Array(in, "capacityLimits")) {
    out.push_back({String(l, "capacityUnit"), Integer<std::int64_t>(l, "maxCapacity")});
  }
  return out;
}

// Every record has been written with tags; one without reads as untagged.
TagList TagsIn(const Json& in) {
  auto it = in.find("tags");
  if (it == in.end() || it->is_null()) return {};
  if (!it->is_object()) throw Corrupt("tags is not an object");
  TagList out;
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) throw Corrupt("tags." + k + " is not a string");
    out.emplace_back(k, v.get<std::string>());
  }
  return out;  // a JSON object iterates in key order
}

// Parses `value` and reads it with `read`; any fault names the record.
template <typename Read>
auto Decode(const char* what, std::string_view key, std::string_view value, Read read)
    -> Result<decltype(read(Json()))> {
  const std::string prefix =
      "corrupt " + std::string(what) + " record " + std::string(key) + " in the store: ";
  Json in = Json::parse(value, nullptr, false);
  if (in.is_discarded() || !in.is_object()) return Internal(prefix + "not a JSON object");
  try {
    return read(in);
  } catch (const std::exception& e) {
    return Internal(prefix + e.what());
  }
}

}  // namespace

Json DescribeEnvironment(const ServiceEnvironmentRecord& env) { return api::Encode(ToWire(env)); }
Json DescribePolicy(const SchedulingPolicyRecord& policy) { return api::Encode(ToWire(policy)); }
Json DescribeQueue(const JobQueueRecord& queue) { return api::Encode(ToWire(queue)); }
Json DescribeShare(const QuotaShareRecord& share) { return api::Encode(ToWire(share)); }

std::string Encode(const ServiceEnvironmentRecord& env) { return DescribeEnvironment(env).dump(); }
std::string Encode(const SchedulingPolicyRecord& policy) { return DescribePolicy(policy).dump(); }
std::string Encode(const JobQueueRecord& queue) { return DescribeQueue(queue).dump(); }
std::string Encode(const QuotaShareRecord& share) { return DescribeShare(share).dump(); }

Result<ServiceEnvironmentRecord> DecodeEnvironment(std::string_view key, std::string_view value) {
  return Decode("service environment", key, value, [](const Json& in) {
    return ServiceEnvironmentRecord{.name = String(in, "serviceEnvironmentName"),
                                    .arn = String(in, "serviceEnvironmentArn"),
                                    .type = String(in, "serviceEnvironmentType"),
                                    .state = StateIn(in),
                                    .status = String(in, "status"),
                                    .capacity_limits = LimitsIn(in),
                                    .tags = TagsIn(in)};
  });
}

Result<SchedulingPolicyRecord> DecodePolicy(std::string_view key, std::string_view value) {
  return Decode("scheduling policy", key, value, [](const Json& in) {
    SchedulingPolicyRecord p{.name = String(in, "name"), .arn = String(in, "arn")};
    if (in.contains("quotaSharePolicy")) {
      p.idle_resource_assignment =
          String(Object(in, "quotaSharePolicy"), "idleResourceAssignmentStrategy");
    }
    p.tags = TagsIn(in);
    return p;
  });
}

Result<JobQueueRecord> DecodeQueue(std::string_view key, std::string_view value) {
  return Decode("job queue", key, value, [](const Json& in) {
    JobQueueRecord q{.name = String(in, "jobQueueName"),
                     .arn = String(in, "jobQueueArn"),
                     .state = StateIn(in),
                     .status = String(in, "status"),
                     .status_reason = String(in, "statusReason"),
                     .priority = Integer<std::int32_t>(in, "priority"),
                     .type = String(in, "jobQueueType")};
    for (const Json& o : Array(in, "serviceEnvironmentOrder")) {
      q.environment_order.push_back(
          {Integer<std::int32_t>(o, "order"), String(o, "serviceEnvironment")});
    }
    if (q.environment_order.empty()) throw Corrupt("serviceEnvironmentOrder is empty");
    if (in.contains("schedulingPolicyArn")) {
      q.scheduling_policy_arn = String(in, "schedulingPolicyArn");
    }
    for (const Json& a : Array(in, "jobStateTimeLimitActions", true)) {
      if (String(a, "state") != "RUNNABLE" || String(a, "action") != "TERMINATE") {
        throw Corrupt("jobStateTimeLimitActions holds an entry other than RUNNABLE/TERMINATE");
      }
      q.time_limit_actions.push_back(
          {String(a, "reason"), Integer<std::int64_t>(a, "maxTimeSeconds")});
    }
    q.tags = TagsIn(in);
    return q;
  });
}

Result<QuotaShareRecord> DecodeShare(std::string_view key, std::string_view value) {
  return Decode("quota share", key, value, [](const Json& in) {
    QuotaShareRecord s{.name = String(in, "quotaShareName"),
                       .arn = String(in, "quotaShareArn"),
                       .job_queue_arn = String(in, "jobQueueArn")};
    const std::string marker = ":job-queue/";
    const std::size_t at = s.job_queue_arn.find(marker);
    if (at == std::string::npos) throw Corrupt("jobQueueArn names no job queue");
    s.queue = s.job_queue_arn.substr(at + marker.size());
    s.capacity_limits = LimitsIn(in);
    const Json& sharing = Object(in, "resourceSharingConfiguration");
    const std::string strategy = String(sharing, "strategy");
    std::optional<model::SharingStrategy> parsed = model::ParseSharingStrategy(strategy);
    if (!parsed) throw Corrupt("resourceSharingConfiguration.strategy is unknown: " + strategy);
    s.strategy = *parsed;
    if (sharing.contains("borrowLimit")) {
      s.borrow_limit = Integer<std::int64_t>(sharing, "borrowLimit");
    }
    s.in_share_preemption = StateIn(Object(in, "preemptionConfiguration"), "inSharePreemption") ==
                            model::State::kEnabled;
    s.state = StateIn(in);
    s.status = String(in, "status");
    s.tags = TagsIn(in);
    return s;
  });
}

}  // namespace allot::server
