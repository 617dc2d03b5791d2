#pragma once

// The pieces of `allot audit` worth testing without a server: reading --since/--until, building
// the GET /allot/v1/audit query, and printing audit records.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/client.h"
#include "common/time.h"

namespace allot::cli {

// "30m", "1h", "7d", "90s", "2w" or a sum such as "1h30m" (units s, m, h, d, w); nullopt for
// anything else, including an empty text, a missing unit and a sum past about 290 million years.
std::optional<Duration> ParseRelativeDuration(std::string_view text);

// An RFC 3339 time, "2025-01-31T14:05:09Z", "2025-01-31T16:05:09.250+02:00" (fractions past the
// millisecond are dropped; 't', 'z' and a space for 'T' are accepted), or a bare date
// "2025-01-31" (midnight UTC); nullopt for anything else or an impossible date.
std::optional<Timestamp> ParseRfc3339(std::string_view text);

// The value of --since/--until: "now", a duration before `now` (ParseRelativeDuration) or a time
// (ParseRfc3339). Throws CliError naming `flag` and the forms it takes.
Timestamp ParseTimeFlag(std::string_view text, Timestamp now, std::string_view flag);

// What `allot audit` asks for; empty strings and nullopt leave a filter out.
struct AuditFilter {
  std::string user;      // principal=
  std::string resource;  // resource=: a job id or an ARN
  std::string action;    // action=, "batch:UpdateServiceJob"
  std::optional<Timestamp> since;
  std::optional<Timestamp> until;
};

// The encoded query of GET /allot/v1/audit for one page: the filter, maxResults and, when not
// empty, nextToken.
std::string AuditQuery(const AuditFilter& filter, int max_results, const std::string& next_token);

// "schedulingPriority 1→50, state ENABLED→DISABLED" from a record's
// {"field": {"old": v, "new": v}}; strings unquoted, a missing or null side as "-"; "" for none.
std::string FormatChanges(const Json& changes);

// The records as a table, one line each in the order given (the server's: newest first): time
// (UTC), user, source address, action, resource (an ARN shortened to its resource part),
// outcome and changes. "no audit records" when there are none.
void PrintAuditRecords(const Json& records, std::ostream& out);

}  // namespace allot::cli
