"""Explain and what-if on the live queue (issue 12, section 3) and the reasons AWS clients see
(section 4), against a real server with real `sleep` jobs.

One queue `q` on three instances: team-a (LEND_AND_BORROW, limit 1) runs one job within its
quota and borrows team-b's (LEND, limit 2) two idle instances; a fourth team-a job waits. Then a
what-if of a team-b submission predicts the reclaim of team-a's newest borrower, the real
submission does exactly that, and the victim's record names the preemptor and the runner-up.
Users alice (team-a) and bob (team-b) have the documented team-member policy.
"""

import json
import os
import unittest

from allot_harness import AllotServer, Fixture, payload, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = os.path.join(HERE, "..", "..", "docs", "policies")
UNIT = "ml.g5.xlarge"
SLEEP = "sleep 120"


def member_policy(team):
    with open(os.path.join(POLICIES, "team-member.json")) as f:
        return json.loads(f.read().replace("team-a", team))


class ExplainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = AllotServer("--no-sandbox", stop_grace_seconds=1)
        try:
            cls.server.start()
            cls.admin = cls.server.client()
            fx = Fixture(cls.admin)
            env = fx.environment(capacity=3, name="se")
            cls.admin.create_job_queue(
                jobQueueName="q", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                schedulingPolicyArn=fx.policy(name="pol"),
                serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}])
            cls.arns = {}
            for share, limit, strategy in (("team-a", 1, "LEND_AND_BORROW"),
                                           ("team-b", 2, "LEND")):
                sharing = {"strategy": strategy}
                if strategy == "LEND_AND_BORROW":
                    sharing["borrowLimit"] = -1
                cls.arns[share] = cls.admin.create_quota_share(
                    quotaShareName=share, jobQueue="q",
                    capacityLimits=[{"capacityUnit": UNIT, "maxCapacity": limit}],
                    resourceSharingConfiguration=sharing,
                    preemptionConfiguration={"inSharePreemption": "DISABLED"},
                    state="ENABLED")["quotaShareArn"]
            cls.keys = {}
            # carol: alice's policy, and every share's figures (DescribeQuotaShare on all), but
            # still only team-a's jobs.
            carol = member_policy("team-a")
            carol["Statement"].append({"Effect": "Allow", "Resource": "*", "Action": [
                "batch:DescribeQuotaShare", "batch:ListQuotaShares"]})
            for user, policy in (("alice", member_policy("team-a")),
                                 ("bob", member_policy("team-b")), ("carol", carol)):
                status, out, _ = cls.server.request(
                    "POST", "/allot/v1/users", {"userName": user, "policy": policy})
                assert status == 200, (status, out)
                cls.keys[user] = (out["accessKey"]["accessKeyId"],
                                  out["accessKey"]["secretAccessKey"])
        except Exception:
            cls.server.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def tearDown(self):
        for status in ("RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
            for s in self.admin.list_service_jobs(jobQueue="q", jobStatus=status)["jobSummaryList"]:
                self.admin.terminate_service_job(jobId=s["jobId"], reason="test over")
        for status in ("RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
            wait_for(lambda: not self.admin.list_service_jobs(
                jobQueue="q", jobStatus=status)["jobSummaryList"], 30, what=f"no {status} job")

    def submit(self, share, name, priority=None, timeout=None):
        kwargs = dict(jobName=name, jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                      quotaShareName=share, serviceRequestPayload=payload(SLEEP))
        if priority is not None:
            kwargs["schedulingPriority"] = priority
        if timeout is not None:
            kwargs["timeoutConfig"] = {"attemptDurationSeconds": timeout}
        return kwargs, self.admin.submit_service_job(**kwargs)["jobId"]

    def wait_status(self, job_id, status):
        return wait_for(lambda: (lambda d: d if d["status"] == status else None)(
            self.admin.describe_service_job(jobId=job_id)), 30, what=f"{job_id} {status}")

    def explain(self, job_id, keys=None):
        return self.server.request("GET", f"/allot/v1/jobs/{job_id}/explain", keys=keys)[:2]

    def whatif(self, body, keys=None):
        return self.server.request("POST", "/allot/v1/whatif", body, keys=keys)[:2]

    def audit_ids(self):
        status, out, _ = self.server.request("GET", "/allot/v1/audit", query={"maxResults": 1000})
        self.assertEqual(status, 200, out)
        return [json.dumps(r, sort_keys=True) for r in out.get("records", out.get("auditRecords", []))]

    def listed(self):
        return {s: sorted(j["jobId"] for j in self.admin.list_service_jobs(
                    jobQueue="q", jobStatus=s)["jobSummaryList"])
                for s in ("RUNNABLE", "SCHEDULED", "STARTING", "RUNNING")}

    def borrowers(self):
        """a1 within team-a's quota (600 s time limit), a2 and a3 on team-b's lent instances,
        a4 waiting."""
        _, a1 = self.submit("team-a", "a1", timeout=600)
        d1 = self.wait_status(a1, "RUNNING")
        _, a2 = self.submit("team-a", "a2")
        self.wait_status(a2, "RUNNING")
        _, a3 = self.submit("team-a", "a3")
        self.wait_status(a3, "RUNNING")
        _, a4 = self.submit("team-a", "a4")
        self.wait_status(a4, "RUNNABLE")
        return a1, a2, a3, a4, d1

    def test_waiting_job_explained_in_data_in_status_reason_and_by_whatif_then_reclaim(self):
        a1, a2, a3, a4, d1 = self.borrowers()

        # The waiting job: the pool binds, team-a holds all three instances, and a1's time limit
        # bounds the start.
        status, ex = self.explain(a4)
        self.assertEqual(status, 200, ex)
        self.assertEqual(ex["jobId"], a4)
        self.assertEqual(ex["status"], "RUNNABLE")
        self.assertNotIn("preempted", ex)
        w = ex["waiting"]
        self.assertEqual(w["unit"], UNIT)
        self.assertEqual(w["missing"], 1, w)
        self.assertEqual([h["share"] for h in w["holders"]], ["team-a"])
        self.assertEqual(sorted(j["jobId"] for j in w["holders"][0]["jobs"]), sorted([a1, a2, a3]))
        self.assertEqual(w["positionInShare"], 0)
        self.assertIsNotNone(w["startBound"], w)
        self.assertLess(abs(w["startBound"] - (d1["startedAt"] + 600_000)), 5_000, w)
        self.assertTrue(w["wouldStart"])
        self.assertIn(w["message"].rstrip("."), ex["summary"])
        self.assertIn("at the latest", ex["summary"])

        # AWS clients see the sentence: statusReason in Describe and in List (boto3).
        d = self.admin.describe_service_job(jobId=a4)
        self.assertIn(w["message"], d["statusReason"])
        listed = self.admin.list_service_jobs(jobQueue="q", jobStatus="RUNNABLE")["jobSummaryList"]
        self.assertIn(w["message"], next(j for j in listed if j["jobId"] == a4)["statusReason"])

        # What-if: a team-b job would reclaim a3 (the newest borrower, least work lost); it
        # changes nothing: the lists and the audit trail are as before.
        before_lists, before_audit = self.listed(), self.audit_ids()
        body, _ = dict(jobName="b1", jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                       quotaShareName="team-b", serviceRequestPayload=payload(SLEEP)), None
        status, wi = self.whatif({"submit": body})
        self.assertEqual(status, 200, wi)
        self.assertEqual(wi["decision"], "preempt", wi)
        self.assertEqual([(v["jobId"], v["share"], v["rule"]) for v in wi["victims"]],
                         [(a3, "team-a", "RECLAIM")])
        self.assertIn("workLostInstanceSeconds", wi["victims"][0])
        self.assertIn("preempt 1 job", wi["summary"])
        # A waiting what-if carries the explanation.
        status, wait = self.whatif({"updatePriority": {"jobId": a4, "schedulingPriority": 5}})
        self.assertEqual(status, 200, wait)
        self.assertEqual(wait["decision"], "wait", wait)
        self.assertEqual(wait["explanation"]["rule"], w["rule"])
        self.assertEqual(self.admin.describe_service_job(jobId=a4)["schedulingPriority"], 0)
        # A limit change: team-a at 3 would start a4 (nothing else waits).
        status, more = self.whatif({"updateQuotaShare": {
            "quotaShareArn": self.arns["team-a"],
            "capacityLimits": [{"capacityUnit": UNIT, "maxCapacity": 3}]}})
        self.assertEqual(status, 200, more)
        self.assertEqual(self.listed(), before_lists)
        self.assertEqual(self.audit_ids(), before_audit)
        share = self.admin.describe_quota_share(quotaShareArn=self.arns["team-a"])
        self.assertEqual(share["capacityLimits"][0]["maxCapacity"], 1)

        # The real submission does what the what-if said.
        b1 = self.admin.submit_service_job(**body)["jobId"]
        wait_for(lambda: self.server.raw("describeservicejob", {"jobId": a3})[1]["allot"]
                 ["preemptionRecords"], 15, what="a3's preemption record")
        _, raw = self.server.raw("describeservicejob", {"jobId": a3})
        rec = raw["allot"]["preemptionRecords"][-1]
        self.assertEqual(rec["preemptor"], b1)
        self.assertEqual(rec["preemptorName"], "b1")
        self.assertEqual(rec["preemptorShare"], "team-b")
        self.assertEqual(rec["rule"], "RECLAIM")
        self.assertEqual(rec["runnerUp"]["jobId"], a2)
        self.assertEqual(rec["runnerUp"]["share"], "team-a")
        self.assertFalse(rec["runnerUp"]["putBack"])

        status, ex = self.explain(a3)
        self.assertEqual(status, 200, ex)
        p = ex["preempted"]
        self.assertEqual(p["preemptor"], {"jobId": b1, "jobName": "b1", "share": "team-b"})
        self.assertEqual(p["rule"], "RECLAIM")
        self.assertEqual(p["runnerUp"]["jobId"], a2)
        self.assertIn("less work lost", p["runnerUp"]["chosenOverBecause"])
        self.assertIsNone(p["retriesLeft"])  # unlimited
        self.assertIn("b1", ex["summary"])
        self.assertIn("a2", ex["summary"])

        # The preemptor's own record lists its victims.
        self.wait_status(b1, "RUNNING")
        _, raw = self.server.raw("describeservicejob", {"jobId": b1})
        made = raw["allot"]["preemptionsMade"]
        self.assertEqual([v["jobId"] for v in made[0]["victims"]], [a3])
        self.assertEqual(made[0]["victims"][0]["jobName"], "a3")
        # A running job's explanation says so.
        status, ex = self.explain(a1)
        self.assertEqual(status, 200, ex)
        self.assertNotIn("waiting", ex)
        self.assertIn("RUNNING", ex["summary"])

    def test_tenancy_of_explain_and_whatif(self):
        a1, a2, a3, a4, _ = self.borrowers()
        alice, bob = self.keys["alice"], self.keys["bob"]
        # alice (team-a) explains team-a's job; bob (team-b) may not.
        status, ex = self.explain(a4, keys=alice)
        self.assertEqual(status, 200, ex)
        status, out = self.explain(a4, keys=bob)
        self.assertEqual(status, 403, out)
        # What-if needs the real call's permission: bob may not submit to team-a, alice may.
        body = dict(jobName="w", jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                    quotaShareName="team-a", serviceRequestPayload=payload(SLEEP))
        status, out = self.whatif({"submit": body}, keys=bob)
        self.assertEqual(status, 403, out)
        status, out = self.whatif({"submit": body}, keys=alice)
        self.assertEqual(status, 200, out)
        status, out = self.whatif({"updatePriority": {"jobId": a4, "schedulingPriority": 3}},
                                  keys=bob)
        self.assertEqual(status, 403, out)
        status, out = self.whatif({"updateQuotaShare": {
            "quotaShareArn": self.arns["team-a"],
            "capacityLimits": [{"capacityUnit": UNIT, "maxCapacity": 3}]}}, keys=alice)
        self.assertEqual(status, 403, out)  # members may not change shares
        # Bad bodies are 400s naming what is allowed.
        status, out = self.whatif({"submit": body, "updatePriority": {}})
        self.assertEqual(status, 400, out)
        self.assertIn("exactly one of submit, updatePriority, updateQuotaShare", json.dumps(out))

        # A what-if shows another team's victims by share and rule only: no id, name, priority
        # or work lost.
        bob_body = dict(body, quotaShareName="team-b")
        status, out = self.whatif({"submit": bob_body}, keys=bob)
        self.assertEqual(status, 200, out)
        self.assertEqual(out["decision"], "preempt", out)
        for victim in out["victims"]:
            self.assertEqual(set(victim), {"share", "rule"}, victim)
        self.assertNotIn("instance-seconds", out["summary"])
        for job in (a2, a3):
            self.assertNotIn(job, json.dumps(out))
        # A new priority for a running job only moves it among the victim candidates.
        status, out = self.whatif({"updatePriority": {"jobId": a1, "schedulingPriority": 3}},
                                  keys=alice)
        self.assertEqual(status, 200, out)
        self.assertEqual(out["decision"], "running", out)
        self.assertIn("already RUNNING", out["summary"])

        # bob's team-b job reclaims a3; bob sees the victims of his job only by share.
        kwargs = dict(jobName="b1", jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                      quotaShareName="team-b", serviceRequestPayload=payload(SLEEP))
        b1 = self.server.client_with_keys(*bob).submit_service_job(**kwargs)["jobId"]
        self.wait_status(b1, "RUNNING")
        status, raw, _ = self.server.request("POST", "/v1/describeservicejob", {"jobId": b1},
                                             keys=bob)
        self.assertEqual(status, 200, raw)
        victim = raw["allot"]["preemptionsMade"][0]["victims"][0]
        self.assertEqual(victim["share"], "team-a")
        self.assertNotIn("jobId", victim)
        self.assertNotIn("jobName", victim)
        # alice sees who preempted a3 only by share.
        status, ex = self.explain(a3, keys=alice)
        self.assertEqual(status, 200, ex)
        self.assertEqual(ex["preempted"]["preemptor"], {"share": "team-b"})
        self.assertNotIn(b1, json.dumps(ex))

        # The job history follows DescribeServiceJob job by job: carol sees every share's
        # figures but only team-a's jobs; bob only team-b's.
        # (the export holds the jobs that ran and ended)
        for job in (b1, a1):
            self.admin.terminate_service_job(jobId=job, reason="history")
        for job in (b1, a1):
            self.wait_status(job, "FAILED")

        def history_ids(keys):
            status, out, _ = self.server.request("GET", "/allot/v1/history/jobs",
                                                 query={"since": "1h"}, keys=keys)
            self.assertEqual(status, 200, out)
            return {j["id"] for j in out["jobs"]}

        everything = history_ids(None)
        self.assertTrue({b1, a1} <= everything, (b1, a1, everything))
        self.assertIn(a1, history_ids(self.keys["carol"]))
        self.assertNotIn(b1, history_ids(self.keys["carol"]))
        self.assertIn(b1, history_ids(bob))
        self.assertNotIn(a1, history_ids(bob))
        # A window reaching into the future ends now; one wholly in the future is refused.
        status, out, _ = self.server.request(
            "GET", "/allot/v1/report", query={"since": "1h", "until": str(2**62)}, keys=alice)
        self.assertEqual(status, 200, out)
        for share in out.get("shares", []):
            self.assertLess(share["usedInstanceHours"], 2, share)
        status, out, _ = self.server.request(
            "GET", "/allot/v1/report", query={"since": str(2**62), "until": str(2**62 + 1)})
        self.assertEqual(status, 400, out)
        self.assertIn("since must be in the past", json.dumps(out))


if __name__ == "__main__":
    unittest.main()
