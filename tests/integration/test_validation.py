"""Every validation rule answers HTTP 400 ClientException with a message naming the field, and a
refused request loses nothing that was accepted before it."""

import json
import unittest

import botocore.exceptions

from allot_harness import (ServerTestCase, INSTANCE, AllotServer, Fixture, error_code, error_message,
                           http_status, payload)


class ValidationTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # One quota-managed queue (capacity 0: jobs stay RUNNABLE) and one plain FIFO queue.
        env = cls.fx.environment(0)
        cls.queue = cls.fx.queue(env, cls.fx.policy())
        cls.share_arn = cls.fx.share(cls.queue, name="qs", capacity=1)
        cls.plain_queue = cls.fx.queue(cls.fx.environment(0))


    def refused(self, fn, *words, **kwargs):
        """fn(**kwargs) must fail with 400 ClientException whose message has every word."""
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            fn(**kwargs)
        e = cm.exception
        self.assertEqual(error_code(e), "ClientException", e.response)
        self.assertEqual(http_status(e), 400, e.response)
        message = error_message(e)
        for w in words:
            self.assertIn(w, message, f"message {message!r} should name {w!r}")
        return message

    def submit_kwargs(self, **overrides):
        body = dict(jobName=self.fx.unique("job"), jobQueue=self.queue,
                    serviceJobType="SAGEMAKER_TRAINING", quotaShareName="qs",
                    serviceRequestPayload=payload("exit 0"))
        body.update(overrides)
        return {k: v for k, v in body.items() if v is not None}

    def good_job(self, **overrides):
        return self.batch.submit_service_job(**self.submit_kwargs(**overrides))["jobId"]

    def share_kwargs(self, queue=None, **overrides):
        body = dict(quotaShareName=self.fx.unique("s"), jobQueue=queue or self.queue,
                    capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 1}],
                    resourceSharingConfiguration={"strategy": "LEND_AND_BORROW"},
                    preemptionConfiguration={"inSharePreemption": "DISABLED"})
        body.update(overrides)
        return body

    # --- wire shape of an error ---

    def test_error_is_400_with_error_type_and_message(self):
        status, body = self.server.raw("submitservicejob",
                                       self.submit_kwargs(schedulingPriority=12000))
        self.assertEqual(status, 400)
        self.assertIn("schedulingPriority", body["message"])
        self.assertIn("12000", body["message"])
        self.assertIn("9999", body["message"])

    # --- names ---

    def test_name_rules(self):
        b = self.batch
        env = self.fx.environment(1)
        for bad in ("has space", "semi;colon", "slash/name", "dot.name", "x" * 129, ""):
            with self.subTest(name=bad):
                self.refused(b.create_service_environment, "serviceEnvironmentName",
                             serviceEnvironmentName=bad, serviceEnvironmentType="SAGEMAKER_TRAINING",
                             capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 1}])
                self.refused(b.create_scheduling_policy, "name", name=bad,
                             quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
                self.refused(b.create_job_queue, "jobQueueName", jobQueueName=bad, priority=1,
                             serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}])
                self.refused(b.create_quota_share, "quotaShareName",
                             **self.share_kwargs(quotaShareName=bad))
                self.refused(b.submit_service_job, "jobName", **self.submit_kwargs(jobName=bad))
        # 128 characters is fine.
        ok = "a" * 128
        self.fx.share(self.queue, name=ok)
        self.good_job(jobName=ok)

    # --- capacity limits and sharing ---

    def test_capacity_limit_counts(self):
        b = self.batch
        six = [{"capacityUnit": f"ml.type{i}.large", "maxCapacity": 1} for i in range(6)]
        for limits, n in (([], "0"), (six, "6")):
            with self.subTest(entries=n):
                self.refused(b.create_quota_share, "capacityLimits", n,
                             **self.share_kwargs(capacityLimits=limits))
                self.refused(b.create_service_environment, "capacityLimits", n,
                             serviceEnvironmentName=self.fx.unique("se"),
                             serviceEnvironmentType="SAGEMAKER_TRAINING", capacityLimits=limits)
                self.refused(b.update_quota_share, "capacityLimits", n,
                             quotaShareArn=self.share_arn, capacityLimits=limits)
        # Five is the most.
        self.fx.share(self.queue, limits=six[:5])

    def test_share_max_capacity_zero(self):
        self.refused(self.batch.create_quota_share, "maxCapacity",
                     **self.share_kwargs(capacityLimits=[{"capacityUnit": INSTANCE,
                                                          "maxCapacity": 0}]))
        self.refused(self.batch.update_quota_share, "maxCapacity", quotaShareArn=self.share_arn,
                     capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 0}])

    def test_borrow_limit_rules(self):
        b = self.batch
        self.refused(b.create_quota_share, "borrowLimit", "-2",
                     **self.share_kwargs(resourceSharingConfiguration={
                         "strategy": "LEND_AND_BORROW", "borrowLimit": -2}))
        for strategy in ("LEND", "RESERVE"):
            with self.subTest(strategy=strategy):
                self.refused(b.create_quota_share, "borrowLimit",
                             **self.share_kwargs(resourceSharingConfiguration={
                                 "strategy": strategy, "borrowLimit": 100}))
                self.refused(b.update_quota_share, "borrowLimit", quotaShareArn=self.share_arn,
                             resourceSharingConfiguration={"strategy": strategy, "borrowLimit": 50})
        self.refused(b.create_quota_share, "strategy",
                     **self.share_kwargs(resourceSharingConfiguration={"strategy": "SHARE_ALL"}))
        # -1 and 0 are fine.
        self.fx.share(self.queue, borrow_limit=-1)
        self.fx.share(self.queue, borrow_limit=0)
        d = b.describe_quota_share(quotaShareArn=self.share_arn)
        self.assertEqual(d["resourceSharingConfiguration"]["strategy"], "LEND_AND_BORROW")

    def test_twenty_first_share_refused(self):
        env = self.fx.environment(1)
        queue = self.fx.queue(env, self.fx.policy())
        for i in range(20):
            self.fx.share(queue, name=f"s{i:02d}")
        msg = self.refused(self.batch.create_quota_share, "20",
                           **self.share_kwargs(queue=queue, quotaShareName="s20"))
        self.assertIn(queue, msg)
        names = [s["quotaShareName"]
                 for s in self.batch.list_quota_shares(jobQueue=queue)["quotaShares"]]
        self.assertEqual(names, [f"s{i:02d}" for i in range(20)])

    def test_share_needs_a_quota_share_queue(self):
        self.refused(self.batch.create_quota_share, "quotaSharePolicy",
                     **self.share_kwargs(queue=self.plain_queue))

    # --- priorities, retries, payloads ---

    def test_scheduling_priority_range(self):
        b = self.batch
        job = self.good_job(schedulingPriority=9999)
        self.good_job(schedulingPriority=0)
        for bad in (10000, -1):
            with self.subTest(priority=bad):
                self.refused(b.submit_service_job, "schedulingPriority", str(bad),
                             **self.submit_kwargs(schedulingPriority=bad))
                self.refused(b.update_service_job, "schedulingPriority", str(bad),
                             jobId=job, schedulingPriority=bad)
        self.assertEqual(b.describe_service_job(jobId=job)["schedulingPriority"], 9999)

    def test_retry_attempts_range(self):
        for bad in (0, 11):
            with self.subTest(attempts=bad):
                self.refused(self.batch.submit_service_job, "retryStrategy.attempts", str(bad),
                             **self.submit_kwargs(retryStrategy={"attempts": bad}))
        self.good_job(retryStrategy={"attempts": 10})
        self.good_job(retryStrategy={"attempts": 1})

    def test_payload_rules(self):
        b = self.batch
        big = payload("exit 0", environment={"PAD": "x" * (10 * 1024)})
        self.assertGreater(len(big), 10 * 1024)
        self.refused(b.submit_service_job, "serviceRequestPayload", "10240",
                     **self.submit_kwargs(serviceRequestPayload=big))
        no_entry = json.loads(payload("exit 0"))
        del no_entry["AlgorithmSpecification"]["ContainerEntrypoint"]
        self.refused(b.submit_service_job, "ContainerEntrypoint",
                     **self.submit_kwargs(serviceRequestPayload=json.dumps(no_entry)))
        no_algo = json.loads(payload("exit 0"))
        del no_algo["AlgorithmSpecification"]
        self.refused(b.submit_service_job, "ContainerEntrypoint",
                     **self.submit_kwargs(serviceRequestPayload=json.dumps(no_algo)))
        msg = self.refused(b.submit_service_job, "InstanceType", "ml.p4d.24xlarge",
                           **self.submit_kwargs(serviceRequestPayload=payload(
                               "exit 0", instance_type="ml.p4d.24xlarge")))
        self.assertIn(INSTANCE, msg)  # says what the environment has
        for bad in ("{not json", "[1, 2]", ""):
            with self.subTest(payload=bad):
                self.refused(b.submit_service_job, "serviceRequestPayload",
                             **self.submit_kwargs(serviceRequestPayload=bad))

    # --- quota share names on submission ---

    def test_quota_share_name_rules(self):
        b = self.batch
        self.refused(b.submit_service_job, "quotaShareName",
                     **self.submit_kwargs(quotaShareName=None))
        self.refused(b.submit_service_job, "quotaShareName", "nope",
                     **self.submit_kwargs(quotaShareName="nope"))
        self.refused(b.submit_service_job, "quotaShareName",
                     **self.submit_kwargs(jobQueue=self.plain_queue))
        # Without it the plain queue takes the job.
        self.good_job(jobQueue=self.plain_queue, quotaShareName=None)

    def test_disabled_share_refuses_submissions(self):
        b = self.batch
        arn = self.fx.share(self.queue, name="closing")
        before = self.good_job(quotaShareName="closing")
        b.update_quota_share(quotaShareArn=arn, state="DISABLED")
        self.refused(b.submit_service_job, "closing", "DISABLED",
                     **self.submit_kwargs(quotaShareName="closing"))
        # The job submitted before is still there, still waiting.
        self.assertEqual(b.describe_service_job(jobId=before)["status"], "RUNNABLE")
        b.update_quota_share(quotaShareArn=arn, state="ENABLED")
        self.good_job(quotaShareName="closing")

    def test_disabled_queue_refuses_submissions(self):
        b = self.batch
        env = self.fx.environment(0)
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="qs")
        b.update_job_queue(jobQueue=queue, state="DISABLED")
        self.refused(b.submit_service_job, queue, "DISABLED",
                     **self.submit_kwargs(jobQueue=queue))
        b.update_job_queue(jobQueue=queue, state="ENABLED")
        self.good_job(jobQueue=queue)

    def test_update_of_finished_job_refused(self):
        job = self.good_job(jobQueue=self.plain_queue, quotaShareName=None)
        self.batch.terminate_service_job(jobId=job, reason="gone")
        self.assertEqual(self.batch.describe_service_job(jobId=job)["status"], "FAILED")
        self.refused(self.batch.update_service_job, "FAILED", jobId=job, schedulingPriority=3)

    # --- deletes need DISABLED first ---

    def test_delete_requires_disabled(self):
        b = self.batch
        env = self.fx.environment(1)
        queue = self.fx.queue(env, self.fx.policy())
        share = self.fx.share(queue, name="d")
        self.refused(b.delete_quota_share, "DISABLED", quotaShareArn=share)
        self.assertEqual(b.describe_quota_share(quotaShareArn=share)["state"], "ENABLED")
        b.update_quota_share(quotaShareArn=share, state="DISABLED")
        b.delete_quota_share(quotaShareArn=share)

        self.refused(b.delete_job_queue, "DISABLED", jobQueue=queue)
        self.assertEqual(len(b.describe_job_queues(jobQueues=[queue])["jobQueues"]), 1)
        b.update_job_queue(jobQueue=queue, state="DISABLED")
        b.delete_job_queue(jobQueue=queue)
        self.assertEqual(b.describe_job_queues(jobQueues=[queue])["jobQueues"], [])

        self.refused(b.delete_service_environment, "DISABLED", serviceEnvironment=env)
        b.update_service_environment(serviceEnvironment=env, state="DISABLED")
        b.delete_service_environment(serviceEnvironment=env)
        self.assertEqual(
            b.describe_service_environments(serviceEnvironments=[env])["serviceEnvironments"], [])

    def test_environment_attached_to_queue_cannot_be_deleted(self):
        b = self.batch
        env = self.fx.environment(1)
        self.fx.queue(env)
        b.update_service_environment(serviceEnvironment=env, state="DISABLED")
        self.refused(b.delete_service_environment, env, serviceEnvironment=env)

    def test_unknown_resources(self):
        b = self.batch
        self.refused(b.describe_service_job, "does not exist", jobId="no-such-job")
        self.refused(b.submit_service_job, "does not exist",
                     **self.submit_kwargs(jobQueue="no-such-queue"))
        self.refused(b.describe_quota_share, "quotaShareArn", quotaShareArn="not-an-arn")
        self.refused(b.update_service_job, "does not exist", jobId="no-such-job",
                     schedulingPriority=1)
        self.refused(b.terminate_service_job, "does not exist", jobId="no-such-job", reason="x")

    # --- nothing accepted is lost ---

    def test_refusals_lose_nothing(self):
        b = self.batch
        stem = self.fx.unique("keep")
        accepted = []
        bad_requests = [dict(schedulingPriority=10000), dict(retryStrategy={"attempts": 0}),
                        dict(serviceRequestPayload="{"), dict(quotaShareName="missing"),
                        dict(jobName="bad name")]
        for i, bad in enumerate(bad_requests):
            accepted.append(self.good_job(jobName=f"{stem}-{i}", schedulingPriority=i))
            with self.assertRaises(botocore.exceptions.ClientError):
                b.submit_service_job(**self.submit_kwargs(**bad))
            self.refused(b.create_quota_share, **self.share_kwargs(
                quotaShareName="qs"))  # duplicate
        accepted.append(self.good_job(jobName=f"{stem}-last"))
        listed = b.list_service_jobs(jobQueue=self.queue,
                                     filters=[{"name": "JOB_NAME", "values": [stem + "*"]}])
        self.assertEqual(sorted(j["jobId"] for j in listed["jobSummaryList"]), sorted(accepted))
        for i, job in enumerate(accepted[:-1]):
            d = b.describe_service_job(jobId=job)
            self.assertEqual(d["jobName"], f"{stem}-{i}")
            self.assertEqual(d["schedulingPriority"], i)
            self.assertEqual(d["status"], "RUNNABLE")
        shares = [s["quotaShareName"] for s in b.list_quota_shares(jobQueue=self.queue)["quotaShares"]]
        self.assertIn("qs", shares)
        d = b.describe_quota_share(quotaShareArn=self.share_arn)
        self.assertEqual(d["capacityLimits"], [{"capacityUnit": INSTANCE, "maxCapacity": 1}])


if __name__ == "__main__":
    unittest.main()
