// The explain and what-if answers as docs/observability.md documents them (api/encode.h): each
// key, what is null and what is left out, and work lost written in instance-seconds.
// tests/integration/test_explain.py checks the same documents through the server.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "api/encode.h"

namespace allot::api {
namespace {

using Json = nlohmann::json;

JobReference Named(std::string share, std::string id, std::string name) {
  return {std::move(share), std::move(id), std::move(name)};
}

WaitExplanation FullWait() {
  WaitExplanation w{.rule = model::WaitRule::kBorrowLimit,
                    .unit = "ml.g5.xlarge",
                    .needed = 2,
                    .available = 1,
                    .missing = 1,
                    .position_in_share = 3,
                    .position_in_queue = 4,
                    .start_bound = 1'700'000'000'000,
                    .would_start = "w",
                    .message = "m",
                    .share = "team-a",
                    .free_elsewhere = "1 free in share b's RESERVE",
                    .start_unknown = "u",
                    .in_share_preemption = "off",
                    .misconfiguration = model::Misconfiguration::kShareLimit};
  w.holders.push_back({.share = "team-b",
                       .held = 5,
                       .borrowed = 2,
                       .jobs = {{"j1", "one", 1, 1'700'000'600'000}, {"j2", "two", 2, {}}},
                       .more_jobs = 6,
                       .hidden_jobs = 7});
  w.waiting_for = {Named("team-c", "j3", "three"), {.share = "team-d"}};
  return w;
}

Json FullWaitJson() {
  return {
      {"rule", "BORROW_LIMIT"},
      {"unit", "ml.g5.xlarge"},
      {"needed", 2},
      {"available", 1},
      {"missing", 1},
      {"holders",
       {{{"share", "team-b"},
         {"held", 5},
         {"borrowed", 2},
         {"jobs",
          {{{"jobId", "j1"}, {"jobName", "one"}, {"held", 1}, {"endsBy", 1'700'000'600'000}},
           {{"jobId", "j2"}, {"jobName", "two"}, {"held", 2}}}},
         {"moreJobs", 6},
         {"hiddenJobs", 7}}}},
      {"waitingFor",
       {{{"share", "team-c"}, {"jobId", "j3"}, {"jobName", "three"}}, {{"share", "team-d"}}}},
      {"positionInShare", 3},
      {"positionInQueue", 4},
      {"startBound", 1'700'000'000'000},
      {"wouldStart", "w"},
      {"message", "m"},
      {"share", "team-a"},
      {"freeElsewhere", "1 free in share b's RESERVE"},
      {"startUnknown", "u"},
      {"inSharePreemption", "off"},
      {"misconfiguration", model::MisconfigurationReason(model::Misconfiguration::kShareLimit)}};
}

TEST(EncodeExplain, AJobNeitherWaitingNorPreemptedHasItsSummaryOnly) {
  const ExplainResponse r{.job_id = "id-1",
                          .job_name = "train",
                          .status = model::JobStatus::kRunning,
                          .summary = "The job is RUNNING."};
  EXPECT_EQ(EncodeResponse(r), (Json{{"jobId", "id-1"},
                                     {"jobName", "train"},
                                     {"status", "RUNNING"},
                                     {"summary", "The job is RUNNING."}}));
}

TEST(EncodeExplain, WaitingCarriesEveryFieldThatIsSet) {
  const ExplainResponse r{.job_id = "id-1",
                          .job_name = "train",
                          .status = model::JobStatus::kRunnable,
                          .waiting = FullWait(),
                          .summary = "s"};
  const Json doc = EncodeResponse(r);
  EXPECT_EQ(doc["waiting"], FullWaitJson());
  EXPECT_TRUE(doc["waiting"]["startBound"].is_number_integer());
  EXPECT_FALSE(doc.contains("preempted"));
}

TEST(EncodeExplain, WaitingLeavesOutWhatIsEmptyButStartBoundIsNull) {
  WaitExplanation w = FullWait();
  w.start_bound.reset();
  w.free_elsewhere.clear();
  w.start_unknown.clear();
  w.in_share_preemption.clear();
  w.misconfiguration = model::Misconfiguration::kNone;
  w.holders[0].hidden_jobs = 0;
  const Json doc = EncodeResponse(ExplainResponse{.waiting = w})["waiting"];
  ASSERT_TRUE(doc.contains("startBound"));
  EXPECT_TRUE(doc["startBound"].is_null());
  for (const char* key :
       {"freeElsewhere", "startUnknown", "inSharePreemption", "misconfiguration"}) {
    EXPECT_FALSE(doc.contains(key)) << key;
  }
  EXPECT_FALSE(doc["holders"][0].contains("hiddenJobs"));
  Json want = FullWaitJson();
  for (const char* key :
       {"freeElsewhere", "startUnknown", "inSharePreemption", "misconfiguration"}) {
    want.erase(key);
  }
  want["startBound"] = nullptr;
  want["holders"][0].erase("hiddenJobs");
  EXPECT_EQ(doc, want);
}

TEST(EncodeExplain, EmptyWaitingStillHasItsListsAndNullStartBound) {
  const Json doc = EncodeResponse(ExplainResponse{.waiting = WaitExplanation{}})["waiting"];
  EXPECT_EQ(doc, (Json{{"rule", "NOT_WAITING"},
                       {"unit", ""},
                       {"needed", 0},
                       {"available", 0},
                       {"missing", 0},
                       {"holders", Json::array()},
                       {"waitingFor", Json::array()},
                       {"positionInShare", 0},
                       {"positionInQueue", 0},
                       {"startBound", nullptr},
                       {"wouldStart", ""},
                       {"message", ""},
                       {"share", ""}}));
}

PreemptionExplanation LimitedPreemption() {
  return {.attempt = 2,
          .at = 1'700'000'100'000,
          .preemptor = Named("team-b", "id-p", "pre"),
          .rule = model::PreemptionRule::kReclaim,
          .key = {.priority = 3, .work_lost = 1'500, .attempt_started_at = 1'700'000'000'000},
          .stopping = true,
          .work_lost = 2'250,
          .work_lost_final = false,
          .retries_before_termination = 3,
          .retries_left = 1,
          .runner_up = RunnerUpExplanation{
              .job = {.share = "team-c"},
              .rule = model::PreemptionRule::kInShare,
              .key = {.priority = 5, .work_lost = 10, .attempt_started_at = 1'700'000'050'000},
              .put_back = true,
              .chosen_over_because = "lower priority (3 < 5)"}};
}

TEST(EncodeExplain, PreemptedWritesWorkLostInInstanceSeconds) {
  const Json doc = EncodeResponse(ExplainResponse{.preempted = LimitedPreemption()})["preempted"];
  EXPECT_EQ(doc, (Json{{"attempt", 2},
                       {"at", 1'700'000'100'000},
                       {"preemptor", {{"share", "team-b"}, {"jobId", "id-p"}, {"jobName", "pre"}}},
                       {"rule", "RECLAIM"},
                       {"victimKey",
                        {{"priority", 3},
                         {"workLostInstanceSeconds", 1.5},
                         {"attemptStartedAt", 1'700'000'000'000}}},
                       {"stopping", true},
                       {"workLostInstanceSeconds", 2.25},
                       {"workLostFinal", false},
                       {"preemptionRetriesBeforeTermination", 3},
                       {"retriesLeft", 1},
                       {"runnerUp",
                        {{"share", "team-c"},
                         {"rule", "IN_SHARE"},
                         {"victimKey",
                          {{"priority", 5},
                           {"workLostInstanceSeconds", 0.01},
                           {"attemptStartedAt", 1'700'000'050'000}}},
                         {"putBack", true},
                         {"chosenOverBecause", "lower priority (3 < 5)"}}}}));
  // A whole number of seconds is still a double, as the documents always wrote it.
  PreemptionExplanation p = LimitedPreemption();
  p.work_lost = 4'000;
  p.key.work_lost = 0;
  const Json whole = EncodeResponse(ExplainResponse{.preempted = p})["preempted"];
  EXPECT_TRUE(whole["workLostInstanceSeconds"].is_number_float());
  EXPECT_EQ(whole["workLostInstanceSeconds"].get<double>(), 4.0);
  EXPECT_TRUE(whole["victimKey"]["workLostInstanceSeconds"].is_number_float());
}

TEST(EncodeExplain, UnlimitedRetriesAreANullRetriesLeft) {
  PreemptionExplanation p = LimitedPreemption();
  p.retries_before_termination.reset();
  p.retries_left.reset();
  p.runner_up.reset();
  const Json doc = EncodeResponse(ExplainResponse{.preempted = p})["preempted"];
  ASSERT_TRUE(doc.contains("retriesLeft"));
  EXPECT_TRUE(doc["retriesLeft"].is_null());
  EXPECT_FALSE(doc.contains("preemptionRetriesBeforeTermination"));
  EXPECT_FALSE(doc.contains("runnerUp"));
}

TEST(EncodeExplain, AnUnnamedJobShowsItsShareOnly) {
  PreemptionExplanation p = LimitedPreemption();
  p.preemptor = {.share = "team-b"};
  p.runner_up->job = Named("team-c", "id-r", "ru");
  const Json doc = EncodeResponse(ExplainResponse{.preempted = p})["preempted"];
  EXPECT_EQ(doc["preemptor"], (Json{{"share", "team-b"}}));
  EXPECT_EQ(doc["runnerUp"]["jobId"], "id-r");
  EXPECT_EQ(doc["runnerUp"]["jobName"], "ru");
}

TEST(EncodeWhatIf, EachDecisionHasItsWord) {
  const std::pair<WhatIfDecision, const char*> kCases[] = {{WhatIfDecision::kWait, "wait"},
                                                           {WhatIfDecision::kStart, "start"},
                                                           {WhatIfDecision::kPreempt, "preempt"},
                                                           {WhatIfDecision::kRunning, "running"}};
  for (const auto& [decision, word] : kCases) {
    SCOPED_TRACE(word);
    EXPECT_EQ(EncodeResponse(WhatIfResponse{.decision = decision, .summary = "s"}),
              (Json{{"decision", word}, {"summary", "s"}, {"victims", Json::array()}}));
  }
}

TEST(EncodeWhatIf, VictimsShowPriorityAndWorkOnlyWhereSet) {
  WhatIfResponse r{.decision = WhatIfDecision::kPreempt, .summary = "s"};
  r.victims.push_back({.job = Named("team-a", "id-v", "vic"),
                       .rule = model::PreemptionRule::kReclaim,
                       .priority = 4,
                       .work_lost = 160});
  r.victims.push_back({.job = {.share = "team-b"}, .rule = model::PreemptionRule::kLimitLowered});
  const Json doc = EncodeResponse(r);
  EXPECT_EQ(doc["victims"], (Json{{{"share", "team-a"},
                                   {"jobId", "id-v"},
                                   {"jobName", "vic"},
                                   {"rule", "RECLAIM"},
                                   {"priority", 4},
                                   {"workLostInstanceSeconds", 0.16}},
                                  {{"share", "team-b"}, {"rule", "LIMIT_LOWERED"}}}));
  EXPECT_TRUE(doc["victims"][0]["workLostInstanceSeconds"].is_number_float());
  EXPECT_FALSE(doc.contains("starts"));
  EXPECT_FALSE(doc.contains("explanation"));
}

TEST(EncodeWhatIf, AConfigurationChangeListsStartsAndNamesPreemptors) {
  WhatIfResponse r{.decision = WhatIfDecision::kStart, .summary = "s", .starts = {{}}};
  EXPECT_EQ(EncodeResponse(r)["starts"], Json::array());  // asked, none: an empty list
  r.victims.push_back({.job = {.share = "team-a"},
                       .rule = model::PreemptionRule::kLimitLowered,
                       .preemptor = Named("team-b", "id-p", "pre")});
  r.starts->push_back(
      {.job = Named("team-b", "id-p", "pre"), .mode = model::DispatchMode::kBorrowed});
  r.starts->push_back({.job = {.share = "team-c"}, .mode = model::DispatchMode::kWithinQuota});
  const Json doc = EncodeResponse(r);
  EXPECT_EQ(doc["victims"][0]["preemptor"],
            (Json{{"share", "team-b"}, {"jobId", "id-p"}, {"jobName", "pre"}}));
  EXPECT_EQ(
      doc["starts"],
      (Json{{{"share", "team-b"}, {"jobId", "id-p"}, {"jobName", "pre"}, {"mode", "BORROWED"}},
            {{"share", "team-c"}, {"mode", "WITHIN_QUOTA"}}}));
}

TEST(EncodeWhatIf, AWaitCarriesTheWaitingExplanation) {
  const WhatIfResponse r{.summary = "It would wait.", .explanation = FullWait()};
  const Json doc = EncodeResponse(r);
  EXPECT_EQ(doc, (Json{{"decision", "wait"},
                       {"summary", "It would wait."},
                       {"victims", Json::array()},
                       {"explanation", FullWaitJson()}}));
}

}  // namespace
}  // namespace allot::api
