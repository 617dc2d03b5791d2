"""Usage history, reports and the way into the simulator (issue 12, section 2), on a real server
with real jobs: a borrow, a reclaim whose victim uses the whole stop grace, and a priority change
while waiting. Then `allot report`, GET /allot/v1/history/usage, `allot history export`, and
`allot sim` replaying the export under the same configuration: the simulator's used
instance-hours per share must match the report's within 5 %, and the priority change must order
the replayed jobs as it ordered the real ones.
"""

import csv
import json
import os
import subprocess
import tempfile
import time
import unittest

from allot_harness import (AllotServer, Fixture, REGION, payload, wait_for)

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = os.path.join(HERE, "..", "..", "docs", "policies")
INSTANCE = "ml.g5.xlarge"
GRACE_SECONDS = 2
# Exits at SIGTERM at once; the stubborn one ignores it and is killed after the grace.
FAST = "trap 'exit 143' TERM; sleep {s} & wait"
STUBBORN = "trap '' TERM; sleep {s} & wait"

CLUSTER_YAML = f"""
serviceEnvironments:
  - name: se
    capacityLimits:
      - {{capacityUnit: {INSTANCE}, maxCapacity: 2}}
schedulingPolicies:
  - name: teams
jobQueues:
  - name: q
    serviceEnvironment: se
    schedulingPolicy: teams
    priority: 1
quotaShares:
  - name: team-a
    jobQueue: q
    capacityLimits:
      - {{capacityUnit: {INSTANCE}, maxCapacity: 1}}
    strategy: LEND_AND_BORROW
    borrowLimit: -1
  - name: team-b
    jobQueue: q
    capacityLimits:
      - {{capacityUnit: {INSTANCE}, maxCapacity: 1}}
    strategy: LEND_AND_BORROW
    borrowLimit: -1
"""


SCALE = 1000


def scale_trace(src, dst, factor):
    """Allot's trace CSV with every time (submission, duration, stop, priority change) times
    `factor`."""
    with open(src, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0].keys())
    for r in rows:
        for col in ("submit_s", "duration_s", "stop_s"):
            if r[col]:
                r[col] = repr(float(r[col]) * factor)
        if r["priority_changes"]:
            r["priority_changes"] = ";".join(
                f"{float(t) * factor!r}:{p}"
                for t, p in (c.split(":") for c in r["priority_changes"].split(";")))
    with open(dst, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


class HistoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="allot-history-test-")
        cls.server = AllotServer("--no-sandbox", "--history-interval-seconds", "1",
                                 stop_grace_seconds=GRACE_SECONDS)
        try:
            cls.server.start()
            cls.batch = cls.server.client()
            cls.fx = Fixture(cls.batch)
            cls.cluster = os.path.join(cls.tmp, "cluster.yaml")
            with open(cls.cluster, "w", encoding="utf-8") as f:
                f.write(CLUSTER_YAML)
            cls.allot("apply", "-f", cls.cluster)
            cls.start_ms = int(time.time() * 1000) - 1000
            cls.run_jobs()
        except Exception:
            cls.server.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    @classmethod
    def allot(cls, *args, check=True):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({"AWS_SHARED_CREDENTIALS_FILE": cls.server.credentials_file,
                    "AWS_ENDPOINT_URL_BATCH": cls.server.endpoint,
                    "AWS_DEFAULT_REGION": REGION})
        r = subprocess.run([cls.server.bin, *args], env=env, capture_output=True, text=True,
                           timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"allot {' '.join(args)} exited {r.returncode}:\n{r.stderr}")
        return r

    @classmethod
    def submit(cls, share, name, script, priority=0):
        return cls.batch.submit_service_job(
            jobName=name, jobQueue="q", serviceJobType="SAGEMAKER_TRAINING", quotaShareName=share,
            schedulingPriority=priority, serviceRequestPayload=payload(script))["jobId"]

    @classmethod
    def run_jobs(cls):
        """team-b fills the pool (one job borrows team-a's instance), two more team-b jobs wait
        (b3 is raised above b4 while waiting), team-a's job reclaims its instance from the
        stubborn borrower, and everything runs to the end."""
        fx = cls.fx
        cls.ids = {}
        cls.ids["b1"] = cls.submit("team-b", "b1", FAST.format(s=8))
        fx.wait_status(cls.ids["b1"], "RUNNING")
        cls.ids["b2"] = cls.submit("team-b", "b2", STUBBORN.format(s=8))
        fx.wait_status(cls.ids["b2"], "RUNNING")
        cls.ids["b3"] = cls.submit("team-b", "b3", FAST.format(s=2), priority=0)
        cls.ids["b4"] = cls.submit("team-b", "b4", FAST.format(s=2), priority=3)
        time.sleep(0.3)
        cls.batch.update_service_job(jobId=cls.ids["b3"], schedulingPriority=5)
        time.sleep(0.5)
        cls.ids["a1"] = cls.submit("team-a", "a1", FAST.format(s=2))
        for job in cls.ids.values():
            fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=90)
        cls.end_ms = int(time.time() * 1000) + 2000
        time.sleep(1.5)  # one more usage sample after the last job

    def report(self, *extra):
        r = self.allot("report", "--since", "1h", "--format", "json", *extra)
        return json.loads(r.stdout)

    def share(self, report, name):
        for s in report["shares"]:
            if s["share"] == name:
                return s
        self.fail(f"no share {name} in {report}")

    def test_report_counts_the_borrow_the_reclaim_and_the_waits(self):
        prices = os.path.join(self.tmp, "prices.yaml")
        with open(prices, "w", encoding="utf-8") as f:
            f.write(f"{INSTANCE}: 1.006\n")
        report = self.report("--prices", prices)
        a = self.share(report, "team-a")
        b = self.share(report, "team-b")
        self.assertEqual(b["preemptions"], {"reclaim": 1}, b)
        self.assertGreater(b["lostInstanceHours"], 0)
        self.assertGreater(b["restartInstanceHours"], 0)  # the victim's resumed attempt
        self.assertGreater(b["borrowedInstanceHours"], 0)
        self.assertGreater(a["lentInstanceHours"], 0)
        self.assertEqual(b["jobs"], {"submitted": 4, "succeeded": 4, "failed": 0})
        self.assertEqual(b["waits"]["count"], 4)
        self.assertGreater(b["waits"]["p99Seconds"], b["waits"]["p50Seconds"] - 1e-9)
        self.assertAlmostEqual(a["cost"], a["usedInstanceHours"] * 1.006, places=9)
        flows = {(f["borrower"], f["lender"]) for f in report["lending"]}
        self.assertIn(("team-b", "team-a"), flows)
        self.assertTrue(all("cost" in f for f in report["lending"]))
        # The same figures in text and HTML.
        text = self.allot("report", "--since", "1h", "--prices", prices).stdout
        self.assertIn("q/team-b", text)
        self.assertIn("team-b used", text)
        html = self.allot("report", "--since", "1h", "--format", "html").stdout
        self.assertTrue(html.startswith("<!doctype html>"), html[:80])
        self.assertIn("q/team-a", html)

    def test_usage_history_has_the_dashboards_shape(self):
        status, body = self.server.raw_get("/allot/v1/history/usage",
                                           {"queue": "q", "since": str(self.start_ms)})
        self.assertEqual(status, 200, body)
        self.assertEqual(set(body), {"queue", "stepSeconds", "series"})
        self.assertEqual(body["queue"], "q")
        self.assertEqual(body["stepSeconds"], 1)
        series = {s["share"]: s for s in body["series"]}
        self.assertEqual(set(series), {"team-a", "team-b"})
        for s in series.values():
            self.assertEqual(set(s), {"share", "unit", "limit", "points"})
            self.assertEqual(s["unit"], INSTANCE)
            self.assertEqual(s["limit"], 1)
            for p in s["points"]:
                self.assertEqual(len(p), 5)
        self.assertTrue(any(p[2] >= 1 for p in series["team-b"]["points"]), "b never borrowed")
        self.assertTrue(any(p[3] >= 1 for p in series["team-a"]["points"]), "a never lent")
        self.assertTrue(any(p[4] >= 1 for p in series["team-b"]["points"]), "b never waited")
        times = [p[0] for p in series["team-b"]["points"]]
        self.assertEqual(times, sorted(times))
        # A week asks for five-minute points; bad input names the field.
        status, body = self.server.raw_get(
            "/allot/v1/history/usage", {"queue": "q", "since": "7d"})
        self.assertEqual((status, body["stepSeconds"]), (200, 300))
        status, body = self.server.raw_get("/allot/v1/history/usage", {"queue": "nope"})
        self.assertEqual(status, 400)
        self.assertIn("queue", body.get("message", ""))
        status, body = self.server.raw_get("/allot/v1/report", {"since": "yesterday"})
        self.assertEqual(status, 400)
        self.assertIn("since", body.get("message", ""))

    def test_a_member_sees_only_its_share(self):
        with open(os.path.join(POLICIES, "team-member.json"), encoding="utf-8") as f:
            policy = json.load(f)
        status, out, _ = self.server.request("POST", "/allot/v1/users",
                                             {"userName": "alice", "policy": policy})
        self.assertEqual(status, 200, out)
        keys = (out["accessKey"]["accessKeyId"], out["accessKey"]["secretAccessKey"])
        status, report, _ = self.server.request("GET", "/allot/v1/report", query={"since": "1h"},
                                                keys=keys)
        self.assertEqual(status, 200, report)
        self.assertEqual([s["share"] for s in report["shares"]], ["team-a"])
        for f in report["lending"]:
            self.assertIn("team-a", (f["borrower"], f["lender"]))
            self.assertIn("(other shares)", (f["borrower"], f["lender"]))
        status, usage, _ = self.server.request("GET", "/allot/v1/history/usage",
                                               query={"queue": "q", "since": "1h"}, keys=keys)
        self.assertEqual(status, 200, usage)
        self.assertEqual([s["share"] for s in usage["series"]], ["team-a"])
        status, jobs, _ = self.server.request("GET", "/allot/v1/history/jobs",
                                              query={"since": "1h"}, keys=keys)
        self.assertEqual(status, 200, jobs)
        self.assertEqual([j["name"] for j in jobs["jobs"]], ["a1"])

    def test_export_replays_in_the_simulator_as_it_ran(self):
        trace = os.path.join(self.tmp, "trace.csv")
        self.allot("history", "export", "--since", "1h", "-o", trace)
        with open(trace, encoding="utf-8") as f:
            rows = {r["name"]: r for r in csv.DictReader(f)}
        self.assertEqual(set(rows), {"a1", "b1", "b2", "b3", "b4"})
        self.assertEqual(rows["b3"]["priority_changes"].split(":")[1], "5")
        # The victim used the whole grace: its stop is about the grace, not the simulator's 30 s.
        victim = next(r for r in rows.values() if r["stop_s"])
        self.assertEqual(victim["name"], "b2")
        self.assertGreater(float(victim["stop_s"]), GRACE_SECONDS - 0.5)
        self.assertLess(float(victim["stop_s"]), GRACE_SECONDS + 3)

        # The simulator's JSON rounds instance-hours to 3 decimals, which would swallow jobs of
        # seconds: the replay runs the trace with every time 1,000 times longer (a schedule
        # without checkpoints or restart overhead does not change with the unit of time) and
        # its hours are divided back.
        scaled = os.path.join(self.tmp, "trace-x1000.csv")
        scale_trace(trace, scaled, SCALE)
        out_json = os.path.join(self.tmp, "sim.json")
        out_jobs = os.path.join(self.tmp, "jobs.csv")
        self.allot("sim", "--trace", scaled, "--config", self.cluster, "--restart-overhead", "0",
                   "--checkpoint-interval", "0", "--json", out_json, "--jobs", out_jobs, "-q")
        with open(out_json, encoding="utf-8") as f:
            sim = json.load(f)
        simulated = {s["share"]: s["figures"]["used_instance_hours"] / SCALE
                     for s in sim["runs"][0]["shares"]}
        report = self.report()
        measured = {s["share"]: s["usedInstanceHours"] for s in report["shares"]}
        differ = []
        for share, hours in measured.items():
            got = simulated.get(share, 0.0)
            if abs(got - hours) > 0.05 * hours:
                differ.append(f"{share}: report {hours * 3600:.2f} instance-s, "
                              f"simulator {got * 3600:.2f} instance-s")
        with open(trace, encoding="utf-8") as f:
            text = f.read()
        self.assertFalse(differ, "the replay's used instance-hours differ by more than 5 %:\n"
                         + "\n".join(differ) + f"\ntrace:\n{text}")
        print("\nused instance-seconds, report vs replay: " + ", ".join(
            f"{share} {hours * 3600:.2f} vs {simulated.get(share, 0) * 3600:.2f}"
            for share, hours in sorted(measured.items())))

        with open(out_jobs, encoding="utf-8") as f:
            jobs = {r["name"]: r for r in csv.DictReader(f)}
        self.assertEqual({r["status"] for r in jobs.values()}, {"SUCCEEDED"})
        self.assertEqual(jobs["b2"]["preemptions"], "1")
        self.assertEqual(jobs["b2"]["attempts"], "2")
        # b3 was raised above b4 while both waited: it started first, there as here.
        real = {n: self.batch.describe_service_job(jobId=self.ids[n])["startedAt"]
                for n in ("b3", "b4")}
        self.assertLess(real["b3"], real["b4"])
        self.assertLess(float(jobs["b3"]["first_start_s"]), float(jobs["b4"]["first_start_s"]))
        # The victim's stop replays as it happened: a1 starts its stop after it was submitted.
        submitted = float(jobs["a1"]["submit_s"])
        self.assertAlmostEqual(float(jobs["a1"]["first_start_s"]) - submitted,
                               float(victim["stop_s"]) * SCALE, delta=0.2 * SCALE)


if __name__ == "__main__":
    unittest.main()
