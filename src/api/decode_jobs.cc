// The service-job actions' requests: submit, update, describe, list, terminate, and the queue
// snapshot.

#include <charconv>

#include "api/decoders.h"
#include "api/query.h"
#include "api/wire_error.h"
#include "common/strings.h"
#include "model/rules.h"

namespace allot::api::decoders {

namespace {

// retryStrategy, if the request has one (Describe shows it then).
std::optional<model::RetryStrategy> ReadRetry(const Json& r) {
  const Json* rs = OptionalObject(r, "retryStrategy");
  if (rs == nullptr) return std::nullopt;
  model::RetryStrategy retry;
  retry.attempts = static_cast<int>(
      RequireInt(*rs, "attempts", 1, model::rules::kMaxRetryAttempts, "retryStrategy.attempts"));
  if (const Json* rules = OptionalArray(*rs, "evaluateOnExit", "retryStrategy.evaluateOnExit")) {
    if (rules->size() > model::rules::kMaxEvaluateOnExit) {
      Refuse("retryStrategy.evaluateOnExit allows at most 5 entries, got " +
             std::to_string(rules->size()));
    }
    RequireObjects(*rules, "retryStrategy.evaluateOnExit");
    for (const Json& rule : *rules) {
      const std::string sent =
          OptionalString(rule, "action", "retryStrategy.evaluateOnExit.action").value_or("RETRY");
      const std::string action = AsciiLower(sent);  // AWS takes either case
      if (action != "retry" && action != "exit") {
        Refuse("retryStrategy.evaluateOnExit.action must be RETRY or EXIT, got " +
               Quoted(Json(sent)));
      }
      const std::string pattern =
          OptionalString(rule, "onStatusReason", "retryStrategy.evaluateOnExit.onStatusReason")
              .value_or("*");
      RequireLength(pattern, "retryStrategy.evaluateOnExit.onStatusReason", 0,
                    model::rules::kMaxOnStatusReason);
      retry.evaluate_on_exit.push_back(
          {action == "retry" ? model::RetryAction::kRetry : model::RetryAction::kExit, pattern});
    }
  }
  return retry;
}

// preemptionConfiguration and timeoutConfig.
void ReadJobLimits(const Json& r, SubmitServiceJobRequest& out) {
  if (const Json* pc = OptionalObject(r, "preemptionConfiguration")) {
    if (auto n = OptionalInt(*pc, "preemptionRetriesBeforeTermination", 0,
                             model::rules::kMaxPreemptionRetries,
                             "preemptionConfiguration.preemptionRetriesBeforeTermination")) {
      out.preemption_retries = static_cast<std::int32_t>(*n);
    }
  }
  if (const Json* tc = OptionalObject(r, "timeoutConfig")) {
    out.timeout_config_seconds =
        OptionalInt(*tc, "attemptDurationSeconds", 1, model::rules::kMaxAttemptDurationSeconds,
                    "timeoutConfig.attemptDurationSeconds");
  }
}

// The request's identity for clientToken: the request without the token.
std::string RequestHash(const Json& r) {
  Json copy = r;
  copy.erase("clientToken");
  return copy.dump();
}

// A whole number >= 0 written in decimal digits only, that fits its type.
template <typename T>
bool ParseWhole(std::string_view text, T* out) {
  if (text.empty() || text.size() > 20) return false;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && ptr == text.data() + text.size() && *out >= 0;
}

JobListFilters ReadFilters(const Json& r) {
  JobListFilters f;
  bool status_applies = true;
  if (const Json* filters = OptionalArray(r, "filters")) {
    if (filters->size() > 1) {
      Refuse("filters takes one filter at a time, got " + std::to_string(filters->size()));
    }
    RequireObjects(*filters, "filters");
    for (const Json& kv : *filters) {
      const std::string key = RequireEnum(kv, "name",
                                          {"JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT",
                                           "QUOTA_SHARE_NAME", "SHARE_IDENTIFIER"},
                                          "filters.name");
      const Json* values = OptionalArray(kv, "values", "filters.values");
      if (values == nullptr || values->size() != 1 || !(*values)[0].is_string()) {
        Refuse("filters.values must hold exactly one string for the " + key + " filter, got " +
               (values == nullptr ? std::string("none") : Quoted(*values)));
      }
      const std::string v = (*values)[0];
      if (key == "JOB_NAME") {
        f.name_prefix = !v.empty() && v.back() == '*';
        f.name = f.name_prefix ? v.substr(0, v.size() - 1) : v;
        status_applies = false;
      } else if (key == "QUOTA_SHARE_NAME") {
        f.share = v;
      } else if (key == "SHARE_IDENTIFIER") {
        f.share_identifier = v;
      } else {
        Timestamp t = 0;
        if (!ParseWhole(v, &t)) {
          Refuse("filters." + key + " must be a time in epoch milliseconds, got " +
                 Quoted(Json(v)));
        }
        (key == "BEFORE_CREATED_AT" ? f.before : f.after) = t;
        status_applies = false;
      }
    }
  }
  const auto status = OptionalEnum(r, "jobStatus",
                                   {"SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING",
                                    "RUNNING", "SUCCEEDED", "FAILED"});
  if (status_applies) {
    f.status = model::ParseJobStatus(status.value_or("RUNNING"));  // OptionalEnum checked it
  }
  return f;
}

// "createdAt.seq" of the last job a page examined; the next page starts below it.
std::optional<std::pair<Timestamp, model::JobId>> ReadListToken(const Json& r) {
  std::optional<std::string> token = OptionalString(r, "nextToken");
  if (!token) return std::nullopt;
  std::pair<Timestamp, model::JobId> key;
  const std::size_t dot = token->find('.');
  const std::string_view text = *token;
  if (dot == std::string::npos || !ParseWhole(text.substr(0, dot), &key.first) ||
      !ParseWhole(text.substr(dot + 1), &key.second)) {
    Refuse("nextToken " + Quoted(Json(*token)) + " was not returned by ListServiceJobs");
  }
  return key;
}

}  // namespace

SubmitServiceJobRequest SubmitServiceJob(const Json& r) {
  SubmitServiceJobRequest out;
  out.name = RequireString(r, "jobName");
  RefuseUnless(model::rules::CheckName(out.name, "jobName"));
  out.queue = ReadNameOrArn(r, "jobQueue", "job-queue");
  RequireEnum(r, "serviceJobType", {"SAGEMAKER_TRAINING"});
  if (OptionalString(r, "shareIdentifier")) {
    Refuse("shareIdentifier is for fair-share queues; job queue " + out.queue.name +
           " uses quotaShareName");
  }
  out.quota_share = OptionalString(r, "quotaShareName");
  if (out.quota_share) RefuseUnless(model::rules::CheckName(*out.quota_share, "quotaShareName"));
  out.client_token = OptionalString(r, "clientToken");
  if (out.client_token) {
    RequireLength(*out.client_token, "clientToken", 1, model::rules::kMaxClientTokenLength);
    out.request_hash = RequestHash(r);
  }
  out.priority = static_cast<std::int32_t>(
      OptionalInt(r, "schedulingPriority", 0, model::rules::kMaxSchedulingPriority).value_or(0));
  out.payload = RequireString(r, "serviceRequestPayload");
  out.parsed = ParsePayload(out.payload, out.name);
  out.retry = ReadRetry(r);
  ReadJobLimits(r, out);
  out.tags = ReadTagList(r);
  return out;
}

UpdateServiceJobRequest UpdateServiceJob(const Json& r) {
  UpdateServiceJobRequest out;
  out.job_id = RequireString(r, "jobId");
  out.priority = static_cast<std::int32_t>(
      RequireInt(r, "schedulingPriority", 0, model::rules::kMaxSchedulingPriority));
  return out;
}

DescribeServiceJobRequest DescribeServiceJob(const Json& r) { return {RequireString(r, "jobId")}; }

ListServiceJobsRequest ListServiceJobs(const Json& r) {
  ListServiceJobsRequest out;
  out.queue = ReadNameOrArn(r, "jobQueue", "job-queue");
  out.filters = ReadFilters(r);
  out.max_results = static_cast<std::size_t>(
      OptionalInt(r, "maxResults", 1, model::rules::kMaxPageSize).value_or(100));
  out.after_position = ReadListToken(r);
  return out;
}

TerminateServiceJobRequest TerminateServiceJob(const Json& r) {
  TerminateServiceJobRequest out;
  out.job_id = RequireString(r, "jobId");
  out.reason = RequireString(r, "reason");
  RequireLength(out.reason, "reason", 0, model::rules::kMaxTerminateReasonLength);
  return out;
}

GetJobQueueSnapshotRequest GetJobQueueSnapshot(const Json& r) {
  return {ReadNameOrArn(r, "jobQueue", "job-queue")};
}

}  // namespace allot::api::decoders
