// `allot audit [--job ID] [--user NAME] [--action ACTION] [--since T] [--until T] [--max N]
// [--json]`: the server's audit records, newest first, from GET /allot/v1/audit.

#include <algorithm>
#include <iostream>

#include "cli/audit.h"
#include "cli/commands.h"

namespace allot::cli {

namespace {

// Records asked for per page: the server's usual list page.
constexpr int kAuditPage = 100;

struct AuditArgs {
  std::string job;
  std::string user;
  std::string action;
  std::string since;
  std::string until;
  int max = 100;
  bool json = false;
};

AuditFilter FilterFrom(const AuditArgs& a, Timestamp now) {
  AuditFilter f{.user = a.user, .resource = a.job, .action = a.action};
  if (!a.since.empty()) f.since = ParseTimeFlag(a.since, now, "--since");
  if (!a.until.empty()) f.until = ParseTimeFlag(a.until, now, "--until");
  if (f.since && f.until && *f.since > *f.until) {
    throw CliError("--since " + a.since + " is after --until " + a.until);
  }
  return f;
}

// Up to `max` records, following nextToken.
Json FetchRecords(Client& client, const AuditFilter& filter, int max) {
  Json records = Json::array();
  std::string token;
  do {
    const int want = std::min(kAuditPage, max - static_cast<int>(records.size()));
    const Json page = client.Get("/allot/v1/audit", AuditQuery(filter, want, token));
    for (const Json& r : page.value("records", Json::array())) {
      if (static_cast<int>(records.size()) < max) records.push_back(r);
    }
    const Json next = page.value("nextToken", Json());
    token = next.is_string() ? next.get<std::string>() : "";
  } while (!token.empty() && static_cast<int>(records.size()) < max);
  return records;
}

int RunAudit(const AuditArgs& a, const std::string& endpoint) {
  const AuditFilter filter = FilterFrom(a, WallClockMillis());
  Client client(LoadClientConfig(endpoint));
  const Json records = FetchRecords(client, filter, a.max);
  if (a.json) {
    std::cout << records.dump(2) << '\n';
  } else {
    PrintAuditRecords(records, std::cout);
  }
  return 0;
}

}  // namespace

void AddAuditCommand(CLI::App& app, Runner* run) {
  auto args = std::make_shared<AuditArgs>();
  CLI::App* sub = app.add_subcommand(
      "audit", "print the server's audit records, newest first: who did what, from where");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("--job", args->job, "only records about this job (id or ARN)");
  sub->add_option("--user", args->user, "only records of this user");
  sub->add_option("--action", args->action, "only this action, e.g. batch:UpdateServiceJob");
  sub->add_option("--since", args->since,
                  "only records from this time on: 30m, 1h, 7d (that long ago) or an RFC 3339 "
                  "time such as 2025-01-31T14:05:09Z");
  sub->add_option("--until", args->until, "only records up to this time (same forms as --since)");
  sub->add_option("--max", args->max, "print at most this many records")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "print the records as a JSON array");
  sub->callback(
      [run, args, endpoint] { *run = [args, endpoint] { return RunAudit(*args, *endpoint); }; });
}

}  // namespace allot::cli
