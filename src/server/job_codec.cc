#include "server/job_codec.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/wire_json.h"

namespace allot::server {

namespace {

using Json = nlohmann::json;

constexpr int kVersion = 2;

// Enums are stored by name, never by number, so reordering an enum cannot change a record.
template <typename E, int kCount>
E FromName(const Json& value) {
  const std::string name = value.get<std::string>();
  for (int i = 0; i < kCount; ++i) {
    if (model::ToString(static_cast<E>(i)) == name) return static_cast<E>(i);
  }
  throw std::runtime_error("unknown value " + name);
}

model::JobStatus StatusFrom(const Json& v) {
  const std::string name = v.get<std::string>();
  if (std::optional<model::JobStatus> s = model::ParseJobStatus(name)) return *s;
  throw std::runtime_error("unknown value " + name);
}
model::PreemptionRule RuleFrom(const Json& v) { return FromName<model::PreemptionRule, 3>(v); }
model::StopKind StopKindFrom(const Json& v) { return FromName<model::StopKind, 3>(v); }
model::DispatchMode ModeFrom(const Json& v) { return FromName<model::DispatchMode, 3>(v); }
model::RetryAction ActionFrom(const Json& v) {
  return v.get<std::string>() == "EXIT" ? model::RetryAction::kExit : model::RetryAction::kRetry;
}

// Sets `key` only when the value differs from its default, which keeps waiting jobs small.
template <typename T>
void PutIf(Json& out, const char* key, const T& value, const T& unset) {
  if (value != unset) out[key] = value;
}

template <typename T>
void ReadIf(const Json& in, const char* key, T* out) {
  if (auto it = in.find(key); it != in.end()) *out = it->get<T>();
}

Json EncodeRunnerUp(const RunnerUpRecord& r) {
  return {r.job.id,   r.job.name,  r.job.share,          model::ToString(r.rule),
          r.priority, r.work_lost, r.attempt_started_at, r.put_back};
}

RunnerUpRecord DecodeRunnerUp(const Json& a) {
  return {{a.at(0).get<std::string>(), a.at(1).get<std::string>(), a.at(2).get<std::string>()},
          RuleFrom(a.at(3)),
          a.at(4).get<std::int32_t>(),
          a.at(5).get<Duration>(),
          a.at(6).get<Timestamp>(),
          a.at(7).get<bool>()};
}

Json EncodeHistory(const JobHistory& h) {
  Json out = Json::object();
  if (!h.attempts.empty()) {
    Json& list = out["att"] = Json::array();
    for (const AttemptRecord& a : h.attempts) {
      Json entry = {a.resource_arn, a.started_at, a.stopped_at, a.status_reason, a.preempted};
      if (!a.enforced_limits.empty() || !a.executor_ref.empty()) entry.push_back(a.enforced_limits);
      if (!a.executor_ref.empty()) entry.push_back(a.executor_ref);
      list.push_back(std::move(entry));
    }
  }
  if (!h.preemptions.empty()) {
    Json& list = out["pre"] = Json::array();
    for (const PreemptionRecord& p : h.preemptions) {
      Json r = {{"attempt", p.attempt},
                {"by", p.preemptor},
                {"rule", model::ToString(p.rule)},
                {"prio", p.victim_priority},
                {"lostChosen", p.work_lost_when_chosen},
                {"started", p.attempt_started_at},
                {"at", p.at}};
      if (p.work_lost) r["lost"] = *p.work_lost;
      if (!p.preemptor_name.empty()) r["byName"] = p.preemptor_name;
      if (!p.preemptor_share.empty()) r["byShare"] = p.preemptor_share;
      if (p.runner_up) r["ru"] = EncodeRunnerUp(*p.runner_up);
      list.push_back(std::move(r));
    }
  }
  if (!h.caused.empty()) {
    Json& list = out["caused"] = Json::array();
    for (const CausedPreemption& c : h.caused) {
      Json victims = Json::array();
      for (const VictimRef& v : c.victims) {
        victims.push_back({v.job.id, v.job.name, v.job.share, v.attempt, model::ToString(v.rule),
                           v.work_lost_when_chosen});
      }
      list.push_back({{"at", c.at}, {"victims", std::move(victims)}});
    }
  }
  PutIf(out, "pcount", h.preempted_attempt_count, 0);
  if (!h.hosts.empty()) {
    Json& list = out["hosts"] = Json::array();
    for (const exec::HostProcess& p : h.hosts) {
      list.push_back({p.host, p.pid, p.start_time, p.child_pid, p.child_start_time});
    }
  }
  if (!h.slots.empty()) {
    Json& list = out["slots"] = Json::array();
    for (const SlotRecord& s : h.slots) list.push_back({s.unit, s.slot});
  }
  if (h.dispatch_mode) out["mode"] = model::ToString(*h.dispatch_mode);
  if (h.stopping) out["stopping"] = {model::ToString(h.stopping->kind), h.stopping->reason};
  if (h.stop_rule) out["stopRule"] = model::ToString(*h.stop_rule);
  PutIf(out, "fbytes", h.files_bytes, std::int64_t{-1});
  PutIf(out, "frm", h.files_removed_at, Timestamp{0});
  PutIf(out, "evicted", h.evicted, false);
  return out;
}

void DecodeHistory(const Json& in, JobHistory* h) {
  if (auto it = in.find("att"); it != in.end()) {
    for (const Json& a : *it) {
      h->attempts.push_back({a.at(0).get<std::string>(), a.at(1).get<Timestamp>(),
                             a.at(2).get<Timestamp>(), a.at(3).get<std::string>(),
                             a.at(4).get<bool>(),
                             a.size() > 5 ? a.at(5).get<std::string>() : std::string(),
                             a.size() > 6 ? a.at(6).get<std::string>() : std::string()});
    }
  }
  if (auto it = in.find("pre"); it != in.end()) {
    for (const Json& r : *it) {
      PreemptionRecord p;
      p.attempt = r.at("attempt").get<int>();
      p.preemptor = r.at("by").get<std::string>();
      p.rule = RuleFrom(r.at("rule"));
      p.victim_priority = r.at("prio").get<std::int32_t>();
      p.work_lost_when_chosen = r.at("lostChosen").get<Duration>();
      p.attempt_started_at = r.at("started").get<Timestamp>();
      p.at = r.at("at").get<Timestamp>();
      if (r.contains("lost")) p.work_lost = r["lost"].get<Duration>();
      ReadIf(r, "byName", &p.preemptor_name);
      ReadIf(r, "byShare", &p.preemptor_share);
      if (auto ru = r.find("ru"); ru != r.end()) p.runner_up = DecodeRunnerUp(*ru);
      h->preemptions.push_back(std::move(p));
    }
  }
  if (auto it = in.find("caused"); it != in.end()) {
    for (const Json& c : *it) {
      CausedPreemption caused;
      caused.at = c.at("at").get<Timestamp>();
      for (const Json& v : c.at("victims")) {
        caused.victims.push_back(
            {{v.at(0).get<std::string>(), v.at(1).get<std::string>(), v.at(2).get<std::string>()},
             v.at(3).get<int>(),
             RuleFrom(v.at(4)),
             v.at(5).get<Duration>()});
      }
      h->caused.push_back(std::move(caused));
    }
  }
  ReadIf(in, "pcount", &h->preempted_attempt_count);
  if (auto it = in.find("hosts"); it != in.end()) {
    for (const Json& p : *it) {
      h->hosts.push_back({p.at(0).get<std::string>(), p.at(1).get<pid_t>(),
                          p.at(2).get<std::uint64_t>(), p.at(3).get<pid_t>(),
                          p.at(4).get<std::uint64_t>()});
    }
  }
  if (auto it = in.find("slots"); it != in.end()) {
    for (const Json& s : *it) h->slots.push_back({s.at(0).get<std::string>(), s.at(1).get<int>()});
  }
  if (auto it = in.find("mode"); it != in.end()) h->dispatch_mode = ModeFrom(*it);
  if (auto it = in.find("stopping"); it != in.end()) {
    h->stopping = StopRecord{StopKindFrom(it->at(0)), it->at(1).get<std::string>()};
  }
  if (auto it = in.find("stopRule"); it != in.end()) h->stop_rule = RuleFrom(*it);
  ReadIf(in, "fbytes", &h->files_bytes);
  ReadIf(in, "frm", &h->files_removed_at);
  ReadIf(in, "evicted", &h->evicted);
}

DecodedJob DecodeCurrent(std::string_view key, const Json& in) {
  DecodedJob out;
  JobRecord& j = out.record;
  j.seq = in.at("seq").get<model::JobId>();
  j.id = std::string(key);  // the record's key
  j.name = in.at("name").get<std::string>();
  out.queue = in.at("queue").get<std::string>();
  ReadIf(in, "share", &out.share);
  ReadIf(in, "by", &out.submitted_by);
  ReadIf(in, "tjn", &j.MutableOptions().training_name);
  j.status = StatusFrom(in.at("status"));
  ReadIf(in, "term", &j.is_terminated);
  ReadIf(in, "prio", &j.priority);
  if (in.contains("pr")) j.MutableOptions().preemption_retries = in["pr"].get<std::int32_t>();
  if (in.contains("timeout")) j.attempt_timeout_seconds = in["timeout"].get<std::int64_t>();
  if (in.contains("tc")) j.MutableOptions().timeout_config_seconds = in["tc"].get<std::int64_t>();
  if (auto it = in.find("retry"); it != in.end()) {
    model::RetryStrategy& retry = j.MutableOptions().retry.emplace();
    retry.attempts = it->at("attempts").get<int>();
    for (const Json& e : it->at("eval")) {
      retry.evaluate_on_exit.push_back({ActionFrom(e.at(0)), e.at(1).get<std::string>()});
    }
  }
  for (const Json& d : in.at("demand")) {
    j.demand.push_back({d.at(0).get<std::string>(), d.at(1).get<std::int64_t>()});
  }
  if (auto it = in.find("tags"); it != in.end()) {
    for (const Json& t : *it) {
      j.MutableOptions().tags.emplace_back(t.at(0).get<std::string>(), t.at(1).get<std::string>());
    }
  }
  j.created_at = in.at("created").get<Timestamp>();
  ReadIf(in, "scheduled", &j.scheduled_at);
  ReadIf(in, "started", &j.started_at);
  ReadIf(in, "stopped", &j.stopped_at);
  ReadIf(in, "runnable", &j.runnable_since);
  ReadIf(in, "reason", &j.status_reason);
  ReadIf(in, "attempt", &j.attempt);
  ReadIf(in, "failed", &j.failed_attempts);
  ReadIf(in, "preempted", &j.preemptions);
  ReadIf(in, "ckpt", &j.last_checkpoint);
  if (auto it = in.find("hist"); it != in.end()) DecodeHistory(*it, &j.History());
  j.Compact();
  return out;
}

// --- records written before the typed records: a DescribeServiceJob document ---

Duration MillisFromSeconds(const Json& v) {
  return static_cast<Duration>(v.get<double>() * 1000.0 + (v.get<double>() >= 0 ? 0.5 : -0.5));
}

void DecodeLegacyHistory(const Json& doc, const Json& allot, JobRecord* j) {
  std::vector<Timestamp> preempted_starts;
  if (const auto it = doc.find("preemptionSummary"); it != doc.end()) {
    j->History().preempted_attempt_count = it->value("preemptedAttemptCount", 0);
    for (const Json& r : it->value("recentPreemptedAttempts", Json::array())) {
      preempted_starts.push_back(r.value("startedAt", Timestamp{0}));
    }
  }
  for (const Json& a : doc.value("attempts", Json::array())) {
    AttemptRecord r;
    r.resource_arn = a.at("serviceResourceId").at("value").get<std::string>();
    r.started_at = a.value("startedAt", Timestamp{0});
    r.stopped_at = a.value("stoppedAt", Timestamp{0});
    r.status_reason = a.value("statusReason", "");
    r.preempted = std::find(preempted_starts.begin(), preempted_starts.end(), r.started_at) !=
                  preempted_starts.end();
    j->History().attempts.push_back(std::move(r));
  }
  for (const Json& r : allot.value("preemptionRecords", Json::array())) {
    PreemptionRecord p;
    p.attempt = r.value("attempt", 0);
    p.preemptor = r.value("preemptor", "");
    p.rule = RuleFrom(r.at("rule"));
    const Json key = r.value("victimKey", Json::object());
    p.victim_priority = key.value("priority", 0);
    p.work_lost_when_chosen = MillisFromSeconds(key.value("workLostInstanceSeconds", Json(0.0)));
    p.attempt_started_at = key.value("attemptStartedAt", Timestamp{0});
    p.at = r.value("at", Timestamp{0});
    if (r.contains("workLostInstanceSeconds"))
      p.work_lost = MillisFromSeconds(r["workLostInstanceSeconds"]);
    j->History().preemptions.push_back(std::move(p));
  }
  for (const Json& h : allot.value("hosts", Json::array())) {
    j->History().hosts.push_back({h.value("host", ""), h.value("pid", 0),
                                  h.value("start_time", std::uint64_t{0}), h.value("child_pid", 0),
                                  h.value("child_start_time", std::uint64_t{0})});
  }
  for (const Json& s : allot.value("slots", Json::array())) {
    j->History().slots.push_back({s.at("unit").get<std::string>(), s.at("slot").get<int>()});
  }
  if (allot.contains("dispatchMode")) j->History().dispatch_mode = ModeFrom(allot["dispatchMode"]);
  if (allot.contains("stopping")) {
    j->History().stopping = StopRecord{StopKindFrom(allot["stopping"].at("kind")),
                                       allot["stopping"].value("reason", "")};
  }
  if (allot.contains("stopRule")) j->History().stop_rule = RuleFrom(allot["stopRule"]);
  j->Compact();
}

DecodedJob DecodeLegacy(const Json& doc) {
  DecodedJob out;
  JobRecord& j = out.record;
  const Json& allot = doc.at("allot");
  j.seq = allot.at("seq").get<model::JobId>();
  j.id = doc.at("jobId").get<std::string>();
  j.name = doc.at("jobName").get<std::string>();
  const std::string queue_arn = doc.at("jobQueue").get<std::string>();
  out.queue = queue_arn.substr(queue_arn.rfind('/') + 1);
  out.share = doc.value("quotaShareName", "");
  j.status = StatusFrom(doc.at("status"));
  j.is_terminated = doc.value("isTerminated", false);
  j.priority = doc.value("schedulingPriority", 0);
  if (doc.contains("preemptionConfiguration")) {
    j.MutableOptions().preemption_retries =
        doc["preemptionConfiguration"].at("preemptionRetriesBeforeTermination").get<std::int32_t>();
  }
  if (allot.contains("attemptTimeoutSeconds")) {
    j.attempt_timeout_seconds = allot["attemptTimeoutSeconds"].get<std::int64_t>();
  }
  if (doc.contains("timeoutConfig")) {
    j.MutableOptions().timeout_config_seconds =
        doc["timeoutConfig"].at("attemptDurationSeconds").get<std::int64_t>();
  }
  if (doc.contains("retryStrategy")) {
    model::RetryStrategy& retry = j.MutableOptions().retry.emplace();
    retry.attempts = doc["retryStrategy"].at("attempts").get<int>();
    for (const Json& e : doc["retryStrategy"].value("evaluateOnExit", Json::array())) {
      retry.evaluate_on_exit.push_back(
          {ActionFrom(e.at("action")), e.value("onStatusReason", "*")});
    }
  }
  for (const Json& u : doc.at("capacityUsage")) {
    j.demand.push_back({u.at("capacityUnit").get<std::string>(),
                        static_cast<std::int64_t>(u.at("quantity").get<double>())});
  }
  const Json tags = doc.value("tags", Json::object());  // items() would outlive a temporary
  for (const auto& [k, v] : tags.items()) {
    j.MutableOptions().tags.emplace_back(k, v.get<std::string>());
  }
  j.created_at = doc.at("createdAt").get<Timestamp>();
  j.scheduled_at = doc.value("scheduledAt", Timestamp{0});
  j.started_at = doc.value("startedAt", Timestamp{0});
  j.stopped_at = doc.value("stoppedAt", Timestamp{0});
  j.runnable_since = allot.value("runnableSince", Timestamp{0});
  j.status_reason = doc.value("statusReason", "");
  j.attempt = allot.value("attempt", 0);
  j.failed_attempts = allot.value("failedAttempts", 0);
  j.preemptions = allot.value("preemptions", 0);
  j.last_checkpoint = allot.value("lastCheckpoint", Timestamp{0});
  DecodeLegacyHistory(doc, allot, &j);
  j.Compact();
  return out;
}

}  // namespace

// Written field by field, keys in ascending order (JsonObjectWriter): it is on every
// submission's path, and building an nlohmann value to dump it cost as much as parsing the
// request. Only the rare parts (retry policy, tags, history) are built as values.
std::string EncodeJob(const JobRecord& j) {
  const JobOptions& o = j.options();
  api::JsonObjectWriter out;
  auto int_if = [&out](std::string_view key, std::int64_t value) {
    if (value != 0) out.Int(key, value);
  };
  auto string_if = [&out](std::string_view key, std::string_view value) {
    if (!value.empty()) out.String(key, value);
  };
  int_if("attempt", j.attempt);
  string_if("by", j.submitted_by);
  int_if("ckpt", j.last_checkpoint);
  out.Int("created", j.created_at);
  api::JsonArrayWriter demand;
  for (const model::UnitCount& u : j.demand) {
    api::JsonArrayWriter unit;
    unit.String(u.unit);
    unit.Int(u.count);
    demand.Encoded(unit.Finish());
  }
  out.Encoded("demand", demand.Finish());
  int_if("failed", j.failed_attempts);
  if (j.history && !j.history->empty())
    out.Encoded("hist", api::DumpWire(EncodeHistory(*j.history)));
  out.String("name", j.name);
  if (o.preemption_retries) out.Int("pr", *o.preemption_retries);
  int_if("preempted", j.preemptions);
  int_if("prio", j.priority);
  out.String("queue", j.queue);
  string_if("reason", j.status_reason);
  if (o.retry) {
    Json eval = Json::array();
    for (const model::EvaluateOnExit& e : o.retry->evaluate_on_exit) {
      eval.push_back(
          {e.action == model::RetryAction::kExit ? "EXIT" : "RETRY", e.on_status_reason});
    }
    out.Encoded("retry", api::DumpWire({{"attempts", o.retry->attempts}, {"eval", eval}}));
  }
  int_if("runnable", j.runnable_since);
  int_if("scheduled", j.scheduled_at);
  out.Int("seq", static_cast<std::int64_t>(j.seq));
  string_if("share", j.share);
  int_if("started", j.started_at);
  out.String("status", model::ToString(j.status));
  int_if("stopped", j.stopped_at);
  if (!o.tags.empty()) {
    Json tags = Json::array();
    for (const auto& [k, v] : o.tags) tags.push_back({k, v});
    out.Encoded("tags", api::DumpWire(tags));
  }
  if (o.timeout_config_seconds) out.Int("tc", *o.timeout_config_seconds);
  if (j.is_terminated) out.Bool("term", true);
  if (j.attempt_timeout_seconds) out.Int("timeout", *j.attempt_timeout_seconds);
  string_if("tjn", o.training_name);
  out.Int("v", kVersion);
  return out.Finish();
}

Result<DecodedJob> DecodeJob(std::string_view key, std::string_view value) {
  // A start reads every stored job: with the wire's parser (Boost's lexer building nlohmann's
  // value), not nlohmann's own, which took most of a start's CPU.
  Result<Json> parsed = api::ParseWireJson(value, "the record");
  if (!parsed.ok() || !parsed->is_object()) {
    return Internal("corrupt job record " + std::string(key) + " in the store: " +
                    (parsed.ok() ? "not a JSON object" : parsed.status().message()));
  }
  const Json& in = *parsed;
  if (auto v = in.find("v"); v != in.end() && !(v->is_number_integer() && *v <= kVersion)) {
    return Internal("job record " + std::string(key) + " was written by a newer Allot (version " +
                    v->dump() + "); this server reads up to version " + std::to_string(kVersion));
  }
  try {
    return in.contains("v") ? DecodeCurrent(key, in) : DecodeLegacy(in);
  } catch (const std::exception& e) {
    return Internal("corrupt job record " + std::string(key) + " in the store: " + e.what());
  }
}

std::string EncodeClientToken(const ClientTokenRecord& token) {
  return Json{{"jobId", token.job_id}, {"hash", token.request_hash}}.dump();
}

Result<ClientTokenRecord> DecodeClientToken(std::string_view key, std::string_view value) {
  const Json doc = Json::parse(value, nullptr, /*allow_exceptions=*/false);
  const auto job = doc.is_object() ? doc.find("jobId") : doc.end();
  const auto hash = doc.is_object() ? doc.find("hash") : doc.end();
  if (job == doc.end() || hash == doc.end() || !job->is_string() || !hash->is_string()) {
    return Internal("corrupt client token record " + std::string(key) +
                    " in the store: not {\"jobId\": string, \"hash\": string}");
  }
  return ClientTokenRecord{job->get<std::string>(), hash->get<std::string>()};
}

}  // namespace allot::server
