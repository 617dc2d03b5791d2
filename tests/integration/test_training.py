"""Training jobs end to end, with the real server and (by default) the bubblewrap sandbox:

- a preempted examples/train_regression.py resumes from its last checkpoint and computes the
  model an unpreempted run computes, byte for byte;
- kill -9 of the server while a 2-host job runs: the job finishes in its one attempt with whole
  logs, and a job that ended while the server was down shows its true exit status;
- the stop grace period: a job that checkpoints on SIGTERM keeps its checkpoint, one that ignores
  SIGTERM is killed once the grace is over;
- the sandbox: a job writes only under /opt/ml and its private /tmp;
- multi-host jobs: consistent resourceconfig.json and SM_HOSTS on every host, and one host's
  failure stops the others.

Jobs in the sandbox see the host file system read-only, so every side effect is read from the
host's side of the job tree: <data-dir>/jobs/<jobId>/attempt-<N>/algo-<K>/{stdout,ml/...} and
<data-dir>/jobs/<jobId>/checkpoints/.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time
import unittest
import uuid

from allot_harness import (AllotServer, FIRST_HOST_SH, Fixture, ServerTestCase, payload, wait_for)

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# The interpreter running the tests (a `python3` on PATH may be a shim); the reference run and
# the preempted run use the same one, so their floating point agrees bit for bit.
PYTHON = sys.executable or "python3"
BWRAP = "/usr/bin/bwrap"
PREEMPTING = "PREEMPTION_IN_PROGRESS"
HPS = {"steps": "600", "checkpoint_every": "50", "sleep_per_step": "0.01"}
CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)\.json$")
# Sleeps until stopped (exits 143 at once on SIGTERM); for jobs that only hold capacity.
HOLDER = "trap 'exit 143' TERM; sleep 120 & wait"


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def pid_alive(pid):
    try:
        for line in read(f"/proc/{pid}/status").splitlines():
            if line.startswith("State:"):
                return "Z" not in line.split()[1]
    except OSError:
        return False
    return False


def train_payload(code_root, **extra):
    # The code comes in as an input channel (SageMaker's way), so the job finds it in the sandbox
    # wherever it lives, even under /tmp, which the sandbox replaces by a private one.
    code = {"ChannelName": "code",
            "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix",
                                            "S3Uri": "file://" + code_root}}}
    script = f'exec "{PYTHON}" "$SM_CHANNEL_CODE/examples/train_regression.py"'
    return payload(AlgorithmSpecification={"TrainingInputMode": "File",
                                           "ContainerEntrypoint": ["/bin/sh", "-c"],
                                           "ContainerArguments": [script]},
                   HyperParameters=dict(HPS), InputDataConfig=[code], **extra)


class TrainingCase(ServerTestCase):
    """Helpers shared by the classes below (each has its own server)."""

    @classmethod
    def setUpClass(cls):
        # The training code comes in as a file:// channel (train_payload): a copy of the
        # checkout's examples/ and python/ in a directory every user may pass. A root server
        # opens a channel as the job's user, who could not pass a checkout under a 0700 home.
        cls.code_root = tempfile.mkdtemp(prefix="allot-code-")
        os.chmod(cls.code_root, 0o755)
        for part in ("examples", "python"):
            shutil.copytree(os.path.join(REPO, part), os.path.join(cls.code_root, part),
                            ignore=shutil.ignore_patterns("__pycache__"))
        cls.server_args = ("--file-root", cls.code_root)
        try:
            super().setUpClass()
        except Exception:
            shutil.rmtree(cls.code_root, True)
            raise

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.code_root, True)

    def terminate_all(self, queue):
        for status in ("SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
            for j in self.batch.list_service_jobs(jobQueue=queue,
                                                  jobStatus=status)["jobSummaryList"]:
                self.batch.terminate_service_job(jobId=j["jobId"], reason="test over")

    def solo_queue(self, capacity=1):
        queue, _ = self.fx.qm_queue(capacity, shares=(("solo", capacity),))
        self.addCleanup(self.terminate_all, queue)
        return queue

    def host_file(self, job_id, *parts, attempt=1, host="algo-1"):
        return self.server.host_dir(job_id, attempt, host, *parts)

    def host_pid(self, job_id, host="algo-1"):
        """The host's job process as the machine sees it (supervisor.json's child_pid): in the
        sandbox the job's own $$ is a pid of its PID namespace, and the namespace dies with it."""
        return json.loads(read(self.host_file(job_id, "supervisor.json", host=host)))["child_pid"]

    def wait_file(self, path, timeout=15, what=None):
        return wait_for(lambda: os.path.exists(path), timeout, what=what or path)

    def checkpoints(self, job_id):
        """{step: path} of train_regression.py's checkpoints in the job's checkpoint directory."""
        d = self.server.job_dir(job_id, "checkpoints")
        try:
            names = os.listdir(d)
        except OSError:
            return {}
        return {int(m.group(1)): os.path.join(d, n)
                for n in names if (m := CHECKPOINT_RE.match(n))}


# --- 1. preemption and resume -------------------------------------------------------------------


class PreemptedTrainingResumesTest(TrainingCase):
    stop_grace_seconds = 5

    def test_preempted_training_resumes_from_its_checkpoint_and_matches_unpreempted_model(self):
        fx = self.fx
        # The reference: the same job, never preempted, in a queue of its own (it runs while the
        # other one is set up and preempted).
        ref_queue = self.solo_queue()
        ref = fx.submit(ref_queue, "solo", name="train-reference",
                        serviceRequestPayload=train_payload(self.code_root))["jobId"]

        env = fx.environment(2)
        queue = fx.queue(env, fx.policy())
        self.addCleanup(self.terminate_all, queue)
        fx.share(queue, name="borrower", capacity=1, strategy="LEND_AND_BORROW")
        fx.share(queue, name="lender", capacity=1, strategy="LEND")
        # The borrower's own instance is taken, so the training job runs on the lender's.
        holder = fx.submit(queue, "borrower", script=HOLDER, name="holder", priority=5)["jobId"]
        fx.wait_status(holder, "RUNNING")
        job = fx.submit(queue, "borrower", name="train-preempted", priority=1,
                        serviceRequestPayload=train_payload(self.code_root))["jobId"]
        fx.wait_status(job, "RUNNING")
        status, snap = self.server.raw("getjobqueuesnapshot", {"jobQueue": queue})
        self.assertEqual(status, 200, snap)
        top = {s["quotaShareName"]: s for s in
               snap["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"]}
        self.assertEqual([u["quantity"] for u in top["borrower"].get("borrowed", [])], [1.0], top)

        # Once it has checkpointed (and trained a while past that), the lender wants its instance.
        wait_for(lambda: any(s >= 100 for s in self.checkpoints(job)), 20, 0.02,
                 f"a checkpoint at step >= 100 in {self.server.job_dir(job, 'checkpoints')}")
        lender = fx.submit(queue, "lender", script="sleep 2", name="lender-job")["jobId"]

        # The victim checkpoints and exits within moments of SIGTERM, so a slow machine may
        # miss the stopping window between two polls; the preemption must then be on record.
        def reclaiming():
            d = fx.describe(job)
            if d.get("statusReason", "").startswith(PREEMPTING):
                return d
            done = d.get("preemptionSummary", {}).get("preemptedAttemptCount", 0) >= 1
            return d if done and d["status"] != "RUNNING" else None
        d = wait_for(reclaiming, 20, 0.005, f"{job} statusReason {PREEMPTING}")
        if d.get("statusReason", "").startswith(PREEMPTING):
            self.assertEqual(d["status"], "RUNNING", "a victim stays RUNNING while it stops")
        d = fx.wait_status(job, ("RUNNABLE", "SUCCEEDED", "FAILED"), timeout=15)
        # train_regression.py checkpoints and exits 0 at a preemption (python/allot/training.py:
        # "Allot runs the job again later from its checkpoints"): the job is requeued, not done.
        self.assertEqual(d["status"], "RUNNABLE",
                         f"a preempted attempt that exited 0 must be requeued; "
                         f"statusReason {d.get('statusReason')!r}")
        self.assertEqual(d["preemptionSummary"]["preemptedAttemptCount"], 1)
        # Attempt 1 stopped at a preemption, checkpointed and exited 0.
        out1 = read(self.host_file(job, "stdout"))
        self.assertIn("stop requested (preemption)", out1)
        self.assertNotIn("final loss", out1)
        self.assertEqual(read(self.host_file(job, "ml", "output", "stop-reason")).strip(),
                         "preemption")
        saved = max(self.checkpoints(job))

        d = fx.wait_status(lender, ("SUCCEEDED", "FAILED"), timeout=15)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        d = fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=40)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        self.assertEqual(len(d["attempts"]), 2, d["attempts"])
        self.assertEqual(d["preemptionSummary"]["preemptedAttemptCount"], 1)

        out2 = read(self.host_file(job, "stdout", attempt=2))
        m = re.search(r"^resumed from step (\d+)$", out2, re.M)
        self.assertIsNotNone(m, out2)
        resumed = int(m.group(1))
        self.assertGreater(resumed, 0)
        self.assertEqual(resumed, saved, "attempt 2 resumes from the newest checkpoint")
        self.assertIn("final loss", out2)

        # The final checkpoint's history: attempt 1 ran 1..K, attempt 2 K+1..600, nothing twice.
        final = json.loads(read(self.checkpoints(job)[600]))
        self.assertEqual(final["executed_steps"], [[1, resumed], [resumed + 1, 600]])
        steps = [s for a, b in final["executed_steps"] for s in range(a, b + 1)]
        self.assertEqual(steps, list(range(1, 601)), "a step was redone or skipped")

        # The model equals the unpreempted run's, byte for byte.
        d = fx.wait_status(ref, ("SUCCEEDED", "FAILED"), timeout=30)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        self.assertEqual(len(d["attempts"]), 1)
        self.assertIn("starting from step 0", read(self.host_file(ref, "stdout")))
        ref_model = read(self.host_file(ref, "ml", "model", "model.json"), "rb")
        model = read(self.host_file(job, "ml", "model", "model.json", attempt=2), "rb")
        self.assertEqual(json.loads(model)["steps"], 600)
        self.assertEqual(model, ref_model)

        # Allot's extension fields.
        status, raw = self.server.raw("describeservicejob", {"jobId": job})
        self.assertEqual(status, 200, raw)
        allot = raw["allot"]
        self.assertIsInstance(allot["lastCheckpoint"], int)
        self.assertGreater(allot["lastCheckpoint"], 0)
        records = allot["preemptionRecords"]
        self.assertEqual(len(records), 1, records)
        self.assertEqual(records[0]["rule"], "RECLAIM", records)
        self.assertEqual(records[0]["preemptor"], lender, records)
        self.assertIsInstance(records[0]["workLostInstanceSeconds"], (int, float), records)
        self.assertGreaterEqual(records[0]["workLostInstanceSeconds"], 0)

        # The logs endpoint serves attempt 2's stdout as written.
        status, logs = self.server.raw_get(f"/allot/v1/jobs/{job}/logs",
                                           {"attempt": 2, "host": "algo-1",
                                            "stream": "stdout", "offset": 0})
        self.assertEqual(status, 200, logs)
        self.assertEqual(logs["text"], out2)
        self.assertTrue(logs["complete"])


# --- 3. the stop grace period -------------------------------------------------------------------


class GracePeriodTest(TrainingCase):
    stop_grace_seconds = 2

    def test_checkpoint_written_on_sigterm_within_the_grace_is_kept(self):
        queue = self.solo_queue()
        script = ('trap \'cat /opt/ml/output/stop-reason > /opt/ml/output/data/seen-reason; '
                  'echo saved > "$ALLOT_CHECKPOINT_DIR/on-sigterm.ckpt"; exit 143\' TERM; '
                  'echo up > /opt/ml/output/data/ready; sleep 60 & wait')
        job = self.fx.submit(queue, "solo", script=script, name="sigterm-checkpoint")["jobId"]
        self.fx.wait_status(job, "RUNNING")
        self.wait_file(self.host_file(job, "ml", "output", "data", "ready"))
        start = time.monotonic()
        self.batch.terminate_service_job(jobId=job, reason="enough")
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=10)
        self.assertEqual(d["status"], "FAILED", d.get("statusReason"))
        self.assertLess(time.monotonic() - start, 5, "the job exited at SIGTERM, not at SIGKILL")
        ckpt = self.server.job_dir(job, "checkpoints", "on-sigterm.ckpt")
        self.assertEqual(read(ckpt), "saved\n")
        self.assertEqual(read(self.host_file(job, "ml", "output", "stop-reason")).strip(),
                         "termination")
        self.assertEqual(read(self.host_file(job, "ml", "output", "data", "seen-reason")).strip(),
                         "termination")
        status, raw = self.server.raw("describeservicejob", {"jobId": job})
        self.assertEqual(status, 200, raw)
        self.assertGreater(raw["allot"]["lastCheckpoint"], 0)

    def test_job_ignoring_sigterm_is_killed_after_the_grace(self):
        queue = self.solo_queue()
        script = ("trap '' TERM; echo $$ > /opt/ml/output/data/pid; "
                  "echo up > /opt/ml/output/data/ready; sleep 60")
        job = self.fx.submit(queue, "solo", script=script, name="stubborn")["jobId"]
        self.fx.wait_status(job, "RUNNING")
        self.wait_file(self.host_file(job, "ml", "output", "data", "ready"))
        pid = self.host_pid(job)
        start = time.monotonic()
        self.batch.terminate_service_job(jobId=job, reason="enough")
        time.sleep(1)
        self.assertEqual(self.fx.describe(job)["status"], "RUNNING",
                         "a job that ignores SIGTERM runs on for the grace period")
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=10)
        elapsed = time.monotonic() - start
        self.assertEqual(d["status"], "FAILED", d.get("statusReason"))
        self.assertGreaterEqual(elapsed, self.stop_grace_seconds - 0.5)
        self.assertLess(elapsed, self.stop_grace_seconds + 5, "killed at the grace, not after 60 s")
        wait_for(lambda: not pid_alive(pid), 5, what=f"the job's shell {pid} to be gone")


# --- 4. the sandbox; 5. multi-host jobs ---------------------------------------------------------


class SandboxAndMultiHostTest(TrainingCase):
    stop_grace_seconds = 5

    @unittest.skipUnless(os.access(BWRAP, os.X_OK), f"{BWRAP} is not installed")
    def test_sandboxed_job_writes_only_under_opt_ml_and_tmp(self):
        queue = self.solo_queue()
        tag = uuid.uuid4().hex[:10]
        home = os.environ.get("HOME", "")
        if not home or home.startswith(("/tmp", "/opt")):
            home = "/root"  # a HOME under /tmp or /opt/ml is writable in the sandbox, and private
        outside = [f"/etc/allot-x-{tag}", f"{home}/allot-x-{tag}", f"/var/tmp/allot-x-{tag}",
                   f"{REPO}/allot-x-{tag}"]
        inside = ["/opt/ml/model/ok", f"/tmp/ok-{tag}"]
        script = ("r=/opt/ml/output/data/results; : > $r; for p in " +
                  " ".join(f"'{p}'" for p in outside + inside) +
                  '; do if touch "$p" 2>/dev/null; then echo "ok $p" >> $r; '
                  'else echo "fail $p" >> $r; fi; done')
        job = self.fx.submit(queue, "solo", script=script, name="sandboxed")["jobId"]
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=20)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        results = dict(reversed(line.split(" ", 1)) for line in
                       read(self.host_file(job, "ml", "output", "data", "results")).splitlines())
        self.assertEqual(results, {**{p: "fail" for p in outside}, **{p: "ok" for p in inside}})
        for p in outside + [f"/tmp/ok-{tag}"]:
            self.assertFalse(os.path.exists(p), f"{p} appeared on the host")
        self.assertTrue(os.path.isfile(self.host_file(job, "ml", "model", "ok")))

    def test_every_host_sees_the_same_resource_config(self):
        queue = self.solo_queue(3)
        script = ('d=/opt/ml/output/data; cp /opt/ml/input/config/resourceconfig.json $d/; '
                  'printf %s "$SM_HOSTS" > $d/sm_hosts; '
                  'printf %s "$SM_CURRENT_HOST" > $d/sm_current_host; '
                  'printf %s "$SM_NUM_HOSTS" > $d/sm_num_hosts')
        job = self.fx.submit(queue, "solo", name="three-hosts",
                             serviceRequestPayload=payload(script, count=3))["jobId"]
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=20)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        dirs = ["algo-1", "algo-2", "algo-3"]
        # Locally the hosts are algo-K; on Slurm, algo-K is named after the K-th node (issue 11).
        first = json.loads(read(os.path.join(
            self.host_file(job, "ml", "output", "data", host="algo-1"), "resourceconfig.json")))
        hosts = dirs if self.server.executor == "local" else first["hosts"]
        self.assertEqual(len(set(hosts)), 3, hosts)
        for host_dir, host in zip(dirs, hosts):
            data = self.host_file(job, "ml", "output", "data", host=host_dir)
            rc = json.loads(read(os.path.join(data, "resourceconfig.json")))
            self.assertEqual(rc["hosts"], hosts, host)
            self.assertEqual(rc["current_host"], host)
            self.assertEqual(json.loads(read(os.path.join(data, "sm_hosts"))), hosts, host)
            self.assertEqual(read(os.path.join(data, "sm_current_host")), host)
            self.assertEqual(read(os.path.join(data, "sm_num_hosts")), "3", host)

    def test_one_host_failing_stops_the_others(self):
        queue = self.solo_queue(2)
        script = ('echo $$ > /opt/ml/output/data/pid; '
                  f'if [ "$SM_CURRENT_HOST" != {FIRST_HOST_SH} ]; then sleep 0.5; exit 3; fi; '
                  'exec sleep 60')
        job = self.fx.submit(queue, "solo", name="algo-2-fails",
                             serviceRequestPayload=payload(script, count=2))["jobId"]
        self.fx.wait_status(job, ("RUNNING", "SUCCEEDED", "FAILED"))
        start = time.monotonic()
        # algo-1 sleeps 60 s unless stopped; a stop on Slurm under the sanitizers took 10.7 s.
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=40)
        self.assertEqual(d["status"], "FAILED", d.get("statusReason"))
        self.assertEqual(d["statusReason"],
                         "Received status from SageMaker: AlgorithmError: algo-2 exited with code 3")
        self.assertLess(time.monotonic() - start, 30, "algo-1 was not stopped")
        self.assertEqual(len(d["attempts"]), 1)
        pid = self.host_pid(job, "algo-1")
        wait_for(lambda: not pid_alive(pid), 5, what=f"algo-1's process {pid} to be gone")


# --- 2. kill -9 of the server during multi-host jobs --------------------------------------------


class MultiHostCrashTest(unittest.TestCase):
    def setUp(self):
        self.server = AllotServer(stop_grace_seconds=2)
        self.addCleanup(self.server.cleanup)
        self.server.start()
        self.fx = Fixture(self.server.client())

    def reconnect(self):
        self.fx.batch = self.server.client()

    def start_two_host_job(self, script, name):
        queue, _ = self.fx.qm_queue(2, shares=(("solo", 2),))
        job = self.fx.submit(queue, "solo", name=name,
                             serviceRequestPayload=payload(script, count=2))["jobId"]
        self.fx.wait_status(job, "RUNNING")
        return job

    def test_two_host_job_survives_kill9_in_one_attempt(self):
        job = self.start_two_host_job("echo before; sleep 4; echo after", "two-host-survivor")
        stdouts = [self.server.host_dir(job, 1, h, "stdout") for h in ("algo-1", "algo-2")]

        def both_started():
            return all(os.path.exists(p) and read(p) == "before\n" for p in stdouts)
        wait_for(both_started, 10, what="both hosts to print 'before'")
        self.server.kill9()
        self.assertTrue(self.server.job_processes(), "the job must not die with the server")
        time.sleep(0.5)
        self.server.start()
        self.reconnect()
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=20)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        self.assertEqual(len(d["attempts"]), 1, d["attempts"])
        self.assertFalse(os.path.exists(self.server.job_dir(job, "attempt-2")), "it ran again")
        for p in stdouts:
            self.assertEqual(read(p), "before\nafter\n", p)

    def test_two_host_job_that_ended_while_the_server_was_down_shows_its_exit_status(self):
        script = ('sleep 1.5; echo done > /opt/ml/output/data/done; '
                  f'if [ "$SM_CURRENT_HOST" = {FIRST_HOST_SH} ]; then exit 7; fi; exit 0')
        job = self.start_two_host_job(script, "two-host-ends-while-down")
        self.server.kill9()
        for h in ("algo-1", "algo-2"):
            done = self.server.host_dir(job, 1, h, "ml", "output", "data", "done")
            wait_for(lambda: os.path.exists(done), 10, what=f"{h} to end while no server runs")
        wait_for(lambda: not self.server.job_processes(), 10,
                 what="the job's supervisors to finish")
        self.server.start()
        self.reconnect()
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=20)
        self.assertEqual(d["status"], "FAILED")
        self.assertEqual(d["statusReason"],
                         "Received status from SageMaker: AlgorithmError: algo-1 exited with code 7")
        self.assertEqual(len(d["attempts"]), 1, d["attempts"])


if __name__ == "__main__":
    unittest.main()
