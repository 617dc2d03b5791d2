#include "cli/jobs.h"

#include <algorithm>
#include <cctype>

#include "cli/format.h"
#include "common/strings.h"

namespace allot::cli {

std::string LastPathPart(const std::string& arn) {
  const auto slash = arn.rfind('/');
  return slash == std::string::npos ? arn : arn.substr(slash + 1);
}

std::string JobNameFromCommand(const std::vector<std::string>& command) {
  std::string base = command.empty() ? "job" : LastPathPart(command[0]);
  std::string out;
  for (char c : base) {
    const auto u = static_cast<unsigned char>(c);
    out += (std::isalnum(u) != 0 || c == '-' || c == '_') ? c : '-';
  }
  if (out.empty()) out = "job";
  return out.substr(0, 100);
}

namespace {

// {"K": "V", ...} from KEY=VALUE arguments of `flag`.
Json KeyValues(const std::vector<std::string>& pairs, const char* flag) {
  Json out = Json::object();
  for (const std::string& kv : pairs) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw CliError(std::string(flag) + " takes KEY=VALUE, got \"" + kv + "\"");
    }
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

}  // namespace

Json BuildSubmitRequest(const SubmitOptions& o, const std::string& default_name) {
  if (o.command.empty()) throw CliError("no command: put it after --, e.g. -- python train.py");
  const std::string name = o.name.empty() ? default_name : o.name;
  Json algo = {{"ContainerEntrypoint", Json::array({o.command[0]})}, {"TrainingInputMode", "File"}};
  if (o.command.size() > 1) {
    algo["ContainerArguments"] =
        Json(std::vector<std::string>(o.command.begin() + 1, o.command.end()));
  }
  Json payload = {
      {"TrainingJobName", name},
      {"AlgorithmSpecification", algo},
      {"ResourceConfig", {{"InstanceType", o.instance_type}, {"InstanceCount", o.instance_count}}}};
  if (!o.env.empty()) payload["Environment"] = KeyValues(o.env, "--env");
  if (!o.hyperparameters.empty()) {
    payload["HyperParameters"] = KeyValues(o.hyperparameters, "--hyperparameter");
  }
  if (!o.checkpoint_uri.empty()) payload["CheckpointConfig"] = {{"S3Uri", o.checkpoint_uri}};
  Json req = {{"jobName", name},
              {"jobQueue", o.queue},
              {"serviceJobType", "SAGEMAKER_TRAINING"},
              {"serviceRequestPayload", payload.dump()}};
  if (!o.share.empty()) req["quotaShareName"] = o.share;
  if (o.priority) req["schedulingPriority"] = *o.priority;
  if (o.retries) req["retryStrategy"] = {{"attempts", *o.retries + 1}};
  if (o.preemption_retries) {
    req["preemptionConfiguration"] = {
        {"preemptionRetriesBeforeTermination", *o.preemption_retries}};
  }
  if (o.timeout_seconds) req["timeoutConfig"] = {{"attemptDurationSeconds", *o.timeout_seconds}};
  return req;
}

namespace {

// Every value is escaped (EscapeControls), the ones made from the payload's raw strings (the
// command, the environment) too: a tenant's or a job's text never drives the operator's terminal
// and never starts a line of its own.
void Line(std::ostream& out, const std::string& label, const std::string& value) {
  if (value.empty()) return;
  std::string padded = label + ":";
  padded.resize(std::max<std::size_t>(padded.size() + 1, 14), ' ');
  out << padded << EscapeControls(value) << '\n';
}

// The field as text, escaped: a statusReason holds what a job wrote to /opt/ml/output/failure or
// a caller gave TerminateServiceJob, and the lines printed without Line show it too.
std::string Str(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  return EscapeControls(j[key].is_string() ? j[key].get<std::string>() : FormatNumber(j[key]));
}

std::string Elapsed(const Json& from, const Json& to) {
  if (!from.is_number() || !to.is_number()) return "";
  return FormatDuration(to.get<std::int64_t>() - from.get<std::int64_t>());
}

std::string CommandOf(const Json& payload_text, std::string* env_line, std::string* resources) {
  if (!payload_text.is_string()) return "";
  const Json p = Json::parse(payload_text.get<std::string>(), nullptr, false);
  if (!p.is_object()) return "";
  std::vector<std::string> argv;
  const Json algo = p.value("AlgorithmSpecification", Json::object());
  for (const char* k : {"ContainerEntrypoint", "ContainerArguments"}) {
    for (const Json& a : algo.value(k, Json::array())) {
      if (a.is_string()) argv.push_back(a);
    }
  }
  const Json env = p.value("Environment", Json::object());
  for (const auto& [k, v] : env.items()) {
    *env_line += (env_line->empty() ? "" : " ") +
                 ShellQuote(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  }
  const Json rc = p.value("ResourceConfig", Json::object());
  if (rc.contains("InstanceType")) {
    *resources = Str(rc, "InstanceType") + " x " +
                 (rc.contains("InstanceCount") ? Str(rc, "InstanceCount") : "1");
  }
  return ShellJoin(argv);
}

// Who the job is, what it runs and its status.
void PrintIdentity(const Json& job, std::ostream& out) {
  Line(out, "Job", Str(job, "jobId"));
  Line(out, "Name", Str(job, "jobName"));
  Line(out, "ARN", Str(job, "jobArn"));
  Line(out, "Queue", LastPathPart(Str(job, "jobQueue")));
  Line(out, "Share", Str(job, "quotaShareName"));
  std::string status = Str(job, "status");
  if (job.value("isTerminated", false)) status += " (termination requested)";
  Line(out, "Status", status);
  Line(out, "Reason", Str(job, "statusReason"));
  Line(out, "Priority", Str(job, "schedulingPriority"));
  std::string env_line;
  std::string resources;
  Line(out, "Command",
       CommandOf(job.value("serviceRequestPayload", Json()), &env_line, &resources));
  Line(out, "Environment", env_line);
  Line(out, "Resources", resources);
}

// "  (ran 2m31s in 3 attempts: 23s, 1m03s, 1m05s)": the time its attempts ran, not the time
// from the first start to the end, which counts the waits between attempts too.
std::string RanText(const Json& job) {
  std::vector<std::string> each;
  std::int64_t total = 0;
  for (const Json& a : job.value("attempts", Json::array())) {
    const Json from = a.value("startedAt", Json());
    const Json to = a.value("stoppedAt", Json());
    if (!from.is_number_integer() || !to.is_number_integer()) continue;
    const std::int64_t ms =
        std::max<std::int64_t>(0, to.get<std::int64_t>() - from.get<std::int64_t>());
    total += ms;
    each.push_back(FormatDuration(ms));
  }
  if (each.empty()) {
    const std::string ran = Elapsed(job.value("startedAt", Json()), job["stoppedAt"]);
    return ran.empty() ? "" : "  (ran " + ran + ")";
  }
  if (each.size() == 1) return "  (ran " + each[0] + ")";
  return "  (ran " + FormatDuration(total) + " in " + std::to_string(each.size()) +
         " attempts: " + Join(each, ", ") + ")";
}

// Its capacity and when it was created, scheduled, started and stopped.
void PrintTimes(const Json& job, std::ostream& out) {
  Line(out, "Capacity", job.contains("capacityUsage") ? FormatCapacity(job["capacityUsage"]) : "");
  Line(out, "Created", FormatTime(job.value("createdAt", Json())));
  if (job.contains("scheduledAt")) Line(out, "Scheduled", FormatTime(job["scheduledAt"]));
  if (job.contains("startedAt")) Line(out, "Started", FormatTime(job["startedAt"]));
  if (job.contains("stoppedAt")) {
    Line(out, "Stopped", FormatTime(job["stoppedAt"]) + RanText(job));
  }
}

// Its retry strategy, attempt timeout and preemption retries.
void PrintLimits(const Json& job, const Json& allot, std::ostream& out) {
  if (job.contains("retryStrategy")) {
    const Json& rs = job["retryStrategy"];
    std::string s = Str(rs, "attempts") + " attempt(s)";
    for (const Json& rule : rs.value("evaluateOnExit", Json::array())) {
      s += "; " + Str(rule, "action") + " on \"" + Str(rule, "onStatusReason") + "\"";
    }
    Line(out, "Retry", s);
  }
  if (job.contains("timeoutConfig")) {
    Line(out, "Timeout", Str(job["timeoutConfig"], "attemptDurationSeconds") + "s per attempt");
  } else if (allot.contains("attemptTimeoutSeconds")) {
    Line(out, "Timeout", Str(allot, "attemptTimeoutSeconds") + "s per attempt");
  }
  if (job.contains("preemptionConfiguration")) {
    Line(out, "Preemption retries",
         Str(job["preemptionConfiguration"], "preemptionRetriesBeforeTermination") +
             " before termination");
  }
}

// Allot's counters, last checkpoint and, while it runs, its hosts.
void PrintProgress(const Json& job, const Json& allot, std::ostream& out) {
  std::string counters = "attempt " + Str(allot, "attempt") + ", failed attempts " +
                         Str(allot, "failedAttempts") + ", preemptions " +
                         Str(allot, "preemptions");
  if (allot.contains("dispatchMode")) counters += ", dispatched " + Str(allot, "dispatchMode");
  if (allot.contains("attempt")) Line(out, "Counters", counters);
  if (allot.contains("submittedBy")) Line(out, "Submitted by", Str(allot, "submittedBy"));
  if (allot.value("lastCheckpoint", 0) > 0) {
    Line(out, "Checkpoint", "last at " + FormatTime(allot["lastCheckpoint"]));
  }
  const std::string st = Str(job, "status");
  if (allot.contains("hosts") && (st == "SCHEDULED" || st == "STARTING" || st == "RUNNING")) {
    std::string hosts;
    for (const Json& h : allot["hosts"]) {
      hosts += (hosts.empty() ? "" : ", ") + Str(h, "host") + " (pid " + Str(h, "pid") + ")";
    }
    Line(out, "Hosts", hosts);
  }
}

// Why a waiting job waits: the rule, the unit it misses and the jobs ahead of it.
void PrintWaiting(const Json& w, std::ostream& out) {
  out << "Waiting:\n";
  out << "  " << Str(w, "message") << '\n';
  std::string detail = "rule " + Str(w, "rule");
  if (!Str(w, "unit").empty())
    detail += ", unit " + Str(w, "unit") + ", missing " + Str(w, "missing");
  detail += "; jobs ahead: " + Str(w, "positionInShare") + " in its share, " +
            Str(w, "positionInQueue") + " in the queue";
  out << "  " << detail << '\n';
}

void PrintAttempts(const Json& job, std::ostream& out) {
  const Json attempts = job.value("attempts", Json::array());
  out << "Attempts:     " << attempts.size() << '\n';
  int n = 0;
  for (const Json& a : attempts) {
    std::string line =
        "  #" + std::to_string(++n) + "  started " + FormatTime(a.value("startedAt", Json()));
    if (a.contains("stoppedAt")) {
      line += ", stopped " + FormatTime(a["stoppedAt"]) + " (" +
              Elapsed(a.value("startedAt", Json()), a["stoppedAt"]) + ")";
    } else {
      line += ", still running";
    }
    out << line << '\n';
    if (a.contains("statusReason")) out << "      " << Str(a, "statusReason") << '\n';
    if (a.contains("serviceResourceId")) {
      out << "      " << Str(a["serviceResourceId"], "name") << " "
          << Str(a["serviceResourceId"], "value") << '\n';
    }
    // What the sandbox enforced on it (Allot's record; "unsandboxed" without the sandbox).
    for (const Json& l : job.value("allot", Json::object()).value("attemptLimits", Json::array())) {
      if (l.value("attempt", 0) == n) out << "      limits: " << Str(l, "enforcedLimits") << '\n';
    }
  }
}

// The preemption summary and, from Allot, each preemption record.
void PrintPreemptions(const Json& job, const Json& allot, std::ostream& out) {
  const Json summary = job.value("preemptionSummary", Json::object());
  out << "Preempted:    "
      << (summary.contains("preemptedAttemptCount") ? Str(summary, "preemptedAttemptCount") : "0")
      << " attempt(s)\n";
  for (const Json& p : summary.value("recentPreemptedAttempts", Json::array())) {
    out << "  " << FormatTime(p.value("startedAt", Json())) << " .. "
        << FormatTime(p.value("stoppedAt", Json())) << "  " << Str(p, "statusReason") << '\n';
  }
  const Json records = allot.value("preemptionRecords", Json::array());
  if (!records.empty()) {
    out << "Preemption records:\n";
    for (const Json& r : records) {
      const Json key = r.value("victimKey", Json::object());
      std::string line = "  " + FormatTime(r.value("at", Json())) + "  attempt " +
                         Str(r, "attempt") + " preempted by job " + Str(r, "preemptor") + " (" +
                         Str(r, "rule") + ")";
      line += ": victim priority " + Str(key, "priority") + ", work lost " +
              (r.contains("workLostInstanceSeconds") ? Str(r, "workLostInstanceSeconds")
                                                     : Str(key, "workLostInstanceSeconds")) +
              " instance-s";
      out << line << '\n';
    }
  }
}

}  // namespace

void PrintJob(const Json& job, std::ostream& out) {
  const Json allot = job.value("allot", Json::object());
  PrintIdentity(job, out);
  PrintTimes(job, out);
  PrintLimits(job, allot, out);
  PrintProgress(job, allot, out);
  if (allot.contains("waitingReason")) PrintWaiting(allot["waitingReason"], out);
  PrintAttempts(job, out);
  PrintPreemptions(job, allot, out);
}

}  // namespace allot::cli
