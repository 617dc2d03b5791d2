// `allot submit`, `allot jobs`, `allot describe`, `allot priority`, `allot cancel`.

#include <algorithm>
#include <ctime>
#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/jobs.h"
#include "cli/usage.h"
#include "common/strings.h"

namespace allot::cli {

namespace {

// The first capacity unit of the queue's service environment.
std::string DefaultInstanceType(Client& client, const std::string& queue) {
  const Json q = client.Call("DescribeJobQueues", {{"jobQueues", Json::array({queue})}});
  if (q.value("jobQueues", Json::array()).empty()) {
    throw CliError("job queue " + queue + " does not exist");
  }
  const Json order = q["jobQueues"][0].value("serviceEnvironmentOrder", Json::array());
  if (order.empty()) throw CliError("job queue " + queue + " has no service environment");
  const std::string env = order[0].value("serviceEnvironment", "");
  const Json e =
      client.Call("DescribeServiceEnvironments", {{"serviceEnvironments", Json::array({env})}});
  for (const Json& se : e.value("serviceEnvironments", Json::array())) {
    for (const Json& l : se.value("capacityLimits", Json::array()))
      return l.value("capacityUnit", "");
  }
  throw CliError("service environment " + env + " of job queue " + queue +
                 " has no capacity limits; pass --instance-type");
}

// AWS accepts a job larger than its share or the pool can ever hold (it waits with a
// MISCONFIGURATION reason until the limits change); the submitter hears it at once, on stderr,
// so that the job id on stdout stays the only output a script reads.
void WarnIfItCanNeverFit(Client& client, const std::string& job_id) {
  const Json job = client.Call("DescribeServiceJob", {{"jobId", job_id}});
  const std::string reason = job.value("statusReason", "");
  if (reason.starts_with("MISCONFIGURATION:")) {
    std::cerr << "allot: warning: job " << job_id << " can never start with the "
              << "current limits: " << EscapeControls(reason) << '\n';
  }
}

void AddSubmit(CLI::App& app, Runner* run) {
  auto o = std::make_shared<SubmitOptions>();
  auto priority = std::make_shared<std::int64_t>(0);
  auto retries = std::make_shared<std::int64_t>(0);
  auto preemption_retries = std::make_shared<std::int64_t>(0);
  auto timeout = std::make_shared<std::int64_t>(0);
  CLI::App* sub = app.add_subcommand(
      "submit", "submit a job: allot submit --queue Q --share S -- command args...");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("--queue,-q", o->queue, "job queue")->required();
  sub->add_option("--share,-s", o->share, "quota share (required on queues with quota shares)");
  sub->add_option("--name,-n", o->name, "job name (default: the command's name)");
  CLI::Option* p =
      sub->add_option("--priority,-p", *priority, "scheduling priority 0-9999 (higher first)");
  sub->add_option("--instance-type,-t", o->instance_type,
                  "instance type (default: the first unit of the queue's service environment)");
  sub->add_option("--instance-count,-c", o->instance_count, "instances (hosts)")
      ->capture_default_str();
  sub->add_option("--env,-e", o->env, "environment variable KEY=VALUE (repeat for more)")
      ->allow_extra_args(false);
  sub->add_option("--hyperparameter,--hp", o->hyperparameters,
                  "training hyperparameter KEY=VALUE (repeat for more)")
      ->allow_extra_args(false);
  sub->add_option(
      "--checkpoint-uri", o->checkpoint_uri,
      "CheckpointConfig.S3Uri: file:///dir where checkpoints are synced after attempts");
  CLI::Option* r = sub->add_option("--retries", *retries, "retries of a failed attempt (0-9)");
  CLI::Option* pr = sub->add_option("--preemption-retries", *preemption_retries,
                                    "preemptions to survive before the job is terminated");
  CLI::Option* t = sub->add_option("--timeout", *timeout, "attempt duration limit in seconds");
  // The first argument that is not an option starts the command; everything from there on is
  // the command's, options included (main() drops the "--" that may come before it).
  sub->prefix_command();
  sub->footer(
      "The command and its arguments come last, after --: allot submit -q training -s team-a "
      "-- python train.py --epochs 3");
  sub->callback([=] {
    o->command = sub->remaining();
    if (p->count() > 0) o->priority = *priority;
    if (r->count() > 0) o->retries = *retries;
    if (pr->count() > 0) o->preemption_retries = *preemption_retries;
    if (t->count() > 0) o->timeout_seconds = *timeout;
    *run = [o, endpoint] {
      Client client(LoadClientConfig(*endpoint));
      SubmitOptions opts = *o;
      if (opts.instance_type.empty()) opts.instance_type = DefaultInstanceType(client, opts.queue);
      const Json ans = client.Call("SubmitServiceJob",
                                   BuildSubmitRequest(opts, JobNameFromCommand(opts.command)));
      std::cout << ans.value("jobId", "") << '\n';
      WarnIfItCanNeverFit(client, ans.value("jobId", ""));
      return 0;
    };
  });
}

struct JobsOptions {
  std::string queue, share, status;
  bool json = false;
};

// The statuses `allot jobs` asks for: every one, or the one --status names (any case).
std::vector<std::string> StatusesToList(const std::string& status) {
  if (status.empty()) return kJobStatuses;
  std::string s = AsciiUpper(status);
  if (std::find(kJobStatuses.begin(), kJobStatuses.end(), s) == kJobStatuses.end()) {
    throw CliError(
        "--status must be one of SUBMITTED, PENDING, RUNNABLE, SCHEDULED, "
        "STARTING, RUNNING, SUCCEEDED, FAILED; got \"" +
        status + "\"");
  }
  return {s};
}

// The job queues the caller may describe, by name.
std::vector<std::string> KnownQueues(Client& client) {
  std::vector<std::string> names;
  for (const Json& q : ListAll(client, "DescribeJobQueues", Json::object(), "jobQueues")) {
    names.push_back(q.value("jobQueueName", ""));
  }
  return names;
}

// A queue or share the command names must exist: listing nothing for a typo would read as "no
// jobs". The caller may also lack the right to describe it; the message says both.
void RequireKnown(const std::string& what, const std::string& name,
                  const std::vector<std::string>& known) {
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string message = what + " \"" + name + "\" does not exist (or you may not describe it)";
  if (const std::string hint = DidYouMean(name, known); !hint.empty()) {
    message += "; did you mean \"" + hint + "\"?";
  }
  throw CliError(message);
}

// (queue, job summary) for each job of the chosen queues in `statuses`, newest first.
std::vector<std::pair<std::string, Json>> ListJobs(Client& client, const JobsOptions& o,
                                                   const std::vector<std::string>& statuses) {
  std::vector<std::string> queues = KnownQueues(client);
  if (!o.queue.empty()) {
    RequireKnown("job queue", o.queue, queues);
    queues = {o.queue};
  }
  if (!o.share.empty()) {
    std::vector<std::string> shares;
    for (const std::string& q : queues) {
      for (const Json& s : ListAll(client, "ListQuotaShares", {{"jobQueue", q}}, "quotaShares")) {
        shares.push_back(s.value("quotaShareName", ""));
      }
    }
    RequireKnown(o.queue.empty() ? "quota share" : "quota share of job queue " + o.queue, o.share,
                 shares);
  }
  std::vector<std::pair<std::string, Json>> jobs;  // queue, summary
  for (const std::string& q : queues) {
    for (const std::string& s : statuses) {
      Json req = {{"jobQueue", q}, {"jobStatus", s}, {"maxResults", 100}};
      if (!o.share.empty()) {
        req["filters"] =
            Json::array({{{"name", "QUOTA_SHARE_NAME"}, {"values", Json::array({o.share})}}});
      }
      for (Json& j : ListAll(client, "ListServiceJobs", req, "jobSummaryList")) {
        jobs.emplace_back(q, std::move(j));
      }
    }
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
    return a.second.value("createdAt", std::int64_t{0}) >
           b.second.value("createdAt", std::int64_t{0});
  });
  return jobs;
}

// One row a job; the QUEUE column when every queue is listed, PRIORITY when any job has one.
void PrintJobsTable(const std::vector<std::pair<std::string, Json>>& jobs, bool show_queue) {
  const bool show_priority = std::any_of(jobs.begin(), jobs.end(), [](const auto& j) {
    return j.second.contains("schedulingPriority");
  });
  std::vector<std::string> header = {"ID", "NAME"};
  if (show_queue) header.push_back("QUEUE");
  for (const char* h : {"SHARE", "STATUS"}) header.push_back(h);
  if (show_priority) header.push_back("PRIORITY");
  for (const char* h : {"CREATED", "REASON"}) header.push_back(h);
  Table table(header);
  for (const auto& [q, j] : jobs) {
    std::vector<std::string> row = {j.value("jobId", ""), j.value("jobName", "")};
    if (show_queue) row.push_back(q);
    row.push_back(j.value("quotaShareName", "-"));
    row.push_back(j.value("status", ""));
    if (show_priority) row.push_back(FormatNumber(j.value("schedulingPriority", Json())));
    row.push_back(FormatTime(j.value("createdAt", Json())));
    row.push_back(j.value("statusReason", ""));
    table.Add(row);
  }
  if (table.empty()) {
    std::cout << "no jobs\n";
  } else {
    table.Print(std::cout);
  }
}

void AddJobs(CLI::App& app, Runner* run) {
  auto o = std::make_shared<JobsOptions>();
  CLI::App* sub = app.add_subcommand("jobs", "list jobs (every status unless --status)");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("--queue,-q", o->queue, "job queue (default: every queue)");
  sub->add_option("--share,-s", o->share, "only this quota share");
  sub->add_option("--status", o->status, "only this status (SUBMITTED ... SUCCEEDED, FAILED)");
  sub->add_flag("--json", o->json, "print the job summaries as JSON");
  sub->callback([o, endpoint, run] {
    *run = [o, endpoint] {
      const std::vector<std::string> statuses = StatusesToList(o->status);
      Client client(LoadClientConfig(*endpoint));
      std::vector<std::pair<std::string, Json>> jobs = ListJobs(client, *o, statuses);
      if (o->json) {
        Json list = Json::array();
        for (auto& [q, j] : jobs) list.push_back(j);
        std::cout << list.dump(2) << '\n';
        return 0;
      }
      PrintJobsTable(jobs, o->queue.empty());
      return 0;
    };
  });
}

void AddDescribe(CLI::App& app, Runner* run) {
  struct Opts {
    std::string job;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* sub =
      app.add_subcommand("describe", "show one job: status, attempts, preemptions, why it waits");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("job", o->job, "job id or ARN")->required();
  sub->add_flag("--json", o->json, "print DescribeServiceJob's answer as JSON");
  sub->callback([o, endpoint, run] {
    *run = [o, endpoint] {
      Client client(LoadClientConfig(*endpoint));
      const Json job = client.Call("DescribeServiceJob", {{"jobId", o->job}});
      if (o->json) {
        std::cout << job.dump(2) << '\n';
      } else {
        PrintJob(job, std::cout);
      }
      return 0;
    };
  });
}

void AddPriority(CLI::App& app, Runner* run) {
  struct Opts {
    std::string job;
    std::int64_t priority = 0;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* sub =
      app.add_subcommand("priority", "change the scheduling priority of an unfinished job");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("job", o->job, "job id or ARN")->required();
  sub->add_option("priority", o->priority, "new scheduling priority (0-9999)")->required();
  sub->callback([o, endpoint, run] {
    *run = [o, endpoint] {
      Client client(LoadClientConfig(*endpoint));
      const Json ans =
          client.Call("UpdateServiceJob", {{"jobId", o->job}, {"schedulingPriority", o->priority}});
      std::cout << "job " << ans.value("jobId", o->job) << ": priority " << o->priority << '\n';
      return 0;
    };
  });
}

void AddCancel(CLI::App& app, Runner* run) {
  struct Opts {
    std::string job;
    std::string reason = "cancelled with allot cancel";
  };
  auto o = std::make_shared<Opts>();
  CLI::App* sub = app.add_subcommand("cancel", "terminate a job (TerminateServiceJob)");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("job", o->job, "job id or ARN")->required();
  sub->add_option("--reason,-r", o->reason, "reason recorded on the job")->capture_default_str();
  sub->callback([o, endpoint, run] {
    *run = [o, endpoint] {
      Client client(LoadClientConfig(*endpoint));
      client.Call("TerminateServiceJob", {{"jobId", o->job}, {"reason", o->reason}});
      std::cout << "job " << o->job << ": termination requested\n";
      return 0;
    };
  });
}

}  // namespace

std::vector<char*> PrepareArgv(int argc, char** argv) {
  std::vector<char*> out(argv, argv + argc);
  if (argc > 1 && std::string_view(argv[1]) == "submit") {
    for (std::size_t i = 2; i < out.size(); ++i) {
      if (std::string_view(out[i]) == "--") {
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  out.push_back(nullptr);
  return out;
}

void AddJobCommands(CLI::App& app, Runner* run) {
  AddSubmit(app, run);
  AddJobs(app, run);
  AddDescribe(app, run);
  AddPriority(app, run);
  AddCancel(app, run);
}

}  // namespace allot::cli
