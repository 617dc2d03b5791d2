"""The server's structured log (issue 9, section 4): with --log-format json every line on stderr
is one JSON object with ts, level and event; decisions applied and executor events each have a
line; --log-level warn keeps info lines out."""

import json
import re
import subprocess
import unittest
import uuid

from allot_harness import AllotServer, Fixture, allot_bin


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


class ServerLogTest(unittest.TestCase):
    def run_one_job(self, *args):
        server = AllotServer("--no-sandbox", *args, stop_grace_seconds=2)
        server.start()
        try:
            b = server.client()
            fx = Fixture(b)
            job = fx.submit(fx.queue(fx.environment(1)), script="exit 0")["jobId"]
            fx.wait_status(job, "SUCCEEDED", timeout=30)
            server.stop()
            return server.log_text(tail=None)  # all of it: a slow build polls longer
        finally:
            server.cleanup()

    def test_json_lines_for_decisions_and_executor_events(self):
        text = self.run_one_job("--log-format", "json")
        lines = json_lines(text)
        self.assertTrue(lines, text)
        for line in lines:
            self.assertIn("ts", line)
            self.assertIn("level", line)
            self.assertIn("event", line)
        events = [line["event"] for line in lines]
        decisions = [line["decision"] for line in lines if line["event"] == "decision"]
        self.assertTrue(any(d.startswith("dispatch") for d in decisions), decisions)
        dispatch = next(line for line in lines if line.get("decision", "").startswith("dispatch"))
        self.assertRegex(dispatch["job"], r"^[0-9a-f-]{36}$")
        self.assertIn("executor.started", events)
        ended = [line for line in lines if line["event"] == "executor.ended"]
        self.assertEqual(ended[0]["outcome"], "succeeded")
        calls = [line for line in lines if line["event"] == "api.call"]
        submits = [c for c in calls if c["action"] == "submitservicejob"]
        self.assertEqual(len(submits), 1, calls)
        self.assertEqual(submits[0]["outcome"], "ok")
        self.assertEqual(submits[0]["status"], 200)
        # Who: the user the key belongs to; from where; and the answer's request id.
        self.assertEqual(submits[0]["principal"], "admin", submits[0])
        self.assertEqual(submits[0]["source"], "127.0.0.1", submits[0])
        self.assertRegex(submits[0]["request_id"], r"^[0-9a-f-]{36}$")
        self.assertTrue(submits[0]["resource"], submits[0])  # the queue it names
        self.assertGreaterEqual(submits[0]["latency_ms"], 0)
        describes = [c for c in calls if c["action"] == "describeservicejob"]
        self.assertTrue(describes)
        self.assertRegex(describes[0]["resource"], r"^[0-9a-f-]{36}$")

    def test_refused_calls_are_logged_with_their_error(self):
        server = AllotServer("--log-format", "json")
        server.start()
        try:
            b = server.client(retries=1)
            with self.assertRaises(Exception):
                b.describe_service_job(jobId="no-such-job")
            server.stop()
            calls = [line for line in json_lines(server.log_text(tail=None))
                     if line["event"] == "api.call"]
            self.assertEqual(calls[-1]["outcome"], "ClientException")
            self.assertEqual(calls[-1]["status"], 400)
        finally:
            server.cleanup()

    def test_warn_level_keeps_info_out(self):
        text = self.run_one_job("--log-level", "warn")
        self.assertNotIn("executor.started", text)
        self.assertNotIn("decision=", text)

    def test_bad_log_flags_are_refused_at_start(self):
        server = AllotServer("--log-format", "xml")
        with self.assertRaises(RuntimeError):
            server.start(timeout=5)
        self.assertIn("--log-format must be text or json", server.log_text())
        server.cleanup()

    def test_each_answer_carries_a_fresh_version_4_request_id_that_its_log_line_names(self):
        # The x-amzn-RequestId AWS clients read (boto3's ResponseMetadata.RequestId): a random
        # UUID (RFC 9562 version 4, variant 10), new for every call, and the one the call's log
        # line gives, so a caller's report can be found in the log.
        server = AllotServer("--log-format", "json")
        server.start()
        try:
            b = server.client()
            ids = [b.describe_service_environments()["ResponseMetadata"]["RequestId"]
                   for _ in range(3)]
            server.stop()  # the last lines are written
            for request_id in ids:
                u = uuid.UUID(request_id)
                self.assertEqual(str(u), request_id)  # the canonical lower-case form
                self.assertEqual(u.variant, uuid.RFC_4122, request_id)
                self.assertEqual(u.version, 4, request_id)
            self.assertEqual(len(set(ids)), 3, ids)
            logged = [line["request_id"] for line in json_lines(server.log_text(tail=None))
                      if line["event"] == "api.call"
                      and line["action"] == "describeserviceenvironments"]
            self.assertEqual(logged, ids)
        finally:
            server.cleanup()


class ManyLoopsLogTest(unittest.TestCase):
    """A call whose answer waits for its commit is parked, and its connection's loop answers it
    once the store's writer has settled the commit. This machine runs one loop by default;
    --http-loops 3 spreads 12 connections over three, each answered on its own loop."""

    def test_every_call_on_three_loops_is_answered_once_and_logged_once(self):
        server = AllotServer("--log-format", "json", "--http-loops", "3")
        server.start()
        try:
            env = {"AWS_SHARED_CREDENTIALS_FILE": server.credentials_file, "PATH": "/usr/bin:/bin",
                   "AWS_DEFAULT_REGION": "local"}
            p = subprocess.run([allot_bin(), "bench", "submit", "--endpoint", server.endpoint,
                                "--clients", "12", "--jobs", "600"],
                               capture_output=True, text=True, timeout=300, env=env)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertRegex(p.stdout, re.compile(r"^submitted 600 jobs", re.M), p.stdout)
            self.assertNotIn("failed", p.stdout)
            server.stop()  # the last lines are written
            calls = [line for line in json_lines(server.log_text(tail=None))
                     if line["event"] == "api.call" and line["action"] == "submitservicejob"]
            self.assertEqual(len(calls), 600)
            self.assertTrue(all(c["outcome"] == "ok" and c["status"] == 200 for c in calls))
            self.assertEqual(len({c["request_id"] for c in calls}), 600)
        finally:
            server.cleanup()


if __name__ == "__main__":
    unittest.main()
