#include "model/job.h"

namespace allot::model {

std::string_view ToString(JobStatus s) {
  switch (s) {
    case JobStatus::kSubmitted:
      return "SUBMITTED";
    case JobStatus::kPending:
      return "PENDING";
    case JobStatus::kRunnable:
      return "RUNNABLE";
    case JobStatus::kScheduled:
      return "SCHEDULED";
    case JobStatus::kStarting:
      return "STARTING";
    case JobStatus::kRunning:
      return "RUNNING";
    case JobStatus::kSucceeded:
      return "SUCCEEDED";
    case JobStatus::kFailed:
      return "FAILED";
  }
  return "UNKNOWN";
}

std::optional<JobStatus> ParseJobStatus(std::string_view s) {
  for (JobStatus status :
       {JobStatus::kSubmitted, JobStatus::kPending, JobStatus::kRunnable, JobStatus::kScheduled,
        JobStatus::kStarting, JobStatus::kRunning, JobStatus::kSucceeded, JobStatus::kFailed}) {
    if (ToString(status) == s) return status;
  }
  return std::nullopt;
}

bool IsTerminal(JobStatus s) { return s == JobStatus::kSucceeded || s == JobStatus::kFailed; }

bool IsDispatched(JobStatus s) {
  return s == JobStatus::kScheduled || s == JobStatus::kStarting || s == JobStatus::kRunning;
}

}  // namespace allot::model
