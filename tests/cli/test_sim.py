"""`allot sim` end to end: golden replays and the command line's errors.

Each golden case runs the real `allot` binary on a committed trace and cluster and compares
its JSON report, byte for byte, with tests/sim/golden/<case>.json. The debug build checks the
scheduling invariants after every event, so these replays also fail on a broken invariant.

Run from tests/cli with ALLOT_BIN naming the allot binary:
    ALLOT_BIN=build/dev/bin/allot python3 -m unittest -v test_sim
After a deliberate change of the simulator's output, rewrite the expected files with
    ALLOT_UPDATE_GOLDEN=1 ALLOT_BIN=build/dev/bin/allot python3 -m unittest test_sim
and review the diff before committing it.
"""

import difflib
import json
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "sim", "data")
GOLDEN = os.path.join(ROOT, "tests", "sim", "golden")
ALL_POLICIES = "configured,reserve,kueue,allot"


def pollux_case(n):
    return ["--format", "pollux", "--trace", f"tests/sim/data/pollux/workload-{n}.csv",
            "--config", "tests/sim/golden/pollux-cluster.yaml", "--policies", ALL_POLICIES]


CASES = {
    "teams": ["--trace", "examples/sim/teams.csv", "--config", "examples/cluster.yaml",
              "--policies", ALL_POLICIES],
    "philly-3000": ["--format", "philly", "--trace", "tests/sim/data/philly-3000.csv",
                    "--vc-config", "tests/sim/data/philly_vc.csv"],
    "kueue-baseline": ["--format", "kueue-baseline"],
    **{f"pollux-{n}": pollux_case(n) for n in range(1, 9)},
}


class SimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = os.environ.get("ALLOT_BIN")
        if not cls.bin:
            raise unittest.SkipTest("ALLOT_BIN is not set")
        cls.bin = os.path.abspath(cls.bin)
        cls.tmp = tempfile.TemporaryDirectory(prefix="allot-sim-test-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def sim(self, *args, check=True):
        p = subprocess.run([self.bin, "sim", *args], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
        if check:
            self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def test_golden_replays(self):
        update = os.environ.get("ALLOT_UPDATE_GOLDEN") == "1"
        for case, args in CASES.items():
            with self.subTest(case=case):
                out = os.path.join(self.tmp.name, case + ".json")
                html = os.path.join(self.tmp.name, case + ".html")
                p = self.sim(*args, "--json", out, "--html", html)
                with open(out) as f:
                    got = f.read()
                report = json.loads(got)
                for run in report["runs"]:
                    self.assertIn(run["policy"], p.stdout)
                    self.assertGreater(run["overall"]["jobs"], 0)
                with open(html) as f:
                    page = f.read()
                self.assertTrue(page.startswith("<!DOCTYPE html>"))
                self.assertIn("<svg", page)
                expected_file = os.path.join(GOLDEN, case + ".json")
                if update:
                    with open(expected_file, "w") as f:
                        f.write(got)
                    continue
                with open(expected_file) as f:
                    expected = f.read()
                if got != expected:
                    diff = "".join(difflib.unified_diff(
                        expected.splitlines(True), got.splitlines(True),
                        "expected/" + case + ".json", "got/" + case + ".json", n=2))
                    self.fail(f"{case}: the report differs from {expected_file}:\n{diff[:6000]}")

    def test_invariants_were_checked(self):
        # The debug build checks after every event; a release build only with the flag.
        out = os.path.join(self.tmp.name, "checked.json")
        self.sim(*CASES["teams"], "--check-invariants", "--json", out, "-q")
        with open(out) as f:
            for run in json.load(f)["runs"]:
                self.assertGreater(run["invariant_checks"], 0)

    def test_lending_beats_static_partitions_on_the_philly_slice(self):
        out = os.path.join(self.tmp.name, "philly.json")
        self.sim(*CASES["philly-3000"], "--json", out, "-q")
        with open(out) as f:
            runs = {r["policy"]: r["overall"] for r in json.load(f)["runs"]}
        self.assertEqual(set(runs), {"reserve", "kueue", "allot"})
        self.assertLess(runs["kueue"]["idle_while_waiting_instance_hours"],
                        runs["reserve"]["idle_while_waiting_instance_hours"])
        self.assertLessEqual(runs["allot"]["wait"]["p99"], runs["reserve"]["wait"]["p99"])
        self.assertLessEqual(runs["allot"]["lost_instance_hours"],
                             runs["kueue"]["lost_instance_hours"])

    def test_compare_runs_each_file_as_configured(self):
        out = os.path.join(self.tmp.name, "compare.json")
        self.sim("--trace", "examples/sim/teams.csv", "--config", "examples/cluster.yaml",
                 "--compare", "tests/sim/golden/teams-all-lend.yaml", "--json", out, "-q")
        with open(out) as f:
            runs = json.load(f)["runs"]
        self.assertEqual([r["policy"] for r in runs],
                         ["configured", "tests/sim/golden/teams-all-lend.yaml"])
        self.assertEqual([s["strategy"] for s in runs[1]["shares"]], ["LEND_AND_BORROW"] * 3)

    def test_mistakes_are_named(self):
        cases = [
            (["--trace", "examples/sim/teams.csv"], "--config is required"),
            (["--trace", "examples/sim/teams.csv", "--config", "examples/cluster.yaml",
              "--format", "csv"], "--format must be one of allot, philly, pollux, kueue-baseline"),
            (["--trace", "examples/sim/teams.csv", "--config", "examples/cluster.yaml",
              "--policies", "fair"], "unknown policy \"fair\" (allowed: configured, reserve, kueue, allot)"),
            (["--trace", "examples/sim/teams.csv", "--config", "examples/cluster.yaml",
              "--checkpoint-interval", "soon"], "--checkpoint-interval must be a duration"),
            (["--trace", "no-such-file.csv", "--config", "examples/cluster.yaml"],
             "cannot read no-such-file.csv"),
            (["--trace", "examples/cluster.yaml", "--config", "examples/cluster.yaml"],
             "examples/cluster.yaml"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                p = self.sim(*args, check=False)
                self.assertEqual(p.returncode, 1, p.stdout)
                self.assertIn(message, p.stderr)


if __name__ == "__main__":
    unittest.main()
