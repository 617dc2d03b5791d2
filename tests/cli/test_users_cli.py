"""`allot users` and `allot audit` against a real `allot server` (issue 10).

Run from tests/cli with ALLOT_BIN naming the allot binary:
    ALLOT_BIN=build/dev/bin/allot python3 -m unittest -v test_users_cli
The server is tests/integration's AllotServer (a free loopback port, a temporary data
directory). The CLI runs as the admin: its environment names a copy of the server's credentials
file as AWS_SHARED_CREDENTIALS_FILE, and `allot users create` writes each new user's key there
as profile [NAME], which the AWS CLI and boto3 then use unchanged.
"""

import calendar
import configparser
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import boto3  # noqa: E402
import botocore.config  # noqa: E402
import botocore.exceptions  # noqa: E402
import botocore.session  # noqa: E402

from allot_harness import (REGION, SLEEPER, AllotServer, Fixture, error_code,  # noqa: E402
                           error_message, http_status, payload)

# What a user may do: submit into the queue and read jobs and queues; nothing else (no
# UpdateServiceJob, no user management, no audit).
SUBMITTER_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{
        "Sid": "SubmitAndRead",
        "Effect": "Allow",
        "Action": ["batch:SubmitServiceJob", "batch:DescribeServiceJob",
                   "batch:ListServiceJobs", "batch:DescribeJobQueues",
                   "batch:DescribeServiceEnvironments"],
        "Resource": "*",
    }],
}
VIEWER_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "batch:DescribeJobQueues", "Resource": "*"}],
}
AUDIT_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+"
                        r"(\S+)(?:\s+(.*))?$")


def has_aws_cli():
    return shutil.which("aws") is not None


class UsersCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.environ.get("ALLOT_BIN"):
            raise unittest.SkipTest("ALLOT_BIN is not set")
        cls.server = AllotServer(stop_grace_seconds=2)
        try:
            cls.server.start()
        except Exception:
            cls.server.cleanup()
            raise
        cls.batch = cls.server.client()
        cls.fx = Fixture(cls.batch)
        cls.queue, _ = cls.fx.qm_queue(capacity=3, shares=(("team-a", 1), ("team-b", 1)))
        cls.tmp = tempfile.mkdtemp(prefix="allot-users-cli-")
        # The admin's own file, as `aws configure` would have left it: [default] only.
        cls.creds = os.path.join(cls.tmp, "home", ".aws", "credentials")
        os.makedirs(os.path.dirname(cls.creds), mode=0o700)
        shutil.copyfile(cls.server.credentials_file, cls.creds)
        os.chmod(cls.creds, 0o600)
        cls.env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        cls.env.update({
            "HOME": os.path.join(cls.tmp, "home"),
            "AWS_SHARED_CREDENTIALS_FILE": cls.creds,
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_ENDPOINT_URL_BATCH": cls.server.endpoint,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_PAGER": "",
        })
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # --- helpers ---

    def allot(self, *args, check=True, env=None):
        p = subprocess.run([self.server.bin, *args], env=env or self.env, capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL)
        if check and p.returncode != 0:
            self.fail("allot %s exited %d\nstdout:\n%s\nstderr:\n%s" % (
                " ".join(args), p.returncode, p.stdout, p.stderr))
        return p

    def aws(self, *args, profile, env=None):
        cmd = ["aws", "batch", *args, "--endpoint-url", self.server.endpoint, "--output", "json"]
        e = dict(env or self.env)
        e["AWS_PROFILE"] = profile
        return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)

    def unique(self, stem):
        type(self).n += 1
        return f"{stem}{type(self).n}"

    def policy_file(self, doc):
        path = os.path.join(self.tmp, self.unique("policy") + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def profile(self, name, path=None):
        cp = configparser.ConfigParser()
        cp.read(path or self.creds)
        return cp[name]["aws_access_key_id"], cp[name]["aws_secret_access_key"]

    def profile_client(self, name, path=None):
        """boto3 with the keys of profile [name], found the way a user's boto3 finds them."""
        core = botocore.session.Session(profile=name)
        core.set_config_variable("credentials_file", path or self.creds)
        core.set_config_variable("config_file", os.devnull)
        session = boto3.session.Session(botocore_session=core, region_name=REGION)
        config = botocore.config.Config(retries={"total_max_attempts": 1, "mode": "standard"})
        c = session.client("batch", endpoint_url=self.server.endpoint, config=config)
        self.server._clients.append(c)
        return c

    def create(self, name, policy=None, *extra):
        args = ["users", "create", name, *extra]
        if policy is not None:
            args += ["--policy", self.policy_file(policy)]
        return self.allot(*args).stdout

    def submit_sleeper(self, client, share="team-a"):
        return client.submit_service_job(
            jobName=self.unique("job"), jobQueue=self.queue, serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName=share, serviceRequestPayload=payload(SLEEPER))["jobId"]

    def audit(self, *args):
        """`allot audit ARGS` as (time, user, source, action, resource, outcome, changes)."""
        lines = self.allot("audit", *args).stdout.splitlines()
        self.assertEqual(lines[0].split(), ["TIME", "USER", "SOURCE", "ACTION", "RESOURCE",
                                            "OUTCOME", "CHANGES"])
        rows = []
        for line in lines[1:]:
            m = AUDIT_LINE.match(line)
            self.assertIsNotNone(m, line)
            rows.append(m.groups())
        return rows

    # --- tests ---

    def test_create_writes_profiles_that_boto3_and_the_aws_cli_use(self):
        out = self.create("alice", SUBMITTER_POLICY)
        self.assertRegex(out, r"created user alice \(arn:aws:iam::000000000000:user/alice\), "
                              r"with a policy")
        self.assertIn(f"as profile [alice] of {self.creds} (mode 0600)", out)
        self.assertIn("allot jobs --profile alice", out)
        self.assertIn(f"AWS_PROFILE=alice aws batch describe-job-queues --endpoint-url "
                      f"{self.server.endpoint} --region {REGION}", out)
        self.assertNotIn("AWS_SHARED_CREDENTIALS_FILE=", out)  # the file the CLI reads anyway
        self.create("bob", VIEWER_POLICY)

        # One file, mode 0600, the admin's profile kept, one profile per user.
        self.assertEqual(stat.S_IMODE(os.stat(self.creds).st_mode), 0o600)
        cp = configparser.ConfigParser()
        cp.read(self.creds)
        self.assertLessEqual({"default", "alice", "bob"}, set(cp.sections()))
        self.assertEqual(self.profile("default"), self.server.credentials())
        alice_key = self.profile("alice")[0]
        self.assertRegex(alice_key, r"^AKIA[A-Z2-7]{16}$")
        self.assertIn(alice_key, self.allot("users", "list").stdout)

        # alice submits with boto3 (allowed) ...
        alice = self.profile_client("alice")
        job = self.submit_sleeper(alice)
        self.assertEqual(alice.describe_service_job(jobId=job)["jobId"], job)
        # ... and may not change its priority: 403 AccessDeniedException.
        with self.assertRaises(botocore.exceptions.ClientError) as denied:
            alice.update_service_job(jobId=job, schedulingPriority=50)
        self.assertEqual(error_code(denied.exception), "AccessDeniedException")
        self.assertEqual(http_status(denied.exception), 403)
        message = error_message(denied.exception)
        self.assertIn("alice", message)
        # The same refusal through `allot --profile alice`: the server's message, verbatim.
        p = self.allot("priority", job, "50", "--profile", "alice", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(), "allot: " + message)
        # AWS_PROFILE works too, and a user's policy also governs the /allot/v1 endpoints.
        env = dict(self.env, AWS_PROFILE="alice")
        p = self.allot("users", "create", "mallory", env=env, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"^allot: .*alice")
        self.assertNotIn("mallory", self.allot("users", "list").stdout)

        # bob (the viewer) through the AWS CLI: reading allowed, submitting denied.
        if has_aws_cli():
            r = self.aws("describe-job-queues", profile="bob")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(self.queue, r.stdout)
            r = self.aws("submit-service-job", "--job-name", "nope", "--job-queue", self.queue,
                         "--service-job-type", "SAGEMAKER_TRAINING", "--quota-share-name",
                         "team-b", "--service-request-payload", payload(), profile="bob")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("AccessDeniedException", r.stderr)
        else:
            bob = self.profile_client("bob")
            bob.describe_job_queues(jobQueues=[self.queue])
            with self.assertRaises(botocore.exceptions.ClientError) as e:
                self.submit_sleeper(bob, "team-b")
            self.assertEqual(error_code(e.exception), "AccessDeniedException")

        # The audit trail: alice's two denied calls (boto3, then allot), by user and by job.
        rows = self.audit("--user", "alice")
        denied_rows = [r for r in rows if r[3] == "batch:UpdateServiceJob"]
        self.assertEqual(len(denied_rows), 2, rows)
        for when, user, source, _, resource, outcome, _ in denied_rows:
            self.assertEqual((user, source, outcome), ("alice", "127.0.0.1", "AccessDenied"))
            self.assertTrue(resource.endswith(job), resource)
            stamp = calendar.timegm(time.strptime(when, "%Y-%m-%dT%H:%M:%SZ"))
            self.assertLess(abs(time.time() - stamp), 120)
        # mallory's creation, refused.
        self.assertTrue(any(r[3].startswith("allot:") and r[5] == "AccessDenied" for r in rows),
                        rows)
        self.assertTrue(all(r[1] == "alice" for r in rows), rows)
        submitted = [r for r in rows if r[3] == "batch:SubmitServiceJob"]
        self.assertEqual([r[5] for r in submitted], ["Allowed"], rows)
        self.assertTrue(submitted[0][4].endswith(job), submitted)
        # Newest first: the denial came after the submission.
        self.assertLess(rows.index(denied_rows[0]), rows.index(submitted[0]))

        by_job = self.audit("--job", job)
        self.assertIn(("alice", "batch:UpdateServiceJob", "AccessDenied"),
                      [(r[1], r[3], r[5]) for r in by_job])
        self.assertIn(("alice", "batch:SubmitServiceJob", "Allowed"),
                      [(r[1], r[3], r[5]) for r in by_job])
        records = json.loads(self.allot("audit", "--job", job, "--action",
                                        "batch:UpdateServiceJob", "--json").stdout)
        self.assertEqual([r["outcome"] for r in records], ["AccessDenied", "AccessDenied"])
        self.assertEqual(records[0]["userName"], "alice")
        self.assertEqual(records[0]["principal"], "arn:aws:iam::000000000000:user/alice")
        self.assertTrue(records[0]["resource"].endswith("service-job/" + job))

        # The admin changes the priority: an allowed record with old -> new.
        self.batch.update_service_job(jobId=job, schedulingPriority=50)
        rows = self.audit("--job", job, "--action", "batch:UpdateServiceJob", "--since", "1h")
        self.assertEqual([(r[1], r[5]) for r in rows], [("admin", "Allowed"),
                                                         ("alice", "AccessDenied"),
                                                         ("alice", "AccessDenied")], rows)
        self.assertRegex(rows[0][6] or "", r"schedulingPriority \S+\u219250")
        self.assertEqual(len(self.audit("--job", job, "--max", "1")), 1)
        out = self.allot("audit", "--job", job, "--until", "2000-01-01T00:00:00Z").stdout
        self.assertEqual(out, "no audit records\n")
        self.batch.terminate_service_job(jobId=job, reason="test over")

    def test_rotate_retires_the_old_key(self):
        other = os.path.join(self.tmp, "elsewhere", "credentials")
        out = self.create("carol", SUBMITTER_POLICY, "--credentials-file", other)
        self.assertIn(f"AWS_SHARED_CREDENTIALS_FILE={other} allot jobs --profile carol", out)
        self.assertEqual(stat.S_IMODE(os.stat(other).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(other)).st_mode), 0o700)
        old = self.profile("carol", other)
        self.server.client_with_keys(*old).describe_job_queues(jobQueues=[self.queue])

        out = self.allot("users", "keys", "rotate", "carol", "--credentials-file", other).stdout
        self.assertIn("rotated the access key of user carol", out)
        new = self.profile("carol", other)
        self.assertNotEqual(new[0], old[0])
        self.assertIn(f"wrote access key {new[0]} of user carol", out)
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            self.server.client_with_keys(*old).describe_job_queues(jobQueues=[self.queue])
        self.assertEqual(error_code(e.exception), "UnrecognizedClientException")
        self.assertEqual(http_status(e.exception), 403)
        self.profile_client("carol", other).describe_job_queues(jobQueues=[self.queue])
        users = json.loads(self.allot("users", "list", "--json").stdout)
        carol = next(u for u in users if u["userName"] == "carol")
        self.assertEqual(carol["accessKeyIds"], [new[0]])

    def test_policy_put_and_get(self):
        self.create("dave")  # no policy: every call denied
        row = next(l for l in self.allot("users", "list").stdout.splitlines()
                   if l.startswith("dave "))
        self.assertEqual(row.split()[-1], "no")
        dave = self.profile_client("dave")
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            dave.describe_job_queues(jobQueues=[self.queue])
        self.assertEqual(error_code(e.exception), "AccessDeniedException")
        self.assertEqual(self.allot("users", "policy", "get", "dave").stdout.strip(), "null")

        out = self.allot("users", "policy", "put", "dave", self.policy_file(VIEWER_POLICY)).stdout
        self.assertEqual(out, "put the policy of user dave\n")
        got = json.loads(self.allot("users", "policy", "get", "dave").stdout)
        self.assertEqual(got["Statement"][0]["Effect"], "Allow")
        self.assertIn("batch:DescribeJobQueues", json.dumps(got))
        dave.describe_job_queues(jobQueues=[self.queue])
        row = next(l for l in self.allot("users", "list").stdout.splitlines()
                   if l.startswith("dave "))
        self.assertEqual(row.split()[-1], "yes")

        # Not a policy document: refused before anything reaches the server.
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("[1, 2]")
        p = self.allot("users", "policy", "put", "dave", bad, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"policy file {bad}: a policy document is a JSON object", p.stderr)

    def test_list_and_delete(self):
        self.create("erin", VIEWER_POLICY)
        lines = self.allot("users", "list").stdout.splitlines()
        self.assertEqual(lines[0].split(), ["NAME", "ARN", "ACCESS", "KEYS", "CREATED", "POLICY"])
        names = [l.split()[0] for l in lines[1:]]
        self.assertIn("admin", names)
        self.assertIn("erin", names)
        self.assertEqual(names, sorted(names))
        key = self.profile("erin")
        erin_row = next(l for l in lines if l.startswith("erin "))
        self.assertIn("arn:aws:iam::000000000000:user/erin", erin_row)
        self.assertIn(key[0], erin_row)

        p = self.allot("users", "create", "erin", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("already exists", p.stderr)

        self.assertEqual(self.allot("users", "delete", "erin").stdout,
                         "deleted user erin (its keys no longer work)\n")
        self.assertNotIn("erin", [l.split()[0] for l in
                                  self.allot("users", "list").stdout.splitlines()])
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            self.server.client_with_keys(*key).describe_job_queues(jobQueues=[self.queue])
        self.assertEqual(error_code(e.exception), "UnrecognizedClientException")
        p = self.allot("users", "delete", "erin", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("erin", p.stderr)

    def test_default_file_is_home_aws_credentials_and_profile_beats_key_variables(self):
        home = os.path.join(self.tmp, "home2")
        os.makedirs(home)
        admin_key, admin_secret = self.server.credentials()
        env = {k: v for k, v in self.env.items() if k != "AWS_SHARED_CREDENTIALS_FILE"}
        env.update({"HOME": home, "AWS_ACCESS_KEY_ID": admin_key,
                    "AWS_SECRET_ACCESS_KEY": admin_secret})
        out = self.allot("users", "create", "frank", env=env).stdout
        path = os.path.join(home, ".aws", "credentials")
        self.assertIn(f"as profile [frank] of {path} (mode 0600)", out)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode), 0o700)
        cp = configparser.ConfigParser()
        cp.read(path)
        self.assertEqual(cp.sections(), ["frank"])
        # The admin's keys are in the environment, yet --profile frank signs as frank (who has
        # no policy), as `aws --profile` does.
        p = self.allot("jobs", "--queue", self.queue, "--profile", "frank", env=env, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("frank", p.stderr)
        self.allot("jobs", "--queue", self.queue, env=env)  # without it: the admin

    def test_audit_follows_next_token_up_to_max(self):
        self.create("pager")  # no policy: each call is denied, and each leaves a record
        pager = self.profile_client("pager")
        for i in range(105):
            with self.assertRaises(botocore.exceptions.ClientError):
                pager.terminate_service_job(jobId=f"no-such-job-{i}", reason="paging")
        rows = self.audit("--user", "pager", "--action", "batch:TerminateServiceJob",
                          "--max", "1000")
        self.assertEqual(len(rows), 105)
        # Newest first: the last call's job comes first.
        self.assertTrue(rows[0][4].endswith("no-such-job-104"), rows[0])
        self.assertTrue(rows[1][4].endswith("no-such-job-103"), rows[1])
        self.assertEqual(len(self.audit("--user", "pager", "--max", "103")), 103)
        self.assertEqual(len(self.audit("--user", "pager")), 100)  # the default --max

    def test_audit_refuses_bad_times(self):
        p = self.allot("audit", "--since", "yesterday", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('--since "yesterday": expected', p.stderr)
        p = self.allot("audit", "--since", "1h", "--until", "2h", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("--since 1h is after --until 2h", p.stderr)


if __name__ == "__main__":
    unittest.main()
