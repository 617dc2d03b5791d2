"""GET /metrics scraped by a real Prometheus (Debian's `prometheus`, /usr/bin/prometheus).

The test starts the server and a Prometheus whose scrape config points at it every second with
the metrics token (`authorization: {credentials_file: <data-dir>/metrics-token}`). Real `sleep`
jobs borrow and are reclaimed; PromQL through Prometheus's HTTP API (/api/v1/query) must then
return the used, borrowed and lent figures and the reclaim counter. Every wait polls Prometheus
until the expected answer or a deadline. /metrics without the token, with a wrong one, or signed
with a user's SigV4 key answers 401 and shows no figure.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import botocore.auth
import botocore.awsrequest
import botocore.credentials

from allot_harness import (INSTANCE, REGION, SLEEPER, AllotServer, Fixture, free_port, wait_for)

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def http_get(url, headers=None, timeout=10):
    """(status, body text, headers) of a GET, whatever the status."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


class Prometheus:
    """A Prometheus process scraping one target every second, with a bearer token file."""

    def __init__(self, target, token_file):
        self.dir = tempfile.mkdtemp(prefix="allot-prom-")
        self.port = free_port()
        self.log_path = os.path.join(self.dir, "prometheus.log")
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: allot
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: {token_file}
    static_configs:
      - targets: ['{target}']
""")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}",
                 f"--storage.tsdb.path={os.path.join(self.dir, 'data')}",
                 f"--web.listen-address=127.0.0.1:{self.port}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout=60):
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited with {self.proc.returncode}:\n"
                                     f"{self.log()}")
            try:
                return http_get(self.url + "/-/ready", timeout=2)[0] == 200
            except OSError:
                return False
        wait_for(ready, timeout, interval=0.2, what="prometheus ready")

    def query(self, promql):
        """The instant vector of `promql` as [(labels, float value)]."""
        status, body, _ = http_get(self.url + "/api/v1/query?" +
                                   urllib.parse.urlencode({"query": promql}))
        if status != 200:
            raise AssertionError(f"query {promql}: HTTP {status}: {body}")
        data = json.loads(body)["data"]
        return [(r["metric"], float(r["value"][1])) for r in data["result"]]

    def value(self, promql):
        """The single value of `promql`, or None while it has no series."""
        result = self.query(promql)
        return result[0][1] if len(result) == 1 else None

    def wait_value(self, promql, expected, timeout=30):
        """Polls until `promql` evaluates to `expected` (Prometheus has scraped that state)."""
        try:
            return wait_for(lambda: self.value(promql) == expected, timeout, interval=0.25,
                            what=f"{promql} == {expected}")
        except AssertionError as e:
            raise AssertionError(f"{e}; now {self.query(promql)}") from None

    def log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrometheusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(PROMETHEUS, os.X_OK):
            raise RuntimeError(f"{PROMETHEUS} is missing: scripts/install-deps.sh installs "
                               "Debian's prometheus package")
        cls.server = AllotServer(stop_grace_seconds=2)
        try:
            cls.server.start()
        except Exception:
            cls.server.cleanup()
            raise
        cls.batch = cls.server.client()
        cls.fx = Fixture(cls.batch)
        cls.token_file = os.path.join(cls.server.data_dir, "metrics-token")
        with open(cls.token_file, encoding="utf-8") as f:
            cls.token = f.read().strip()
        cls.prom = Prometheus(f"127.0.0.1:{cls.server.port}", cls.token_file)
        try:
            cls.prom.wait_ready()
        except Exception:
            cls.prom.stop()
            cls.server.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.prom.stop()
        cls.server.cleanup()

    def metrics_url(self):
        return self.server.endpoint + "/metrics"

    def test_token_file_is_private(self):
        self.assertEqual(os.stat(self.token_file).st_mode & 0o777, 0o600)
        self.assertGreaterEqual(len(self.token), 32)

    def test_scrape_without_the_token_is_refused_and_logged(self):
        for headers in ({}, {"Authorization": "Bearer not-the-token-at-all-000000"},
                        {"Authorization": "Basic " + self.token}):
            status, body, answer_headers = http_get(self.metrics_url(), headers)
            self.assertEqual(status, 401, headers)
            self.assertNotIn("allot_", body)
            # A 401 names the scheme it wants (RFC 9110 11.6.1, RFC 6750).
            self.assertTrue(answer_headers.get("WWW-Authenticate", "").startswith("Bearer "),
                            answer_headers)
        # A user's SigV4 key does not read every share's figures either.
        key, secret = self.server.credentials()
        req = botocore.awsrequest.AWSRequest(method="GET", url=self.metrics_url())
        botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch",
                                REGION).add_auth(req)
        status, body, _ = http_get(self.metrics_url(), dict(req.prepare().headers.items()))
        self.assertEqual(status, 401)
        self.assertNotIn("allot_", body)
        wait_for(lambda: "metrics.refused" in self.server.log_text(), 10,
                 what="the refused scrape in the server's log")
        status, body, headers = http_get(self.metrics_url(),
                                         {"Authorization": "Bearer " + self.token})
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/plain; version=0.0.4"))
        self.assertIn("# TYPE allot_metrics_scrapes_refused_total counter", body)
        self.assertIn("allot_build_info{version=", body)
        # Prometheus's own linter (naming, units, _total, histogram layout) finds nothing.
        promtool = shutil.which("promtool") or "/usr/bin/promtool"
        check = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                               text=True, timeout=60)
        self.assertEqual((check.returncode, check.stdout + check.stderr), (0, ""), body[:2000])

    def test_borrow_and_reclaim_seen_through_promql(self):
        fx, prom = self.fx, self.prom
        prom.wait_value('up{job="allot"}', 1)
        env = fx.environment(2)
        queue = fx.queue(env, fx.policy())
        fx.share(queue, name="QS1", capacity=1, strategy="LEND_AND_BORROW", borrow_limit=100)
        fx.share(queue, name="QS2", capacity=1, strategy="LEND")
        q = f'queue="{queue}",unit="{INSTANCE}"'

        # QS1 runs two jobs: one on its own instance, one on QS2's idle instance.
        borrowers = [fx.submit(queue, "QS1", script=SLEEPER, name=f"qs1-{i}")["jobId"]
                     for i in range(2)]
        for job in borrowers:
            fx.wait_status(job, "RUNNING")
        prom.wait_value(f'allot_share_used_instances{{{q},share="QS1"}}', 2)
        self.assertEqual(prom.value(f'allot_share_borrowed_instances{{{q},share="QS1"}}'), 1)
        self.assertEqual(prom.value(f'allot_share_lent_instances{{{q},share="QS2"}}'), 1)
        self.assertEqual(prom.value(f'allot_share_limit_instances{{{q},share="QS1"}}'), 1)
        self.assertEqual(prom.value(f'allot_pool_used_instances{{{q}}}'), 2)
        self.assertEqual(prom.value(f'allot_share_running_jobs{{queue="{queue}",share="QS1"}}'), 2)
        self.assertEqual(
            prom.value(f'sum(allot_submissions_total{{queue="{queue}",share="QS1"}})'), 2)
        self.assertEqual(prom.value(
            f'allot_dispatches_total{{queue="{queue}",share="QS1",mode="borrowed"}}'), 1)

        # A QS2 job reclaims its instance: one QS1 job is preempted and waits again.
        reclaimer = fx.submit(queue, "QS2", script=SLEEPER, name="qs2")["jobId"]
        fx.wait_status(reclaimer, "RUNNING", timeout=20)
        prom.wait_value(
            f'allot_preemptions_total{{queue="{queue}",rule="reclaim",preemptor_share="QS2",'
            f'victim_share="QS1"}}', 1)
        prom.wait_value(f'allot_share_used_instances{{{q},share="QS2"}}', 1)
        prom.wait_value(f'allot_share_used_instances{{{q},share="QS1"}}', 1)
        prom.wait_value(f'allot_share_borrowed_instances{{{q},share="QS1"}}', 0)
        prom.wait_value(f'allot_share_lent_instances{{{q},share="QS2"}}', 0)
        prom.wait_value(f'allot_share_waiting_jobs{{queue="{queue}",share="QS1"}}', 1)
        prom.wait_value(f'allot_share_waiting_instances{{{q},share="QS1"}}', 1)
        prom.wait_value(
            f'allot_attempts_ended_total{{queue="{queue}",share="QS1",outcome="preempted"}}', 1)
        lost = prom.value(f'allot_preemption_lost_work_instance_seconds_total{{queue="{queue}",'
                          f'share="QS1",rule="reclaim"}}')
        self.assertIsNotNone(lost)
        self.assertGreater(lost, 0)
        # The waits to a first start were observed for the three jobs that ran.
        prom.wait_value(f'sum(allot_job_first_start_wait_seconds_count{{queue="{queue}"}})', 3)
        # The server's own figures came through the same scrape.
        self.assertGreater(prom.value(
            'allot_api_request_duration_seconds_count{action="submitservicejob"}'), 0)
        self.assertGreater(prom.value('allot_store_commit_duration_seconds_count'), 0)
        self.assertGreater(prom.value(
            'allot_engine_event_duration_seconds_count{event="submit_job"}'), 0)
        self.assertEqual(prom.value('allot_executor_up{executor="local"}'), 1)
        self.assertGreater(prom.value('allot_jobs_stored'), 2)
        self.assertEqual(prom.value('allot_store_rolling_back'), 0)
        self.assertEqual(prom.value('allot_store_reserve_released'), 0)

        for job in borrowers + [reclaimer]:
            self.batch.terminate_service_job(jobId=job, reason="test over")


if __name__ == "__main__":
    unittest.main()
