"""Recovery after a restart signals only processes whose identity (pid and start time) it
verified (issue 9, items 6 and 7), and keeps a termination acknowledged before it.

With --no-sandbox, a training process whose attempt directory disappeared while the server was
down is killed on restart (through the identities the server recorded when the attempt started)
and the job runs again; a process that merely holds a recorded pid now is never signalled.

Forcing the kernel to hand a recorded pid to another process is impractical, so the stranger case
rewrites the job's record in the store while the server is down: its recorded supervisor pid
becomes the pid of an unrelated process group, exactly what pid reuse looks like to recovery.
"""

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from allot_harness import AllotServer, Fixture, wait_for

JOB_KIND = 6  # store::Kind::kJob


def _alive(pid):
    """The process runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


class RecoveryIdentityTest(unittest.TestCase):
    def setUp(self):
        self.server = AllotServer("--no-sandbox", stop_grace_seconds=2)
        self.addCleanup(self.server.cleanup)
        self.server.start()
        self.batch = self.server.client()
        self.fx = Fixture(self.batch)
        self.scratch = tempfile.mkdtemp(prefix="allot-it-identity-")
        self.addCleanup(shutil.rmtree, self.scratch, True)
        self.runs = os.path.join(self.scratch, "runs")

    def reconnect(self):
        self.batch = self.server.client()
        self.fx.batch = self.batch

    def start_trainer(self):
        """A job whose first run trains until killed (a shell leading its group, and a child)
        and whose later runs exit 0. Returns (job id, [leader pid, child pid])."""
        child = os.path.join(self.scratch, "child")
        script = (f'n=$(cat "{self.runs}" 2>/dev/null | wc -l); echo $$ >> "{self.runs}"; '
                  'if [ "$n" -ge 1 ]; then exit 0; fi; '
                  f'sleep 300 & echo $! > "{child}.tmp"; mv "{child}.tmp" "{child}"; wait')
        env = self.fx.environment(1)
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="solo", capacity=1)
        job_id = self.fx.submit(queue, "solo", script=script, name="trainer")["jobId"]
        self.fx.wait_status(job_id, "RUNNING")
        wait_for(lambda: os.path.exists(child), 10, what="the training child's pid file")
        with open(self.runs) as f:
            leader = int(f.read().split()[0])
        with open(child) as f:
            training = [leader, int(f.read())]
        self.assertTrue(all(_alive(p) for p in training))
        return job_id, training

    def db(self):
        """The store, read while the server is down (closing() ends the connection; a
        connection's own `with` only commits)."""
        return contextlib.closing(
            sqlite3.connect(os.path.join(self.server.data_dir, "allot.db"), timeout=10))

    def stored_doc(self, job_id):
        with self.db() as db:
            row = db.execute("SELECT value FROM records WHERE kind = ? AND key = ?",
                             (JOB_KIND, job_id)).fetchone()
        return json.loads(row[0]) if row else None

    # The stored job record (src/server/job_codec.cc) keeps each host as
    # [host, pid, start_time, child_pid, child_start_time] under "hist".
    HOST_FIELDS = ["host", "pid", "start_time", "child_pid", "child_start_time"]

    def stored_hosts(self, job_id):
        doc = self.stored_doc(job_id)
        hosts = (doc or {}).get("hist", {}).get("hosts")
        return [dict(zip(self.HOST_FIELDS, h)) for h in hosts] if hosts else None

    def restart_without_the_attempt_directory(self, job_id):
        self.server.kill9()
        # RUNNING is answered only once durable, and the hosts are recorded with it.
        self.assertTrue(self.stored_hosts(job_id), "the started hosts in the store")
        shutil.rmtree(self.server.job_dir(job_id, "attempt-1"))

    def expect_retried(self, job_id):
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"), timeout=30)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        with open(self.runs) as f:
            self.assertEqual(len(f.read().split()), 2)  # the lost run, then the retry
        self.assertIn("Attempt lost", d["attempts"][0].get("statusReason", ""), d["attempts"])

    def test_the_training_process_of_a_removed_attempt_is_killed_and_the_job_retried(self):
        job_id, training = self.start_trainer()
        self.restart_without_the_attempt_directory(job_id)
        hosts = self.stored_hosts(job_id)
        self.assertTrue(all(_alive(p) for p in training), "nothing dies with the server")

        self.server.start()
        self.reconnect()
        for pid in training:
            wait_for(lambda p=pid: not _alive(p), 10, what=f"the old training process {pid} gone")
        self.expect_retried(job_id)
        # What the server recorded when the attempt started: both processes, pid and start time.
        self.assertEqual(sorted(hosts[0]), ["child_pid", "child_start_time", "host", "pid",
                                            "start_time"])
        self.assertEqual(hosts[0]["child_pid"], training[0])

    def test_a_process_holding_a_recorded_pid_is_never_signalled(self):
        job_id, training = self.start_trainer()
        self.restart_without_the_attempt_directory(job_id)
        stranger = subprocess.Popen(["sleep", "300"], start_new_session=True,
                                    stdin=subprocess.DEVNULL)
        self.addCleanup(stranger.wait)
        self.addCleanup(stranger.kill)
        # The recorded supervisor pid now names the stranger's process group.
        doc = self.stored_doc(job_id)
        doc["hist"]["hosts"][0][self.HOST_FIELDS.index("pid")] = stranger.pid
        with self.db() as db:
            with db:  # commits
                db.execute("UPDATE records SET value = ? WHERE kind = ? AND key = ?",
                           (json.dumps(doc), JOB_KIND, job_id))

        self.server.start()
        self.reconnect()
        self.expect_retried(job_id)
        self.assertIsNone(stranger.poll(), "recovery signalled a process it did not verify")
        for pid in training:  # verified by its own recorded identity
            wait_for(lambda p=pid: not _alive(p), 10, what=f"the old training process {pid} gone")
        self.assertIsNone(stranger.poll(), "recovery signalled a process it did not verify")

    def test_a_job_terminated_before_the_restart_is_not_run_again(self):
        """An acknowledged TerminateServiceJob outlives a crash: the restart finds nothing of
        the attempt to adopt, and ends the job as terminated instead of requeuing it as lost."""
        job_id, training = self.start_trainer()
        self.batch.terminate_service_job(jobId=job_id, reason="no longer wanted")
        self.restart_without_the_attempt_directory(job_id)
        self.server.start()
        self.reconnect()
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"), timeout=30)
        self.assertEqual(d["status"], "FAILED", d)
        self.assertEqual(d.get("statusReason"), "no longer wanted", d)
        self.assertTrue(d.get("isTerminated"), d)
        for pid in training:
            wait_for(lambda p=pid: not _alive(p), 10, what=f"the old training process {pid} gone")
        with open(self.runs) as f:
            self.assertEqual(len(f.read().split()), 1, "the job ran again after its termination")


if __name__ == "__main__":
    unittest.main()
