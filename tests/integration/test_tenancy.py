"""Many teams on one server (issue 10, sections 2 and 3): users with access keys, IAM policies
checked on every call, reading that follows policy, and the audit trail.

The server's admin (the key of <data-dir>/credentials) makes a quota-share queue `q` with shares
`team-a` and `team-b`, then users whose policies are the documented examples in docs/policies/:
alice (team-a member, priority at most 10), lead (team-a lead, priority at most 50), bob (the
member policy for team-b), viewer (read-only) and nobody (no policy). Each test drives boto3 with
those users' keys, and the AWS CLI where it says so.
"""

import json
import os
import sqlite3
import subprocess
import tempfile
import unittest

import botocore.exceptions

from allot_harness import (ACCOUNT, ARN_PREFIX, REGION, AllotServer, Fixture, error_code,
                           error_message, http_status, payload, wait_for)

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = os.path.join(HERE, "..", "..", "docs", "policies")
QUEUE_ARN = f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/q"


def example_policy(name, **replace):
    with open(os.path.join(POLICIES, name + ".json")) as f:
        text = f.read()
    for old, new in replace.items():
        text = text.replace(old.replace("_", "-"), new)
    return json.loads(text)


def signed(server, method, path, body=None, query=None, keys=None):
    return server.request(method, path, body, query, keys)


class TenancyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = AllotServer("--no-sandbox", stop_grace_seconds=1)
        try:
            cls.server.start()
            cls.admin = cls.server.client()
            cls.set_up_queue()
            cls.keys = {}
            cls.make_user("alice", example_policy("team-member"))
            cls.make_user("lead", example_policy("team-lead"))
            cls.make_user("bob", example_policy("team-member", team_a="team-b"))
            cls.make_user("viewer", example_policy("viewer"))
            cls.make_user("nobody", None)
        except Exception:
            cls.server.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    @classmethod
    def set_up_queue(cls):
        fx = Fixture(cls.admin)
        env = fx.environment(capacity=4, name="se")
        pol = fx.policy(name="pol")
        cls.admin.create_job_queue(
            jobQueueName="q", priority=1, jobQueueType="SAGEMAKER_TRAINING",
            schedulingPolicyArn=pol,
            serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}])
        for share in ("team-a", "team-b"):
            cls.admin.create_quota_share(
                quotaShareName=share, jobQueue="q",
                capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
                resourceSharingConfiguration={"strategy": "RESERVE"},
                preemptionConfiguration={"inSharePreemption": "DISABLED"}, state="ENABLED")

    @classmethod
    def make_user(cls, name, policy):
        body = {"userName": name}
        if policy is not None:
            body["policy"] = policy
        status, out, _ = signed(cls.server, "POST", "/allot/v1/users", body)
        assert status == 200, (status, out)
        cls.keys[name] = (out["accessKey"]["accessKeyId"], out["accessKey"]["secretAccessKey"])

    def tearDown(self):
        # Sleepers end, so each test finds its shares' capacity free.
        for status in ("SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
            for s in self.admin.list_service_jobs(jobQueue="q", jobStatus=status)["jobSummaryList"]:
                self.admin.terminate_service_job(jobId=s["jobId"], reason="test over")

    def client(self, user):
        return self.server.client_with_keys(*self.keys[user])

    def submit(self, user, share, priority=None, script="sleep 30", name="job"):
        kwargs = dict(jobName=name, jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                      quotaShareName=share, serviceRequestPayload=payload(script))
        if priority is not None:
            kwargs["schedulingPriority"] = priority
        return self.client(user).submit_service_job(**kwargs)["jobId"]

    def assert_denied(self, call, action, resource_part):
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            call()
        self.assertEqual(http_status(cm.exception), 403)
        self.assertEqual(error_code(cm.exception), "AccessDeniedException")
        message = error_message(cm.exception)
        self.assertRegex(message, r"^User: arn:aws:iam::000000000000:user/\w+ is not authorized "
                                  r"to perform: " + action + r" on resource: (arn:aws:batch:|\*)")
        self.assertIn(resource_part, message)
        return message

    def audit(self, **query):
        status, out, _ = signed(self.server, "GET", "/allot/v1/audit", query=query)
        self.assertEqual(status, 200, out)
        return out["records"]

    # --- policies decide each action ---

    def test_a_member_submits_only_to_its_share_and_under_its_priority_cap(self):
        job = self.submit("alice", "team-a", priority=10)
        status, doc, _ = signed(self.server, "POST", "/v1/describeservicejob", {"jobId": job})
        self.assertEqual(doc["allot"]["submittedBy"], "alice")
        message = self.assert_denied(lambda: self.submit("alice", "team-b"),
                                     "batch:SubmitServiceJob", "job-queue/q")
        self.assertIn("because no identity-based policy allows the batch:SubmitServiceJob action",
                      message)
        self.assert_denied(lambda: self.submit("alice", "team-a", priority=11),
                           "batch:SubmitServiceJob", "job-queue/q")
        # The lead's ceiling is 50.
        self.submit("lead", "team-a", priority=50)
        self.assert_denied(lambda: self.submit("lead", "team-a", priority=51),
                           "batch:SubmitServiceJob", "job-queue/q")
        # The denied attempts are on record with the share and priority they aimed at.
        denied = [r for r in self.audit(principal="alice", action="SubmitServiceJob")
                  if r["outcome"] == "AccessDenied"]
        self.assertIn((f"{QUEUE_ARN}/quota-share/team-b", 0),
                      [(r["resource"], r["changes"]["schedulingPriority"]["new"]) for r in denied])
        self.assertIn((f"{QUEUE_ARN}/quota-share/team-a", 11),
                      [(r["resource"], r["changes"]["schedulingPriority"]["new"]) for r in denied])
        # Nothing denied was made: team-b holds no job of alice's.
        listed = self.admin.list_service_jobs(jobQueue="q", jobStatus="RUNNING")["jobSummaryList"]
        listed += self.admin.list_service_jobs(jobQueue="q", jobStatus="RUNNABLE")["jobSummaryList"]
        for s in listed:
            status, doc, _ = signed(self.server, "POST", "/v1/describeservicejob",
                                    {"jobId": s["jobId"]})
            if doc.get("quotaShareName") == "team-b":
                self.assertNotEqual(doc["allot"].get("submittedBy"), "alice")

    def test_a_client_token_is_the_callers_own(self):
        def submit(user, share):
            return self.client(user).submit_service_job(
                jobName="tok", jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                quotaShareName=share, serviceRequestPayload=payload("sleep 30"),
                clientToken="nightly-1")["jobId"]
        bobs = submit("bob", "team-b")
        self.assertEqual(submit("bob", "team-b"), bobs)  # bob's retry finds bob's job
        alices = submit("alice", "team-a")  # neither refused nor bob's
        self.assertNotEqual(alices, bobs)

    def test_update_and_terminate_need_the_job_in_the_callers_share(self):
        mine = self.submit("alice", "team-a", priority=1)
        theirs = self.submit("bob", "team-b", priority=1)
        alice = self.client("alice")
        alice.update_service_job(jobId=mine, schedulingPriority=5)
        self.assert_denied(lambda: alice.update_service_job(jobId=mine, schedulingPriority=11),
                           "batch:UpdateServiceJob", "service-job/" + mine)
        self.assert_denied(lambda: alice.update_service_job(jobId=theirs, schedulingPriority=5),
                           "batch:UpdateServiceJob", "service-job/" + theirs)
        self.assert_denied(lambda: alice.terminate_service_job(jobId=theirs, reason="mine now"),
                           "batch:TerminateServiceJob", "service-job/" + theirs)
        # The job ARN is accepted as jobId and checked the same way.
        arn = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{theirs}"
        self.assert_denied(lambda: alice.terminate_service_job(jobId=arn, reason="x"),
                           "batch:TerminateServiceJob", theirs)
        other = self.admin.describe_service_job(jobId=theirs)
        self.assertEqual(other["schedulingPriority"], 1)
        self.assertNotIn(other["status"], ("FAILED", "SUCCEEDED"))
        self.assertEqual(self.admin.describe_service_job(jobId=mine)["schedulingPriority"], 5)
        alice.terminate_service_job(jobId=mine, reason="done")

    def test_an_explicit_deny_wins_and_a_user_without_policy_can_do_nothing(self):
        self.assert_denied(lambda: self.client("nobody").describe_job_queues(),
                           "batch:DescribeJobQueues", "")
        policy = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "*", "Resource": "*"},
            {"Effect": "Deny", "Action": "batch:TerminateServiceJob", "Resource": "*"}]}
        status, out, _ = signed(self.server, "PUT", "/allot/v1/users/nobody/policy", policy)
        self.assertEqual(status, 200, out)
        try:
            job = self.submit("nobody", "team-b")
            message = self.assert_denied(
                lambda: self.client("nobody").terminate_service_job(jobId=job, reason="x"),
                "batch:TerminateServiceJob", job)
            self.assertIn("with an explicit deny in an identity-based policy", message)
        finally:
            signed(self.server, "PUT", "/allot/v1/users/nobody/policy",
                   {"Statement": [{"Effect": "Deny", "Action": "*", "Resource": "*"}]})

    def test_configuration_changes_are_denied_to_members_and_change_nothing(self):
        alice = self.client("alice")
        share = f"{QUEUE_ARN}/quota-share/team-a"
        env_arn = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-environment/se"
        limits = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4}]
        calls = {
            "batch:CreateServiceEnvironment": lambda: alice.create_service_environment(
                serviceEnvironmentName="mine", serviceEnvironmentType="SAGEMAKER_TRAINING",
                capacityLimits=limits),
            "batch:UpdateServiceEnvironment": lambda: alice.update_service_environment(
                serviceEnvironment="se", capacityLimits=limits),
            "batch:DeleteServiceEnvironment": lambda: alice.delete_service_environment(
                serviceEnvironment="se"),
            "batch:CreateSchedulingPolicy": lambda: alice.create_scheduling_policy(
                name="mine", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"}),
            "batch:DeleteSchedulingPolicy": lambda: alice.delete_scheduling_policy(
                arn=f"arn:aws:batch:{REGION}:{ACCOUNT}:scheduling-policy/pol"),
            "batch:CreateJobQueue": lambda: alice.create_job_queue(
                jobQueueName="mine", priority=1,
                serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "se"}]),
            "batch:UpdateJobQueue": lambda: alice.update_job_queue(jobQueue="q", priority=9),
            "batch:DeleteJobQueue": lambda: alice.delete_job_queue(jobQueue="q"),
            "batch:CreateQuotaShare": lambda: alice.create_quota_share(
                quotaShareName="mine", jobQueue="q", capacityLimits=limits,
                resourceSharingConfiguration={"strategy": "RESERVE"},
                preemptionConfiguration={"inSharePreemption": "DISABLED"}, state="ENABLED"),
            "batch:UpdateQuotaShare": lambda: alice.update_quota_share(
                quotaShareArn=share, capacityLimits=limits),
            "batch:DeleteQuotaShare": lambda: alice.delete_quota_share(quotaShareArn=share),
            "batch:TagResource": lambda: alice.tag_resource(resourceArn=env_arn,
                                                            tags={"owner": "alice"}),
            "batch:UntagResource": lambda: alice.untag_resource(resourceArn=env_arn,
                                                                tagKeys=["owner"]),
        }
        for action, call in calls.items():
            with self.subTest(action=action):
                self.assert_denied(call, action, "arn:aws:batch:")
        # Nothing changed; the admin sees the configuration as it was.
        d = self.admin.describe_quota_share(quotaShareArn=share)
        self.assertEqual(d["capacityLimits"][0]["maxCapacity"], 2)
        self.assertEqual(self.admin.describe_job_queues(jobQueues=["q"])["jobQueues"][0]
                         ["priority"], 1)
        self.assertEqual(self.admin.list_tags_for_resource(resourceArn=env_arn)["tags"], {})
        denied = {r["action"] for r in self.audit(principal="alice")
                  if r["outcome"] == "AccessDenied"}
        self.assertTrue(set(calls) <= denied, set(calls) - denied)
        # The viewer reads the configuration and changes none of it.
        viewer = self.client("viewer")
        self.assertEqual(viewer.describe_quota_share(quotaShareArn=share)["quotaShareName"],
                         "team-a")
        viewer.describe_service_environments()
        viewer.list_scheduling_policies()
        self.assert_denied(lambda: viewer.update_job_queue(jobQueue="q", priority=9),
                           "batch:UpdateJobQueue", "job-queue/q")

    # --- reading follows policy ---

    def test_lists_describes_and_logs_show_only_what_the_caller_may_describe(self):
        mine = self.submit("alice", "team-a", script="echo alice-was-here", name="short")
        theirs = self.submit("bob", "team-b", script="echo bob-was-here", name="short")
        for job in (mine, theirs):
            wait_for(lambda job=job: self.admin.describe_service_job(jobId=job)["status"]
                     == "SUCCEEDED", what=f"{job} SUCCEEDED")
        # The record says which limits held each attempt (here: none, --no-sandbox).
        doc = signed(self.server, "POST", "/v1/describeservicejob", {"jobId": mine})[1]
        self.assertEqual(doc["allot"]["attemptLimits"][0]["attempt"], 1)
        self.assertIn("unsandboxed", doc["allot"]["attemptLimits"][0]["enforcedLimits"])
        alice = self.client("alice")
        seen = {s["jobId"] for s in alice.list_service_jobs(
            jobQueue="q", jobStatus="SUCCEEDED")["jobSummaryList"]}
        self.assertIn(mine, seen)
        self.assertNotIn(theirs, seen)
        self.assert_denied(lambda: alice.describe_service_job(jobId=theirs),
                           "batch:DescribeServiceJob", theirs)
        status, out, _ = signed(self.server, "GET", f"/allot/v1/jobs/{mine}/logs",
                                keys=self.keys["alice"])
        self.assertEqual(status, 200, out)
        self.assertIn("alice-was-here", out["text"])
        status, out, headers = signed(self.server, "GET", f"/allot/v1/jobs/{theirs}/logs",
                                      keys=self.keys["alice"])
        self.assertEqual(status, 403, out)
        self.assertEqual(headers.get("x-amzn-ErrorType"), "AccessDeniedException")
        self.assertNotIn("bob-was-here", json.dumps(out))
        # The viewer reads everything and changes nothing.
        viewer = self.client("viewer")
        self.assertEqual(viewer.describe_service_job(jobId=theirs)["jobId"], theirs)
        self.assert_denied(lambda: self.submit("viewer", "team-a"),
                           "batch:SubmitServiceJob", "job-queue/q")

    def test_the_snapshot_needs_the_queue(self):
        self.client("alice").get_job_queue_snapshot(jobQueue="q")
        self.assert_denied(lambda: self.client("nobody").get_job_queue_snapshot(jobQueue="q"),
                           "batch:GetJobQueueSnapshot", "job-queue/q")

    def test_the_snapshot_names_only_the_jobs_the_caller_may_describe(self):
        # Each share runs two and keeps its third waiting (RESERVE, limit 2).
        for _ in range(2):
            self.submit("alice", "team-a")
            self.submit("bob", "team-b")
        mine = self.submit("alice", "team-a", name="waiting")
        theirs = self.submit("bob", "team-b", name="waiting")
        arn = ARN_PREFIX + "service-job/"

        def front(user):
            snap = self.client(user).get_job_queue_snapshot(jobQueue="q")
            return (snap["frontOfQueue"]["jobs"],
                    snap["frontOfQuotaShares"]["quotaShares"])

        wait_for(lambda: len(front("viewer")[0]) == 2, what="one job waiting in each share")
        jobs, shares = front("viewer")
        self.assertEqual(sorted(j["jobArn"] for j in jobs), sorted([arn + mine, arn + theirs]))
        jobs, shares = front("alice")
        self.assertEqual(len(jobs), 2, jobs)  # bob's keeps its place, without its ARN
        self.assertEqual([j.get("jobArn") for j in jobs if "jobArn" in j], [arn + mine])
        for j in jobs:
            self.assertIsInstance(j["earliestTimeAtPosition"], int)
        self.assertEqual([j["jobArn"] for j in shares["team-a"]], [arn + mine])
        self.assertEqual([set(j) for j in shares["team-b"]], [{"earliestTimeAtPosition"}])
        self.assertNotIn(theirs, json.dumps(front("alice")))

    # --- the audit trail ---

    def test_every_mutating_call_is_audited_allowed_or_denied(self):
        job = self.submit("alice", "team-a", priority=2)
        self.client("alice").update_service_job(jobId=job, schedulingPriority=7)
        with self.assertRaises(botocore.exceptions.ClientError):
            self.client("alice").update_service_job(jobId=job, schedulingPriority=99)
        records = self.audit(resource=job)
        actions = [(r["action"], r["outcome"], r["userName"]) for r in records]
        # Newest first: the denied raise, the allowed change, the submission.
        self.assertEqual(actions[:3], [("batch:UpdateServiceJob", "AccessDenied", "alice"),
                                       ("batch:UpdateServiceJob", "Allowed", "alice"),
                                       ("batch:SubmitServiceJob", "Allowed", "alice")])
        self.assertEqual(records[1]["changes"]["schedulingPriority"], {"old": 2, "new": 7})
        self.assertEqual(records[0]["changes"]["schedulingPriority"], {"old": 7, "new": 99})
        for r in records[:3]:
            self.assertEqual(r["principal"], "arn:aws:iam::000000000000:user/alice")
            self.assertEqual(r["sourceAddress"], "127.0.0.1")
            self.assertRegex(r["requestId"], r"^[0-9a-f-]{36}$")
        # A limit change records the old and new limits.
        share = f"{QUEUE_ARN}/quota-share/team-b"
        self.admin.update_quota_share(
            quotaShareArn=share,
            capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}])
        self.admin.update_quota_share(
            quotaShareArn=share,
            capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}])
        change = self.audit(resource=share, action="UpdateQuotaShare")[1]["changes"]
        self.assertEqual(change["capacityLimits"]["old"][0]["maxCapacity"], 2)
        self.assertEqual(change["capacityLimits"]["new"][0]["maxCapacity"], 1)
        # By user, newest first, paged.
        first = signed(self.server, "GET", "/allot/v1/audit",
                       query={"principal": "alice", "maxResults": 2})[1]
        self.assertEqual(len(first["records"]), 2)
        second = signed(self.server, "GET", "/allot/v1/audit",
                        query={"principal": "alice", "maxResults": 2,
                               "nextToken": first["nextToken"]})[1]
        self.assertTrue(second["records"])
        self.assertLess(second["records"][0]["time"] - 1, first["records"][-1]["time"] + 1)
        # Reading the audit needs allot:ReadAudit.
        status, out, _ = signed(self.server, "GET", "/allot/v1/audit", keys=self.keys["alice"])
        self.assertEqual(status, 403)
        self.assertIn("allot:ReadAudit", out["message"])

    def test_refusals_before_the_controller_are_audited_and_records_stay_small(self):
        # A body that is not JSON, to a mutating action: refused, and still audited.
        status, out, _ = self.server.request("POST", "/v1/terminateservicejob",
                                             b'{"jobId": "x", "reason":', keys=self.keys["alice"])
        self.assertEqual(status, 400, out)
        newest = self.audit(principal="alice", maxResults=1)[0]
        self.assertEqual(newest["action"], "batch:TerminateServiceJob")
        self.assertTrue(newest["outcome"].startswith("ClientException: "), newest)
        # A huge name costs the audit a few hundred bytes, not its size.
        with self.assertRaises(botocore.exceptions.ClientError):
            self.client("alice").terminate_service_job(jobId="z" * 60000, reason="x")
        newest = self.audit(principal="alice", maxResults=1)[0]
        self.assertLess(len(newest["resource"]), 600)
        self.assertIn("bytes)", newest["resource"])

    def test_user_management_can_be_delegated_by_name_and_plain_http_is_known(self):
        delegate = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "allot:ManageUsers",
             "Resource": "arn:aws:iam::*:user/team-a-*"},
            # Plain HTTP: a policy that refuses it takes effect (aws:SecureTransport is false).
            {"Effect": "Deny", "Action": "batch:DescribeJobQueues", "Resource": "*",
             "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
            {"Effect": "Allow", "Action": "batch:Describe*", "Resource": "*"}]}
        status, out, _ = signed(self.server, "POST", "/allot/v1/users",
                                {"userName": "delegate", "policy": delegate})
        self.assertEqual(status, 200, out)
        keys = (out["accessKey"]["accessKeyId"], out["accessKey"]["secretAccessKey"])
        status, out, _ = signed(self.server, "POST", "/allot/v1/users",
                                {"userName": "team-a-intern"}, keys=keys)
        self.assertEqual(status, 200, out)
        status, out, _ = signed(self.server, "POST", "/allot/v1/users",
                                {"userName": "admin2", "policy": example_policy("admin")},
                                keys=keys)
        self.assertEqual(status, 403, out)
        self.assertIn("user/admin2", out["message"])
        self.assert_denied(lambda: self.server.client_with_keys(*keys).describe_job_queues(),
                           "batch:DescribeJobQueues", "")
        self.server.client_with_keys(*keys).describe_service_environments()

    def test_the_aws_cli_works_with_a_users_profile(self):
        with tempfile.TemporaryDirectory() as tmp:
            creds = os.path.join(tmp, "credentials")
            with open(creds, "w") as f:
                key, secret = self.keys["alice"]
                f.write(f"[alice]\naws_access_key_id = {key}\naws_secret_access_key = {secret}\n")
            env = dict(os.environ, AWS_SHARED_CREDENTIALS_FILE=creds, AWS_PROFILE="alice",
                       AWS_CONFIG_FILE=os.devnull, AWS_DEFAULT_REGION=REGION)

            def aws(*args):
                return subprocess.run(["aws", "--endpoint-url", self.server.endpoint, "batch",
                                       *args], env=env, capture_output=True, text=True,
                                      timeout=60)

            common = ["submit-service-job", "--job-name", "cli", "--job-queue", "q",
                      "--service-job-type", "SAGEMAKER_TRAINING", "--service-request-payload",
                      payload("sleep 30")]
            ok = aws(*common, "--quota-share-name", "team-a")
            self.assertEqual(ok.returncode, 0, ok.stderr)
            self.assertIn("jobId", ok.stdout)
            denied = aws(*common, "--quota-share-name", "team-b")
            self.assertNotEqual(denied.returncode, 0)
            self.assertIn("AccessDeniedException", denied.stderr)
            self.assertIn("user/alice is not authorized to perform: batch:SubmitServiceJob",
                          denied.stderr)

    # --- users and their keys ---

    def test_users_are_managed_by_admins_only_and_keys_rotate(self):
        status, out, _ = signed(self.server, "POST", "/allot/v1/users", {"userName": "alice"})
        self.assertEqual((status, out["message"]), (400, "Object already exists"))
        status, out, _ = signed(self.server, "POST", "/allot/v1/users", {"userName": "mallory"},
                                keys=self.keys["alice"])
        self.assertEqual(status, 403)
        self.assertIn("allot:ManageUsers", out["message"])
        status, out, _ = signed(self.server, "POST", "/allot/v1/users",
                                {"userName": "temp", "policy": example_policy("viewer")})
        self.assertEqual(status, 200, out)
        old = (out["accessKey"]["accessKeyId"], out["accessKey"]["secretAccessKey"])
        self.server.client_with_keys(*old).describe_job_queues()
        status, out, _ = signed(self.server, "POST", "/allot/v1/users/temp/keys/rotate")
        self.assertEqual(status, 200, out)
        new = (out["accessKey"]["accessKeyId"], out["accessKey"]["secretAccessKey"])
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.server.client_with_keys(*old).describe_job_queues()
        self.assertEqual(error_code(cm.exception), "UnrecognizedClientException")
        self.server.client_with_keys(*new).describe_job_queues()
        status, out, _ = signed(self.server, "GET", "/allot/v1/users")
        self.assertIn("temp", [u["userName"] for u in out["users"]])
        self.assertEqual(signed(self.server, "DELETE", "/allot/v1/users/temp")[0], 200)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.server.client_with_keys(*new).describe_job_queues()
        self.assertEqual(error_code(cm.exception), "UnrecognizedClientException")
        actions = [r["action"] for r in self.audit(resource="temp")]
        self.assertEqual(actions[:3], ["allot:DeleteUser", "allot:RotateAccessKeys",
                                       "allot:CreateUser"])

    def test_a_policy_is_validated_when_it_is_put(self):
        bad = {"Statement": [{"Effect": "Allow", "Action": "batch:SubmitJobs", "Resource": "*"}]}
        status, out, _ = signed(self.server, "PUT", "/allot/v1/users/viewer/policy", bad)
        self.assertEqual(status, 400, out)
        self.assertIn("batch:SubmitJobs", out["message"])
        bad = {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "arn:aws:batch"}]}
        status, out, _ = signed(self.server, "PUT", "/allot/v1/users/viewer/policy", bad)
        self.assertEqual(status, 400, out)
        bad = {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*",
                              "Condition": {"NumericAtMost": {"batch:SchedulingPriority": 5}}}]}
        status, out, _ = signed(self.server, "PUT", "/allot/v1/users/viewer/policy", bad)
        self.assertEqual(status, 400, out)
        self.assertIn("NumericAtMost", out["message"])
        # The viewer's policy is unchanged.
        status, out, _ = signed(self.server, "GET", "/allot/v1/users/viewer/policy")
        self.assertEqual(out["policy"], json.loads(json.dumps(out["policy"])))
        self.client("viewer").describe_job_queues()

    def test_secrets_are_sealed_in_the_store(self):
        db = os.path.join(self.server.data_dir, "allot.db")
        for name in ("allot.db", "allot.db-wal", "master.key", "credentials"):
            path = os.path.join(self.server.data_dir, name)
            if os.path.exists(path):
                self.assertEqual(os.stat(path).st_mode & 0o777, 0o600, name)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT key, value FROM records WHERE kind = 9").fetchall()
        self.assertIn("alice", [k for k, _ in rows])
        stored = " ".join(v for _, v in rows)
        for key, secret in self.keys.values():
            self.assertIn(key, stored)
            self.assertNotIn(secret, stored)


class TenancyRestartTest(unittest.TestCase):
    def test_users_policies_and_the_audit_survive_a_kill9(self):
        with AllotServer("--no-sandbox") as server:
            status, out, _ = signed(server, "POST", "/allot/v1/users",
                                    {"userName": "carol", "policy": example_policy("viewer")})
            self.assertEqual(status, 200, out)
            keys = (out["accessKey"]["accessKeyId"], out["accessKey"]["secretAccessKey"])
            server.kill9()
            server.start()
            server.client_with_keys(*keys).describe_job_queues()
            status, out, _ = signed(server, "GET", "/allot/v1/audit", query={"principal": "admin"})
            self.assertEqual([r["action"] for r in out["records"]], ["allot:CreateUser"])
            with self.assertRaises(botocore.exceptions.ClientError) as cm:
                server.client_with_keys(*keys).create_job_queue(
                    jobQueueName="x", priority=1,
                    serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "se"}])
            self.assertEqual(error_code(cm.exception), "AccessDeniedException")
            server.restart()
            records = signed(server, "GET", "/allot/v1/audit", query={"principal": "carol"})[1]
            self.assertEqual([(r["action"], r["outcome"]) for r in records["records"]],
                             [("batch:CreateJobQueue", "AccessDenied")])


if __name__ == "__main__":
    unittest.main()
