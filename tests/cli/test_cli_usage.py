"""The command line catches mistakes (issue 12, section 4): usage errors exit 2 with a
did-you-mean or the missing argument's name; an unknown queue or share is an error, not "no
jobs"; `allot apply` plans the whole file before it changes anything and warns about
overcommitted pools; `allot delete` removes what `apply` made, never under unfinished jobs;
`allot describe` says how long the attempts ran, not the time from the first start to the end.

Run from tests/cli: ALLOT_BIN=build/dev/bin/allot python3 -m unittest -v test_cli_usage
"""

import json
import os
import time
import unittest

from cli_server import ServerCase

# A cluster of its own, so that deleting it leaves examples/cluster.yaml's alone.
LAB_YAML = """
serviceEnvironments:
  - name: lab-env
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 2}]
schedulingPolicies:
  - name: lab-policy
jobQueues:
  - name: lab
    serviceEnvironment: lab-env
    schedulingPolicy: lab-policy
quotaShares:
  - name: lab-a
    jobQueue: lab
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]
    strategy: RESERVE
"""


class UsageTest(ServerCase):
    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_unknown_command_suggests_the_closest(self):
        p = self.allot("submitt", check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('unknown command "submitt"; did you mean "submit"?', p.stderr)
        p = self.allot("users", "creat", check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('did you mean "create"?', p.stderr)
        self.assertIn("allot users", p.stderr)

    def test_unknown_option_suggests_the_closest(self):
        p = self.allot("jobs", "--shar", "team-a", check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("unknown option --shar; did you mean --share?", p.stderr)

    def test_missing_argument_is_named(self):
        p = self.allot("logs", check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("missing argument: job is required", p.stderr)
        p = self.allot(check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("a command is required: one of server, apply, delete", p.stderr)

    def test_a_bad_size_for_the_server_names_its_flag(self):
        # "auto" is the memory limit's alone: for the store's reserve it read as 3/4 of the
        # machine's memory, and so did --job-disk-limit auto.
        for flag, value in (("--store-reserve", "auto"), ("--store-reserve", "1X"),
                            ("--job-disk-limit", "auto")):
            p = self.allot("server", "--data-dir", os.path.join(self.tmp, "never"), flag, value,
                           check=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(f"allot server: {flag} ", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "never")))

    def test_help_exits_0_and_documents_exit_codes(self):
        p = self.allot("--help")
        self.assertIn("Exit status: 0 success, 1 error, 2 usage error", p.stdout)

    def test_unknown_queue_or_share_is_an_error(self):
        p = self.allot("jobs", "--queue", "trainig", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn('job queue "trainig" does not exist', p.stderr)
        self.assertIn('did you mean "training"?', p.stderr)
        p = self.allot("jobs", "--queue", "training", "--share", "team-z", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn('"team-z" does not exist', p.stderr)
        self.assertNotIn("no jobs", p.stdout)
        p = self.allot("jobs", "--share", "team-a")  # a share of some queue: fine
        self.assertEqual(p.returncode, 0)

    def test_apply_checks_the_whole_file_before_changing_anything(self):
        path = self.write("bad.yaml", """
jobQueues:
  - name: bad-q
    serviceEnvironment: no-such-env
quotaShares:
  - name: fine
    jobQueue: training
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]
    strategy: RESERVE
  - name: orphan
    jobQueue: no-such-queue
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]
    strategy: RESERVE
""")
        p = self.allot("apply", "-f", path, check=False)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("nothing was changed; the file has 2 problems", p.stderr)
        self.assertIn("no-such-env", p.stderr)
        self.assertIn("no-such-queue", p.stderr)
        # The good share of the same file was not created either.
        out = self.allot("shares", "training").stdout
        self.assertNotIn("fine", out)

    def test_apply_warns_when_share_limits_exceed_the_pool(self):
        path = self.write("over.yaml", """
quotaShares:
  - name: team-d
    jobQueue: training
    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 2}]
    strategy: RESERVE
""")
        p = self.allot("apply", "-f", path, "--dry-run")
        self.assertIn("warning: job queue training: the quota shares' limits on ml.g5.xlarge "
                      "add up to 5, more than service environment local-gpus's 3", p.stdout)
        self.assertIn("quotaShare training/team-d: would be created", p.stdout)
        self.assertNotIn("team-d", self.allot("shares", "training").stdout)

    def test_delete_removes_what_apply_made_but_not_under_unfinished_jobs(self):
        path = self.write("lab.yaml", LAB_YAML)
        self.allot("apply", "-f", path)
        p = self.allot("delete", "-f", path, "--dry-run")
        self.assertIn("quotaShare lab/lab-a: would be deleted", p.stdout)
        self.assertIn("serviceEnvironment lab-env: would be deleted", p.stdout)
        self.assertIn("dry run: 4 to delete, 0 not on the server", p.stdout)

        job = self.submit("--queue", "lab", "--share", "lab-a", "--", "/bin/sleep", "60")
        p = self.allot("delete", "-f", path, check=False)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("nothing was deleted", p.stderr)
        self.assertIn(job, p.stderr)
        self.assertIn(job, self.allot("jobs", "--queue", "lab").stdout)  # nothing deleted

        self.allot("cancel", job)
        deadline = time.time() + 60
        while time.time() < deadline:
            status = json.loads(self.allot("describe", job, "--json").stdout)["status"]
            if status in ("SUCCEEDED", "FAILED"):
                break
            time.sleep(0.2)
        p = self.allot("delete", "-f", path)
        for line in ("quotaShare lab/lab-a: deleted", "jobQueue lab: deleted",
                     "schedulingPolicy lab-policy: deleted",
                     "serviceEnvironment lab-env: deleted", "deleted: 4, 0 not on the server"):
            self.assertIn(line, p.stdout)
        p = self.allot("jobs", "--queue", "lab", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("deleted: 0, 4 not on the server", self.allot("delete", "-f", path).stdout)

    def test_submit_warns_on_a_job_that_can_never_fit(self):
        p = self.allot("submit", "--queue", "training", "--share", "team-c",
                       "--instance-count", "5", "--", "/bin/true")
        job = p.stdout.strip()
        self.assertRegex(job, r"^[0-9a-f-]{36}$")
        self.assertIn("warning: job %s can never start" % job, p.stderr)
        self.assertIn("MISCONFIGURATION:", p.stderr)
        self.allot("cancel", job)
        p = self.allot("submit", "--queue", "training", "--share", "team-c", "--", "/bin/true")
        self.assertNotIn("warning", p.stderr)

    def test_describe_sums_the_attempts(self):
        job = self.submit("--queue", "training", "--share", "team-c", "--retries", "2", "--",
                          "/bin/sh", "-c", "sleep 1; exit 3")
        deadline = time.time() + 90
        while time.time() < deadline:
            status = json.loads(self.allot("describe", job, "--json").stdout)["status"]
            if status == "FAILED":
                break
            time.sleep(0.3)
        out = self.allot("describe", job).stdout
        self.assertRegex(out, r"\(ran \S+ in 3 attempts: \S+, \S+, \S+\)")


if __name__ == "__main__":
    unittest.main()
