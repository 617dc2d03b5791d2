"""`allot explain`, `allot whatif` and the reason column of `allot jobs` (issue 12, sections 3
and 4) against a real server with examples/cluster.yaml applied."""

import json
import unittest

try:
    from cli_server import ServerCase
except ImportError:
    # Until tests/cli/cli_server.py (another change, in flight) is committed: the same server
    # setup, from test_cli's class, without its tests.
    import test_cli

    class ServerCase(test_cli.CliTest):
        pass

    for _name in [n for n in dir(test_cli.CliTest) if n.startswith("test_")]:
        setattr(ServerCase, _name, None)


class ExplainCliTest(ServerCase):
    def test_explain_whatif_and_the_reason_column(self):
        # team-c reserves one instance: its second job waits, while team-a's and team-b's
        # instances stand idle.
        first = self.submit("-q", "training", "-s", "team-c", "--", "sleep", "60")
        self.wait_listed(first, "RUNNING")
        second = self.submit("-q", "training", "-s", "team-c", "--", "sleep", "60")
        self.wait_listed(second, "RUNNABLE")
        self.addCleanup(lambda: [self.allot("cancel", j, check=False) for j in (second, first)])

        out = self.allot("explain", second).stdout
        self.assertIn(f"({second}): RUNNABLE", out)
        self.assertIn("Quota share team-c is at its limit", out)
        self.assertIn("Waiting:      rule SHARE_LIMIT, unit ml.g5.xlarge: needs 1, 0 available, "
                      "1 missing", out)
        self.assertIn("free elsewhere: 1 free in share team-a's LEND_AND_BORROW, "
                      "1 free in share team-b's LEND", out)
        self.assertIn(f"({first}) holds 1, no time limit", out)
        self.assertIn("start:      unknown: 1 of the 1 running jobs of quota share team-c", out)
        self.assertIn("in-share preemption: in-share preemption is off in quota share team-c",
                      out)
        data = json.loads(self.allot("explain", second, "--json").stdout)
        self.assertEqual(data["waiting"]["rule"], "SHARE_LIMIT")

        # The reason column of `allot jobs` says whose the free capacity is.
        jobs = self.allot("jobs", "-q", "training", "--status", "RUNNABLE").stdout
        row = next(l for l in jobs.splitlines() if second in l)
        self.assertIn("1 free in share team-b's LEND", row)

        out = self.allot("whatif", "submit", "-q", "training", "-s", "team-c",
                         "-t", "ml.g5.xlarge").stdout
        self.assertIn("decision: wait", out)
        self.assertIn("It would wait.", out)
        self.assertIn("Waiting:      rule SHARE_LIMIT", out)
        out = self.allot("whatif", "submit", "-q", "training", "-s", "team-b",
                         "-t", "ml.g5.xlarge").stdout
        self.assertIn("decision: start", out)
        out = self.allot("whatif", "share", "-q", "training", "-s", "team-c",
                         "--limit", "ml.g5.xlarge=2").stdout
        self.assertIn("decision: start", out)
        self.assertIn(f"starts sleep ({second}, share team-c)", out)
        data = json.loads(self.allot("whatif", "priority", second, "5", "--json").stdout)
        self.assertEqual(data["decision"], "wait")
        # Nothing changed: team-c's limit is still 1 and the job still waits.
        shares = self.allot("shares", "training").stdout
        row = next(l for l in shares.splitlines() if l.startswith("team-c"))
        self.assertEqual(row.split()[-6:-4], ["ml.g5.xlarge", "1"], shares)
        self.wait_listed(second, "RUNNABLE")

    def test_explain_of_an_unknown_job_is_an_error(self):
        p = self.allot("explain", "no-such-job", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no-such-job", p.stderr)


if __name__ == "__main__":
    unittest.main()
