"""The Slurm executor on a real cluster (slurmctld and 4 slurmd on loopback, scripts/slurm-cluster.sh):
what only Slurm has. The scenarios shared with the local executor (borrow and reclaim, in-share
preemption, timeout, terminate, retry, checkpoint resume) run as their own suites with
ALLOT_TEST_EXECUTOR=slurm (tests/CMakeLists.txt).

- one attempt is one Slurm job, named, commented and accounted as the issue asks;
- a 3-host job sees the real node names, the same on every host;
- a stop reaches a stubborn job and Slurm lets go of it within the grace;
- kill -9 of the server with running Slurm jobs, then a restart: nothing lost or run twice, a
  job that ended meanwhile reports its true outcome, and a Slurm job Allot did not submit is
  never touched;
- a Slurm job cancelled behind Allot's back, and a node whose slurmd dies, fail their attempts
  with Slurm's reason, and retries follow retryStrategy;
- bad configuration stops the server at start with a clear message.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import slurm_cluster
from allot_harness import AllotServer, Fixture, INSTANCE, payload, wait_for

GRACE_SECONDS = 3
# Writes one line per run into the job's checkpoint directory, which outlives attempts: a job run
# twice leaves two lines.
COUNTING = ("echo run >> /opt/ml/checkpoints/runs; echo host=$SM_CURRENT_HOST hosts=$SM_HOSTS; "
            "sleep {sleep}; exit {code}")


def hostnames(node_list):
    """Slurm's expansion of a node list ("n[1-3]" -> ["n1", "n2", "n3"])."""
    return subprocess.run(["scontrol", "show", "hostnames", node_list],
                          env=slurm_cluster.slurm_env(), capture_output=True, text=True,
                          check=True, timeout=30).stdout.split()


def slurm_job_of(server, job_id):
    """The squeue entry of the Slurm job that runs Allot job `job_id` (its --comment)."""
    jobs = [j for j in server.slurm_jobs() if j.get("comment") == job_id]
    return max(jobs, key=lambda j: j["job_id"]) if jobs else None


class SlurmExecutorTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        slurm_cluster.ensure_cluster()
        cls.server = AllotServer(stop_grace_seconds=GRACE_SECONDS, executor="slurm")
        try:
            cls.server.start()
        except Exception:
            cls.server.cleanup()
            raise
        cls.batch = cls.server.client()
        cls.fx = Fixture(cls.batch)

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def queue(self, capacity=4, share_capacity=4, **kwargs):
        queue, _ = self.fx.qm_queue(capacity=capacity, shares=(("team", share_capacity),), **kwargs)
        return queue

    def slurm_job(self, job_id, timeout=20):
        return wait_for(lambda: slurm_job_of(self.server, job_id), timeout,
                        what=f"the Slurm job of {job_id}")

    def runs(self, job_id):
        path = self.server.job_dir(job_id, "checkpoints", "runs")
        with open(path, encoding="utf-8") as f:
            return f.read().split()

    def stdout(self, job_id, host, attempt=1):
        with open(self.server.host_dir(job_id, attempt, host, "stdout"), encoding="utf-8") as f:
            return f.read()

    def test_an_attempt_is_one_named_commented_accounted_slurm_job(self):
        queue = self.queue()
        job = self.fx.submit(queue, "team", script="sleep 1", name="named-job")["jobId"]
        self.fx.wait_status(job, "SUCCEEDED", timeout=60)
        sj = self.slurm_job(job)
        self.assertEqual(sj["comment"], job)
        self.assertEqual(sj["account"], "team")
        self.assertEqual(sj["partition"], "allot")
        self.assertEqual(sj["job_state"], "COMPLETED")
        self.assertTrue(sj["name"].startswith("named-job") or "named-job" in sj["name"], sj["name"])
        ref = os.path.join(self.server.job_dir(job, "attempt-1"), "slurm-job-id")
        with open(ref, encoding="utf-8") as f:
            self.assertEqual(f.read().strip(), str(sj["job_id"]))

    def test_three_host_job_sees_its_nodes_consistently(self):
        queue = self.queue()
        script = "echo host=$SM_CURRENT_HOST hosts=$SM_HOSTS; cat /opt/ml/input/config/resourceconfig.json"
        job = self.fx.submit(queue, "team", serviceRequestPayload=payload(script, count=3))["jobId"]
        self.fx.wait_status(job, "SUCCEEDED", timeout=60)
        nodes = hostnames(self.slurm_job(job)["nodes"])
        seen = []
        for k in (1, 2, 3):
            out = self.stdout(job, f"algo-{k}")
            m = re.search(r"host=(\S+) hosts=(\[.*?\])", out)
            self.assertIsNotNone(m, out)
            config = json.loads(out[out.index("{"):])
            self.assertEqual(config["current_host"], m.group(1))
            self.assertEqual(config["hosts"], json.loads(m.group(2)))
            seen.append((m.group(1), tuple(json.loads(m.group(2)))))
        hosts = seen[0][1]
        self.assertEqual(len(set(hosts)), 3, hosts)
        self.assertTrue(all(h[1] == hosts for h in seen), seen)
        # algo-K is the K-th node of the allocation, which is what Slurm's node list says.
        self.assertEqual([h[0] for h in seen], list(hosts))
        self.assertTrue(all(re.fullmatch(r"n\d+", h) for h in hosts), hosts)
        self.assertEqual(list(hosts), nodes)

    def test_stubborn_job_is_killed_after_the_grace_and_slurm_lets_go(self):
        queue = self.queue()
        job = self.fx.submit(queue, "team", script="trap '' TERM; sleep 60 & wait")["jobId"]
        self.fx.wait_status(job, "RUNNING", timeout=60)
        sj = self.slurm_job(job)
        started = time.monotonic()
        self.batch.terminate_service_job(jobId=job, reason="enough")
        d = self.fx.wait_status(job, "FAILED", timeout=GRACE_SECONDS + 20)
        took = time.monotonic() - started
        self.assertEqual(d["statusReason"], "enough")
        self.assertGreaterEqual(took, GRACE_SECONDS - 0.5)
        wait_for(lambda: slurm_cluster.is_finished(slurm_cluster.squeue_jobs([sj["job_id"]])[0]),
                 20, what="Slurm to let go of the job")
        with open(self.server.host_dir(job, 1, "algo-1", "ml", "output", "stop-reason")) as f:
            self.assertEqual(f.read().strip(), "termination")

    def test_kill9_with_running_slurm_jobs_then_restart(self):
        queue = self.queue()
        survivor = self.fx.submit(queue, "team", serviceRequestPayload=payload(
            COUNTING.format(sleep=6, code=0), count=2))["jobId"]
        ends_while_down = self.fx.submit(queue, "team", script=COUNTING.format(sleep=1, code=3))[
            "jobId"]
        self.fx.wait_status(survivor, "RUNNING", timeout=60)
        self.fx.wait_status(ends_while_down, ("RUNNING", "FAILED"), timeout=60)
        # A Slurm job Allot did not submit, on the same cluster.
        stranger_dir = tempfile.mkdtemp(prefix="stranger-")
        stranger = subprocess.run(
            ["sbatch", "--parsable", "-p", "allot", f"--chdir={stranger_dir}",
             "-o", os.path.join(stranger_dir, "out"), "--wrap", "sleep 30"],
            env=slurm_cluster.slurm_env(), capture_output=True, text=True, check=True,
            timeout=30).stdout.strip()
        self.addCleanup(slurm_cluster.cancel_jobs, lambda j: str(j["job_id"]) == stranger,
                        False)
        self.server.kill9()
        time.sleep(4)  # ends_while_down ends meanwhile
        self.server.start()
        # The class's client too: the restarted server listens on another port.
        type(self).batch = self.batch = self.server.client()
        type(self).fx = self.fx = Fixture(self.batch)
        d = self.fx.wait_status(survivor, "SUCCEEDED", timeout=60)
        self.assertEqual(len(d["attempts"]), 1)
        self.assertEqual(self.runs(survivor), ["run", "run"])  # two hosts, one attempt each
        d = self.fx.wait_status(ends_while_down, "FAILED", timeout=60)
        self.assertEqual(d["statusReason"],
                         "Received status from SageMaker: AlgorithmError: algo-1 exited with code 3")
        self.assertEqual(self.runs(ends_while_down), ["run"])
        st = slurm_cluster.squeue_jobs([stranger])[0]
        self.assertIn(st["job_state"], ("RUNNING", "PENDING"), st)

    def test_scancel_behind_allots_back_fails_the_attempt_and_retries(self):
        queue = self.queue()
        job = self.fx.submit(queue, "team", script=COUNTING.format(sleep=60, code=0),
                             retryStrategy={"attempts": 2})["jobId"]
        self.fx.wait_status(job, "RUNNING", timeout=60)
        first = self.slurm_job(job)
        subprocess.run(["scancel", str(first["job_id"])], env=slurm_cluster.slurm_env(),
                       check=True, timeout=30)
        d = wait_for(lambda: (lambda d: d if len(d.get("attempts", [])) >= 2 else None)(
            self.fx.describe(job)), 60, what="a second attempt")
        reason = d["attempts"][0]["statusReason"]
        self.assertIn(f"Slurm job {first['job_id']} was cancelled outside Allot", reason)
        self.fx.wait_status(job, "RUNNING", timeout=60)
        second = wait_for(lambda: (lambda j: j if j and j["job_id"] != first["job_id"] else None)(
            slurm_job_of(self.server, job)), 30, what="the retry's Slurm job")
        self.assertNotEqual(second["job_id"], first["job_id"])
        self.batch.terminate_service_job(jobId=job, reason="done")
        self.fx.wait_status(job, "FAILED", timeout=30)

    def test_dead_slurmd_fails_the_attempt_with_node_fail(self):
        queue = self.queue()
        job = self.fx.submit(queue, "team", serviceRequestPayload=payload(
            COUNTING.format(sleep=120, code=0), count=2), retryStrategy={"attempts": 1})["jobId"]
        self.fx.wait_status(job, "RUNNING", timeout=60)
        sj = self.slurm_job(job)
        victim = hostnames(sj["nodes"])[-1]  # algo-2's node
        slurm_cluster.kill_slurmd(victim)
        self.addCleanup(slurm_cluster.start_slurmd, victim)
        d = self.fx.wait_status(job, "FAILED", timeout=90)
        self.assertIn("NODE_FAIL", d["statusReason"])
        self.assertIn(f"on {victim}", d["statusReason"])


    def test_an_environment_larger_than_its_partition_is_said(self):
        nodes = len(slurm_cluster.nodes())
        # The tests' map gives ml.m5.large 1 CPU and 1 GiB: far fewer than 100,000 fit.
        env = self.fx.environment(100_000, instance_type="ml.m5.large")
        wait_for(lambda: "slurm.partition_short" in self.server.log_text(), 20,
                 what="the partition_short warning")
        line = [l for l in self.server.log_text().splitlines() if "slurm.partition_short" in l][-1]
        self.assertIn(f"ml.m5.large instances on its {nodes} usable nodes", line)
        self.assertIn("allow 100000", line)
        room = int(re.search(r"has room for (\d+)", line).group(1))
        self.assertGreater(room, nodes)  # several small instances share a node
        self.batch.update_service_environment(
            serviceEnvironment=env, capacityLimits=[{"capacityUnit": "ml.m5.large",
                                                     "maxCapacity": 1}])


class SlurmConfigurationTest(unittest.TestCase):
    """A server that cannot use its cluster says why at start and exits: no hang, no fallback."""

    def start_fails(self, *args, env=None, map_text=None):
        slurm_cluster.ensure_cluster()
        tmp = tempfile.mkdtemp(prefix="allot-slurm-bad-")
        slurm_map = os.path.join(tmp, "map.yaml")
        with open(slurm_map, "w", encoding="utf-8") as f:
            f.write(map_text or slurm_cluster.slurm_map_yaml())
        full_env = dict(os.environ)
        full_env.update(slurm_cluster.slurm_env())
        full_env.update(env or {})
        started = time.monotonic()
        r = subprocess.run(
            [AllotServer().bin, "server", "--data-dir", os.path.join(tmp, "data"),
             "--listen", "127.0.0.1:0", "--executor", "slurm", "--slurm-map", slurm_map,
             "--shared-dir", os.path.join(tmp, "shared"), *args],
            env=full_env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertLess(time.monotonic() - started, 60)
        return r.stdout + r.stderr

    def test_a_job_slurm_refuses_fails_with_sbatchs_words(self):
        server = AllotServer(executor="slurm")
        self.addCleanup(server.cleanup)
        # A feature no node has: sbatch refuses the job.
        with open(os.path.join(os.path.dirname(server.data_dir), "slurm-map.yaml"), "w") as f:
            f.write(f"{INSTANCE}: {{partition: allot, constraint: nosuchfeature}}\n")
        server.start()
        fx = Fixture(server.client())
        queue, _ = fx.qm_queue(capacity=1, shares=(("team", 1),))
        job = fx.submit(queue, "team", script="exit 0")["jobId"]
        d = fx.wait_status(job, "FAILED", timeout=60)
        self.assertIn("Slurm did not take the job", d["statusReason"])
        self.assertIn("sbatch", d["statusReason"])

    def test_unknown_partition(self):
        out = self.start_fails(map_text=f"{INSTANCE}: {{partition: nosuch}}\n")
        self.assertIn("partition 'nosuch'", out)
        self.assertIn("allot", out)  # the partitions it has

    def test_placement_larger_than_any_node(self):
        out = self.start_fails(map_text=f"{INSTANCE}: {{partition: allot, cpus: 512}}\n")
        self.assertIn("asks 512 CPUs", out)
        self.assertIn("largest node of partition allot has 16 CPUs", out)

    def test_missing_sbatch(self):
        bin_dir = tempfile.mkdtemp(prefix="allot-fake-bin-")
        for tool in ("sinfo", "squeue", "scancel", "srun"):
            os.symlink(f"/usr/bin/{tool}", os.path.join(bin_dir, tool))
        out = self.start_fails(env={"PATH": bin_dir})
        self.assertIn("sbatch", out)

    def test_slurm_bin_dir_names_where_slurms_commands_are(self):
        # Slurm's commands in a directory off PATH: the server runs them from --slurm-bin-dir, and
        # the batch step runs srun from there too (its PATH is the server's, without srun).
        bin_dir = tempfile.mkdtemp(prefix="allot-slurm-bin-")
        for tool in ("sbatch", "squeue", "scancel", "sinfo", "sacct", "srun"):
            os.symlink(shutil.which(tool), os.path.join(bin_dir, tool))
        no_slurm = tempfile.mkdtemp(prefix="allot-no-slurm-")
        server = AllotServer("--slurm-bin-dir", bin_dir, executor="slurm", env={"PATH": no_slurm})
        self.addCleanup(server.cleanup)
        server.start()
        fx = Fixture(server.client())
        queue, _ = fx.qm_queue(capacity=2, shares=(("team", 2),))
        job = fx.submit(queue, "team", script="echo ran-on-$SM_CURRENT_HOST")["jobId"]
        fx.wait_status(job, "SUCCEEDED", timeout=60)
        with open(server.host_dir(job, 1, "algo-1", "stdout"), encoding="utf-8") as f:
            self.assertIn("ran-on-n", f.read())
        # Without it, the same PATH finds none of them, and the server says so at start.
        out = self.start_fails(env={"PATH": no_slurm})
        self.assertIn("cannot run 'sinfo'", out)
        # A directory that lacks one of them is refused at start, naming it.
        os.remove(os.path.join(bin_dir, "srun"))
        out = self.start_fails("--slurm-bin-dir", bin_dir)
        self.assertIn(os.path.join(bin_dir, "srun"), out)

    def test_cluster_that_does_not_answer(self):
        conf_dir = tempfile.mkdtemp(prefix="allot-dead-conf-")
        conf = os.path.join(conf_dir, "slurm.conf")
        with open(slurm_cluster.slurm_env()["SLURM_CONF"], encoding="utf-8") as f:
            text = f.read()
        with open(conf, "w", encoding="utf-8") as f:
            f.write(re.sub(r"SlurmctldPort=\d+", "SlurmctldPort=1", text))
        out = self.start_fails("--slurm-conf", conf)
        self.assertIn("does not answer", out)

    def test_slurm_flags_need_the_slurm_executor(self):
        for flag, value in (("--slurm-map", "/nonexistent"), ("--slurm-bin-dir", "/usr/bin")):
            r = subprocess.run([AllotServer().bin, "server", flag, value],
                               capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("--executor slurm", r.stderr)
        # A --slurm-bin-dir that is not a directory is refused before anything starts.
        r = subprocess.run([AllotServer().bin, "server", "--executor", "slurm",
                            "--slurm-bin-dir", "/nonexistent-slurm-bin"],
                           capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--slurm-bin-dir", r.stderr)


if __name__ == "__main__":
    unittest.main()
