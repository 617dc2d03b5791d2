"""file:// URIs are allowed only under the directories the admin gives with `allot server
--file-root DIR` (issue 10, section 1):

- without a root, a file:// input channel, CheckpointConfig.S3Uri and
  OutputDataConfig.S3OutputPath are each refused at submission, naming the field and the setting;
- with roots, a channel under one works (the job reads the data); /etc, a link out of the root and
  the data directory are refused;
- a root that is /, overlaps the data directory or does not exist stops the server at start with
  a clear message;
- a checkpoint location that a live job uses, or one inside it or holding it, is refused naming
  that job (after a restart too), and is accepted again once that job has finished;
- a checkpoint location stays its quota share's: another share may neither read it (or a directory
  inside or around it) as an input channel nor take it as its checkpoint location, while its job
  runs, after it finished and after a restart; its own share may do both; no share takes a
  checkpoint location inside another share's live input channel; the synced files are readable by
  the share's uid only;
- nothing refused is stored: ListServiceJobs does not show it.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import botocore.exceptions

from allot_harness import (SLEEPER, AllotServer, Fixture, ServerTestCase, allot_bin, error_code,
                           error_message, http_status, payload, wait_for)

SETTING = "the server allows file:// URIs only under the directories given with --file-root"
CHANNEL_FIELD = "serviceRequestPayload.InputDataConfig.train.DataSource.S3DataSource.S3Uri"
CHECKPOINT_FIELD = "serviceRequestPayload.CheckpointConfig.S3Uri"
OUTPUT_FIELD = "serviceRequestPayload.OutputDataConfig.S3OutputPath"


def with_channel(path, script="exit 0"):
    return payload(script, InputDataConfig=[
        {"ChannelName": "train",
         "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "file://" + path}}}])


def with_checkpoint(path, script="exit 0"):
    return payload(script, CheckpointConfig={"S3Uri": "file://" + path,
                                             "LocalPath": "/opt/ml/checkpoints"})


def with_output(path, script="exit 0"):
    return payload(script, OutputDataConfig={"S3OutputPath": "file://" + path})


def make_root(prefix):
    """A directory every job may read (its uid is not the test's), removed after the tests."""
    root = tempfile.mkdtemp(prefix=prefix)
    os.chmod(root, 0o755)
    return root


class FileUriCase(ServerTestCase):
    """A queue whose jobs run one at a time, and helpers that submit and check refusals."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.queue, _ = cls.fx.qm_queue(2, shares=(("qs", 2),))

    def tearDown(self):
        for status in ("SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
            for j in self.batch.list_service_jobs(jobQueue=self.queue,
                                                  jobStatus=status)["jobSummaryList"]:
                self.batch.terminate_service_job(jobId=j["jobId"], reason="test over")

    def submit(self, body, name=None):
        return self.fx.submit(self.queue, "qs", name=name or self.fx.unique("job"),
                              serviceRequestPayload=body)["jobId"]

    def assert_not_stored(self, name):
        listed = self.batch.list_service_jobs(
            jobQueue=self.queue, filters=[{"name": "JOB_NAME", "values": [name]}])
        self.assertEqual(listed["jobSummaryList"], [], f"refused job {name} was stored")

    def refused(self, body, *words):
        """Submitting `body` is refused (400 ClientException) with every word in the message,
        and the job is not stored; returns the message."""
        name = self.fx.unique("refused")
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.submit(body, name)
        e = cm.exception
        self.assertEqual((error_code(e), http_status(e)), ("ClientException", 400), e.response)
        message = error_message(e)
        for w in words:
            self.assertIn(w, message)
        self.assert_not_stored(name)
        return message


class NoRootsTest(FileUriCase):
    """The default: no --file-root, so no file:// URI at all."""

    def test_each_kind_of_file_uri_is_refused_naming_the_field_and_the_setting(self):
        scratch = make_root("allot-noroot-")
        self.addCleanup(shutil.rmtree, scratch, True)
        for field, body in ((CHANNEL_FIELD, with_channel(scratch)),
                            (CHECKPOINT_FIELD, with_checkpoint(scratch + "/ck")),
                            (OUTPUT_FIELD, with_output(scratch + "/out"))):
            with self.subTest(field=field):
                message = self.refused(body)
                self.assertTrue(message.startswith(f"{field}: file://{scratch}"), message)
                self.assertIn(f"is not under an allowed file root; {SETTING} (none are set)",
                              message)

    def test_an_s3_output_path_is_still_accepted_and_ignored(self):
        job = self.submit(payload("exit 0"))  # OutputDataConfig.S3OutputPath s3://...
        self.assertEqual(self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))["status"], "SUCCEEDED")


class WithRootsTest(FileUriCase):
    """Two roots (the flag repeats): one with data, a link out to /etc and a link into the data
    directory; the other empty."""

    @classmethod
    def setUpClass(cls):
        cls.root = make_root("allot-root-")
        cls.other_root = make_root("allot-root2-")
        os.makedirs(os.path.join(cls.root, "data", "train"))
        with open(os.path.join(cls.root, "data", "train", "hello.txt"), "w") as f:
            f.write("hello from the root\n")
        os.chmod(os.path.join(cls.root, "data"), 0o755)
        os.chmod(os.path.join(cls.root, "data", "train"), 0o755)
        os.symlink("/etc", os.path.join(cls.root, "escape"))
        # Checkpoints are written back here after each attempt.
        os.makedirs(os.path.join(cls.root, "ck"))
        os.chmod(os.path.join(cls.root, "ck"), 0o777)
        cls.server_args = ("--file-root", cls.root, "--file-root", cls.other_root,
                           "--job-disk-limit", "64M")
        try:
            super().setUpClass()
        except Exception:
            shutil.rmtree(cls.root, True)
            shutil.rmtree(cls.other_root, True)
            raise
        os.symlink(cls.server.data_dir, os.path.join(cls.root, "to-data-dir"))

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.root, True)
        shutil.rmtree(cls.other_root, True)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def test_checkpoints_not_saved_are_said_in_the_jobs_status(self):
        # Root's file in a sticky location: the share's user may not replace it, so the sync
        # after a job that succeeded fails. The job succeeded all the same, and says what it lost
        # (before, only the server's log did).
        location = self.path("ck", self.fx.unique("sticky"))
        os.makedirs(location)
        with open(os.path.join(location, "model.pt"), "w") as f:
            f.write("root's\n")
        os.chmod(location, 0o1777)
        job = self.submit(with_checkpoint(
            location, 'echo new > /opt/ml/checkpoints/model.pt; exit 0'))
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        reason = d["statusReason"]
        self.assertIn("Training job completed; its checkpoints were not saved: saving the "
                      f"checkpoints to '{location}' as uid", reason)
        self.assertIn("model.pt", reason)
        self.assertIn("Operation not permitted", reason)
        with open(os.path.join(location, "model.pt")) as f:
            self.assertEqual(f.read(), "root's\n")
        # A stopped attempt says it after its stop's reason (a preempted one likewise: its next
        # attempt would restore what was saved before).
        job = self.submit(with_checkpoint(
            location, 'echo newer > /opt/ml/checkpoints/model.pt; touch /opt/ml/output/data/up; '
                      'sleep 60'))
        self.fx.wait_status(job, "RUNNING")
        wait_for(lambda: os.path.exists(self.server.host_dir(
            job, 1, "algo-1", "ml", "output", "data", "up")), 20, what="the job")
        self.batch.terminate_service_job(jobId=job, reason="operator says stop")
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "FAILED")
        self.assertIn("operator says stop; its checkpoints were not saved: saving the checkpoints "
                      f"to '{location}'", d["statusReason"])

    def test_sparse_checkpoints_past_the_disk_limit_are_neither_kept_nor_copied(self):
        # Files made by truncate take no disk in the job, and a copy writes them whole: three of
        # 40 MiB under a limit of 64 MiB filled the location with 120 MiB. Now the disk check
        # counts their length, and the copy refuses a tree past the job's limit.
        location = self.path("ck", self.fx.unique("sparse"))
        job = self.submit(with_checkpoint(
            location, "for i in 1 2 3; do truncate -s 40M /opt/ml/checkpoints/s$i; done; exit 0"))
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "FAILED", d.get("statusReason"))
        reason = d["statusReason"]
        self.assertIn("exceeded its disk limit of 64 MiB", reason)
        self.assertIn("its checkpoints were not saved", reason)
        self.assertIn("the checkpoints hold more than the job's disk limit of 64 MiB (files "
                      "counted at their full length): not copied", reason)
        self.assertFalse(os.path.exists(os.path.join(location, "s1")))

    def test_a_channel_under_a_root_is_read_by_the_job(self):
        job = self.submit(with_channel(self.path("data", "train"),
                                       'cat "$SM_CHANNEL_TRAIN/hello.txt"'))
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        with open(self.server.host_dir(job, 1, "algo-1", "stdout")) as f:
            self.assertEqual(f.read(), "hello from the root\n")

    def test_a_path_below_a_directory_closed_to_the_shares_jobs_is_refused(self):
        # A team's 0700 directory under the root; what lies below it is world-readable, as a
        # careless umask leaves it. The jobs run as their share's user, not the directory's
        # owner, and every path is checked as that user: the submission is refused, the same
        # whether the name past the closed directory exists or not, and for a checkpoint
        # location too. Once the directory lets others through, the same channel is read.
        if os.geteuid() != 0:
            self.skipTest("needs a root server: without one, jobs run as the server's user")
        team = self.path("team-only")
        os.makedirs(os.path.join(team, "data"))
        with open(os.path.join(team, "data", "secret.txt"), "w") as f:
            f.write("the team's own\n")
        os.chmod(os.path.join(team, "data"), 0o755)
        os.chmod(os.path.join(team, "data", "secret.txt"), 0o644)
        os.chmod(team, 0o700)
        closed = "may not reach it: every directory above it must let them through"
        body = with_channel(os.path.join(team, "data"), 'cat "$SM_CHANNEL_TRAIN/secret.txt"')
        for field, refused_body in (
                (CHANNEL_FIELD, body),
                (CHANNEL_FIELD, with_channel(os.path.join(team, "nothing-here"))),
                (CHECKPOINT_FIELD, with_checkpoint(os.path.join(team, "ck")))):
            with self.subTest(field=field, body=refused_body):
                message = self.refused(refused_body, field, "is under a file root, but the "
                                       "jobs of this quota share", closed)
                self.assertNotIn("does not exist", message)
        os.chmod(team, 0o711)
        job = self.submit(body)
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        with open(self.server.host_dir(job, 1, "algo-1", "stdout")) as f:
            self.assertEqual(f.read(), "the team's own\n")

    def test_a_checkpoint_location_the_shares_jobs_may_not_write_is_refused(self):
        # Copies in and out run as the share's user: a location it can neither write nor make
        # would be claimed for the share, and its checkpoints lost at the first sync.
        if os.geteuid() != 0:
            self.skipTest("needs a root server: without one, jobs run as the server's user")
        os.makedirs(self.path("read-only-ck"), exist_ok=True)
        os.chmod(self.path("read-only-ck"), 0o755)
        self.refused(with_checkpoint(self.path("read-only-ck")), CHECKPOINT_FIELD,
                     "may not read and write it: its checkpoints are copied in and out as that "
                     "user")
        self.refused(with_checkpoint(self.path("read-only-ck", "new")), CHECKPOINT_FIELD,
                     "does not exist yet, and the jobs of this quota share", "may not make it")
        os.chmod(self.path("read-only-ck"), 0o777)
        job = self.submit(with_checkpoint(self.path("read-only-ck", "new")))
        self.assertEqual(self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))["status"], "SUCCEEDED")

    def test_a_channel_closed_to_the_shares_jobs_while_the_job_waited_fails_it_at_launch(self):
        if os.geteuid() != 0:
            self.skipTest("needs a root server: without one, jobs run as the server's user")
        team = self.path("team-later")
        os.makedirs(os.path.join(team, "data"))
        os.chmod(team, 0o711)
        os.chmod(os.path.join(team, "data"), 0o755)
        sleepers = [self.submit(payload(SLEEPER)) for _ in range(2)]
        for j in sleepers:
            self.fx.wait_status(j, ("RUNNING",))
        job = self.submit(with_channel(os.path.join(team, "data"), "ls $SM_CHANNEL_TRAIN"))
        self.assertEqual(self.fx.describe(job)["status"], "RUNNABLE")
        os.chmod(team, 0o700)
        for j in sleepers:
            self.batch.terminate_service_job(jobId=j, reason="make room")
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "FAILED")
        self.assertIn("no longer allowed at launch", d["statusReason"])
        self.assertIn("may not reach it", d["statusReason"])

    def test_a_link_inside_a_root_is_followed_as_it_was_checked(self):
        # The server resolves the link at launch and hands the executor the path it checked;
        # the executor binds that directory (and would refuse a path with a link on it).
        os.symlink(self.path("data"), self.path("data-alias"))
        job = self.submit(with_channel(self.path("data-alias", "train"),
                                       'cat "$SM_CHANNEL_TRAIN/hello.txt"'))
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        with open(self.server.host_dir(job, 1, "algo-1", "stdout")) as f:
            self.assertEqual(f.read(), "hello from the root\n")

    def test_a_link_swapped_in_while_the_job_waited_fails_it_at_launch(self):
        os.makedirs(self.path("swap", "train"))
        sleepers = [self.submit(payload(SLEEPER)) for _ in range(2)]
        for j in sleepers:
            self.fx.wait_status(j, ("RUNNING",))
        job = self.submit(with_channel(self.path("swap", "train"), "ls $SM_CHANNEL_TRAIN"))
        self.assertEqual(self.fx.describe(job)["status"], "RUNNABLE")
        shutil.rmtree(self.path("swap", "train"))
        os.symlink("/etc", self.path("swap", "train"))
        for j in sleepers:
            self.batch.terminate_service_job(jobId=j, reason="make room")
        d = self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))
        self.assertEqual(d["status"], "FAILED")
        self.assertIn("no longer allowed at launch", d["statusReason"])
        self.assertIn("once symbolic links are resolved", d["statusReason"])

    def test_the_roots_themselves_and_local_output_and_checkpoint_paths_are_accepted(self):
        for body in (with_channel(self.root), with_channel(self.other_root),
                     with_output(self.path("out")), with_checkpoint(self.path("ck", "accepted"))):
            job = self.submit(body)
            self.assertTrue(job)
            self.batch.terminate_service_job(jobId=job, reason="only the submission counts")
            self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))

    def test_paths_outside_the_roots_are_refused(self):
        data_dir = self.server.data_dir
        cases = [
            (CHANNEL_FIELD, "/etc", with_channel("/etc")),
            (CHANNEL_FIELD, data_dir, with_channel(data_dir)),
            (CHANNEL_FIELD, data_dir + "/credentials", with_channel(data_dir + "/credentials")),
            (CHANNEL_FIELD, self.root + "-sibling", with_channel(self.root + "-sibling")),
            (CHECKPOINT_FIELD, "/etc/allot-ck", with_checkpoint("/etc/allot-ck")),
            (CHECKPOINT_FIELD, data_dir + "/jobs", with_checkpoint(data_dir + "/jobs")),
            (OUTPUT_FIELD, data_dir, with_output(data_dir)),
        ]
        for field, path, body in cases:
            with self.subTest(field=field, path=path):
                message = self.refused(body, f"{field}: file://{path} is not under an allowed "
                                             f"file root; {SETTING} (set: {self.root}, "
                                             f"{self.other_root})")
                self.assertNotIn("does not exist", message)

    def test_a_link_out_of_the_root_is_refused(self):
        for field, body in (
                (CHANNEL_FIELD, with_channel(self.path("escape"))),
                (CHANNEL_FIELD, with_channel(self.path("escape", "shadow"))),
                (CHANNEL_FIELD, with_channel(self.path("to-data-dir"))),
                (CHECKPOINT_FIELD, with_checkpoint(self.path("escape", "ck"))),
                (OUTPUT_FIELD, with_output(self.path("to-data-dir")))):
            with self.subTest(field=field, body=body):
                self.refused(body, field, "is not under an allowed file root once symbolic links "
                                          "are resolved", "--file-root")
        # Past the link, inside the data directory (0700): resolved as the share's jobs (a root
        # server), the path stops at that directory, and the refusal tells not where it leads.
        body = with_checkpoint(self.path("to-data-dir", "ck"))
        if os.geteuid() == 0:
            self.refused(body, CHECKPOINT_FIELD, "is under a file root, but the jobs of this "
                         "quota share", "may not reach it")
        else:
            self.refused(body, CHECKPOINT_FIELD, "once symbolic links are resolved")

    def test_a_missing_channel_under_a_root_is_refused_as_missing(self):
        self.refused(with_channel(self.path("nothing-here")), CHANNEL_FIELD,
                     "does not exist on this machine")

    def test_a_live_jobs_checkpoint_location_is_refused_until_it_finished(self):
        location = self.path("ck", "shared")
        os.makedirs(location)  # so that a link to it resolves (a dangling link is refused)
        os.chmod(location, 0o777)
        first = self.submit(with_checkpoint(location, SLEEPER))
        self.fx.wait_status(first, "RUNNING")
        pending = f"of job {first}, which has not finished"
        self.refused(with_checkpoint(location),
                     f"{CHECKPOINT_FIELD}: file://{location} is the checkpoint location {pending}")
        self.refused(with_checkpoint(location + "/inner"), "is inside the checkpoint location",
                     pending)
        self.refused(with_checkpoint(self.path("ck")), "contains the checkpoint location", pending)
        os.symlink(location, self.path("ck", "alias"))
        self.refused(with_checkpoint(self.path("ck", "alias")), "is the checkpoint location",
                     pending)
        # A location beside it is free.
        beside = self.submit(with_checkpoint(self.path("ck", "shared-2")))
        self.batch.terminate_service_job(jobId=beside, reason="done")
        self.batch.terminate_service_job(jobId=first, reason="done")
        self.assertEqual(self.fx.wait_status(first, ("SUCCEEDED", "FAILED"))["status"], "FAILED")
        again = self.submit(with_checkpoint(location))
        self.assertEqual(self.fx.describe(again)["jobId"], again)


class CheckpointClaimsAfterRestartTest(unittest.TestCase):
    """The live jobs' checkpoint locations are known again after a restart."""

    def setUp(self):
        self.root = make_root("allot-root-restart-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.server = AllotServer("--file-root", self.root, stop_grace_seconds=2)
        self.addCleanup(self.server.cleanup)
        self.server.start()
        self.fx = Fixture(self.server.client())

    def test_a_restored_jobs_location_is_still_refused(self):
        env = self.fx.environment(0)  # capacity 0: the job waits, live, across the restart
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="qs", capacity=1)
        location = os.path.join(self.root, "ck")
        os.makedirs(location)
        os.chmod(location, 0o777)  # the share's jobs copy in and out as their own user
        job = self.fx.submit(queue, "qs", serviceRequestPayload=with_checkpoint(location))["jobId"]
        self.server.restart()
        self.fx.batch = self.server.client()
        self.assertEqual(self.fx.describe(job)["status"], "RUNNABLE")
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.fx.submit(queue, "qs", name="second", serviceRequestPayload=with_checkpoint(
                location))
        self.assertIn(f"is the checkpoint location of job {job}, which has not finished",
                      error_message(cm.exception))
        self.fx.batch.terminate_service_job(jobId=job, reason="done")
        self.fx.wait_status(job, "FAILED")
        again = self.fx.submit(queue, "qs", name="third",
                               serviceRequestPayload=with_checkpoint(location))["jobId"]
        self.fx.batch.terminate_service_job(jobId=again, reason="done")
        names = [j["jobName"] for j in self.fx.batch.list_service_jobs(
            jobQueue=queue, filters=[{"name": "JOB_NAME", "values": ["*"]}])["jobSummaryList"]]
        self.assertNotIn("second", names)


class CheckpointLocationsStayTheirSharesTest(unittest.TestCase):
    """Two quota shares, qa and qb, whose jobs run as two uids: qb never reads qa's checkpoints
    through an input channel, nor takes qa's location, whether qa's job runs or has finished."""

    def setUp(self):
        self.root = make_root("allot-root-shares-")
        self.addCleanup(shutil.rmtree, self.root, True)
        os.makedirs(os.path.join(self.root, "ck"))
        os.chmod(os.path.join(self.root, "ck"), 0o1777)  # the jobs' uids make their locations
        self.server = AllotServer("--file-root", self.root, stop_grace_seconds=2)
        self.addCleanup(self.server.cleanup)
        self.server.start()
        self.fx = Fixture(self.server.client())
        self.queue = self.fx.queue(self.fx.environment(3), self.fx.policy())
        for share in ("qa", "qb"):
            self.fx.share(self.queue, name=share, capacity=1)

    def restart(self):
        self.server.restart()
        self.fx.batch = self.server.client()

    def submit(self, share, body, **kwargs):
        return self.fx.submit(self.queue, share, serviceRequestPayload=body, **kwargs)["jobId"]

    def refused(self, share, body, *words):
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.submit(share, body)
        e = cm.exception
        self.assertEqual((error_code(e), http_status(e)), ("ClientException", 400), e.response)
        for w in words:
            self.assertIn(w, error_message(e))

    def stop(self, job):
        self.fx.batch.terminate_service_job(jobId=job, reason="test over")
        self.fx.wait_status(job, ("SUCCEEDED", "FAILED"))

    def test_an_open_location_of_another_share_tells_nothing_of_its_names(self):
        # qa's location is 0777 (made by an admin), so qb's uid could look up names in it. The
        # claims are checked by the paths as written first: every name inside is refused alike,
        # there or not, before anything is looked up.
        location = os.path.join(self.root, "ck", "qa-open")
        os.makedirs(location)
        os.chmod(location, 0o777)
        with open(os.path.join(location, "there.pt"), "w") as f:
            f.write("w")
        os.chmod(os.path.join(location, "there.pt"), 0o644)
        owner = self.submit("qa", with_checkpoint(location))
        self.assertEqual(self.fx.wait_status(owner, ("SUCCEEDED", "FAILED"))["status"],
                         "SUCCEEDED")
        messages = set()
        for name in ("there.pt", "absent.pt"):
            for make, field in ((with_channel, CHANNEL_FIELD), (with_checkpoint,
                                                                CHECKPOINT_FIELD)):
                path = os.path.join(location, name)
                with self.assertRaises(botocore.exceptions.ClientError) as cm:
                    self.submit("qb", make(path))
                messages.add(error_message(cm.exception).replace(path, "PATH")
                             .replace(field, "FIELD"))
        self.assertEqual(len(messages), 1, messages)
        self.assertIn("is inside a checkpoint location of another quota share", messages.pop())

    def test_a_link_through_another_shares_closed_location_tells_nothing(self):
        # qa's location is its uid's, 0700. qb's links lead through it to a name and back out
        # ("sub/.."), one name there, one not. Followed as root, the first leads to qa's
        # location and is refused as such, the second dangles: qb would learn which names are in
        # a directory it cannot list. Followed as qb's uid, both stop at qa's directory.
        if os.geteuid() != 0:
            self.skipTest("needs a root server: without one, jobs run as the server's user")
        location = os.path.join(self.root, "ck", "qa-closed")
        owner = self.submit("qa", with_checkpoint(location, (
            "mkdir -p /opt/ml/checkpoints/sub && echo w > /opt/ml/checkpoints/sub/w; exit 0")))
        self.assertEqual(self.fx.wait_status(owner, ("SUCCEEDED", "FAILED"))["status"],
                         "SUCCEEDED")
        self.assertTrue(os.path.isdir(os.path.join(location, "sub")))
        self.assertEqual(os.stat(location).st_mode & 0o077, 0)
        probes = {"there": "qa-closed/sub/..", "absent": "qa-closed/nothing/.."}
        for name, target in probes.items():
            os.symlink(target, os.path.join(self.root, "ck", f"probe-{name}"))
        for make in (with_checkpoint, with_channel):
            with self.subTest(field=make.__name__):
                messages = {}
                for name in probes:
                    path = os.path.join(self.root, "ck", f"probe-{name}")
                    with self.assertRaises(botocore.exceptions.ClientError) as cm:
                        self.submit("qb", make(path))
                    messages[name] = error_message(cm.exception).replace(path, "PATH")
                self.assertEqual(messages["there"], messages["absent"])
                self.assertIn("may not reach it", messages["there"])

    def test_another_shares_location_is_neither_its_input_nor_its_checkpoint(self):
        if os.geteuid() != 0:
            self.skipTest("needs a root server: the shares' jobs run as two uids only then")
        location = os.path.join(self.root, "ck", "qa-model")
        secret = os.path.join(location, "secret.txt")
        # The first attempt writes its checkpoint and fails; it is synced to the location; the
        # second attempt runs on, so the location is a live job's with a checkpoint in it.
        owner = self.submit("qa", with_checkpoint(location, (
            "if [ ! -f /opt/ml/checkpoints/secret.txt ]; then "
            "echo qa-weights > /opt/ml/checkpoints/secret.txt; exit 1; fi; " + SLEEPER)),
            retryStrategy={"attempts": 2})
        wait_for(lambda: os.path.exists(secret), 30, what="the synced checkpoint")
        self.fx.wait_status(owner, "RUNNING")
        for path in (location, secret):
            mode = os.stat(path).st_mode & 0o777
            self.assertEqual(mode & 0o077, 0, f"{path} is mode {mode:o}: another uid reads it")
        os.makedirs(os.path.join(location, "sub"))
        # Links qa's jobs may leave there: one out of the roots, one to nothing, one elsewhere
        # inside a root. qb learns nothing of them.
        os.symlink("/", os.path.join(location, "out"))
        os.symlink("/nonexistent", os.path.join(location, "dangling"))
        os.makedirs(os.path.join(self.root, "elsewhere"), exist_ok=True)
        os.symlink(os.path.join(self.root, "elsewhere"), os.path.join(location, "inside"))
        other_share = "a checkpoint location of another quota share"

        def qb_is_refused(when):
            with self.subTest(when=when):
                # A file that is not there is refused as one that is: the refusal tells qb
                # nothing of what qa's location holds (the claims are checked by the path as
                # written first, whatever the location's mode).
                for path, relation in ((location, "is"), (os.path.join(self.root, "ck"),
                                                          "contains"),
                                       (os.path.join(location, "sub"), "is inside"),
                                       (os.path.join(location, "absent.pt"), "is inside"),
                                       (os.path.join(location, "no", "such"), "is inside"),
                                       (os.path.join(location, "out"), "is inside"),
                                       (os.path.join(location, "dangling"), "is inside"),
                                       (os.path.join(location, "inside"), "is inside")):
                    self.refused("qb", with_channel(path, "cat $SM_CHANNEL_TRAIN/secret.txt"),
                                 f"{CHANNEL_FIELD}: file://{path} {relation} {other_share}")
                self.refused("qb", with_checkpoint(location),
                             f"{CHECKPOINT_FIELD}: file://{location} is {other_share}")
                self.refused("qb", with_checkpoint(os.path.join(location, "sub")),
                             f"is inside {other_share}")

        qb_is_refused("while its job runs")
        self.stop(self.submit("qa", with_channel(location, SLEEPER)))  # its own share reads it
        self.stop(owner)
        qb_is_refused("after its job finished")
        self.restart()
        qb_is_refused("after a restart")
        again = self.submit("qa", with_checkpoint(location))
        self.assertEqual(self.fx.wait_status(again, ("SUCCEEDED", "FAILED"))["status"],
                         "SUCCEEDED", "its own share uses its location again")

    def test_no_checkpoint_location_inside_another_shares_live_input_channel(self):
        shared = os.path.join(self.root, "ck", "shared")
        os.makedirs(shared)
        os.chmod(shared, 0o777)
        reader = self.submit("qb", with_channel(shared, SLEEPER))
        self.fx.wait_status(reader, "RUNNING")
        self.refused("qa", with_checkpoint(os.path.join(shared, "qa")),
                     f"{CHECKPOINT_FIELD}: file://{shared}/qa is inside an input channel of a job "
                     "of another quota share, which has not finished")
        own = self.submit("qb", with_checkpoint(os.path.join(shared, "qb")))
        self.stop(own)
        self.stop(reader)
        accepted = self.submit("qa", with_checkpoint(os.path.join(shared, "qa")))
        self.stop(accepted)


class BadRootsStopTheStartTest(unittest.TestCase):
    """A root that is /, overlaps the data directory or is no directory: the server does not
    start, and says which root and why."""

    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="allot-badroot-")
        self.addCleanup(shutil.rmtree, self.base, True)
        self.data = os.path.join(self.base, "data")
        os.makedirs(os.path.join(self.data, "jobs"))
        os.symlink(self.data, os.path.join(self.base, "link-to-data"))

    def start(self, data_dir, *roots):
        # --no-sandbox: so that only the roots can stop this start, bubblewrap or not.
        args = [allot_bin(), "server", "--data-dir", data_dir, "--listen", "127.0.0.1:0",
                "--no-sandbox"]
        for r in roots:
            args += ["--file-root", r]
        return subprocess.run(args, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)

    def test_each_bad_root_stops_the_start_with_a_clear_message(self):
        overlap = "overlaps the data directory"
        fresh = os.path.join(self.base, "fresh", "data")  # a data directory not created yet
        cases = [
            ("the data directory", self.data, self.data, overlap),
            ("inside it", self.data, os.path.join(self.data, "jobs"), overlap),
            ("containing it", self.data, self.base, overlap),
            ("a link to it", self.data, os.path.join(self.base, "link-to-data"), overlap),
            ("containing a data directory to be created", fresh, self.base, overlap),
            ("/", self.data, "/", "the root directory would let jobs read every file"),
            ("missing", self.data, os.path.join(self.base, "missing"),
             "must be an existing directory"),
        ]
        for what, data_dir, root, reason in cases:
            with self.subTest(what=what):
                r = self.start(data_dir, root)
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn(f"allot server: --file-root {root}: ", r.stderr)
                self.assertIn(reason, r.stderr)
                self.assertNotIn("listening", r.stdout)
        self.assertFalse(os.path.exists(fresh), "a refused start created the data directory")
        self.assertFalse(os.path.exists(os.path.join(self.data, "credentials")))


if __name__ == "__main__":
    unittest.main()
