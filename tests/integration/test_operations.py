"""Every AWS Batch quota-management operation through boto3 against a real `allot server`."""

import json
import os
import shutil
import tempfile
import time
import unittest
import uuid

import botocore.exceptions

from allot_harness import (ServerTestCase, ARN_PREFIX, INSTANCE, SLEEPER, AllotServer, Fixture, error_code,
                           error_message, http_status, payload)

SAGEMAKER_ARN_PREFIX = "arn:aws:sagemaker:local:000000000000:training-job/"


def now_ms():
    return int(time.time() * 1000)


class OperationsTest(ServerTestCase):
    server_args = ("--no-sandbox",)

    def setUp(self):
        self.t0 = now_ms()
        self.scratch = tempfile.mkdtemp(prefix="allot-it-ops-")
        self.addCleanup(shutil.rmtree, self.scratch, True)

    def assertClientError(self, fn, *words, **kwargs):
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            fn(**kwargs)
        e = cm.exception
        self.assertEqual(error_code(e), "ClientException", e.response)
        self.assertEqual(http_status(e), 400, e.response)
        for w in words:
            self.assertIn(w, error_message(e))
        return e

    def assertEpochMs(self, value, field):
        self.assertIsInstance(value, int, f"{field} is {value!r}")
        # Epoch milliseconds: not seconds, not microseconds; within the test's run.
        self.assertGreaterEqual(value, self.t0 - 5_000, field)
        self.assertLessEqual(value, now_ms() + 5_000, field)

    # --- service environments ---

    def test_service_environment_lifecycle(self):
        b = self.batch
        name = self.fx.unique("se")
        r = b.create_service_environment(
            serviceEnvironmentName=name, serviceEnvironmentType="SAGEMAKER_TRAINING",
            capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 4},
                            {"capacityUnit": "ml.m5.large", "maxCapacity": 2}],
            tags={"team": "ml"})
        arn = ARN_PREFIX + "service-environment/" + name
        self.assertEqual(r["serviceEnvironmentName"], name)
        self.assertEqual(r["serviceEnvironmentArn"], arn)

        for key in (name, arn):
            envs = b.describe_service_environments(serviceEnvironments=[key])["serviceEnvironments"]
            self.assertEqual(len(envs), 1)
            e = envs[0]
            self.assertEqual(e["serviceEnvironmentName"], name)
            self.assertEqual(e["serviceEnvironmentArn"], arn)
            self.assertEqual(e["serviceEnvironmentType"], "SAGEMAKER_TRAINING")
            self.assertEqual(e["state"], "ENABLED")
            self.assertEqual(e["status"], "VALID")
            self.assertEqual(sorted((c["capacityUnit"], c["maxCapacity"]) for c in e["capacityLimits"]),
                             [("ml.g5.xlarge", 4), ("ml.m5.large", 2)])
            self.assertEqual(e["tags"], {"team": "ml"})
        all_names = [e["serviceEnvironmentName"]
                     for e in b.describe_service_environments()["serviceEnvironments"]]
        self.assertIn(name, all_names)

        r = b.update_service_environment(serviceEnvironment=arn,
                                         capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 7}])
        self.assertEqual(r["serviceEnvironmentArn"], arn)
        e = b.describe_service_environments(serviceEnvironments=[name])["serviceEnvironments"][0]
        self.assertEqual(e["capacityLimits"], [{"capacityUnit": INSTANCE, "maxCapacity": 7}])

        b.update_service_environment(serviceEnvironment=name, state="DISABLED")
        e = b.describe_service_environments(serviceEnvironments=[name])["serviceEnvironments"][0]
        self.assertEqual(e["state"], "DISABLED")
        b.delete_service_environment(serviceEnvironment=name)
        self.assertEqual(
            b.describe_service_environments(serviceEnvironments=[name])["serviceEnvironments"], [])

    def test_describe_service_environments_pages(self):
        b = self.batch
        names = {self.fx.environment(1) for _ in range(3)}
        seen, token, pages = [], None, 0
        while True:
            kwargs = {"maxResults": 1}
            if token:
                kwargs["nextToken"] = token
            r = b.describe_service_environments(**kwargs)
            pages += 1
            self.assertLessEqual(len(r["serviceEnvironments"]), 1)
            seen += [e["serviceEnvironmentName"] for e in r["serviceEnvironments"]]
            token = r.get("nextToken")
            if not token:
                break
            self.assertLess(pages, 200)
        self.assertEqual(len(seen), len(set(seen)), seen)
        self.assertTrue(names <= set(seen))

    # --- scheduling policies ---

    def test_scheduling_policy_lifecycle(self):
        b = self.batch
        name = self.fx.unique("sp")
        r = b.create_scheduling_policy(
            name=name, quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"},
            tags={"k": "v"})
        arn = ARN_PREFIX + "scheduling-policy/" + name
        self.assertEqual(r, {**r, "name": name, "arn": arn})

        p = b.describe_scheduling_policies(arns=[arn])["schedulingPolicies"]
        self.assertEqual(len(p), 1)
        self.assertEqual(p[0]["name"], name)
        self.assertEqual(p[0]["arn"], arn)
        self.assertEqual(p[0]["quotaSharePolicy"], {"idleResourceAssignmentStrategy": "FIFO"})
        self.assertEqual(p[0]["tags"], {"k": "v"})
        self.assertNotIn("fairsharePolicy", p[0])

        b.update_scheduling_policy(arn=arn,
                                   quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
        p = b.describe_scheduling_policies(arns=[arn])["schedulingPolicies"][0]
        self.assertEqual(p["quotaSharePolicy"], {"idleResourceAssignmentStrategy": "FIFO"})

        # Paged listing finds it exactly once.
        other = self.fx.policy()
        seen, token = [], None
        for _ in range(200):
            kwargs = {"maxResults": 1}
            if token:
                kwargs["nextToken"] = token
            r = b.list_scheduling_policies(**kwargs)
            self.assertLessEqual(len(r["schedulingPolicies"]), 1)
            seen += [x["arn"] for x in r["schedulingPolicies"]]
            token = r.get("nextToken")
            if not token:
                break
        self.assertEqual(len(seen), len(set(seen)))
        self.assertIn(arn, seen)
        self.assertIn(other, seen)

        # In use by a queue: refused; free again: deleted.
        env = self.fx.environment(1)
        queue = self.fx.queue(env, arn)
        self.assertClientError(b.delete_scheduling_policy, name, arn=arn)
        b.update_job_queue(jobQueue=queue, state="DISABLED")
        b.delete_job_queue(jobQueue=queue)
        b.delete_scheduling_policy(arn=arn)
        self.assertEqual(b.describe_scheduling_policies(arns=[arn])["schedulingPolicies"], [])
        arns = [x["arn"] for x in b.list_scheduling_policies()["schedulingPolicies"]]
        self.assertNotIn(arn, arns)

    # --- job queues ---

    def test_job_queue_lifecycle(self):
        b = self.batch
        env = self.fx.environment(2)
        policy = self.fx.policy()
        name = self.fx.unique("jq")
        r = b.create_job_queue(
            jobQueueName=name, priority=10, jobQueueType="SAGEMAKER_TRAINING",
            schedulingPolicyArn=policy,
            serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}], tags={"a": "1"})
        arn = ARN_PREFIX + "job-queue/" + name
        self.assertEqual(r["jobQueueName"], name)
        self.assertEqual(r["jobQueueArn"], arn)
        for key in (name, arn):
            q = b.describe_job_queues(jobQueues=[key])["jobQueues"]
            self.assertEqual(len(q), 1)
            q = q[0]
            self.assertEqual(q["jobQueueName"], name)
            self.assertEqual(q["jobQueueArn"], arn)
            self.assertEqual(q["state"], "ENABLED")
            self.assertEqual(q["status"], "VALID")
            self.assertEqual(q["statusReason"], "JobQueue Healthy")
            self.assertEqual(q["priority"], 10)
            self.assertEqual(q["schedulingPolicyArn"], policy)
            self.assertEqual(q["jobQueueType"], "SAGEMAKER_TRAINING")
            self.assertEqual(len(q["serviceEnvironmentOrder"]), 1)
            self.assertEqual(q["serviceEnvironmentOrder"][0]["order"], 1)
            self.assertIn(q["serviceEnvironmentOrder"][0]["serviceEnvironment"],
                          (env, ARN_PREFIX + "service-environment/" + env))
            self.assertEqual(q["tags"], {"a": "1"})
        self.assertIn(name, [q["jobQueueName"] for q in b.describe_job_queues()["jobQueues"]])

        r = b.update_job_queue(jobQueue=arn, priority=20)
        self.assertEqual(r["jobQueueArn"], arn)
        self.assertEqual(b.describe_job_queues(jobQueues=[name])["jobQueues"][0]["priority"], 20)
        b.update_job_queue(jobQueue=name, state="DISABLED")
        self.assertEqual(b.describe_job_queues(jobQueues=[name])["jobQueues"][0]["state"],
                         "DISABLED")
        b.delete_job_queue(jobQueue=name)
        self.assertEqual(b.describe_job_queues(jobQueues=[name])["jobQueues"], [])
        # The environment is free again.
        b.update_service_environment(serviceEnvironment=env, state="DISABLED")
        b.delete_service_environment(serviceEnvironment=env)

    # --- quota shares ---

    def test_quota_share_lifecycle(self):
        b = self.batch
        env = self.fx.environment(10)
        queue = self.fx.queue(env, self.fx.policy())
        r = b.create_quota_share(
            quotaShareName="TeamA", jobQueue=queue,
            capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 5}],
            resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 200},
            preemptionConfiguration={"inSharePreemption": "ENABLED"},
            tags={"Department": "Engineering"})
        arn = f"{ARN_PREFIX}job-queue/{queue}/quota-share/TeamA"
        self.assertEqual(r["quotaShareName"], "TeamA")
        self.assertEqual(r["quotaShareArn"], arn)
        # Queue given by ARN works too.
        arn_b = self.fx.share(ARN_PREFIX + "job-queue/" + queue, name="TeamB", capacity=2,
                              strategy="LEND")
        self.assertEqual(arn_b, f"{ARN_PREFIX}job-queue/{queue}/quota-share/TeamB")
        self.fx.share(queue, name="TeamC", capacity=1, strategy="RESERVE")

        d = b.describe_quota_share(quotaShareArn=arn)
        self.assertEqual(d["quotaShareName"], "TeamA")
        self.assertEqual(d["quotaShareArn"], arn)
        self.assertEqual(d["jobQueueArn"], ARN_PREFIX + "job-queue/" + queue)
        self.assertEqual(d["capacityLimits"], [{"capacityUnit": INSTANCE, "maxCapacity": 5}])
        self.assertEqual(d["resourceSharingConfiguration"],
                         {"strategy": "LEND_AND_BORROW", "borrowLimit": 200})
        self.assertEqual(d["preemptionConfiguration"], {"inSharePreemption": "ENABLED"})
        self.assertEqual(d["state"], "ENABLED")
        self.assertEqual(d["status"], "VALID")
        self.assertEqual(d["tags"], {"Department": "Engineering"})

        listed = b.list_quota_shares(jobQueue=queue)["quotaShares"]
        self.assertEqual(sorted(s["quotaShareName"] for s in listed), ["TeamA", "TeamB", "TeamC"])
        team_a = next(s for s in listed if s["quotaShareName"] == "TeamA")
        self.assertEqual(team_a["quotaShareArn"], arn)
        self.assertEqual(team_a["jobQueueArn"], ARN_PREFIX + "job-queue/" + queue)
        self.assertEqual(team_a["state"], "ENABLED")
        # Pages of one, following nextToken, no duplicates or gaps.
        seen, token = [], None
        for _ in range(10):
            kwargs = {"jobQueue": ARN_PREFIX + "job-queue/" + queue, "maxResults": 1}
            if token:
                kwargs["nextToken"] = token
            r = b.list_quota_shares(**kwargs)
            self.assertLessEqual(len(r["quotaShares"]), 1)
            seen += [s["quotaShareName"] for s in r["quotaShares"]]
            token = r.get("nextToken")
            if not token:
                break
        self.assertEqual(sorted(seen), ["TeamA", "TeamB", "TeamC"])

        r = b.update_quota_share(
            quotaShareArn=arn, capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 3}],
            resourceSharingConfiguration={"strategy": "RESERVE"},
            preemptionConfiguration={"inSharePreemption": "DISABLED"})
        self.assertEqual(r["quotaShareArn"], arn)
        self.assertEqual(r["quotaShareName"], "TeamA")
        d = b.describe_quota_share(quotaShareArn=arn)
        self.assertEqual(d["capacityLimits"], [{"capacityUnit": INSTANCE, "maxCapacity": 3}])
        self.assertEqual(d["resourceSharingConfiguration"]["strategy"], "RESERVE")
        self.assertNotIn("borrowLimit", d["resourceSharingConfiguration"])
        self.assertEqual(d["preemptionConfiguration"], {"inSharePreemption": "DISABLED"})
        self.assertEqual(d["tags"], {"Department": "Engineering"})

        b.update_quota_share(quotaShareArn=arn, state="DISABLED")
        self.assertEqual(b.describe_quota_share(quotaShareArn=arn)["state"], "DISABLED")
        b.delete_quota_share(quotaShareArn=arn)
        self.assertClientError(b.describe_quota_share, "does not exist", quotaShareArn=arn)
        self.assertEqual(sorted(s["quotaShareName"]
                                for s in b.list_quota_shares(jobQueue=queue)["quotaShares"]),
                         ["TeamB", "TeamC"])

    def test_duplicate_names_already_exist(self):
        env = self.fx.environment(1)
        self.assertClientError(self.fx.environment, "already exists", name=env)
        policy = self.fx.policy()
        self.assertClientError(self.fx.policy, "already exists",
                               name=policy.rsplit("/", 1)[1])
        env2 = self.fx.environment(1)
        queue = self.fx.queue(env, policy)
        self.assertClientError(self.fx.queue, "already exists", env=env2, policy_arn=policy,
                               name=queue)
        self.fx.share(queue, name="dup")
        self.assertClientError(self.fx.share, "already exists", queue=queue, name="dup")

    # --- service jobs ---

    def test_job_succeeds_with_attempts_hosts_and_environment(self):
        b = self.batch
        queue, _ = self.fx.qm_queue(3, shares=(("qs", 3),))
        out = self.scratch
        # GLIBC_TUNABLES: a server on glibc's malloc (a sanitizer build) runs itself again with
        # huge-page malloc (env/malloc.h), and its jobs must not inherit that.
        script = ('printf "%s|%s|%s|%s" "$SM_CURRENT_HOST" "$SM_HOSTS" "$GREETING" '
                  '"${GLIBC_TUNABLES-unset}" > "$OUT_DIR/$SM_CURRENT_HOST"')
        r = self.fx.submit(queue, "qs", name="two-hosts", priority=7,
                           serviceRequestPayload=payload(script, count=2,
                                                         environment={"GREETING": "hello",
                                                                      "OUT_DIR": out}),
                           tags={"run": "one"})
        job_id = r["jobId"]
        self.assertEqual(r["jobName"], "two-hosts")
        self.assertEqual(r["jobArn"], ARN_PREFIX + "service-job/" + job_id)
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        self.assertEqual(d["jobId"], job_id)
        self.assertEqual(d["jobArn"], r["jobArn"])
        self.assertEqual(d["jobName"], "two-hosts")
        self.assertEqual(d["jobQueue"], ARN_PREFIX + "job-queue/" + queue)
        self.assertEqual(d["serviceJobType"], "SAGEMAKER_TRAINING")
        self.assertEqual(d["quotaShareName"], "qs")
        self.assertEqual(d["schedulingPriority"], 7)
        self.assertEqual(d["capacityUsage"], [{"capacityUnit": INSTANCE, "quantity": 2.0}])
        self.assertEqual(d["tags"], {"run": "one"})
        self.assertFalse(d["isTerminated"])
        self.assertEqual(json.loads(d["serviceRequestPayload"])["ResourceConfig"]["InstanceCount"], 2)
        self.assertTrue(d["statusReason"].startswith("Received status from SageMaker"),
                        d["statusReason"])
        for f in ("createdAt", "scheduledAt", "startedAt", "stoppedAt"):
            self.assertEpochMs(d[f], f)
        self.assertLessEqual(d["createdAt"], d["scheduledAt"])
        self.assertLessEqual(d["scheduledAt"], d["startedAt"])
        self.assertLessEqual(d["startedAt"], d["stoppedAt"])

        self.assertEqual(len(d["attempts"]), 1, d["attempts"])
        a = d["attempts"][0]
        self.assertEqual(a["serviceResourceId"]["name"], "TrainingJobArn")
        self.assertTrue(a["serviceResourceId"]["value"].startswith(SAGEMAKER_ARN_PREFIX),
                        a["serviceResourceId"])
        self.assertEpochMs(a["startedAt"], "attempts[0].startedAt")
        self.assertEpochMs(a["stoppedAt"], "attempts[0].stoppedAt")
        self.assertLessEqual(a["startedAt"], a["stoppedAt"])
        self.assertIn("statusReason", a)
        self.assertEqual(d["latestAttempt"]["serviceResourceId"], a["serviceResourceId"])

        hosts = sorted(os.listdir(out))
        # On Slurm the hosts are named after their nodes (issue 11), in the allocation's order.
        if self.server.executor == "local":
            self.assertEqual(hosts, ["algo-1", "algo-2"])
        self.assertEqual(len(hosts), 2, hosts)
        for h in hosts:
            with open(os.path.join(out, h)) as f:
                current, sm_hosts, greeting, tunables = f.read().split("|")
            self.assertEqual(current, h)
            self.assertEqual(sorted(json.loads(sm_hosts)), hosts)
            self.assertEqual(greeting, "hello")
            self.assertNotIn("hugetlb", tunables)

    def test_failing_job_reports_algorithm_error(self):
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        job_id = self.fx.submit(queue, "qs", script="exit 3")["jobId"]
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "FAILED")
        self.assertEqual(d["statusReason"],
                         "Received status from SageMaker: AlgorithmError: algo-1 exited with code 3")
        self.assertEqual(len(d["attempts"]), 1)
        self.assertEqual(d["attempts"][0]["statusReason"], d["statusReason"])
        self.assertEpochMs(d["stoppedAt"], "stoppedAt")

    def test_retry_strategy_attempts_two_retries_once(self):
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        job_id = self.fx.submit(queue, "qs", script="exit 3",
                                retryStrategy={"attempts": 2})["jobId"]
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "FAILED")
        self.assertEqual(d["retryStrategy"]["attempts"], 2)
        self.assertEqual(len(d["attempts"]), 2, d["attempts"])
        arns = [a["serviceResourceId"]["value"] for a in d["attempts"]]
        self.assertEqual(len(set(arns)), 2, "each attempt is its own training job")
        self.assertEqual(d["latestAttempt"]["serviceResourceId"]["value"], arns[-1])
        for a in d["attempts"]:
            self.assertIn("AlgorithmError", a["statusReason"])

    def test_retry_then_success(self):
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        marker = os.path.join(self.scratch, "first-attempt-done")
        script = f'if [ -e "{marker}" ]; then exit 0; fi; touch "{marker}"; exit 5'
        job_id = self.fx.submit(queue, "qs", script=script,
                                retryStrategy={"attempts": 3})["jobId"]
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        self.assertEqual(len(d["attempts"]), 2)
        self.assertIn("exited with code 5", d["attempts"][0]["statusReason"])

    def test_evaluate_on_exit_exit_rule_stops_retries(self):
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        job_id = self.fx.submit(
            queue, "qs", script="exit 4",
            retryStrategy={"attempts": 3, "evaluateOnExit": [
                {"action": "EXIT", "onStatusReason": "Received status from SageMaker: AlgorithmError: *"}]}
        )["jobId"]
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "FAILED")
        self.assertEqual(len(d["attempts"]), 1)

    def test_job_arn_accepted_wherever_job_id_is(self):
        b = self.batch
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        blocker = self.fx.submit(queue, "qs", script=SLEEPER)
        self.fx.wait_status(blocker["jobId"], "RUNNING")
        r = self.fx.submit(queue, "qs", script="exit 0", priority=1)
        arn = r["jobArn"]
        d = b.describe_service_job(jobId=arn)
        self.assertEqual(d["jobId"], r["jobId"])
        self.assertEqual(d["status"], "RUNNABLE")
        u = b.update_service_job(jobId=arn, schedulingPriority=9)
        self.assertEqual(u["jobId"], r["jobId"])
        self.assertEqual(u["jobArn"], arn)
        self.assertEqual(u["jobName"], r["jobName"])
        self.assertEqual(b.describe_service_job(jobId=r["jobId"])["schedulingPriority"], 9)
        b.terminate_service_job(jobId=arn, reason="no longer needed")
        d = self.fx.wait_status(r["jobId"], "FAILED")
        self.assertTrue(d["isTerminated"])
        self.assertEqual(d["statusReason"], "no longer needed")
        # The running one, by ARN too.
        b.terminate_service_job(jobId=blocker["jobArn"], reason="stop it")
        d = self.fx.wait_status(blocker["jobId"], "FAILED", timeout=20)
        self.assertTrue(d["isTerminated"])
        self.assertEqual(d["statusReason"], "stop it")
        self.assertEqual(len(d["attempts"]), 1)
        self.assertIn("stoppedAt", d["attempts"][0])
        # Tags by job ARN.
        b.tag_resource(resourceArn=arn, tags={"x": "y"})
        self.assertEqual(b.list_tags_for_resource(resourceArn=arn)["tags"], {"x": "y"})

    def test_update_and_list_service_jobs(self):
        b = self.batch
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        running = self.fx.submit(queue, "qs", script=SLEEPER, name="holder")["jobId"]
        self.fx.wait_status(running, "RUNNING")
        waiting = self.fx.submit(queue, "qs", name="waiter", priority=2)["jobId"]
        self.assertEqual(self.fx.describe(waiting)["status"], "RUNNABLE")
        b.update_service_job(jobId=waiting, schedulingPriority=5)
        self.assertEqual(self.fx.describe(waiting)["schedulingPriority"], 5)

        runnable = b.list_service_jobs(jobQueue=queue, jobStatus="RUNNABLE")["jobSummaryList"]
        self.assertEqual([j["jobId"] for j in runnable], [waiting])
        s = runnable[0]
        self.assertEqual(s["jobName"], "waiter")
        self.assertEqual(s["jobArn"], ARN_PREFIX + "service-job/" + waiting)
        self.assertEqual(s["serviceJobType"], "SAGEMAKER_TRAINING")
        self.assertEqual(s["quotaShareName"], "qs")
        self.assertEqual(s["status"], "RUNNABLE")
        self.assertEqual(s["capacityUsage"], [{"capacityUnit": INSTANCE, "quantity": 1.0}])
        self.assertEpochMs(s["createdAt"], "createdAt")
        self.assertNotIn("schedulingPriority", s)
        running_list = b.list_service_jobs(jobQueue=queue, jobStatus="RUNNING")["jobSummaryList"]
        self.assertEqual([j["jobId"] for j in running_list], [running])
        self.assertIn("latestAttempt", running_list[0])
        self.assertEpochMs(running_list[0]["startedAt"], "startedAt")
        # Queue by ARN.
        by_arn = b.list_service_jobs(jobQueue=ARN_PREFIX + "job-queue/" + queue,
                                     jobStatus="RUNNABLE")["jobSummaryList"]
        self.assertEqual([j["jobId"] for j in by_arn], [waiting])
        b.terminate_service_job(jobId=running, reason="done")
        self.fx.wait_status(waiting, "SUCCEEDED")
        succeeded = b.list_service_jobs(jobQueue=queue, jobStatus="SUCCEEDED")["jobSummaryList"]
        self.assertEqual([j["jobId"] for j in succeeded], [waiting])
        failed = b.list_service_jobs(jobQueue=queue, jobStatus="FAILED")["jobSummaryList"]
        self.assertEqual([j["jobId"] for j in failed], [running])

    def test_client_token_idempotency(self):
        b = self.batch
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        token = uuid.uuid4().hex
        body = dict(jobName="idem", jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                    quotaShareName="qs", serviceRequestPayload=payload("exit 0"),
                    schedulingPriority=3, clientToken=token)
        first = b.submit_service_job(**body)
        second = b.submit_service_job(**body)
        self.assertEqual(first["jobId"], second["jobId"])
        self.assertEqual(first["jobArn"], second["jobArn"])
        self.assertEqual(second["jobName"], "idem")
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            b.submit_service_job(**{**body, "schedulingPriority": 4})
        self.assertEqual(error_code(cm.exception), "ClientException")
        self.assertIn("clientToken", error_message(cm.exception))
        self.fx.wait_status(first["jobId"], "SUCCEEDED")
        jobs = b.list_service_jobs(jobQueue=queue, filters=[{"name": "JOB_NAME", "values": ["idem"]}])
        self.assertEqual([j["jobId"] for j in jobs["jobSummaryList"]], [first["jobId"]])
        # A different token makes a new job.
        third = b.submit_service_job(**{**body, "clientToken": uuid.uuid4().hex})
        self.assertNotEqual(third["jobId"], first["jobId"])

    def test_attempt_timeout_fails_without_retry(self):
        queue, _ = self.fx.qm_queue(1, shares=(("qs", 1),))
        job_id = self.fx.submit(queue, "qs", script=SLEEPER, retryStrategy={"attempts": 2},
                                timeoutConfig={"attemptDurationSeconds": 1})["jobId"]
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"), timeout=20)
        self.assertEqual(d["status"], "FAILED")
        self.assertIn("timeout", d["statusReason"].lower())
        self.assertEqual(d["timeoutConfig"], {"attemptDurationSeconds": 1})
        self.assertEqual(len(d["attempts"]), 1, "a timed-out attempt is not retried")

    def test_one_failing_host_fails_the_attempt_and_stops_the_others(self):
        queue, _ = self.fx.qm_queue(2, shares=(("qs", 2),))
        # The second host (algo-2, whatever the executor names it) fails on its own.
        script = ('if [ "$SM_CURRENT_HOST" != "$(echo "$SM_HOSTS" | cut -d\\" -f2)" ]; '
                  'then exit 7; fi; ' + SLEEPER)
        job_id = self.fx.submit(queue, "qs", serviceRequestPayload=payload(script, count=2))["jobId"]
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"), timeout=20)
        self.assertEqual(d["status"], "FAILED")
        self.assertEqual(d["statusReason"],
                         "Received status from SageMaker: AlgorithmError: algo-2 exited with code 7")
        # Capacity is free again: a new two-host job runs.
        again = self.fx.submit(queue, "qs", serviceRequestPayload=payload("exit 0", count=2))
        self.fx.wait_status(again["jobId"], "SUCCEEDED")

    def test_environment_capacity_change_dispatches_waiting_job(self):
        b = self.batch
        env = self.fx.environment(0)
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="qs", capacity=1)
        job_id = self.fx.submit(queue, "qs", script="exit 0")["jobId"]
        d = self.fx.describe(job_id)
        self.assertEqual(d["status"], "RUNNABLE")
        self.assertTrue(d.get("statusReason", "").startswith(
            "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"), d.get("statusReason"))
        b.update_service_environment(serviceEnvironment=env,
                                     capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 1}])
        self.fx.wait_status(job_id, "SUCCEEDED")

    def test_plain_fifo_queue_runs_jobs_in_order(self):
        env = self.fx.environment(1)
        queue = self.fx.queue(env)
        first = self.fx.submit(queue, script=SLEEPER)["jobId"]
        self.fx.wait_status(first, "RUNNING")
        later = [self.fx.submit(queue, script="exit 0", name=f"fifo-{i}")["jobId"] for i in range(3)]
        snap = self.batch.get_job_queue_snapshot(jobQueue=queue)
        self.assertEqual([j["jobArn"] for j in snap["frontOfQueue"]["jobs"]],
                         [ARN_PREFIX + "service-job/" + j for j in later])
        self.assertEqual(snap["queueUtilization"]["totalCapacityUsage"],
                         [{"capacityUnit": INSTANCE, "quantity": 1.0}])
        self.batch.terminate_service_job(jobId=first, reason="next")
        for j in later:
            self.fx.wait_status(j, "SUCCEEDED")
        stops = [self.fx.describe(j)["startedAt"] for j in later]
        self.assertEqual(stops, sorted(stops))

    def test_disabled_share_still_runs_its_queued_jobs(self):
        b = self.batch
        queue, arns = self.fx.qm_queue(1, shares=(("qs", 1),))
        running = self.fx.submit(queue, "qs", script=SLEEPER)["jobId"]
        self.fx.wait_status(running, "RUNNING")
        queued = self.fx.submit(queue, "qs", script="exit 0")["jobId"]
        b.update_quota_share(quotaShareArn=arns["qs"], state="DISABLED")
        b.terminate_service_job(jobId=running, reason="make room")
        self.fx.wait_status(queued, "SUCCEEDED")

    def test_deleting_share_or_queue_terminates_its_jobs(self):
        b = self.batch
        env = self.fx.environment(1)
        queue = self.fx.queue(env, self.fx.policy())
        doomed = self.fx.share(queue, name="doomed", capacity=1)
        self.fx.share(queue, name="other", capacity=1)
        running = self.fx.submit(queue, "doomed", script=SLEEPER)["jobId"]
        self.fx.wait_status(running, "RUNNING")
        waiting = self.fx.submit(queue, "doomed", script="exit 0")["jobId"]
        other = self.fx.submit(queue, "other", script="exit 0")["jobId"]
        b.update_quota_share(quotaShareArn=doomed, state="DISABLED")
        b.delete_quota_share(quotaShareArn=doomed)
        for j in (running, waiting):
            d = self.fx.wait_status(j, "FAILED", timeout=20)
            self.assertIn("doomed", d["statusReason"])
        self.fx.wait_status(other, "SUCCEEDED")
        last = self.fx.submit(queue, "other", script=SLEEPER)["jobId"]
        self.fx.wait_status(last, "RUNNING")
        b.update_job_queue(jobQueue=queue, state="DISABLED")
        b.delete_job_queue(jobQueue=queue)
        self.fx.wait_status(last, "FAILED", timeout=20)

    def test_share_named_like_the_implicit_share_is_visible(self):
        # "_fifo" is a valid share name; it must not be mistaken for a plain queue's own share.
        b = self.batch
        queue, _ = self.fx.qm_queue(2, shares=(("_fifo", 1), ("team", 1)))
        running = self.fx.submit(queue, "_fifo", script=SLEEPER)["jobId"]
        self.fx.wait_status(running, "RUNNING")
        self.addCleanup(b.terminate_service_job, jobId=running, reason="over")
        snap = b.get_job_queue_snapshot(jobQueue=queue)
        per = {s["quotaShareName"]: s["capacityUsage"]
               for s in snap["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"]}
        self.assertEqual(set(per), {"_fifo", "team"})
        self.assertEqual(per["_fifo"], [{"capacityUnit": INSTANCE, "quantity": 1.0}])
        self.assertIn("_fifo", snap["frontOfQuotaShares"]["quotaShares"])

    # --- snapshot ---

    def test_job_queue_snapshot(self):
        b = self.batch
        env = self.fx.environment(3)
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="A", capacity=1, strategy="LEND_AND_BORROW", borrow_limit=-1)
        self.fx.share(queue, name="B", capacity=1, strategy="LEND")
        self.fx.share(queue, name="C", capacity=1, strategy="RESERVE")
        a_own = self.fx.submit(queue, "A", script=SLEEPER, priority=3)["jobId"]
        self.fx.wait_status(a_own, "RUNNING")
        a_borrow = self.fx.submit(queue, "A", script=SLEEPER, priority=2)["jobId"]
        self.fx.wait_status(a_borrow, "RUNNING")
        c_run = self.fx.submit(queue, "C", script=SLEEPER)["jobId"]
        self.fx.wait_status(c_run, "RUNNING")
        a_wait = self.fx.submit(queue, "A", script=SLEEPER, priority=1)
        c_wait = self.fx.submit(queue, "C", script=SLEEPER)
        for j in (a_wait, c_wait):
            self.assertEqual(self.fx.describe(j["jobId"])["status"], "RUNNABLE")

        snap = b.get_job_queue_snapshot(jobQueue=queue)
        front = snap["frontOfQueue"]
        self.assertEqual(sorted(j["jobArn"] for j in front["jobs"]),
                         sorted([a_wait["jobArn"], c_wait["jobArn"]]))
        for j in front["jobs"]:
            self.assertEpochMs(j["earliestTimeAtPosition"], "earliestTimeAtPosition")
        self.assertEpochMs(front["lastUpdatedAt"], "frontOfQueue.lastUpdatedAt")
        shares = snap["frontOfQuotaShares"]["quotaShares"]
        self.assertEqual([j["jobArn"] for j in shares["A"]], [a_wait["jobArn"]])
        self.assertEqual(shares.get("B", []), [])
        self.assertEqual([j["jobArn"] for j in shares["C"]], [c_wait["jobArn"]])

        util = snap["queueUtilization"]
        self.assertEqual(util["totalCapacityUsage"], [{"capacityUnit": INSTANCE, "quantity": 3.0}])
        per = {s["quotaShareName"]: s["capacityUsage"]
               for s in util["quotaShareUtilization"]["topCapacityUtilization"]}
        self.assertEqual(per["A"], [{"capacityUnit": INSTANCE, "quantity": 2.0}])
        self.assertEqual(per.get("B", [{"capacityUnit": INSTANCE, "quantity": 0.0}]),
                         [{"capacityUnit": INSTANCE, "quantity": 0.0}])
        self.assertEqual(per["C"], [{"capacityUnit": INSTANCE, "quantity": 1.0}])

        # The extension fields (boto3 drops what the model lacks, so read the raw answer).
        status, raw = self.server.raw("getjobqueuesnapshot",
                                      {"jobQueue": ARN_PREFIX + "job-queue/" + queue})
        self.assertEqual(status, 200, raw)
        top = {s["quotaShareName"]: s
               for s in raw["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"]}
        self.assertEqual(set(top), {"A", "B", "C"})

        def qty(entry, field):
            return sum(x["quantity"] for x in entry[field] if x["capacityUnit"] == INSTANCE)
        self.assertEqual((qty(top["A"], "borrowed"), qty(top["A"], "lent"), top["A"]["waitingJobs"]),
                         (1.0, 0.0, 1))
        self.assertEqual((qty(top["B"], "borrowed"), qty(top["B"], "lent"), top["B"]["waitingJobs"]),
                         (0.0, 1.0, 0))
        self.assertEqual((qty(top["C"], "borrowed"), qty(top["C"], "lent"), top["C"]["waitingJobs"]),
                         (0.0, 0.0, 1))
        for j in (a_own, a_borrow, c_run):
            b.terminate_service_job(jobId=j, reason="test over")

    # --- tags ---

    def test_tags_on_every_resource(self):
        b = self.batch
        env = self.fx.environment(1)
        policy = self.fx.policy()
        queue = self.fx.queue(env, policy)
        share = self.fx.share(queue, name="tagged")
        job = self.fx.submit(queue, "tagged", script="exit 0", tags={"from": "submit"})["jobArn"]
        arns = {"environment": ARN_PREFIX + "service-environment/" + env,
                "policy": policy,
                "queue": ARN_PREFIX + "job-queue/" + queue,
                "share": share,
                "job": job}
        initial = {"job": {"from": "submit"}}
        for kind, arn in arns.items():
            with self.subTest(kind=kind, arn=arn):
                self.assertEqual(b.list_tags_for_resource(resourceArn=arn)["tags"],
                                 initial.get(kind, {}))
                b.tag_resource(resourceArn=arn, tags={"kind": kind, "cost": "42"})
                b.tag_resource(resourceArn=arn, tags={"team": "nlp"})
                b.untag_resource(resourceArn=arn, tagKeys=["cost"])
        # Each resource has its own tags and no other resource's.
        for kind, arn in arns.items():
            with self.subTest(kind=kind, arn=arn):
                self.assertEqual(b.list_tags_for_resource(resourceArn=arn)["tags"],
                                 {**initial.get(kind, {}), "kind": kind, "team": "nlp"})
        self.assertEqual(b.describe_quota_share(quotaShareArn=share)["tags"],
                         {"kind": "share", "team": "nlp"})
        self.assertEqual(b.describe_service_job(jobId=job)["tags"],
                         {"from": "submit", "kind": "job", "team": "nlp"})
        self.assertEqual(b.describe_job_queues(jobQueues=[queue])["jobQueues"][0]["tags"],
                         {"kind": "queue", "team": "nlp"})
        self.assertEqual(b.describe_scheduling_policies(arns=[policy])["schedulingPolicies"][0]["tags"],
                         {"kind": "policy", "team": "nlp"})
        self.assertEqual(
            b.describe_service_environments(serviceEnvironments=[env])["serviceEnvironments"][0]["tags"],
            {"kind": "environment", "team": "nlp"})
        for missing in (ARN_PREFIX + "job-queue/no-such-queue",
                        ARN_PREFIX + "job-queue/" + queue + "/quota-share/no-such-share"):
            with self.subTest(missing=missing):
                with self.assertRaises(botocore.exceptions.ClientError) as cm:
                    b.list_tags_for_resource(resourceArn=missing)
                self.assertEqual(error_code(cm.exception), "ClientException")


if __name__ == "__main__":
    unittest.main()
