"""A full disk (issue 9, items 4 and 5), with a real small tmpfs as the data directory.

While the disk is full a submission answers 500 and leaves nothing behind; a job that exits 0
meanwhile still ends SUCCEEDED once the disk frees (its exit status is kept, not lost as
"vanished"); and the server accepts calls again by itself once writes succeed. Where a job's
own files filled the disk, the server frees it without help: it releases the space it holds in
reserve, records the job's end, and removes the job's files."""

import os
import subprocess
import time
import unittest

import botocore.exceptions

from allot_harness import (AllotServer, Fixture, error_code, http_status, mount_tmpfs, payload,
                           wait_for)

MIB = 1 << 20


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


class AJobThatFillsTheDiskTest(unittest.TestCase):
    """A 64 MiB tmpfs that a running job fills. Before the store's reserve, the job's end could
    not be recorded on the full disk, so its files could not be removed either, and the server
    answered 500 to every call until someone freed the disk by hand. Now the reserve's room goes
    to the rollback and to what frees the disk: a submission meanwhile is refused."""

    def setUp(self):
        self.mount = mount_tmpfs(self, "64m")
        self.server = AllotServer(
            "--no-sandbox", "--store-reserve", "4M", "--job-files-high-percent", "50",
            "--job-files-low-percent", "30", "--job-files-evict-percent", "100",
            data_dir=os.path.join(self.mount, "data"))
        os.makedirs(self.server.data_dir)
        self.reserve = os.path.join(self.server.data_dir, "store-reserve")

    def tearDown(self):  # before the cleanup that unmounts
        self.server.stop()
        self.server.kill_job_processes()

    def test_the_server_frees_a_disk_its_job_filled_without_help(self):
        self.server.start()
        wait_for(lambda: os.path.exists(self.reserve), timeout=30, what="the store's reserve")
        self.assertEqual(os.path.getsize(self.reserve), 4 * MIB)
        batch = self.server.client(retries=1)
        fx = Fixture(batch)
        queue = fx.queue(fx.environment(1))
        signal = os.path.join(self.mount, "fill")
        full = os.path.join(self.mount, "full")
        go = os.path.join(self.mount, "go")
        # Empty files: on a full tmpfs they take no block.
        filler = fx.submit(queue, name="filler", serviceRequestPayload=payload(
            f"while [ ! -e {signal} ]; do sleep 0.1; done; "
            f'head -c {100 * MIB} /dev/zero > "$SM_MODEL_DIR/fill"; touch {full}; '
            f"while [ ! -e {go} ]; do sleep 0.1; done; exit 0"))["jobId"]
        fx.wait_status(filler, "RUNNING", timeout=60)
        with open(signal, "w"):
            pass
        wait_for(lambda: os.path.exists(full), timeout=60, what="the job to fill the disk")
        # A write fails; the reserve goes so the server can roll back, and from then on a
        # change that only adds is refused (500) until there is room.
        refused = None
        for i in range(1000):
            try:
                batch.update_job_queue(jobQueue=queue, priority=i % 1000)
            except botocore.exceptions.ClientError as e:
                refused = e
                break
        self.assertIsNotNone(refused, "every write succeeded on a full disk")
        self.assertEqual(http_status(refused), 500, refused.response)

        def released():
            try:
                fx.submit(queue, name="adds", script="exit 0")
            except botocore.exceptions.ClientError as e:
                return http_status(e) == 500 and "takes only reads and the termination" in str(e)
            self.fail("a submission was taken on a full disk")
        wait_for(released, timeout=60, what="the server to refuse only what adds to the disk")
        self.assertFalse(os.path.exists(self.reserve))
        self.assertIn("store.reserve_released", self.server.log_text(tail=None))
        # The job ends; nothing is freed by hand.
        with open(go, "w"):
            pass
        d = fx.wait_status(filler, ("SUCCEEDED", "FAILED"), timeout=60)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))

        def removed():
            _, body = self.server.raw("describeservicejob", {"jobId": filler})
            return "filesRemovedAt" in body.get("allot", {})
        wait_for(removed, timeout=60, what="the job's files to be removed")
        after = []

        def taken():
            try:
                after.append(fx.submit(queue, name="after", script="exit 0")["jobId"])
                return True
            except botocore.exceptions.ClientError as e:
                self.assertEqual(http_status(e), 500, e.response)
                return False
        wait_for(taken, timeout=60, what="a submission to be taken again")
        self.assertTrue(os.path.exists(self.reserve), "the store's reserve was not made again")
        fx.wait_status(after[0], "SUCCEEDED", timeout=30)

if __name__ == "__main__":
    unittest.main()
