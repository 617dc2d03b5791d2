"""Finished jobs' files on a real small file system (a 64 MiB tmpfs as the data directory).

A tenant whose jobs fill the data directory with their files loses its own oldest files first:
once the file system passes --job-files-high-percent, finished jobs' trees are removed, the
share holding the most first, until it is under --job-files-low-percent. Another team's files
stay, every record stays, and a caller who asks for removed logs is told why."""

import os
import unittest

from allot_harness import AllotServer, Fixture, mount_tmpfs, wait_for

MIB = 1 << 20


def writes(mib):
    """A job that leaves `mib` MiB in its model directory."""
    return f'echo wrote; head -c {mib * MIB} /dev/zero > "$SM_MODEL_DIR/model.bin"'


class TmpfsServerCase(unittest.TestCase):
    """A server whose data directory is on a 64 MiB tmpfs, with `server_args`."""

    server_args = ()

    def setUp(self):
        self.mount = mount_tmpfs(self, "64m")
        self.server = AllotServer(*self.server_args, data_dir=os.path.join(self.mount, "data"))
        os.makedirs(self.server.data_dir)

    def tearDown(self):  # before the cleanup that unmounts
        self.server.stop()
        self.server.kill_job_processes()


class JobFilesTest(TmpfsServerCase):
    server_args = ("--job-files-high-percent", "50", "--job-files-low-percent", "30")

    def allot(self, job_id):
        status, body = self.server.raw("describeservicejob", {"jobId": job_id})
        self.assertEqual(status, 200, body)
        return body.get("allot", {})

    def run_job(self, fx, queue, share, mib):
        job = fx.submit(queue, share=share, script=writes(mib))["jobId"]
        d = fx.wait_status(job, ("SUCCEEDED", "FAILED"), timeout=60)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        wait_for(lambda: self.allot(job).get("filesBytes") is not None, timeout=30,
                 what=f"job {job}'s files to be measured")
        return job

    def test_the_share_holding_the_most_loses_its_oldest_files_first(self):
        self.server.start()
        batch = self.server.client()
        fx = Fixture(batch)
        queue, _ = fx.qm_queue(capacity=2, shares=(("a", 1), ("b", 1)))

        b_job = self.run_job(fx, queue, "b", 4)
        a_jobs = [self.run_job(fx, queue, "a", 10) for _ in range(2)]
        # 24 MiB of finished trees on 64 MiB: under 50 %, all kept.
        for job in [b_job] + a_jobs:
            self.assertNotIn("filesRemovedAt", self.allot(job))
            self.assertTrue(os.path.isdir(self.server.job_dir(job)))
        self.assertGreaterEqual(self.allot(a_jobs[0])["filesBytes"], 10 * MIB)

        # A third of a's: 34 MiB, past 50 %. Back to 30 % (19 MiB) takes a's two oldest (a
        # holds the most, then still more than b); b's stays, and so does a's newest.
        a_jobs.append(self.run_job(fx, queue, "a", 10))
        for job in a_jobs[:2]:
            wait_for(lambda j=job: "filesRemovedAt" in self.allot(j), timeout=30,
                     what=f"a's job {job}'s files to be removed")
            self.assertFalse(os.path.lexists(self.server.job_dir(job)))
        for job in (b_job, a_jobs[2]):
            self.assertNotIn("filesRemovedAt", self.allot(job))
            self.assertTrue(os.path.isfile(self.server.host_dir(job, 1, "algo-1", "stdout")))

        # The records stay; the removed logs say why, the kept ones are read.
        d = batch.describe_service_job(jobId=a_jobs[0])
        self.assertEqual(d["status"], "SUCCEEDED")
        status, body = self.server.raw_get(f"/allot/v1/jobs/{a_jobs[0]}/logs")
        self.assertEqual(status, 400, body)
        self.assertIn("were removed at", body.get("message", ""), body)
        status, body = self.server.raw_get(f"/allot/v1/jobs/{b_job}/logs")
        self.assertEqual(status, 200, body)
        self.assertIn("wrote", body.get("text", ""), body)

        # After a restart the same trees are known, measured, and nothing more goes.
        removals = self.server.log_text(tail=None).count("job_files.removed")
        self.assertEqual(removals, 2)
        self.server.restart()
        self.assertNotIn("filesRemovedAt", self.allot(b_job))
        self.assertIn("filesRemovedAt", self.allot(a_jobs[0]))
        self.assertIn("job_files.removed", self.server.log_text(tail=None))



BWRAP = "/usr/bin/bwrap"


@unittest.skipUnless(os.access(BWRAP, os.X_OK), f"{BWRAP} is not installed")
@unittest.skipUnless(os.geteuid() == 0, "per-share uids need a server that runs as root")
class EvictionTest(TmpfsServerCase):
    """Running jobs that fill the disk: past --job-files-evict-percent, with nothing finished left
    to remove, the largest job of the share holding the most is terminated. A share whose job
    deletes its file but keeps it open takes the disk all the same: in the sandbox its uid's
    processes are asked what they hold, so it cannot look small and get another team's job
    terminated in its place."""

    server_args = ("--job-files-high-percent", "25", "--job-files-low-percent", "20",
                   "--job-files-evict-percent", "30")

    def test_a_share_hiding_its_files_open_is_the_one_that_loses_its_job(self):
        self.server.start()
        batch = self.server.client()
        fx = Fixture(batch)
        queue, _ = fx.qm_queue(capacity=2, shares=(("a", 1), ("b", 1)))
        # b: 6 MiB in its tree, for all to see.
        b_job = fx.submit(queue, share="b", script=(
            f'head -c {6 * MIB} /dev/zero > "$SM_MODEL_DIR/model.bin"; '
            'touch "$SM_MODEL_DIR/../done"; sleep 600'))["jobId"]
        wait_for(lambda: os.path.exists(self.server.host_dir(b_job, 1, "algo-1", "ml", "done")),
                 timeout=60, what="b's job to write its files")
        # a: 20 MiB in a file it deleted but holds open: no walk of its tree sees them.
        a_job = fx.submit(queue, share="a", script=(
            'exec 3> "$SM_MODEL_DIR/hidden"; '
            f'head -c {20 * MIB} /dev/zero >&3; rm "$SM_MODEL_DIR/hidden"; '
            'touch "$SM_MODEL_DIR/../done"; sleep 600'))["jobId"]
        wait_for(lambda: os.path.exists(self.server.host_dir(a_job, 1, "algo-1", "ml", "done")),
                 timeout=60, what="a's job to write its files")
        st = os.statvfs(self.mount)
        used = 1 - st.f_bavail / st.f_blocks
        self.assertGreater(used, 0.40, "the two jobs should hold over 40 % of the file system")
        # Over 30 %, nothing finished: a holds the most (20 MiB, open), so a's job goes.
        d = fx.wait_status(a_job, ("FAILED",), timeout=60)
        self.assertTrue(d.get("statusReason", "").startswith(
            "Terminated to free the jobs' file system"), d.get("statusReason"))
        self.assertIn("/a, ", d["statusReason"])
        self.assertEqual(batch.describe_service_job(jobId=b_job)["status"], "RUNNING")
        batch.terminate_service_job(jobId=b_job, reason="done")
        fx.wait_status(b_job, ("FAILED",), timeout=60)

if __name__ == "__main__":
    unittest.main()
