"""End-to-end scenarios with real processes: AWS's quota-management notebook, preemption retries,
ListServiceJobs paging and filters, and SigV4 refusals."""

import time
import unittest

import botocore.exceptions

from allot_harness import (ServerTestCase, ARN_PREFIX, INSTANCE, SLEEPER, AllotServer, Fixture, error_code,
                           http_status, wait_for)

# Ignores SIGTERM, so a preempted attempt stays PREEMPTION_IN_PROGRESS for the whole grace
# period (2 s) before the server's SIGKILL ends it: long enough to be seen, still bounded.
STUBBORN = "trap '' TERM; sleep 30 & wait"
GRACE_SECONDS = 2
PREEMPTING = "PREEMPTION_IN_PROGRESS"
# How long a preempted attempt may take to end and its job to be requeued: the grace, then the
# kill. A bound, not a speed: on Slurm under the sanitizers, beside clang-tidy on both cores, a
# stop took more than 15 s beyond the grace (scancel, slurmd's kill, the next squeue).
STOPPED_WITHIN = GRACE_SECONDS + 60


class ScenarioBase(ServerTestCase):
    stop_grace_seconds = GRACE_SECONDS

    def status(self, job_id):
        d = self.fx.describe(job_id)
        return d["status"], d.get("statusReason", "")

    def wait_preempting(self, job_id, timeout=10):
        def check():
            d = self.fx.describe(job_id)
            return d if d.get("statusReason", "").startswith(PREEMPTING) else None
        return wait_for(check, timeout, interval=0.02,
                        what=f"{job_id} statusReason {PREEMPTING}")

    def terminate_all(self, queue):
        for status in ("RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
            for j in self.batch.list_service_jobs(jobQueue=queue,
                                                  jobStatus=status)["jobSummaryList"]:
                self.batch.terminate_service_job(jobId=j["jobId"], reason="scenario over")


class NotebookScenarioTest(ScenarioBase):
    def test_notebook_borrow_reclaim_and_in_share_preemption(self):
        fx = self.fx
        b = self.batch
        env = fx.environment(3)
        queue = fx.queue(env, fx.policy())
        self.addCleanup(self.terminate_all, queue)
        fx.share(queue, name="QS1", capacity=1, strategy="LEND_AND_BORROW", borrow_limit=200,
                 in_share="ENABLED")
        fx.share(queue, name="QS2", capacity=1, strategy="LEND")
        fx.share(queue, name="QS3", capacity=1, strategy="RESERVE")

        p3 = fx.submit(queue, "QS1", script=STUBBORN, name="qs1-p3", priority=3)["jobId"]
        fx.wait_status(p3, "RUNNING")
        p2 = fx.submit(queue, "QS1", script=STUBBORN, name="qs1-p2", priority=2)["jobId"]
        fx.wait_status(p2, "RUNNING")
        p1 = fx.submit(queue, "QS1", script=STUBBORN, name="qs1-p1", priority=1)["jobId"]
        # QS3 is RESERVE and QS2's one instance is lent: the priority-1 job waits.
        d = fx.describe(p1)
        self.assertEqual(d["status"], "RUNNABLE", d.get("statusReason"))
        self.assertEqual(self.status(p3)[0], "RUNNING")
        self.assertEqual(self.status(p2)[0], "RUNNING")

        status, raw = self.server.raw("getjobqueuesnapshot", {"jobQueue": queue})
        self.assertEqual(status, 200)
        top = {s["quotaShareName"]: s
               for s in raw["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"]}
        self.assertEqual(top["QS1"]["borrowed"], [{"capacityUnit": INSTANCE, "quantity": 1.0}])
        self.assertEqual(top["QS2"]["lent"], [{"capacityUnit": INSTANCE, "quantity": 1.0}])
        self.assertEqual(top["QS1"]["waitingJobs"], 1)

        # A QS2 job arrives: the borrowing priority-2 job is preempted, the QS2 job runs.
        qs2 = fx.submit(queue, "QS2", script=SLEEPER, name="qs2-job")["jobId"]
        d = self.wait_preempting(p2)
        self.assertEqual(d["status"], "RUNNING", "a victim stays RUNNING while it stops")
        self.assertIn("Cross-share", d["statusReason"])
        self.assertEqual(self.status(p3), ("RUNNING", ""))
        d = fx.wait_status(p2, "RUNNABLE", timeout=STOPPED_WITHIN)
        self.assertEqual(d["preemptionSummary"]["preemptedAttemptCount"], 1)
        recent = d["preemptionSummary"]["recentPreemptedAttempts"]
        self.assertEqual(len(recent), 1)
        self.assertEqual(recent[0]["serviceResourceId"], d["attempts"][0]["serviceResourceId"])
        self.assertIn("Cross-share preemption", recent[0]["statusReason"])
        self.assertIsInstance(recent[0]["startedAt"], int)
        self.assertIsInstance(recent[0]["stoppedAt"], int)
        self.assertEqual(len(d["attempts"]), 1)
        self.assertIn("stoppedAt", d["attempts"][0])
        self.assertEqual(d.get("retryStrategy", {}).get("attempts", 1), 1)
        fx.wait_status(qs2, "RUNNING", timeout=10)
        self.assertEqual(self.status(p3)[0], "RUNNING")
        self.assertEqual(self.status(p1)[0], "RUNNABLE")

        # Raising the waiting priority-1 job to 4 preempts the running priority-3 job in-share.
        b.update_service_job(jobId=p1, schedulingPriority=4)
        d = self.wait_preempting(p3)
        self.assertEqual(d["status"], "RUNNING")
        self.assertIn("In-share", d["statusReason"])
        d = fx.wait_status(p3, "RUNNABLE", timeout=STOPPED_WITHIN)
        self.assertEqual(d["preemptionSummary"]["preemptedAttemptCount"], 1)
        self.assertIn("In-share", d["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"])
        d = fx.wait_status(p1, "RUNNING", timeout=10)
        self.assertEqual(d["schedulingPriority"], 4)
        self.assertEqual(self.status(qs2)[0], "RUNNING")
        self.assertEqual(self.status(p2)[0], "RUNNABLE")
        # The preempted jobs wait in priority order: 3 before 2.
        front = b.get_job_queue_snapshot(jobQueue=queue)["frontOfQuotaShares"]["quotaShares"]["QS1"]
        self.assertEqual([j["jobArn"] for j in front],
                         [ARN_PREFIX + "service-job/" + p3, ARN_PREFIX + "service-job/" + p2])

    def test_preemption_retries_zero_fails_on_first_preemption(self):
        fx = self.fx
        env = fx.environment(2)
        queue = fx.queue(env, fx.policy())
        self.addCleanup(self.terminate_all, queue)
        fx.share(queue, name="borrower", capacity=1, strategy="LEND_AND_BORROW")
        fx.share(queue, name="lender", capacity=1, strategy="LEND")
        own = fx.submit(queue, "borrower", script=SLEEPER, priority=5)["jobId"]
        fx.wait_status(own, "RUNNING")
        fragile = fx.submit(queue, "borrower", script=SLEEPER, priority=1,
                            preemptionConfiguration={"preemptionRetriesBeforeTermination": 0})["jobId"]
        d = fx.wait_status(fragile, "RUNNING")
        self.assertEqual(d["preemptionConfiguration"], {"preemptionRetriesBeforeTermination": 0})
        lender_job = fx.submit(queue, "lender", script=SLEEPER)["jobId"]
        d = fx.wait_status(fragile, ("FAILED", "RUNNABLE"), timeout=STOPPED_WITHIN)
        self.assertEqual(d["status"], "FAILED", d.get("statusReason"))
        self.assertIn("Preemption retries exhausted", d["statusReason"])
        self.assertEqual(d["preemptionSummary"]["preemptedAttemptCount"], 1)
        self.assertEqual(len(d["attempts"]), 1)
        fx.wait_status(lender_job, "RUNNING", timeout=10)
        self.assertEqual(self.status(own)[0], "RUNNING")


class LimitLoweredTest(ScenarioBase):
    def test_lowered_share_limit_makes_excess_reclaimable_not_killed(self):
        fx = self.fx
        b = self.batch
        env = fx.environment(2)
        queue = fx.queue(env, fx.policy())
        self.addCleanup(self.terminate_all, queue)
        big = fx.share(queue, name="big", capacity=2, strategy="LEND")
        fx.share(queue, name="small", capacity=1, strategy="LEND")
        high = fx.submit(queue, "big", script=SLEEPER, priority=9)["jobId"]
        low = fx.submit(queue, "big", script=STUBBORN, priority=1)["jobId"]
        fx.wait_status(high, "RUNNING")
        fx.wait_status(low, "RUNNING")
        b.update_quota_share(quotaShareArn=big,
                             capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 1}])
        # Lowering the limit stops nothing by itself.
        time.sleep(0.3)
        self.assertEqual(self.status(high), ("RUNNING", ""))
        self.assertEqual(self.status(low), ("RUNNING", ""))
        # The owner of the capacity arrives: the excess (the low-priority job) is reclaimed.
        owner = fx.submit(queue, "small", script=SLEEPER)["jobId"]
        d = self.wait_preempting(low)
        self.assertEqual(d["status"], "RUNNING")
        d = fx.wait_status(low, "RUNNABLE", timeout=STOPPED_WITHIN)
        self.assertEqual(d["preemptionSummary"]["preemptedAttemptCount"], 1)
        self.assertIn("lowered", d["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"])
        fx.wait_status(owner, "RUNNING", timeout=10)
        self.assertEqual(self.status(high)[0], "RUNNING")


class ListServiceJobsTest(ScenarioBase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        fx = cls.fx
        env = fx.environment(1)
        cls.queue = fx.queue(env, fx.policy())
        fx.share(cls.queue, name="alpha", capacity=1)
        fx.share(cls.queue, name="beta", capacity=1, strategy="LEND")
        cls.jobs = []  # (id, name, share) in submission order
        names = ["Train-Alpha-0", "Train-Alpha-1", "train-beta-2", "TRAIN-alpha-3", "Eval-beta-4",
                 "train-ALPHA-5", "train-beta-6"]
        for i, name in enumerate(names):
            share = "alpha" if "alpha" in name.lower() else "beta"
            script = "exit 0" if i == 0 else SLEEPER
            job_id = fx.submit(cls.queue, share, script=script, name=name)["jobId"]
            cls.jobs.append((job_id, name, share))
            if i == 0:
                fx.wait_status(job_id, "SUCCEEDED")
            if i == 1:
                fx.wait_status(job_id, "RUNNING")
            time.sleep(0.005)  # distinct createdAt values for the time filters
        cls.created = {j: fx.describe(j)["createdAt"] for j, _, _ in cls.jobs}

    @classmethod
    def tearDownClass(cls):
        for j, _, _ in cls.jobs:
            try:
                cls.batch.terminate_service_job(jobId=j, reason="over")
            except botocore.exceptions.ClientError:
                pass
        super().tearDownClass()

    def ids(self, **kwargs):
        return [j["jobId"] for j in
                self.batch.list_service_jobs(jobQueue=self.queue, **kwargs)["jobSummaryList"]]

    def pages(self, page_size=3, **kwargs):
        out, pages, token = [], [], None
        for _ in range(20):
            args = dict(kwargs, jobQueue=self.queue, maxResults=page_size)
            if token:
                args["nextToken"] = token
            r = self.batch.list_service_jobs(**args)
            ids = [j["jobId"] for j in r["jobSummaryList"]]
            self.assertLessEqual(len(ids), page_size)
            pages.append(ids)
            out += ids
            token = r.get("nextToken")
            if not token:
                return out, pages
        self.fail("ListServiceJobs did not stop returning nextToken")

    def test_states_are_as_arranged(self):
        statuses = [self.fx.describe(j)["status"] for j, _, _ in self.jobs]
        self.assertEqual(statuses, ["SUCCEEDED", "RUNNING"] + ["RUNNABLE"] * 5)

    def test_default_status_is_running(self):
        self.assertEqual(self.ids(), [self.jobs[1][0]])

    def test_paging_all_jobs_newest_first(self):
        everything, pages = self.pages(3, filters=[{"name": "JOB_NAME", "values": ["*"]}])
        # "*" is a prefix match on the empty prefix: every job, any status.
        expected = [j for j, _, _ in reversed(self.jobs)]
        self.assertEqual(everything, expected)
        self.assertEqual([len(p) for p in pages], [3, 3, 1])
        self.assertEqual(len(set(everything)), 7)

    def test_paging_runnable(self):
        runnable, pages = self.pages(3, jobStatus="RUNNABLE")
        self.assertEqual(runnable, [j for j, _, _ in reversed(self.jobs[2:])])
        self.assertEqual([len(p) for p in pages], [3, 2])
        one_by_one, pages = self.pages(1, jobStatus="RUNNABLE")
        self.assertEqual(one_by_one, runnable)

    def test_job_name_filter(self):
        by_name = {n: j for j, n, _ in self.jobs}
        # Exact, case-insensitive, and jobStatus is ignored.
        self.assertEqual(self.ids(jobStatus="RUNNING",
                                  filters=[{"name": "JOB_NAME", "values": ["TRAIN-ALPHA-0"]}]),
                         [by_name["Train-Alpha-0"]])
        # Trailing * is a prefix match, case-insensitive, newest first.
        expected = [j for j, n, _ in reversed(self.jobs) if n.lower().startswith("train-alpha")]
        self.assertEqual(len(expected), 4)
        self.assertEqual(self.ids(filters=[{"name": "JOB_NAME", "values": ["train-alpha*"]}]),
                         expected)
        self.assertEqual(self.ids(filters=[{"name": "JOB_NAME", "values": ["Train-Alpha"]}]), [])
        self.assertEqual(self.ids(filters=[{"name": "JOB_NAME", "values": ["eval*"]}]),
                         [by_name["Eval-beta-4"]])

    def test_created_at_filters(self):
        pivot = self.jobs[3][0]
        t = self.created[pivot]
        before = [j for j, _, _ in reversed(self.jobs) if self.created[j] < t]
        after = [j for j, _, _ in reversed(self.jobs) if self.created[j] > t]
        self.assertEqual(len(before), 3)
        self.assertEqual(len(after), 3)
        self.assertEqual(self.ids(jobStatus="RUNNABLE",
                                  filters=[{"name": "BEFORE_CREATED_AT", "values": [str(t)]}]),
                         before)
        self.assertEqual(self.ids(filters=[{"name": "AFTER_CREATED_AT", "values": [str(t)]}]),
                         after)
        got, _ = self.pages(2, filters=[{"name": "AFTER_CREATED_AT", "values": [str(t - 1)]}])
        self.assertEqual(got, [j for j, _, _ in reversed(self.jobs) if self.created[j] >= t])
        self.assertEqual(got[-1], pivot)

    def test_quota_share_name_filter_combines_with_status(self):
        beta_runnable = [j for j, _, s in reversed(self.jobs) if s == "beta"]
        self.assertEqual(self.ids(jobStatus="RUNNABLE",
                                  filters=[{"name": "QUOTA_SHARE_NAME", "values": ["beta"]}]),
                         beta_runnable)
        alpha_runnable = [j for j, _, s in reversed(self.jobs[2:]) if s == "alpha"]
        self.assertEqual(self.ids(jobStatus="RUNNABLE",
                                  filters=[{"name": "QUOTA_SHARE_NAME", "values": ["alpha"]}]),
                         alpha_runnable)
        self.assertEqual(self.ids(jobStatus="SUCCEEDED",
                                  filters=[{"name": "QUOTA_SHARE_NAME", "values": ["alpha"]}]),
                         [self.jobs[0][0]])
        self.assertEqual(self.ids(jobStatus="SUCCEEDED",
                                  filters=[{"name": "QUOTA_SHARE_NAME", "values": ["beta"]}]), [])
        got, pages = self.pages(1, jobStatus="RUNNABLE",
                                filters=[{"name": "QUOTA_SHARE_NAME", "values": ["beta"]}])
        self.assertEqual(got, beta_runnable)
        self.assertEqual(len(pages), len(beta_runnable))


class SigV4Test(ScenarioBase):
    def test_wrong_secret_is_invalid_signature(self):
        key, secret = self.server.credentials()
        bad = self.server.client_with_keys(key, secret[:-1] + ("A" if secret[-1] != "A" else "B"))
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            bad.list_scheduling_policies()
        self.assertEqual(http_status(cm.exception), 403, cm.exception.response)
        self.assertEqual(error_code(cm.exception), "InvalidSignatureException")

    def test_unknown_access_key_is_unrecognized_client(self):
        bad = self.server.client_with_keys("AKIAUNKNOWNKEY000000", "x" * 40)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            bad.describe_job_queues()
        self.assertEqual(http_status(cm.exception), 403, cm.exception.response)
        self.assertEqual(error_code(cm.exception), "UnrecognizedClientException")

    def test_refused_calls_change_nothing(self):
        key, secret = self.server.credentials()
        bad = self.server.client_with_keys(key, "wrong" * 8)
        name = self.fx.unique("se")
        with self.assertRaises(botocore.exceptions.ClientError):
            bad.create_service_environment(
                serviceEnvironmentName=name, serviceEnvironmentType="SAGEMAKER_TRAINING",
                capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 1}])
        self.assertEqual(self.batch.describe_service_environments(
            serviceEnvironments=[name])["serviceEnvironments"], [])

    def test_unsigned_request_is_refused(self):
        import urllib.request
        import urllib.error
        req = urllib.request.Request(self.server.endpoint + "/v1/describejobqueues", data=b"{}",
                                     method="POST", headers={"Content-Type": "application/json"})
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req, timeout=10)
        self.assertIn(cm.exception.code, (400, 403))


if __name__ == "__main__":
    unittest.main()
