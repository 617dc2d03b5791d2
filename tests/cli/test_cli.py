"""End-to-end tests of the `allot` command line against a real `allot server`.

Run from tests/cli with ALLOT_BIN naming the allot binary:
    ALLOT_BIN=build/dev/bin/allot python3 -m unittest -v test_cli
The server listens on a free loopback port with its data in a temporary folder; the CLI finds it
through AWS_ENDPOINT_URL_BATCH and AWS_SHARED_CREDENTIALS_FILE, as a user would.
"""

import json
import os
import re
import unittest

from cli_server import CLUSTER_YAML, ServerCase

BENCH_LINE = re.compile(
    r"^submitted (\d+) jobs in \d+(\.\d+)? s: \d+(\.\d+)? jobs/s, "
    r"mean \d+(\.\d+)? ms, p50 \d+(\.\d+)? ms, p90 \d+(\.\d+)? ms, p99 \d+(\.\d+)? ms$")


class CliTest(ServerCase):
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

    def test_describe_jobs_and_explain_escape_what_jobs_and_callers_wrote(self):
        """F6: a job's failure file and a tenant's TerminateServiceJob.reason become statusReason;
        the CLI shows them escaped, never as escape sequences for the operator's terminal."""
        hostile = "\x1b[2J\x1b]0;PWNED-TITLE\x07\x1b[32mFAKE: job SUCCEEDED\x1b[0m"
        failed = self.submit("-q", "training", "-s", "team-a", "-n", "esc", "--", "/bin/sh", "-c",
                             "printf 'boom%s' > /opt/ml/output/failure; exit 3"
                             % hostile.replace("\x1b", "\\033").replace("\x07", "\\007"))
        self.wait_listed(failed, "FAILED")
        stopped = self.submit("-q", "training", "-s", "team-a", "-n", "esc2", "--", "sleep", "60")
        self.wait_listed(stopped, "RUNNING")
        self.allot("cancel", stopped, "--reason", "bye" + hostile + "\u009b2J")
        self.wait_listed(stopped, "FAILED")
        outputs = {
            "describe failed": self.allot("describe", failed).stdout,
            "describe stopped": self.allot("describe", stopped).stdout,
            "jobs": self.allot("jobs", "--queue", "training").stdout,
            "explain": self.allot("explain", failed, check=False).stdout,
        }
        for what, out in outputs.items():
            with self.subTest(what):
                for control in ("\x1b", "\x07", "\u009b"):
                    self.assertNotIn(control, out)
        self.assertIn("Reason:       Received status from SageMaker: AlgorithmError: boom\\x1b[2J"
                      "\\x1b]0;PWNED-TITLE\\x07\\x1b[32mFAKE: job SUCCEEDED\\x1b[0m\n",
                      outputs["describe failed"])
        self.assertIn("bye\\x1b[2J", outputs["describe stopped"])
        self.assertIn("\\u009b2J", outputs["describe stopped"])
        # `allot logs` is cat: it prints the job's bytes as written, and its help says so.
        self.assertIn("as it wrote them", self.allot("logs", "--help").stdout)

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
        p = self.allot("shares", "nope", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("nope does not exist", p.stderr)

    def test_bench_submit(self):
        # One thread driving the 4 clients' connections (the default), two, and a thread each.
        for i, threads in enumerate(["1", "2", "0"]):
            with self.subTest(threads=threads):
                p = self.allot("bench", "submit", "--endpoint", self.endpoint, "--clients", "4",
                               "--threads", threads, "--jobs", "200", timeout=300)
                last = p.stdout.strip().splitlines()[-1]
                m = BENCH_LINE.match(last)
                self.assertIsNotNone(m, p.stdout)
                self.assertEqual(m.group(1), "200")
                self.assertNotIn("failed", p.stdout)
                out = self.allot("shares", "allot-bench").stdout
                row = next(l for l in out.splitlines() if l.startswith("bench"))
                self.assertGreaterEqual(int(row.split()[-1]), 200 * (i + 1), out)


if __name__ == "__main__":
    unittest.main()
