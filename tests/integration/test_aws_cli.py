"""The AWS CLI, unchanged, against `allot server`: only --endpoint-url and the environment differ."""

import json
import os
import shutil
import subprocess
import unittest

from allot_harness import ServerTestCase, ARN_PREFIX, INSTANCE, SLEEPER, AllotServer, Fixture, payload


@unittest.skipIf(shutil.which("aws") is None, "the AWS CLI (aws) is not on PATH")
class AwsCliTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        cls.env.update({"AWS_SHARED_CREDENTIALS_FILE": cls.server.credentials_file,
                        "AWS_DEFAULT_REGION": "local",
                        "AWS_CONFIG_FILE": os.devnull,
                        "AWS_PAGER": ""})


    def aws(self, *args, check=True):
        cmd = ["aws", "batch", *args, "--endpoint-url", self.server.endpoint, "--output", "json"]
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        if check:
            self.assertEqual(r.returncode, 0, f"{' '.join(args[:1])}: {r.stderr}")
            return json.loads(r.stdout) if r.stdout.strip() else {}
        return r

    def test_cli_end_to_end(self):
        se = self.aws("create-service-environment", "--service-environment-name", "cli-env",
                      "--service-environment-type", "SAGEMAKER_TRAINING",
                      "--capacity-limits", f"capacityUnit={INSTANCE},maxCapacity=2")
        self.assertEqual(se["serviceEnvironmentArn"], ARN_PREFIX + "service-environment/cli-env")
        policy = self.aws("create-scheduling-policy", "--name", "cli-policy",
                          "--quota-share-policy", "idleResourceAssignmentStrategy=FIFO")
        self.assertEqual(policy["arn"], ARN_PREFIX + "scheduling-policy/cli-policy")
        q = self.aws("create-job-queue", "--job-queue-name", "cli-q", "--priority", "1",
                     "--job-queue-type", "SAGEMAKER_TRAINING",
                     "--scheduling-policy-arn", policy["arn"],
                     "--service-environment-order", "order=1,serviceEnvironment=cli-env")
        self.assertEqual(q["jobQueueArn"], ARN_PREFIX + "job-queue/cli-q")
        share = self.aws("create-quota-share", "--quota-share-name", "team", "--job-queue", "cli-q",
                         "--capacity-limits", f"capacityUnit={INSTANCE},maxCapacity=2",
                         "--resource-sharing-configuration", "strategy=LEND_AND_BORROW,borrowLimit=100",
                         "--preemption-configuration", "inSharePreemption=ENABLED")
        self.assertEqual(share["quotaShareArn"], ARN_PREFIX + "job-queue/cli-q/quota-share/team")
        shares = self.aws("list-quota-shares", "--job-queue", "cli-q")["quotaShares"]
        self.assertEqual([s["quotaShareName"] for s in shares], ["team"])
        self.assertEqual(shares[0]["resourceSharingConfiguration"],
                         {"strategy": "LEND_AND_BORROW", "borrowLimit": 100})

        # One job that runs until stopped, one that finishes at once.
        long_job = self.aws("submit-service-job", "--job-name", "cli-long", "--job-queue", "cli-q",
                            "--service-job-type", "SAGEMAKER_TRAINING", "--quota-share-name", "team",
                            "--scheduling-priority", "5",
                            "--timeout-config", '{"attemptDurationSeconds":3600}',
                            "--service-request-payload", payload(SLEEPER))
        self.assertEqual(long_job["jobName"], "cli-long")
        self.assertEqual(long_job["jobArn"], ARN_PREFIX + "service-job/" + long_job["jobId"])
        fx = Fixture(self.server.client())
        fx.wait_status(long_job["jobId"], "RUNNING")
        short_job = self.aws("submit-service-job", "--job-name", "cli-short", "--job-queue", "cli-q",
                             "--service-job-type", "SAGEMAKER_TRAINING", "--quota-share-name", "team",
                             "--service-request-payload", payload("exit 0"))
        fx.wait_status(short_job["jobId"], "SUCCEEDED")

        running = self.aws("list-service-jobs", "--job-queue", "cli-q",
                           "--job-status", "RUNNING")["jobSummaryList"]
        self.assertEqual([j["jobId"] for j in running], [long_job["jobId"]])
        self.assertEqual(running[0]["jobName"], "cli-long")
        self.assertEqual(running[0]["quotaShareName"], "team")
        self.assertEqual(running[0]["status"], "RUNNING")
        succeeded = self.aws("list-service-jobs", "--job-queue", "cli-q",
                             "--job-status", "SUCCEEDED")["jobSummaryList"]
        self.assertEqual([j["jobId"] for j in succeeded], [short_job["jobId"]])

        d = self.aws("describe-service-job", "--job-id", long_job["jobArn"])
        self.assertEqual(d["schedulingPriority"], 5)
        self.assertEqual(d["timeoutConfig"], {"attemptDurationSeconds": 3600})
        self.assertEqual(json.loads(d["serviceRequestPayload"])["ResourceConfig"]["InstanceType"],
                         INSTANCE)
        self.aws("update-service-job", "--job-id", long_job["jobId"], "--scheduling-priority", "7")
        self.aws("terminate-service-job", "--job-id", long_job["jobId"], "--reason", "cli done")
        d = fx.wait_status(long_job["jobId"], "FAILED")
        self.assertEqual(d["schedulingPriority"], 7)
        self.assertEqual(d["statusReason"], "cli done")

        # A refusal surfaces as the CLI's ClientException error with the server's message.
        r = self.aws("submit-service-job", "--job-name", "cli-bad", "--job-queue", "cli-q",
                     "--service-job-type", "SAGEMAKER_TRAINING", "--quota-share-name", "team",
                     "--scheduling-priority", "10000",
                     "--service-request-payload", payload("exit 0"), check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ClientException", r.stderr)
        self.assertIn("schedulingPriority", r.stderr)


if __name__ == "__main__":
    unittest.main()
