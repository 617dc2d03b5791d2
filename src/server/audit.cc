#include "server/audit.h"

#include <utility>

#include "api/wire_json.h"
#include "common/strings.h"
#include "server/json.h"

namespace allot::server {

namespace {

constexpr int kAuditRecordVersion = 1;

// "batch:SubmitServiceJob" matches "SubmitServiceJob" and "batch:submitservicejob".
bool ActionMatches(std::string_view wanted, std::string_view action) {
  if (EqualsIgnoreCase(wanted, action)) return true;
  const std::size_t colon = action.find(':');
  return wanted.find(':') == std::string_view::npos && colon != std::string_view::npos &&
         EqualsIgnoreCase(wanted, action.substr(colon + 1));
}

}  // namespace

std::string AuditKey(std::uint64_t seq) { return ZeroPadded(seq, 20); }

// Written field by field (one record per mutating call, so it is on every submission's path),
// byte for byte what dumping the same JSON object writes (api::JsonObjectWriter).
std::string EncodeAudit(const AuditRecord& r) {
  api::JsonObjectWriter out;
  out.String("a", r.action);
  if (!r.changes.empty()) {
    api::JsonArrayWriter changes;
    for (const AuditChange& c : r.changes) {
      api::JsonArrayWriter change;
      change.String(c.field);
      change.String(c.old_value);
      change.String(c.new_value);
      changes.Encoded(change.Finish());
    }
    out.Encoded("c", changes.Finish());
  }
  out.String("id", r.request_id);
  out.String("o", r.outcome);
  out.String("p", r.principal);
  out.String("r", r.resource);
  out.String("src", r.source);
  out.Int("t", r.time);
  out.String("u", r.user);
  out.Int("v", kAuditRecordVersion);
  return out.Finish();
}

Result<AuditRecord> DecodeAudit(const std::string& key, const std::string& stored) {
  try {
    const Json doc = Json::parse(stored);
    if (doc.value("v", 0) != kAuditRecordVersion) {
      return Internal("audit record " + key + " has a version this server does not know");
    }
    AuditRecord r;
    r.seq = std::stoull(key);
    r.time = doc.at("t").get<Timestamp>();
    r.user = doc.at("u").get<std::string>();
    r.principal = doc.at("p").get<std::string>();
    r.source = doc.at("src").get<std::string>();
    r.action = doc.at("a").get<std::string>();
    r.resource = doc.at("r").get<std::string>();
    r.outcome = doc.at("o").get<std::string>();
    r.request_id = doc.at("id").get<std::string>();
    if (auto it = doc.find("c"); it != doc.end()) {
      for (const Json& c : *it) {
        r.changes.push_back(
            {c.at(0).get<std::string>(), c.at(1).get<std::string>(), c.at(2).get<std::string>()});
      }
    }
    return r;
  } catch (const std::exception& e) {
    return Internal("audit record " + key + " is not readable: " + e.what());
  }
}

api::AuditRecordDetail DescribeAudit(const AuditRecord& r) {
  api::AuditRecordDetail out{r.time,     r.user,    r.principal,  r.source, r.action,
                             r.resource, r.outcome, r.request_id, {}};
  for (const AuditChange& c : r.changes) {
    out.changes.push_back({c.field, c.old_value, c.new_value});
  }
  return out;
}

namespace {

thread_local int t_defer_depth = 0;
thread_local Durable t_refusal_write;

}  // namespace

DeferRefusalWrite::DeferRefusalWrite() {
  if (t_defer_depth++ == 0) t_refusal_write = {};
}

DeferRefusalWrite::~DeferRefusalWrite() {
  // A write nobody took is waited for here: a refusal never answers before its record is stored.
  if (--t_defer_depth == 0 && t_refusal_write.valid()) TakeRefusalWrite().wait();
}

Durable TakeRefusalWrite() { return std::exchange(t_refusal_write, {}); }

void AwaitRefusalWrite(Durable written) {
  if (!written.valid()) return;
  if (t_defer_depth > 0) {
    t_refusal_write = std::move(written);
  } else {
    written.wait();
  }
}

bool AuditMatches(const api::AuditRequest& q, const AuditRecord& r) {
  if (r.time < q.since || r.time >= q.until) return false;
  if (!q.principal.empty() && q.principal != r.user && q.principal != r.principal) return false;
  if (!q.action.empty() && !ActionMatches(q.action, r.action)) return false;
  const std::string& resource = q.resource;
  if (!resource.empty() && resource != r.resource &&
      !(r.resource.size() > resource.size() && r.resource.ends_with(resource) &&
        r.resource[r.resource.size() - resource.size() - 1] == '/')) {
    return false;
  }
  return true;
}

}  // namespace allot::server
