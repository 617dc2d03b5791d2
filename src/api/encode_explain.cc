// ExplainResponse and WhatIfResponse as documents (api/explain_responses.h), with the keys
// docs/observability.md documents. That page defines `startBound` and `retriesLeft` as null
// when unknown or unlimited (allot explain reads `retriesLeft` without checking that it is
// there), so those two are written as null; the other optional parts are left out when unset
// or empty.

#include "api/encode_bodies.h"

namespace allot::api {

using Json = nlohmann::json;

namespace {

// Sets `key` to `text` when there is any.
void PutIfAny(Json& out, const char* key, const std::string& text) {
  if (!text.empty()) out[key] = text;
}

Json Ref(const JobReference& ref) {
  Json out = {{"share", ref.share}};
  if (ref.job_id) out["jobId"] = *ref.job_id;
  if (ref.job_name) out["jobName"] = *ref.job_name;
  return out;
}

Json Holder(const HolderDetail& h) {
  Json jobs = Json::array();
  for (const HolderJobDetail& hj : h.jobs) {
    Json j = {{"jobId", hj.job_id}, {"jobName", hj.job_name}, {"held", hj.held}};
    if (hj.ends_by) j["endsBy"] = *hj.ends_by;
    jobs.push_back(std::move(j));
  }
  Json out = {{"share", h.share},
              {"held", h.held},
              {"borrowed", h.borrowed},
              {"jobs", std::move(jobs)},
              {"moreJobs", h.more_jobs}};
  if (h.hidden_jobs > 0) out["hiddenJobs"] = h.hidden_jobs;
  return out;
}

Json Waiting(const WaitExplanation& w) {
  Json holders = Json::array();
  for (const HolderDetail& h : w.holders) holders.push_back(Holder(h));
  Json waiting_for = Json::array();
  for (const JobReference& ref : w.waiting_for) waiting_for.push_back(Ref(ref));
  Json out = {{"rule", model::ToString(w.rule)},
              {"unit", w.unit},
              {"needed", w.needed},
              {"available", w.available},
              {"missing", w.missing},
              {"holders", std::move(holders)},
              {"waitingFor", std::move(waiting_for)},
              {"positionInShare", w.position_in_share},
              {"positionInQueue", w.position_in_queue},
              {"startBound", w.start_bound ? Json(*w.start_bound) : Json()},
              {"wouldStart", w.would_start},
              {"message", w.message},
              {"share", w.share}};
  PutIfAny(out, "freeElsewhere", w.free_elsewhere);
  PutIfAny(out, "startUnknown", w.start_unknown);
  PutIfAny(out, "inSharePreemption", w.in_share_preemption);
  if (w.misconfiguration != model::Misconfiguration::kNone) {
    out["misconfiguration"] = model::MisconfigurationReason(w.misconfiguration);
  }
  return out;
}

Json RunnerUp(const RunnerUpExplanation& r) {
  Json out = Ref(r.job);
  out["rule"] = model::ToString(r.rule);
  out["victimKey"] = bodies::EncodeVictimKey(r.key);
  out["putBack"] = r.put_back;
  out["chosenOverBecause"] = r.chosen_over_because;
  return out;
}

Json Preempted(const PreemptionExplanation& p) {
  Json out = {{"attempt", p.attempt},
              {"at", p.at},
              {"preemptor", Ref(p.preemptor)},
              {"rule", model::ToString(p.rule)},
              {"victimKey", bodies::EncodeVictimKey(p.key)},
              {"stopping", p.stopping},
              {"workLostInstanceSeconds", bodies::InstanceSeconds(p.work_lost)},
              {"workLostFinal", p.work_lost_final},
              {"retriesLeft", p.retries_left ? Json(*p.retries_left) : Json()}};
  if (p.retries_before_termination) {
    out["preemptionRetriesBeforeTermination"] = *p.retries_before_termination;
  }
  if (p.runner_up) out["runnerUp"] = RunnerUp(*p.runner_up);
  return out;
}

const char* DecisionText(WhatIfDecision d) {
  switch (d) {
    case WhatIfDecision::kPreempt:
      return "preempt";
    case WhatIfDecision::kStart:
      return "start";
    case WhatIfDecision::kRunning:
      return "running";
    case WhatIfDecision::kWait:
      break;
  }
  return "wait";
}

Json Victim(const WhatIfVictim& v) {
  Json out = Ref(v.job);
  out["rule"] = model::ToString(v.rule);
  if (v.priority) out["priority"] = *v.priority;
  if (v.work_lost) out["workLostInstanceSeconds"] = bodies::InstanceSeconds(*v.work_lost);
  if (v.preemptor) out["preemptor"] = Ref(*v.preemptor);
  return out;
}

}  // namespace

namespace bodies {

Json Body(const ExplainResponse& r) {
  Json out = {{"jobId", r.job_id},
              {"jobName", r.job_name},
              {"status", model::ToString(r.status)},
              {"summary", r.summary}};
  if (r.waiting) out["waiting"] = Waiting(*r.waiting);
  if (r.preempted) out["preempted"] = Preempted(*r.preempted);
  return out;
}

Json Body(const WhatIfResponse& r) {
  Json victims = Json::array();
  for (const WhatIfVictim& v : r.victims) victims.push_back(Victim(v));
  Json out = {{"decision", DecisionText(r.decision)},
              {"summary", r.summary},
              {"victims", std::move(victims)}};
  if (r.starts) {
    Json starts = Json::array();
    for (const WhatIfStart& s : *r.starts) {
      Json entry = Ref(s.job);
      entry["mode"] = model::ToString(s.mode);
      starts.push_back(std::move(entry));
    }
    out["starts"] = std::move(starts);
  }
  if (r.explanation) out["explanation"] = Waiting(*r.explanation);
  return out;
}

}  // namespace bodies

}  // namespace allot::api
