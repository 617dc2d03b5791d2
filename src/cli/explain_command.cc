// `allot explain JOB` (GET /allot/v1/jobs/{id}/explain) and `allot whatif submit|priority|share`
// (POST /allot/v1/whatif): the server's answer as text, or as JSON with --json.

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/jobs.h"

namespace allot::cli {

namespace {

// The field as text, escaped (EscapeControls): names and reasons come from callers and jobs.
std::string Text(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  return EscapeControls(j[key].is_string() ? j[key].get<std::string>() : FormatNumber(j[key]));
}

// "name (id)", or "a job of share S" when the server hid who it is.
std::string Who(const Json& ref) {
  if (ref.contains("jobName")) {
    return Text(ref, "jobName") + " (" + Text(ref, "jobId") + ", share " + Text(ref, "share") + ")";
  }
  return "a job of share " + Text(ref, "share");
}

void PrintWaiting(const Json& w, std::ostream& out) {
  out << "Waiting:      rule " << Text(w, "rule");
  if (!Text(w, "unit").empty()) {
    out << ", unit " << Text(w, "unit") << ": needs " << Text(w, "needed") << ", "
        << Text(w, "available") << " available, " << Text(w, "missing") << " missing";
  }
  out << '\n';
  if (w.contains("freeElsewhere")) out << "  free elsewhere: " << Text(w, "freeElsewhere") << '\n';
  out << "  position: " << Text(w, "positionInShare") << " ahead in its share, "
      << Text(w, "positionInQueue") << " ahead in the queue\n";
  for (const Json& h : w.value("holders", Json::array())) {
    out << "  held by share " << Text(h, "share") << ": " << Text(h, "held") << " (borrowed "
        << Text(h, "borrowed") << ")\n";
    for (const Json& j : h.value("jobs", Json::array())) {
      out << "    " << Text(j, "jobName") << " (" << Text(j, "jobId") << ") holds "
          << Text(j, "held")
          << (j.contains("endsBy") ? ", ends by " + FormatTime(j["endsBy"]) : ", no time limit")
          << '\n';
    }
    if (h.value("hiddenJobs", 0) > 0) {
      out << "    and " << Text(h, "hiddenJobs") << " job(s) you may not describe\n";
    }
    if (h.value("moreJobs", 0) > 0) out << "    and " << Text(h, "moreJobs") << " more\n";
  }
  if (w.contains("startBound") && !w["startBound"].is_null()) {
    out << "  start by:   " << FormatTime(w["startBound"]) << " at the latest\n";
  } else if (w.contains("startUnknown")) {
    out << "  start:      unknown: " << Text(w, "startUnknown") << '\n';
  }
  if (w.contains("inSharePreemption")) {
    out << "  in-share preemption: " << Text(w, "inSharePreemption") << '\n';
  }
  if (!Text(w, "wouldStart").empty()) out << "  would start: " << Text(w, "wouldStart") << '\n';
}

void PrintPreempted(const Json& p, std::ostream& out) {
  const Json key = p.value("victimKey", Json::object());
  out << "Preempted:    attempt " << Text(p, "attempt") << " by "
      << Who(p.value("preemptor", Json::object())) << ", rule " << Text(p, "rule") << '\n';
  out << "  victim key: priority " << Text(key, "priority") << ", work lost "
      << Text(key, "workLostInstanceSeconds") << " instance-s\n";
  if (p.contains("runnerUp")) {
    const Json& r = p["runnerUp"];
    const Json rk = r.value("victimKey", Json::object());
    out << "  runner-up:  " << Who(r) << ", priority " << Text(rk, "priority") << ", work lost "
        << Text(rk, "workLostInstanceSeconds")
        << " instance-s; chosen over it: " << Text(r, "chosenOverBecause") << '\n';
  }
  out << "  work lost:  " << Text(p, "workLostInstanceSeconds") << " instance-s\n";
  out << "  retries left: "
      << (p["retriesLeft"].is_null() ? std::string("unlimited") : Text(p, "retriesLeft")) << '\n';
}

void AddExplain(CLI::App& app, Runner* run) {
  struct Opts {
    std::string job;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* sub = app.add_subcommand(
      "explain", "why a job waits (limit, holders, start bound) or why it was preempted");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("job", o->job, "job id")->required();
  sub->add_flag("--json", o->json, "print the server's answer as JSON");
  sub->callback([o, endpoint, run] {
    *run = [o, endpoint] {
      Client client(LoadClientConfig(*endpoint));
      const Json ans = client.Get("/allot/v1/jobs/" + o->job + "/explain", "");
      if (o->json) {
        std::cout << ans.dump(2) << '\n';
        return 0;
      }
      std::cout << Text(ans, "jobName") << " (" << Text(ans, "jobId")
                << "): " << Text(ans, "status") << '\n'
                << Text(ans, "summary") << '\n';
      if (ans.contains("preempted")) PrintPreempted(ans["preempted"], std::cout);
      if (ans.contains("waiting")) PrintWaiting(ans["waiting"], std::cout);
      return 0;
    };
  });
}

// Prints a what-if answer; the exit status is 0 whatever the decision.
int PrintWhatIf(const Json& ans, bool json) {
  if (json) {
    std::cout << ans.dump(2) << '\n';
    return 0;
  }
  std::cout << "decision: " << Text(ans, "decision") << '\n' << Text(ans, "summary") << '\n';
  for (const Json& v : ans.value("victims", Json::array())) {
    std::cout << "  victim " << Who(v) << ", " << Text(v, "rule");
    // Another team's victim comes without its work lost (the server hides it).
    if (v.contains("workLostInstanceSeconds")) {
      std::cout << ", " << Text(v, "workLostInstanceSeconds") << " instance-s lost";
    }
    std::cout << '\n';
  }
  for (const Json& s : ans.value("starts", Json::array())) {
    std::cout << "  starts " << Who(s) << ", " << Text(s, "mode") << '\n';
  }
  if (ans.contains("explanation")) PrintWaiting(ans["explanation"], std::cout);
  return 0;
}

void AddWhatIfSubmit(CLI::App* whatif, Runner* run) {
  auto so = std::make_shared<SubmitOptions>();
  auto priority = std::make_shared<std::int64_t>(0);
  auto json = std::make_shared<bool>(false);
  CLI::App* submit = whatif->add_subcommand("submit", "would a job submitted now start?");
  auto submit_endpoint = AddEndpointOption(submit);
  submit->add_option("--queue,-q", so->queue, "job queue")->required();
  submit->add_option("--share,-s", so->share, "quota share");
  submit->add_option("--name,-n", so->name, "job name")->capture_default_str();
  CLI::Option* p = submit->add_option("--priority,-p", *priority, "scheduling priority 0-9999");
  submit->add_option("--instance-type,-t", so->instance_type, "instance type")->required();
  submit->add_option("--instance-count,-c", so->instance_count, "instances")->capture_default_str();
  submit->add_flag("--json", *json, "print the server's answer as JSON");
  submit->callback([=] {
    if (p->count() > 0) so->priority = *priority;
    *run = [so, submit_endpoint, json] {
      Client client(LoadClientConfig(*submit_endpoint));
      SubmitOptions opts = *so;
      opts.command = {"true"};  // what it runs does not matter to the decision
      const Json body = {{"submit", BuildSubmitRequest(opts, "whatif")}};
      return PrintWhatIf(client.Send("POST", "/allot/v1/whatif", "", body.dump()), *json);
    };
  });
}

void AddWhatIfPriority(CLI::App* whatif, Runner* run) {
  struct PriorityOpts {
    std::string job;
    std::int64_t priority = 0;
    bool json = false;
  };
  auto po = std::make_shared<PriorityOpts>();
  CLI::App* prio = whatif->add_subcommand("priority", "what would a priority change do now?");
  auto prio_endpoint = AddEndpointOption(prio);
  prio->add_option("job", po->job, "job id")->required();
  prio->add_option("priority", po->priority, "new scheduling priority (0-9999)")->required();
  prio->add_flag("--json", po->json, "print the server's answer as JSON");
  prio->callback([po, prio_endpoint, run] {
    *run = [po, prio_endpoint] {
      Client client(LoadClientConfig(*prio_endpoint));
      const Json body = {
          {"updatePriority", {{"jobId", po->job}, {"schedulingPriority", po->priority}}}};
      return PrintWhatIf(client.Send("POST", "/allot/v1/whatif", "", body.dump()), po->json);
    };
  });
}

// The limits of --limit UNIT=N as capacityLimits.
Json ReadLimits(const std::vector<std::string>& pairs) {
  Json limits = Json::array();
  for (const std::string& kv : pairs) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw CliError("--limit takes UNIT=N, got \"" + kv + "\"");
    }
    std::int64_t n = 0;
    try {
      n = std::stoll(kv.substr(eq + 1));
    } catch (const std::exception&) {
      throw CliError("--limit takes UNIT=N with a whole number, got \"" + kv + "\"");
    }
    limits.push_back({{"capacityUnit", kv.substr(0, eq)}, {"maxCapacity", n}});
  }
  return limits;
}

void AddWhatIfShare(CLI::App* whatif, Runner* run) {
  struct ShareOpts {
    std::string queue, share;
    std::vector<std::string> limits;  // UNIT=N
    bool json = false;
  };
  auto sh = std::make_shared<ShareOpts>();
  CLI::App* share = whatif->add_subcommand("share", "what would new quota-share limits do now?");
  auto share_endpoint = AddEndpointOption(share);
  share->add_option("--queue,-q", sh->queue, "job queue")->required();
  share->add_option("--share,-s", sh->share, "quota share")->required();
  share->add_option("--limit,-l", sh->limits, "capacity limit UNIT=N (repeat for more)")
      ->required()
      ->allow_extra_args(false);
  share->add_flag("--json", sh->json, "print the server's answer as JSON");
  share->callback([sh, share_endpoint, run] {
    *run = [sh, share_endpoint] {
      Client client(LoadClientConfig(*share_endpoint));
      std::string arn;
      for (const Json& s :
           ListAll(client, "ListQuotaShares", {{"jobQueue", sh->queue}}, "quotaShares")) {
        if (s.value("quotaShareName", "") == sh->share) arn = s.value("quotaShareArn", "");
      }
      if (arn.empty()) {
        throw CliError("quota share " + sh->share + " does not exist in job queue " + sh->queue);
      }
      const Json body = {{"updateQuotaShare",
                          {{"quotaShareArn", arn}, {"capacityLimits", ReadLimits(sh->limits)}}}};
      return PrintWhatIf(client.Send("POST", "/allot/v1/whatif", "", body.dump()), sh->json);
    };
  });
}

}  // namespace

void AddExplainCommands(CLI::App& app, Runner* run) {
  AddExplain(app, run);
  CLI::App* whatif = app.add_subcommand(
      "whatif", "what the scheduler would decide now, without doing it: submit, priority, share");
  whatif->require_subcommand(1);
  AddWhatIfSubmit(whatif, run);
  AddWhatIfPriority(whatif, run);
  AddWhatIfShare(whatif, run);
}

}  // namespace allot::cli
