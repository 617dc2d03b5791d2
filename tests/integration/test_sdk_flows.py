"""The SageMaker Python SDK's aws_batch flows, as its notebooks and its own integration test drive
the API (issue 9, section 2). The SDK is not installed here; these tests send the same requests
with boto3, the way the SDK's helpers build them (its `sagemaker.aws_batch` module)."""

import json
import os
import time
import unittest

import botocore.exceptions

from allot_harness import ServerTestCase, error_code, error_message, payload, wait_for

EXISTS = "Object already exists"


def create_or_get(create, describe):
    """AwsBatchResourceManager's idempotent create: an existing object is not an error."""
    try:
        return create()
    except botocore.exceptions.ClientError as e:
        if error_code(e) == "ClientException" and error_message(e) == EXISTS:
            return describe()
        raise


class SdkFlowsTest(ServerTestCase):
    server_args = ("--no-sandbox",)

    def test_rerunning_the_set_up_cell_finds_every_object(self):
        b = self.batch
        names = {"policy": self.fx.unique("pol"), "env": self.fx.unique("se"),
                 "queue": self.fx.unique("jq"), "share": "team-a"}

        def set_up():
            policy = create_or_get(
                lambda: b.create_scheduling_policy(
                    name=names["policy"],
                    quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"}),
                lambda: b.describe_scheduling_policies(
                    arns=[f"arn:aws:batch:local:000000000000:scheduling-policy/{names['policy']}"]
                )["schedulingPolicies"][0])
            env = create_or_get(
                lambda: b.create_service_environment(
                    serviceEnvironmentName=names["env"], serviceEnvironmentType="SAGEMAKER_TRAINING",
                    capacityLimits=[{"capacityUnit": "ml.m5.large", "maxCapacity": 2}]),
                lambda: b.describe_service_environments(
                    serviceEnvironments=[names["env"]])["serviceEnvironments"][0])
            queue = create_or_get(
                lambda: b.create_job_queue(
                    jobQueueName=names["queue"], priority=1, jobQueueType="SAGEMAKER_TRAINING",
                    schedulingPolicyArn=policy["arn"],
                    serviceEnvironmentOrder=[{"order": 1,
                                              "serviceEnvironment": env["serviceEnvironmentArn"]}]),
                lambda: b.describe_job_queues(jobQueues=[names["queue"]])["jobQueues"][0])
            share = create_or_get(
                lambda: b.create_quota_share(
                    quotaShareName=names["share"], jobQueue=names["queue"],
                    capacityLimits=[{"capacityUnit": "ml.m5.large", "maxCapacity": 1}],
                    resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
                    preemptionConfiguration={"inSharePreemption": "ENABLED"}, state="ENABLED"),
                lambda: b.describe_quota_share(
                    quotaShareArn=f"{queue['jobQueueArn']}/quota-share/{names['share']}"))
            return policy, env, queue, share

        first = set_up()
        second = set_up()  # the notebook's cell, run again
        self.assertEqual(first[3]["quotaShareArn"], second[3]["quotaShareArn"])
        self.assertEqual(first[2]["jobQueueArn"], second[2]["jobQueueArn"])

    def test_already_exists_wording_for_every_create(self):
        b = self.batch
        env = self.fx.environment(1)
        policy_arn = self.fx.policy()
        policy_name = policy_arn.rsplit("/", 1)[1]
        queue = self.fx.queue(env, policy_arn)
        self.fx.share(queue, name="dup")
        attempts = {
            "environment": lambda: b.create_service_environment(
                serviceEnvironmentName=env, serviceEnvironmentType="SAGEMAKER_TRAINING",
                capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}]),
            "policy": lambda: b.create_scheduling_policy(
                name=policy_name, quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"}),
            "queue": lambda: b.create_job_queue(
                jobQueueName=queue, priority=1,
                serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}]),
            "share": lambda: self.fx.share(queue, name="dup"),
        }
        for kind, create in attempts.items():
            with self.subTest(kind=kind):
                with self.assertRaises(botocore.exceptions.ClientError) as cm:
                    create()
                self.assertEqual(error_code(cm.exception), "ClientException")
                self.assertEqual(error_message(cm.exception), EXISTS)

    def test_getting_started_num_instances_environment(self):
        """The getting-started notebook: a plain FIFO queue whose environment caps all instances
        together (NUM_INSTANCES), whatever their type."""
        b = self.batch
        env = self.fx.unique("se-num")
        b.create_service_environment(
            serviceEnvironmentName=env, serviceEnvironmentType="SAGEMAKER_TRAINING",
            capacityLimits=[{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 3}])
        queue = self.fx.queue(env)
        a = self.fx.submit(queue, script="sleep 3",
                           serviceRequestPayload=payload("sleep 3", "ml.m5.large", 2))["jobId"]
        c = self.fx.submit(queue, script="exit 0",
                           serviceRequestPayload=payload("exit 0", "ml.g5.xlarge", 2))["jobId"]
        d = self.fx.describe(a)
        self.assertEqual(d["capacityUsage"], [{"capacityUnit": "NUM_INSTANCES", "quantity": 2.0}])
        # 2 + 2 > 3: the second waits for the first, though its instance type differs.
        self.fx.wait_status(a, ("RUNNING",), timeout=20)
        self.assertEqual(self.fx.describe(c)["status"], "RUNNABLE")
        self.fx.wait_status(a, "SUCCEEDED", timeout=30)
        self.fx.wait_status(c, "SUCCEEDED", timeout=30)
        snap = b.get_job_queue_snapshot(jobQueue=queue)
        self.assertEqual(snap["queueUtilization"]["totalCapacityUsage"][0]["capacityUnit"],
                         "NUM_INSTANCES")

    def test_num_instances_needs_a_plain_queue(self):
        b = self.batch
        env = self.fx.unique("se-num")
        b.create_service_environment(
            serviceEnvironmentName=env, serviceEnvironmentType="SAGEMAKER_TRAINING",
            capacityLimits=[{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 3}])
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.fx.queue(env, self.fx.policy())
        self.assertIn("NUM_INSTANCES", error_message(cm.exception))

    def test_integration_test_flow(self):
        """The SDK's own integration test: an empty computeEnvironmentOrder beside the service
        environment, then submit, list by name, describe, update and terminate by job ARN."""
        b = self.batch
        env = self.fx.environment(1)
        queue = self.fx.unique("jq")
        b.create_job_queue(jobQueueName=queue, priority=1, state="ENABLED",
                           computeEnvironmentOrder=[], jobQueueType="SAGEMAKER_TRAINING",
                           serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}])
        name = self.fx.unique("sdk-job")
        submitted = b.submit_service_job(
            jobName=name, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
            serviceRequestPayload=payload("trap 'exit 143' TERM; sleep 30 & wait"),
            timeoutConfig={"attemptDurationSeconds": 86400},
            retryStrategy={"attempts": 1, "evaluateOnExit": [
                {"action": "RETRY", "onStatusReason": "Received status from SageMaker:"
                                                      "InternalServerError*"},
                {"action": "EXIT", "onStatusReason": "*"}]})
        arn = submitted["jobArn"]
        listed = b.list_service_jobs(jobQueue=queue,
                                     filters=[{"name": "JOB_NAME", "values": [name.upper()]}])
        self.assertEqual([j["jobArn"] for j in listed["jobSummaryList"]], [arn])
        wait_for(lambda: b.describe_service_job(jobId=arn)["status"] == "RUNNING", 20)
        self.assertEqual(b.update_service_job(jobId=arn, schedulingPriority=5)["jobArn"], arn)
        b.terminate_service_job(jobId=arn, reason="Default terminate reason")
        d = self.fx.wait_status(submitted["jobId"], "FAILED", timeout=30)
        self.assertTrue(d["isTerminated"])
        self.assertIn("Default terminate reason", d["statusReason"])


class SdkFlowsAsTeamMemberTest(ServerTestCase):
    """The SDK's job flows (submit to a share, list, list by name and by share, describe, update,
    wait, terminate by ARN) with the keys of a team member whose policy is
    docs/policies/team-member.json (issue 10): what a team does day to day needs no admin key."""

    server_args = ("--no-sandbox",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        b = cls.batch
        env = cls.fx.environment(2)
        policy = cls.fx.policy()
        b.create_job_queue(jobQueueName="q", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                           schedulingPolicyArn=policy,
                           serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}])
        for share in ("team-a", "team-b"):
            cls.fx.share("q", name=share, capacity=1)
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "..", "docs", "policies", "team-member.json")) as f:
            member_policy = json.load(f)
        status, out, _ = cls.server.request("POST", "/allot/v1/users",
                                            {"userName": "member", "policy": member_policy})
        assert status == 200, out
        cls.member = cls.server.client_with_keys(out["accessKey"]["accessKeyId"],
                                                 out["accessKey"]["secretAccessKey"])

    def test_a_member_runs_the_job_flows_of_its_share(self):
        m = self.member
        name = self.fx.unique("sdk-job")
        submitted = m.submit_service_job(
            jobName=name, jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName="team-a", schedulingPriority=3,
            serviceRequestPayload=payload("trap 'exit 143' TERM; sleep 30 & wait"))
        arn = submitted["jobArn"]
        by_name = m.list_service_jobs(jobQueue="q",
                                      filters=[{"name": "JOB_NAME", "values": [name]}])
        self.assertEqual([j["jobArn"] for j in by_name["jobSummaryList"]], [arn])
        wait_for(lambda: m.describe_service_job(jobId=arn)["status"] == "RUNNING", 20)
        by_share = m.list_service_jobs(jobQueue="q",
                                       filters=[{"name": "QUOTA_SHARE_NAME",
                                                 "values": ["team-a"]}])
        self.assertIn(arn, [j["jobArn"] for j in by_share["jobSummaryList"]])
        # list_jobs_by_share(share_identifier=...) filters by a fair-share identifier, which no
        # job of a quota-managed queue has: nothing, and no error.
        by_identifier = m.list_service_jobs(jobQueue="q", jobStatus="RUNNING",
                                            filters=[{"name": "SHARE_IDENTIFIER",
                                                      "values": ["team-a"]}])
        self.assertEqual(by_identifier["jobSummaryList"], [])
        self.assertNotIn("nextToken", by_identifier)
        self.assertEqual(m.update_service_job(jobId=arn, schedulingPriority=5)["jobArn"], arn)
        self.assertEqual(m.describe_service_job(jobId=arn)["schedulingPriority"], 5)
        m.terminate_service_job(jobId=arn, reason="Default terminate reason")
        wait_for(lambda: m.describe_service_job(jobId=arn)["status"] == "FAILED", 30)
        self.assertTrue(m.describe_service_job(jobId=arn)["isTerminated"])
        # Another team's share stays out of reach.
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            m.submit_service_job(jobName=name, jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                                 quotaShareName="team-b", serviceRequestPayload=payload("exit 0"))
        self.assertEqual(error_code(cm.exception), "AccessDeniedException")


if __name__ == "__main__":
    unittest.main()
