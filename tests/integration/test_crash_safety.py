"""kill -9 during a stream of concurrent submissions loses no acknowledged job; a job that was
RUNNING when the server died is requeued on restart and runs again."""

import concurrent.futures
import os
import random
import shutil
import tempfile
import threading
import time
import unittest

import botocore.exceptions

from allot_harness import AllotServer, Fixture, payload, wait_for

SEED = int(os.environ.get("ALLOT_CRASH_SEED", "20260319"))
THREADS = 8
ROUNDS = 3


def _pid_alive(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line.split()[1]
    except OSError:
        return False
    return False


class CrashSafetyTest(unittest.TestCase):
    def setUp(self):
        self.server = AllotServer("--no-sandbox", stop_grace_seconds=2)
        self.addCleanup(self.server.cleanup)
        self.server.start()
        self.batch = self.server.client()
        self.fx = Fixture(self.batch)
        self.scratch = tempfile.mkdtemp(prefix="allot-it-crash-")
        self.addCleanup(shutil.rmtree, self.scratch, True)

    def reconnect(self):
        self.batch = self.server.client()
        self.fx.batch = self.batch

    def test_kill9_during_concurrent_submissions_loses_nothing_acknowledged(self):
        rng = random.Random(SEED)
        print(f"\ncrash-safety seed {SEED} (set ALLOT_CRASH_SEED to replay)", flush=True)
        env = self.fx.environment(0)  # capacity 0: every job stays RUNNABLE
        queue = self.fx.queue(env, self.fx.policy())
        shares = [f"team{i}" for i in range(4)]
        for s in shares:
            self.fx.share(queue, name=s, capacity=1)

        acknowledged = {}  # jobId -> (jobName, share, priority)
        lock = threading.Lock()
        for round_no in range(ROUNDS):
            stop = threading.Event()
            unexpected = []
            clients = [self.server.client(retries=1, read_timeout=10, connect_timeout=2)
                       for _ in range(THREADS)]
            seeds = [rng.randrange(1 << 30) for _ in range(THREADS)]

            def submitter(t, client=None, seed=None):
                r = random.Random(seed)
                n = 0
                while not stop.is_set():
                    name = f"r{round_no}-t{t}-{n}"
                    share = r.choice(shares)
                    priority = r.randrange(0, 10000)
                    n += 1
                    try:
                        resp = client.submit_service_job(
                            jobName=name, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                            quotaShareName=share, schedulingPriority=priority,
                            serviceRequestPayload=payload("sleep 1"))
                    except (botocore.exceptions.BotoCoreError,
                            botocore.exceptions.ClientError) as e:
                        if not stop.is_set() and not isinstance(e, botocore.exceptions.BotoCoreError):
                            with lock:
                                unexpected.append(repr(e))
                        return  # the server is gone (or refused): this thread is done
                    with lock:
                        acknowledged[resp["jobId"]] = (name, share, priority)

            threads = [threading.Thread(target=submitter, args=(t,),
                                        kwargs={"client": clients[t], "seed": seeds[t]},
                                        daemon=True) for t in range(THREADS)]
            before = len(acknowledged)
            for th in threads:
                th.start()
            # Let submissions flow, then crash at a seeded moment.
            wait_for(lambda: len(acknowledged) > before + 20, 30, 0.01,
                     "submissions to be acknowledged")
            time.sleep(rng.uniform(0.05, 0.6))
            self.server.kill9()
            stop.set()
            for th in threads:
                th.join(timeout=30)
                self.assertFalse(th.is_alive(), "a submitter did not finish")
            self.assertEqual(unexpected, [], "submissions refused while the server was up")
            print(f"round {round_no}: {len(acknowledged) - before} acknowledged before kill -9",
                  flush=True)

            self.server.start()
            self.reconnect()
            missing, wrong = [], []
            readers = [self.server.client() for _ in range(THREADS)]

            def check(item):
                k, (job_id, expected) = item
                try:
                    d = readers[k % THREADS].describe_service_job(jobId=job_id)
                except botocore.exceptions.ClientError as e:
                    return ("missing", job_id, expected, str(e))
                got = (d["jobName"], d.get("quotaShareName"), d["schedulingPriority"])
                if got != expected or d["status"] != "RUNNABLE":
                    return ("wrong", job_id, expected, got, d["status"])
                return None
            with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
                for bad in pool.map(check, enumerate(sorted(acknowledged.items()))):
                    if bad:
                        (missing if bad[0] == "missing" else wrong).append(bad)
            self.assertEqual(missing, [], f"seed {SEED} round {round_no}: acknowledged jobs lost")
            self.assertEqual(wrong, [], f"seed {SEED} round {round_no}: jobs changed")

        # The listing agrees with describe: every acknowledged job, once.
        listed, token = [], None
        for _ in range(10_000):
            args = {"jobQueue": queue, "jobStatus": "RUNNABLE", "maxResults": 100}
            if token:
                args["nextToken"] = token
            r = self.batch.list_service_jobs(**args)
            listed += [j["jobId"] for j in r["jobSummaryList"]]
            token = r.get("nextToken")
            if not token:
                break
        self.assertEqual(len(listed), len(set(listed)), "a job listed twice")
        self.assertTrue(set(acknowledged) <= set(listed),
                        f"{len(set(acknowledged) - set(listed))} acknowledged jobs not listed")
        # Submissions still work after the crashes.
        self.fx.submit(queue, shares[0], script="exit 0")

    def _start_solo(self, script, name):
        env = self.fx.environment(1)
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="solo", capacity=1)
        job_id = self.fx.submit(queue, "solo", script=script, name=name)["jobId"]
        self.fx.wait_status(job_id, "RUNNING")
        return job_id

    def _running_job_is_readopted(self, crash):
        """The server goes away while a job runs; the next start re-adopts the job's supervisor
        (same process, same attempt) and the job finishes with its whole log."""
        pid_file = os.path.join(self.scratch, "pid")
        runs = os.path.join(self.scratch, "runs")
        script = (f'echo "$SM_CURRENT_HOST" >> "{runs}"; '
                  f'echo $$ > "{pid_file}.tmp"; mv "{pid_file}.tmp" "{pid_file}"; '
                  "echo before; sleep 3; echo after")
        job_id = self._start_solo(script, "survivor")
        wait_for(lambda: os.path.exists(pid_file), 10, what="the job's pid file")
        with open(pid_file) as f:
            pid = int(f.read())
        self.assertTrue(_pid_alive(pid))

        crash()
        self.assertTrue(_pid_alive(pid), "the job must not die with the server")
        self.server.start()
        self.reconnect()

        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"), timeout=30)
        self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))
        self.assertEqual(len(d["attempts"]), 1, d["attempts"])
        with open(runs) as f:
            self.assertEqual(f.read().split(), ["algo-1"])  # it ran once, never restarted
        log = os.path.join(self.server.data_dir, "jobs", job_id, "attempt-1", "algo-1", "stdout")
        with open(log) as f:
            self.assertEqual(f.read().split(), ["before", "after"])

    def test_running_job_readopted_after_kill9(self):
        self._running_job_is_readopted(self.server.kill9)

    def test_running_job_readopted_after_sigterm_restart(self):
        self._running_job_is_readopted(lambda: self.assertEqual(self.server.stop(), 0))

    def test_job_that_ended_while_the_server_was_down_shows_its_exit_status(self):
        done = os.path.join(self.scratch, "done")
        job_id = self._start_solo(f'sleep 1; touch "{done}"; exit 7', "ends-while-down")
        self.server.kill9()
        wait_for(lambda: os.path.exists(done), 10, what="the job to end while no server runs")
        time.sleep(0.5)
        self.server.start()
        self.reconnect()
        d = self.fx.wait_status(job_id, ("SUCCEEDED", "FAILED"), timeout=30)
        self.assertEqual(d["status"], "FAILED")
        self.assertEqual(d["statusReason"],
                         "Received status from SageMaker: AlgorithmError: algo-1 exited with code 7")

    def test_configuration_tags_and_client_tokens_survive_kill9(self):
        b = self.batch
        env = self.fx.environment(0)
        policy = self.fx.policy()
        queue = self.fx.queue(env, policy)
        share = self.fx.share(queue, name="kept", capacity=1, strategy="LEND_AND_BORROW",
                              borrow_limit=150, in_share="ENABLED")
        queue_arn = "arn:aws:batch:local:000000000000:job-queue/" + queue
        b.tag_resource(resourceArn=queue_arn, tags={"owner": "infra"})
        body = dict(jobName="tokened", jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                    quotaShareName="kept", serviceRequestPayload=payload("exit 0"),
                    schedulingPriority=11, clientToken="crash-token-1", tags={"t": "1"})
        first = b.submit_service_job(**body)["jobId"]
        before = {
            "env": b.describe_service_environments(serviceEnvironments=[env])["serviceEnvironments"],
            "policy": b.describe_scheduling_policies(arns=[policy])["schedulingPolicies"],
            "queue": b.describe_job_queues(jobQueues=[queue])["jobQueues"],
            "share": {k: v for k, v in b.describe_quota_share(quotaShareArn=share).items()
                      if k != "ResponseMetadata"},
        }
        self.server.kill9()
        self.server.start()
        self.reconnect()
        b = self.batch
        after = {
            "env": b.describe_service_environments(serviceEnvironments=[env])["serviceEnvironments"],
            "policy": b.describe_scheduling_policies(arns=[policy])["schedulingPolicies"],
            "queue": b.describe_job_queues(jobQueues=[queue])["jobQueues"],
            "share": {k: v for k, v in b.describe_quota_share(quotaShareArn=share).items()
                      if k != "ResponseMetadata"},
        }
        self.assertEqual(after, before)
        self.assertEqual(b.list_tags_for_resource(resourceArn=queue_arn)["tags"], {"owner": "infra"})
        d = b.describe_service_job(jobId=first)
        self.assertEqual((d["jobName"], d["schedulingPriority"], d["tags"], d["status"]),
                         ("tokened", 11, {"t": "1"}, "RUNNABLE"))
        # The token still names the same job, and still refuses a different request.
        self.assertEqual(b.submit_service_job(**body)["jobId"], first)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            b.submit_service_job(**{**body, "schedulingPriority": 12})
        self.assertEqual(cm.exception.response["Error"]["Code"], "ClientException")
        # New jobs get new ids, never a recovered one.
        fresh = self.fx.submit(queue, "kept", script="exit 0")["jobId"]
        self.assertNotEqual(fresh, first)


if __name__ == "__main__":
    unittest.main()
