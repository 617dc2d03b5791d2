"""A full disk (issue 9, items 4 and 5), with a real small tmpfs as the data directory.

While the disk is full a submission answers 500 and leaves nothing behind; a job that exits 0
meanwhile still ends SUCCEEDED once the disk frees (its exit status is kept, not lost as
"vanished"); and the server accepts calls again by itself once writes succeed."""

import os
import subprocess
import time
import unittest

import botocore.exceptions

from allot_harness import (AllotServer, Fixture, error_code, http_status, mount_tmpfs, payload,
                           wait_for)


def fill(path):
    """Writes a ballast file until the file system is full."""
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=64k"], stderr=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, check=False, timeout=60)


class FullDiskTest(unittest.TestCase):
    def setUp(self):
        self.mount = mount_tmpfs(self, "24m")
        self.server = AllotServer("--no-sandbox", stop_grace_seconds=2,
                                  data_dir=os.path.join(self.mount, "data"))
        os.makedirs(self.server.data_dir)
        self.ballast = os.path.join(self.mount, "ballast")

    def tearDown(self):  # before the cleanup that unmounts
        self.server.stop()
        self.server.kill_job_processes()

    def test_full_disk_loses_nothing_and_shows_nothing_unstored(self):
        self.server.start()
        batch = self.server.client(retries=1)
        fx = Fixture(batch)
        queue = fx.queue(fx.environment(2))
        done = os.path.join(self.mount, "go")
        runner = fx.submit(queue, name="runner", serviceRequestPayload=payload(
            f"while [ ! -e {done} ]; do sleep 0.1; done; exit 0"))["jobId"]
        fx.wait_status(runner, "RUNNING", timeout=30)

        fill(self.ballast)
        refused = 0
        for i in range(3):
            try:
                fx.submit(queue, name=f"lost-{i}", script="exit 0")
            except botocore.exceptions.ClientError as e:
                self.assertEqual(http_status(e), 500, e.response)
                self.assertEqual(error_code(e), "ServerException")
                refused += 1
        self.assertGreater(refused, 0, "a submission on a full disk was acknowledged")
        # The job exits 0 while nothing can be written.
        with open(done, "w"):
            pass
        time.sleep(2)

        os.unlink(self.ballast)

        def healthy():
            try:
                return batch.list_service_jobs(jobQueue=queue, jobStatus="RUNNABLE") is not None
            except botocore.exceptions.ClientError:
                return False
        wait_for(healthy, timeout=30, what="the server to accept calls again")
        d = fx.wait_status(runner, ("SUCCEEDED", "FAILED"), timeout=30)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        for i in range(3):
            listed = batch.list_service_jobs(
                jobQueue=queue, filters=[{"name": "JOB_NAME", "values": [f"lost-{i}"]}])
            self.assertEqual(listed["jobSummaryList"], [], f"lost-{i} was refused but is listed")
        after = fx.submit(queue, name="after", script="exit 0")["jobId"]
        fx.wait_status(after, "SUCCEEDED", timeout=30)
        # Nothing stays holding capacity: both instances are free again.
        snap = batch.get_job_queue_snapshot(jobQueue=queue)
        used = sum(u["quantity"] for u in snap["queueUtilization"]["totalCapacityUsage"])
        self.assertEqual(used, 0)

        # And a restart finds the same.
        self.server.restart()
        batch = self.server.client(retries=1)
        self.assertEqual(batch.describe_service_job(jobId=runner)["status"], "SUCCEEDED")
        listed = batch.list_service_jobs(jobQueue=queue, jobStatus="SUCCEEDED")
        names = sorted(j["jobName"] for j in listed["jobSummaryList"])
        self.assertEqual(names, ["after", "runner"])


if __name__ == "__main__":
    unittest.main()
