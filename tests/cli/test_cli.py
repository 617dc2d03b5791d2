"""End-to-end tests of the `allot` command line against a real `allot server`.

Run from tests/cli with ALLOT_BIN naming the allot binary:
    ALLOT_BIN=build/dev/bin/allot python3 -m unittest -v test_cli
The server listens on a free loopback port with its data in a temporary folder; the CLI finds it
through AWS_ENDPOINT_URL_BATCH and AWS_SHARED_CREDENTIALS_FILE, as a user would.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_YAML = os.path.join(HERE, "..", "..", "examples", "cluster.yaml")
BENCH_LINE = re.compile(
    r"^submitted (\d+) jobs in \d+(\.\d+)? s: \d+(\.\d+)? jobs/s, "
    r"p50 \d+(\.\d+)? ms, p99 \d+(\.\d+)? ms$")


class CliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = os.environ.get("ALLOT_BIN")
        if not cls.bin:
            raise unittest.SkipTest("ALLOT_BIN is not set")
        cls.bin = os.path.abspath(cls.bin)
        cls.tmp = tempfile.mkdtemp(prefix="allot-cli-test-")
        data = os.path.join(cls.tmp, "data")
        cls.log = open(os.path.join(cls.tmp, "server.log"), "w+")
        cls.server = subprocess.Popen(
            [cls.bin, "server", "--data-dir", data, "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=cls.log, text=True)
        first = cls.server.stdout.readline()
        m = re.search(r"listening on (http://[0-9.]+:\d+)", first)
        if not m:
            cls.server.kill()
            raise RuntimeError("allot server did not start: %r" % first)
        cls.endpoint = m.group(1)
        deadline = time.time() + 20
        while True:
            try:
                with urllib.request.urlopen(cls.endpoint + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        cls.env = {k: v for k, v in os.environ.items()
                   if not k.startswith("AWS_")}
        cls.env.update({
            "AWS_SHARED_CREDENTIALS_FILE": os.path.join(data, "credentials"),
            "AWS_ENDPOINT_URL_BATCH": cls.endpoint,
            "AWS_DEFAULT_REGION": "local",
        })
        # The cluster every test uses; test_apply checks the output of applying it.
        cls.first_apply = cls.allot("apply", "-f", CLUSTER_YAML)

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        try:
            cls.server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            cls.server.kill()
            cls.server.wait()
        cls.server.stdout.close()
        cls.log.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def allot(cls, *args, check=True, timeout=120):
        p = subprocess.run([cls.bin, *args], env=cls.env, capture_output=True, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("allot %s exited %d\nstdout:\n%s\nstderr:\n%s" % (
                " ".join(args), p.returncode, p.stdout, p.stderr))
        return p

    def submit(self, *args):
        p = self.allot("submit", *args)
        job_id = p.stdout.strip()
        self.assertRegex(job_id, r"^[0-9a-f-]{36}$")
        return job_id

    def wait_listed(self, job_id, status, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            out = self.allot("jobs", "--queue", "training", "--status", status).stdout
            if job_id in out:
                return out
            time.sleep(0.2)
        self.fail("job %s not %s after %ds:\n%s" % (
            job_id, status, timeout, self.allot("describe", job_id).stdout))

    def test_apply_twice_changes_nothing(self):
        first = self.first_apply.stdout
        for line in ("serviceEnvironment local-gpus: created",
                     "schedulingPolicy teams: created",
                     "jobQueue training: created",
                     "quotaShare training/team-a: created",
                     "quotaShare training/team-b: created",
                     "quotaShare training/team-c: created"):
            self.assertIn(line, first)
        second = self.allot("apply", "-f", CLUSTER_YAML).stdout
        self.assertNotIn(": created", second)
        self.assertNotIn(": updated", second)
        self.assertEqual(second.count(": unchanged"), 6, second)
        self.assertIn("0 created, 0 updated, 6 unchanged", second)

    def test_apply_updates_what_differs(self):
        with open(CLUSTER_YAML) as f:
            text = f.read()
        path = os.path.join(self.tmp, "changed.yaml")
        with open(path, "w") as f:
            f.write(text.replace("borrowLimit: 200", "borrowLimit: 100"))
        out = self.allot("apply", "-f", path, "--dry-run").stdout
        self.assertIn("quotaShare training/team-a: would be updated (borrowLimit)", out)
        out = self.allot("apply", "-f", path).stdout
        self.assertIn("quotaShare training/team-a: updated (borrowLimit)", out)
        self.assertIn("1 updated, 5 unchanged", out)
        out = self.allot("apply", "-f", CLUSTER_YAML).stdout
        self.assertIn("quotaShare training/team-a: updated (borrowLimit)", out)

    def test_apply_refuses_unknown_fields(self):
        path = os.path.join(self.tmp, "bad.yaml")
        with open(path, "w") as f:
            f.write("jobQueues:\n  - name: q\n    serviceEnviroment: local-gpus\n")
        p = self.allot("apply", "-f", path, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('unknown field "serviceEnviroment"', p.stderr)

    def test_submit_runs_and_describe(self):
        job_id = self.submit("--queue", "training", "--share", "team-a", "--name", "hello",
                             "--env", "GREETING=hi", "--", "/bin/sh", "-c", "echo hi")
        listed = self.wait_listed(job_id, "SUCCEEDED")
        row = next(l for l in listed.splitlines() if job_id in l)
        self.assertIn("hello", row)
        self.assertIn("team-a", row)
        self.assertIn("SUCCEEDED", row)
        out = self.allot("describe", job_id).stdout
        self.assertIn("Status:       SUCCEEDED", out)
        self.assertIn("Command:      /bin/sh -c 'echo hi'", out)
        self.assertIn("Environment:  GREETING=hi", out)
        self.assertIn("Attempts:     1", out)
        self.assertIn("#1  started", out)
        self.assertIn("Preempted:    0 attempt(s)", out)
        raw = json.loads(self.allot("describe", job_id, "--json").stdout)
        payload = json.loads(raw["serviceRequestPayload"])
        self.assertEqual(payload["AlgorithmSpecification"]["ContainerEntrypoint"], ["/bin/sh"])
        self.assertEqual(payload["AlgorithmSpecification"]["ContainerArguments"],
                         ["-c", "echo hi"])
        self.assertEqual(payload["ResourceConfig"],
                         {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1})
        self.assertEqual(payload["TrainingJobName"], "hello")
        self.assertEqual(payload["Environment"], {"GREETING": "hi"})
        # A finished job's priority cannot change: the server's message, exit status 1.
        p = self.allot("priority", job_id, "5", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("only unfinished jobs can change priority", p.stderr)

    def test_priority_cancel_and_waiting_reason(self):
        # team-c reserves one instance; its second job waits behind the first.
        first = self.submit("-q", "training", "-s", "team-c", "--", "sleep", "60")
        self.wait_listed(first, "RUNNING")
        second = self.submit("-q", "training", "-s", "team-c", "--retries", "2",
                             "--preemption-retries", "3", "--timeout", "600", "--", "sleep", "60")
        self.wait_listed(second, "RUNNABLE")
        out = self.allot("describe", second).stdout
        self.assertIn("Waiting:", out)
        self.assertIn("Retry:        3 attempt(s)", out)
        self.assertIn("Preemption retries: 3 before termination", out)
        self.assertIn("Timeout:      600s per attempt", out)
        out = self.allot("priority", second, "42").stdout
        self.assertIn("priority 42", out)
        self.assertIn("Priority:     42", self.allot("describe", second).stdout)
        shares = self.allot("shares", "training").stdout
        row = next(l for l in shares.splitlines() if l.startswith("team-c"))
        self.assertEqual(row.split()[-6:], ["ml.g5.xlarge", "1", "1", "0", "0", "1"], shares)
        for job in (second, first):
            out = self.allot("cancel", job, "--reason", "test over").stdout
            self.assertIn("termination requested", out)
        self.wait_listed(second, "FAILED")
        self.wait_listed(first, "FAILED")
        self.assertIn("Reason:       test over", self.allot("describe", second).stdout)

    def test_shares_table(self):
        out = self.allot("shares", "training").stdout
        header = out.splitlines()[0].split()
        self.assertEqual(header, ["SHARE", "STRATEGY", "PREEMPT", "UNIT", "LIMIT", "USED",
                                  "BORROWED", "LENT", "WAITING"])
        for share in ("team-a", "team-b", "team-c"):
            self.assertRegex(out, r"(?m)^%s\s" % share)
        self.assertIn("in use in training (service environment local-gpus)", out)

    def test_errors_print_the_server_message(self):
        p = self.allot("describe", "no-such-job", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("jobId no-such-job does not exist", p.stderr)
        p = self.allot("jobs", "--queue", "nope", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("jobQueue nope does not exist", p.stderr)

    def test_bench_submit(self):
        p = self.allot("bench", "submit", "--endpoint", self.endpoint, "--clients", "4",
                       "--jobs", "200", timeout=300)
        last = p.stdout.strip().splitlines()[-1]
        m = BENCH_LINE.match(last)
        self.assertIsNotNone(m, p.stdout)
        self.assertEqual(m.group(1), "200")
        out = self.allot("shares", "allot-bench").stdout
        row = next(l for l in out.splitlines() if l.startswith("bench"))
        self.assertGreaterEqual(int(row.split()[-1]), 200, out)


if __name__ == "__main__":
    unittest.main()
