#!/usr/bin/env python3
"""Allot on Slurm, measured side by side in one run (issue 11, "Measure, side by side in one run").

A release `allot server --executor slurm --log-format json` on the real Slurm test cluster
(scripts/slurm-cluster.sh), driven with real boto3 calls through the integration harness
(tests/integration/allot_harness.py). Times come from the server's own JSON log (the `decision`
lines and the `executor.*` lines, millisecond stamps) and from this process's clock around each
call; the jobs' own stdout gives when a payload started or got SIGTERM. Four parts:

1. reclaim: environment maxCapacity 4 of a type whose instance is one whole node; share
   `lender` (LEND, 2) and `borrower` (LEND_AND_BORROW, 2, borrowLimit 100); the borrower runs 4
   one-node jobs, the lender submits one and Allot preempts a borrowed job. From the submit until
   the preemptor is RUNNING, with a cooperative victim (exits on SIGTERM) and a stubborn one
   (ignores it), Allot's grace 10 s (--stop-grace-seconds, as Slurm's GraceTime=10).
2. Slurm's own preemption on the same cluster (ALLOT_SLURM_MODE=baseline: partition priority,
   scavenger GraceTime 10, KillWait 5): 4 one-node scavenger jobs, then a one-node team job;
   submit -> preemptor RUNNING (squeue polled every 50 ms), with a self-requeuing, a cooperative
   and a stubborn victim. The cluster is switched back to its default mode afterwards, always.
3. dispatch overhead: 200 one-CPU jobs (`sleep 1`; 64 fit on the cluster) submitted at a steady
   3/s: from the engine's dispatch (RUNNABLE->SCHEDULED) until executor.submitted (sbatch
   returned) and until RUNNING. 3/s because on this 2-core machine, where the 4 nodes share the
   CPUs, a job's processes on Slurm (two slurmstepd, srun, __slurmbatch, __slurmhost,
   __supervise, bubblewrap) take about 0.25 CPU s, more on a loaded machine: much faster
   arrivals saturate it, slurmd then misses BatchStartTimeout and Slurm ends jobs NODE_FAIL.
4. throughput: 1,000 jobs (`exit 0`, 4 CPUs each: 16 run on the cluster at once) submitted while
   the environment's maxCapacity is 0, then UpdateServiceEnvironment to 1,000: Allot hands every
   job to Slurm at once (executor.submitted per second), Slurm runs 16 at a time (executor.ended
   per second, for --throughput-window s after the last hand-off; the rest is terminated).
   Where the time goes: the server's CPU (/proc/PID/stat: its own and its children's, sbatch and
   squeue), its busiest threads' time on a CPU and waiting for one (/proc/PID/task/TID/schedstat),
   how many sbatch calls are in flight, how often a squeue poll runs and what one costs,
   slurmctld's CPU and the machine's. Beside plain `sbatch --wrap true` of the same shape (200
   serial, 200 with 4 and 200 with 8 in parallel) on the same cluster.

The bench runs on a cluster of its own (ALLOT_SLURM_DIR=/tmp/allot-slurm-bench, ports 18817,
18901-18904, srun 62001-62999; scripts/bench-slurm.sh sets them), so that tests using the
default cluster neither disturb it nor are disturbed (part 2 restarts the daemons twice). It
brings that cluster down and removes it at the end unless --keep-cluster (slurmctld.log goes to
the output directory).

    scripts/bench-slurm.sh [--reps 5] [--baseline-reps 3] [--out DIR]

Prints a table at the end and writes DIR/results.json and the server's log.
"""

import argparse
import calendar
import collections
import concurrent.futures
import contextlib
import datetime
import glob
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

# A cluster of the bench's own unless the caller names one.
for _k, _v in (("ALLOT_SLURM_DIR", "/tmp/allot-slurm-bench"), ("ALLOT_SLURM_CTLD_PORT", "18817"),
               ("ALLOT_SLURM_SLURMD_PORT0", "18901"), ("ALLOT_SLURM_SRUN_PORTS", "62001-62999")):
    os.environ.setdefault(_k, _v)

import slurm_cluster  # noqa: E402
from allot_harness import AllotServer, Fixture, payload  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "slurm-cluster.sh")
NODE_TYPE = "ml.g5.xlarge"   # one instance = one whole node (16 CPUs, 15 GiB of 16000 MB)
SLOT_TYPE = "ml.m5.large"    # one instance = 1 CPU, 200 MB: 16 a node, 64 on the cluster
TP_TYPE = "ml.c5.xlarge"     # one instance = 4 CPUs, 200 MB: 4 a node, 16 on the cluster
SLURM_MAP = f"""# bench/slurm/bench_slurm.py
{NODE_TYPE}: {{partition: allot, cpus: 16, memory: 15G}}
{SLOT_TYPE}: {{partition: allot, cpus: 1, memory: 200M}}
{TP_TYPE}: {{partition: allot, cpus: 4, memory: 200M}}
"""
GRACE = 10  # Allot's --stop-grace-seconds, as the baseline's GraceTime

# Victims print when they are ready and when SIGTERM reaches them; a stubborn one goes on. Each
# ends when the bench creates its quit file (/opt/ml/quit, the host's <host dir>/ml/quit), so that
# a repetition ends without waiting for a stubborn job's grace.
LOOP = "while :; do sleep 1 & wait $!; done"
ALLOT_LOOP = "while [ ! -e /opt/ml/quit ]; do sleep 0.5 & wait $!; done; exit 0"
ALLOT_VICTIMS = {
    "cooperative": f"trap 'echo term $(date +%s.%N); exit 0' TERM; echo ready; {ALLOT_LOOP}",
    "stubborn": f"trap 'echo term $(date +%s.%N)' TERM; echo ready; {ALLOT_LOOP}",
}
PREEMPTOR = f"trap 'exit 0' TERM; echo start $(date +%s.%N); {ALLOT_LOOP}"

T_START = time.monotonic()


def say(*args):
    print(f"[bench-slurm +{time.monotonic() - T_START:6.1f}s]", *args, flush=True)


# --- numbers ------------------------------------------------------------------------------


def pct(values, p):
    """Nearest-rank percentile."""
    v = sorted(values)
    if not v:
        return float("nan")
    return v[max(0, min(len(v) - 1, math.ceil(p / 100 * len(v)) - 1))]


def med(values):
    return statistics.median(values) if values else float("nan")


def fmt_s(x, digits=2):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def fmt_ms(x):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 1000:.0f}"


# --- the server's JSON log ------------------------------------------------------------------

_TS_CACHE = {}


def parse_ts(s):
    """'2026-12-03T15:51:46.123Z' -> epoch seconds."""
    head = s[:19]
    base = _TS_CACHE.get(head)
    if base is None:
        base = calendar.timegm(time.strptime(head, "%Y-%m-%dT%H:%M:%S"))
        if len(_TS_CACHE) > 100000:
            _TS_CACHE.clear()
        _TS_CACHE[head] = base
    return base + int(s[20:23]) / 1000.0


STATUS_RE = re.compile(r"^status (\d+) (\w+)->(\w+)")
PREEMPT_RE = re.compile(r"^preempt by (\d+):(.*)$")
STOP_RE = re.compile(r"^stop (\d+) attempt=(\d+) (\w+)")


class ServerLog:
    """Follows the server's log file and indexes what the bench reads."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.rest = b""
        self.lock = threading.Lock()
        self.seq_of = {}                      # job id -> engine seq
        # seq -> "A->B" -> [t]
        self.trans = collections.defaultdict(lambda: collections.defaultdict(list))
        self.reached = collections.defaultdict(dict)  # status -> seq -> first t
        # event -> seq -> attempt -> t
        self.ex = collections.defaultdict(lambda: collections.defaultdict(dict))
        self.ended_outcome = {}               # (seq, attempt) -> outcome
        self.preempts = []                    # (t, preemptor seq, [victim seqs])
        self.stops = []                       # (t, seq, attempt, kind)
        self.other = collections.Counter()    # other events (warnings...)
        self.warnings = []

    def poll(self):
        with self.lock:
            try:
                with open(self.path, "rb") as f:
                    f.seek(self.offset)
                    data = f.read()
            except OSError:
                return
            self.offset += len(data)
            data = self.rest + data
            lines = data.split(b"\n")
            self.rest = lines.pop()
            for raw in lines:
                self._line(raw)

    def _line(self, raw):
        if not raw.startswith(b"{"):
            return  # the start banner
        try:
            e = json.loads(raw)
        except ValueError:
            return
        ev = e.get("event")
        t = parse_ts(e["ts"])
        if ev == "decision":
            d = e.get("decision", "")
            m = STATUS_RE.match(d)
            if m:
                seq = int(m.group(1))
                if e.get("job"):
                    self.seq_of[e["job"]] = seq
                key = f"{m.group(2)}->{m.group(3)}"
                self.trans[seq][key].append(t)
                self.reached[m.group(3)].setdefault(seq, t)
                return
            m = PREEMPT_RE.match(d)
            if m:
                self.preempts.append((t, int(m.group(1)),
                                      [int(v) for v in re.findall(r"(\d+)@", m.group(2))]))
                return
            m = STOP_RE.match(d)
            if m:
                self.stops.append((t, int(m.group(1)), int(m.group(2)), m.group(3)))
            return
        if ev and ev.startswith("executor.") and isinstance(e.get("job"), int):
            self.ex[ev][e["job"]].setdefault(int(e.get("attempt", 0)), t)
            if ev == "executor.ended":
                self.ended_outcome[(e["job"], int(e.get("attempt", 0)))] = e.get("outcome")
            return
        if ev != "api.call":
            self.other[ev] += 1
            if e.get("level") in ("warning", "warn", "error"):
                self.warnings.append(raw.decode(errors="replace")[:300])

    def wait(self, predicate, timeout, what, interval=0.02):
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            with self.lock:
                got = predicate()
            if got:
                return got
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
            time.sleep(interval)

    def seq(self, job_id):
        return self.seq_of.get(job_id)

    def first_to(self, seq, status):
        """First time `seq` reached `status` (from any status)."""
        return self.reached[status].get(seq)

    def first_trans(self, seq, key):
        ts = self.trans[seq].get(key)
        return ts[0] if ts else None


# --- processes and the machine ----------------------------------------------------------------

CLK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """(own CPU s, reaped children's CPU s) of pid, from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return ((int(fields[11]) + int(fields[12])) / CLK,
                (int(fields[13]) + int(fields[14])) / CLK)
    except (OSError, IndexError, ValueError):
        return (float("nan"), float("nan"))


def machine_cpu():
    """(busy s, total s) over all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return ((sum(parts) - idle) / CLK, sum(parts) / CLK)


def slurmctld_pid():
    try:
        with open(os.path.join(slurm_cluster.cluster_dir(), "run", "slurmctld.pid")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def load_avg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def slurm(*argv, timeout=60, check=True):
    r = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=slurm_cluster.slurm_env(), timeout=timeout,
                       check=False, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def cluster_script(*args, mode=None, timeout=600):
    env = dict(os.environ)
    if mode:
        env["ALLOT_SLURM_MODE"] = mode
    else:
        env.pop("ALLOT_SLURM_MODE", None)
    r = subprocess.run([SCRIPT, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=timeout, check=False, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"scripts/slurm-cluster.sh {' '.join(args)} failed:\n{r.stdout}")
    return r.stdout


def squeue_format():
    """The --format Allot's poller gives squeue (read from src/exec/slurm_client.cc)."""
    try:
        with open(os.path.join(ROOT, "src", "exec", "slurm_client.cc")) as f:
            m = re.search(r'kSqueueFormat\[\]\s*=\s*"([^"]+)"', f.read())
        if m:
            return m.group(1)
    except OSError:
        pass
    return None


def thread_sched(pid):
    """{tid: (s on a CPU, s runnable but waiting for a CPU)} of pid's threads
    (/proc/PID/task/TID/schedstat)."""
    out = {}
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    fields = f.read().split()
                out[tid] = (int(fields[0]) / 1e9, int(fields[1]) / 1e9)
    return out


def self_cpu():
    t = os.times()
    return t.user + t.system


def time_squeue(with_json=True):
    """(seconds, lines) of the squeue Allot polls with, and (seconds, bytes) of squeue --json."""
    out = {}
    form = squeue_format()
    if form:
        t = time.monotonic()
        text = slurm("squeue", "--noheader", "--all", "--states=all", f"--format={form}")
        out["text_s"] = time.monotonic() - t
        out["text_lines"] = text.count("\n")
    if with_json:
        t = time.monotonic()
        text = slurm("squeue", "--json")
        out["json_s"] = time.monotonic() - t
        out["json_bytes"] = len(text)
    return out


class Sampler(threading.Thread):
    """Times one squeue (Allot's format) every `every` seconds while it runs."""

    def __init__(self, every=3.0):
        super().__init__(daemon=True)
        self.every = every
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(self.every):
            with contextlib.suppress(Exception):
                self.samples.append(time_squeue(with_json=False))


class ChildSampler(threading.Thread):
    """Counts, every `every` seconds, the server's children by program (sbatch, squeue, ...):
    how many of the 4 submitters are in sbatch, how often a squeue poll is running."""

    def __init__(self, pid, every=0.1):
        super().__init__(daemon=True)
        self.pid = pid
        self.every = every
        self.counts = collections.Counter()  # (program, how many at once) -> samples
        self.samples = 0
        self.stop = threading.Event()

    def children(self):
        found = collections.Counter()
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{self.pid}/task"):
                with contextlib.suppress(OSError):
                    with open(f"/proc/{self.pid}/task/{task}/children") as f:
                        for child in f.read().split():
                            with contextlib.suppress(OSError):
                                with open(f"/proc/{child}/comm") as c:
                                    found[c.read().strip()] += 1
        return found

    def run(self):
        while not self.stop.wait(self.every):
            found = self.children()
            self.samples += 1
            for prog in ("sbatch", "squeue", "scancel", "sinfo"):
                self.counts[(prog, found.get(prog, 0))] += 1

    def mean(self, prog):
        if not self.samples:
            return float("nan")
        return sum(n * k for (p, n), k in self.counts.items() if p == prog) / self.samples


# --- 1. reclaim through Allot ---------------------------------------------------------------


def stdout_lines(server, job_id, attempt=1):
    lines = []
    for path in glob.glob(server.job_dir(job_id, f"attempt-{attempt}", "*", "stdout")):
        with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as f:
            lines += f.read().splitlines()
    return lines


def stamp(lines, word):
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and parts[0] == word:
            with contextlib.suppress(ValueError):
                return float(parts[1])
    return None


def wait_jobs_final(fx, job_ids, timeout=90):
    deadline = time.monotonic() + timeout
    left = list(job_ids)
    while left:
        left = [j for j in left if fx.describe(j)["status"] not in ("SUCCEEDED", "FAILED")]
        if not left:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"jobs not finished after {timeout}s: {left}")
        time.sleep(0.2)


def wait_nodes_free(timeout=60.0):
    """Until every node is idle and takes jobs: no flag but PLANNED (which the backfill scheduler
    leaves on a node it had planned for a job since cancelled, until its next cycle)."""
    deadline = time.monotonic() + timeout
    while True:
        nodes = slurm_cluster.nodes()
        if nodes and all(n.get("state") == "idle" and
                         set(n.get("state_flags") or []) <= {"PLANNED"} for n in nodes):
            return
        if time.monotonic() > deadline:
            raise TimeoutError("nodes not idle: " + ", ".join(
                f"{n.get('name')}={n.get('state')}{n.get('state_flags') or ''}" for n in nodes))
        time.sleep(0.2)


def kill_server_slurm_jobs(server):
    ids = [str(j["job_id"]) for j in server.slurm_jobs() if not slurm_cluster.is_finished(j)]
    if ids:
        slurm("scancel", "--full", "--signal=KILL", *ids, check=False)
    return ids


def wait_slurm_quiet(server, timeout=90):
    deadline = time.monotonic() + timeout
    while [j for j in server.slurm_jobs() if not slurm_cluster.is_finished(j)]:
        if time.monotonic() > deadline:
            raise TimeoutError("Slurm jobs of the server still run")
        time.sleep(0.2)
    wait_nodes_free(timeout=max(5.0, deadline - time.monotonic()))


def allot_reclaim(server, fx, log, kind, reps):
    env = fx.environment(capacity=4, instance_type=NODE_TYPE)
    queue = fx.queue(env, fx.policy())
    lender, borrower = fx.unique("lender"), fx.unique("borrower")
    fx.share(queue, name=lender, capacity=2, strategy="LEND", instance_type=NODE_TYPE)
    fx.share(queue, name=borrower, capacity=2, strategy="LEND_AND_BORROW", borrow_limit=100,
             instance_type=NODE_TYPE)
    results = []
    for rep in range(1, reps + 1):
        victims = [fx.submit(queue, borrower, script=ALLOT_VICTIMS[kind],
                             name=fx.unique(f"victim-{kind}"))["jobId"] for _ in range(4)]
        preemptor = None
        try:
            for v in victims:
                fx.wait_status(v, "RUNNING", timeout=60)
                deadline = time.monotonic() + 30
                while "ready" not in stdout_lines(server, v):
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"victim {v} printed no 'ready'")
                    time.sleep(0.05)
            time.sleep(0.5)
            t0 = time.time()
            preemptor = fx.submit(queue, lender, script=PREEMPTOR,
                                  name=fx.unique("preemptor"))["jobId"]
            t1 = time.time()
            seq = log.wait(lambda: log.seq(preemptor), 10, "the preemptor's seq")
            t_run = log.wait(lambda: log.first_to(seq, "RUNNING"), 60 + 2 * GRACE,
                             "the preemptor RUNNING")
            deadline = time.monotonic() + 5
            while stamp(stdout_lines(server, preemptor), "start") is None and \
                    time.monotonic() < deadline:
                time.sleep(0.05)
            log.poll()
            pre = next((p for p in log.preempts if p[1] == seq), None)
            vseqs = pre[2] if pre else []
            vids = [v for v in victims if log.seq(v) in vseqs]
            term = [stamp(stdout_lines(server, v), "term") for v in vids]
            term = [x for x in term if x is not None]
            ended = [log.ex["executor.ended"].get(s, {}).get(1) for s in vseqs]
            ended = [x for x in ended if x is not None]

            def rel(x):
                return None if x is None else x - t0
            r = {
                "rep": rep, "victims": len(vseqs),
                "submit_call": t1 - t0,
                "preempt_decision": rel(pre[0] if pre else None),
                "victim_sigterm": rel(min(term) if term else None),
                "victim_ended": rel(max(ended) if ended else None),
                "dispatch": rel(log.first_trans(seq, "RUNNABLE->SCHEDULED")),
                "sbatch_returned": rel(log.ex["executor.submitted"].get(seq, {}).get(1)),
                "slurm_running_seen": rel(log.ex["executor.started"].get(seq, {}).get(1)),
                "running": rel(t_run),
                "payload_start": rel(stamp(stdout_lines(server, preemptor), "start")),
            }
            results.append(r)
            say(f"allot reclaim {kind} rep {rep}: submit->RUNNING {r['running']:.2f} s "
                f"(preempt decision +{fmt_s(r['preempt_decision'])}, victim SIGTERM "
                f"+{fmt_s(r['victim_sigterm'])}, victim ended +{fmt_s(r['victim_ended'])}, "
                f"dispatch +{fmt_s(r['dispatch'])}, sbatch returned "
                f"+{fmt_s(r['sbatch_returned'])}, "
                f"payload +{fmt_s(r['payload_start'])}; {len(vseqs)} victim(s))")
        finally:
            t_clean = time.monotonic()
            mine = victims + ([preemptor] if preemptor else [])
            for j in mine:
                with contextlib.suppress(Exception):
                    fx.batch.terminate_service_job(jobId=j, reason="bench: end of repetition")
            for j in mine:
                for ml in glob.glob(server.job_dir(j, "attempt-*", "*", "ml")):
                    with contextlib.suppress(OSError):
                        open(os.path.join(ml, "quit"), "w").close()
            try:
                wait_jobs_final(fx, mine, timeout=30)
            except TimeoutError:
                kill_server_slurm_jobs(server)  # a job that does not end: not for the next rep
                wait_jobs_final(fx, mine)
            wait_slurm_quiet(server)
            say(f"  (repetition cleaned up in {time.monotonic() - t_clean:.1f} s)")
    return results


# --- 2. Slurm's own preemption ------------------------------------------------------------------

SLURM_TRAIN = {
    "selfrequeue": "trap 'echo term $(date +%s.%N) >> \"$D/term.$SLURM_JOB_ID\"; "
                   "scontrol requeue $SLURM_JOB_ID; exit 0' TERM",
    "cooperative": "trap 'echo term $(date +%s.%N) >> \"$D/term.$SLURM_JOB_ID\"; exit 0' TERM",
    "stubborn": "trap 'echo term $(date +%s.%N) >> \"$D/term.$SLURM_JOB_ID\"' TERM",
}
WHOLE_NODE = ["-N1", "--ntasks-per-node=1", "-c16", "--mem=15G"]


def sbatch(*args):
    return slurm("sbatch", "--parsable", *args).strip().split(";")[0]


def squeue_state(job_id):
    return slurm("squeue", "-h", "-j", job_id, "-o", "%T", check=False).strip()


def cancel_baseline_jobs(ids, quitters=(), timeout=60):
    """Cancels what waits; what runs gets SIGKILL (a plain scancel's SIGTERM would make a
    self-requeuing victim requeue itself), except, for 3 s, `quitters` (the victims, which end
    by themselves once they see their quit file); until none is left."""
    deadline = time.monotonic() + timeout
    quit_by = time.monotonic() + 3  # victims that saw their quit file end within 0.5 s
    while ids:
        states = {i: squeue_state(i) for i in ids}
        quitting = set(quitters) if time.monotonic() < quit_by else set()
        running = [i for i, s in states.items() if s in ("RUNNING", "SUSPENDED")
                   and i not in quitting]
        waiting = [i for i, s in states.items() if s in ("PENDING", "REQUEUED", "REQUEUE_HOLD",
                                                         "REQUEUE_FED", "CONFIGURING")]
        if running:
            slurm("scancel", "--full", "--signal=KILL", *running, check=False)
        if waiting:
            slurm("scancel", *waiting, check=False)
        if not [s for s in states.values() if s]:  # squeue -j lists only unfinished jobs
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"baseline jobs still there: {states}")
        if os.environ.get("BENCH_DEBUG"):
            say(f"    cleanup: {states}")
        time.sleep(0.3)
    wait_nodes_free()


def slurm_baseline(kinds, reps, workdir):
    d = os.path.join(workdir, "baseline")
    os.makedirs(d, exist_ok=True)
    for kind, trap in SLURM_TRAIN.items():
        with open(os.path.join(d, f"train-{kind}.sh"), "w") as f:
            f.write(f"#!/bin/bash\nD={d}\n{trap}\necho ready >> \"$D/ready.$SLURM_JOB_ID\"\n"
                    f"while [ ! -e $D/quit ]; do sleep 0.5 & wait $!; done\n")
        with open(os.path.join(d, f"victim-{kind}.sh"), "w") as f:
            f.write(f"#!/bin/bash\nsrun --ntasks-per-node=1 {d}/train-{kind}.sh\n")
    with open(os.path.join(d, "high.sh"), "w") as f:
        f.write(f"#!/bin/bash\necho $(date +%s.%N) > {d}/high.$SLURM_JOB_ID\n{LOOP}\n")
    for p in glob.glob(os.path.join(d, "*.sh")):
        os.chmod(p, 0o755)
    out = {}
    for kind in kinds:
        out[kind] = []
        for rep in range(1, reps + 1):
            victims = []
            high = None
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, "quit"))
            try:
                for _ in range(4):
                    victims.append(sbatch("-p", "scavenger", *WHOLE_NODE, f"--chdir={d}",
                                          "-o", "/dev/null", "--requeue",
                                          os.path.join(d, f"victim-{kind}.sh")))
                deadline = time.monotonic() + 60
                while not all(os.path.exists(os.path.join(d, f"ready.{v}")) for v in victims):
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"baseline victims {victims} not ready")
                    time.sleep(0.05)
                time.sleep(0.5)
                t0 = time.time()
                high = sbatch("-p", "team", *WHOLE_NODE, f"--chdir={d}", "-o", "/dev/null",
                              os.path.join(d, "high.sh"))
                t1 = time.time()
                t_run = None
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    if squeue_state(high) == "RUNNING":
                        t_run = time.time()
                        break
                    time.sleep(0.05)
                if t_run is None:
                    raise TimeoutError(f"baseline preemptor {high} not RUNNING after 120 s")
                start = None
                deadline = time.monotonic() + 5
                while start is None and time.monotonic() < deadline:
                    with contextlib.suppress(OSError, ValueError):
                        start = float(open(os.path.join(d, f"high.{high}")).read().split()[0])
                    if start is None:
                        time.sleep(0.05)
                terms = []
                for v in victims:
                    with contextlib.suppress(OSError):
                        for line in open(os.path.join(d, f"term.{v}")):
                            with contextlib.suppress(IndexError, ValueError):
                                terms.append(float(line.split()[1]))
                states = {v: squeue_state(v) for v in victims}
                r = {"rep": rep, "submit_call": t1 - t0,
                     "victim_sigterm": (min(terms) - t0) if terms else None,
                     "running": t_run - t0,
                     "payload_start": (start - t0) if start else None,
                     "victims_afterwards": sorted(states.values())}
                out[kind].append(r)
                say(f"slurm preemption {kind} rep {rep}: submit->RUNNING {r['running']:.2f} s "
                    f"(victim SIGTERM +{fmt_s(r['victim_sigterm'])}, payload "
                    f"+{fmt_s(r['payload_start'])}; victims afterwards {r['victims_afterwards']})")
            finally:
                t_clean = time.monotonic()
                open(os.path.join(d, "quit"), "w").close()  # the running victims end
                cancel_baseline_jobs(victims + ([high] if high else []), quitters=victims)
                say(f"  (repetition cleaned up in {time.monotonic() - t_clean:.1f} s)")
    return out


# --- 3. dispatch overhead -----------------------------------------------------------------------


def slot_queue(fx, capacity, itype=SLOT_TYPE):
    env = fx.environment(capacity=capacity, instance_type=itype)
    return env, fx.queue(env)


def submit_slot_job(fx, queue, script, name, itype=SLOT_TYPE):
    return fx.submit(queue, name=name,
                     serviceRequestPayload=payload(script, instance_type=itype))["jobId"]


fx_server_pid = []  # the server's pid, for the dispatch part's CPU figures


def dispatch_overhead(fx, log, jobs, rate):
    _, queue = slot_queue(fx, 64)
    ids = []
    mach0, me0, t_wall0 = machine_cpu(), self_cpu(), time.time()
    srv0 = proc_cpu(fx_server_pid[0]) if fx_server_pid else (0, 0)
    t_begin = time.monotonic()
    for i in range(jobs):
        due = t_begin + i / rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        ids.append(submit_slot_job(fx, queue, "sleep 1", f"dispatch-{i}"))
    say(f"dispatch: {jobs} jobs submitted in {time.monotonic() - t_begin:.1f} s")

    def done():
        seqs = [log.seq(j) for j in ids]
        if None in seqs:
            return None
        fin = [s for s in seqs if log.first_to(s, "SUCCEEDED") or log.first_to(s, "FAILED")]
        return seqs if len(fin) == len(seqs) else None
    seqs = log.wait(done, 180, f"{jobs} jobs finished", interval=0.2)
    mach1, me1, wall = machine_cpu(), self_cpu(), time.time() - t_wall0
    srv1 = proc_cpu(fx_server_pid[0]) if fx_server_pid else (0, 0)
    failed = [s for s in seqs if log.first_to(s, "FAILED")]
    sub, started, run = [], [], []
    for s in seqs:
        d = log.first_trans(s, "RUNNABLE->SCHEDULED")
        x = log.ex["executor.submitted"].get(s, {}).get(1)
        st = log.ex["executor.started"].get(s, {}).get(1)
        r = log.first_to(s, "RUNNING")
        if d is None:
            continue
        if x is not None:
            sub.append(x - d)
        if st is not None:
            started.append(st - d)
        if r is not None:
            run.append(r - d)
    res = {"jobs": jobs, "rate": rate, "failed": len(failed),
           "to_sbatch_returned": {"p50": pct(sub, 50), "p99": pct(sub, 99), "max": max(sub)},
           "to_started_seen": {"p50": pct(started, 50), "p99": pct(started, 99)},
           "to_running": {"p50": pct(run, 50), "p99": pct(run, 99), "max": max(run)},
           "wall_s": wall, "machine_busy_cores": (mach1[0] - mach0[0]) / wall,
           "cpu_s_per_job": ((mach1[0] - mach0[0]) - (me1 - me0) - (sum(srv1) - sum(srv0))) / jobs}
    say(f"dispatch overhead over {len(sub)} jobs: ->sbatch returned p50 {fmt_ms(pct(sub, 50))} ms "
        f"p99 {fmt_ms(pct(sub, 99))} ms; ->RUNNING p50 {fmt_ms(pct(run, 50))} ms p99 "
        f"{fmt_ms(pct(run, 99))} ms; {len(failed)} failed; machine {res['machine_busy_cores']:.2f} "
        f"cores busy over {wall:.0f} s, {res['cpu_s_per_job']:.2f} CPU s per job beside the server "
        f"and the bench")
    return res


# --- 4. throughput --------------------------------------------------------------------------------


def rate_between(times, t_from, lo=0.1, hi=0.9):
    """Jobs per second between the lo and hi fractions of `times` (steady state), and overall from
    t_from to the last."""
    v = sorted(times)
    if len(v) < 10:
        return float("nan"), float("nan")
    a, b = v[int(lo * (len(v) - 1))], v[int(hi * (len(v) - 1))]
    steady = (int(hi * (len(v) - 1)) - int(lo * (len(v) - 1))) / (b - a) if b > a else float("inf")
    overall = len(v) / (v[-1] - t_from) if v[-1] > t_from else float("inf")
    return overall, steady


def finished(log, s):
    return log.first_to(s, "SUCCEEDED") or log.first_to(s, "FAILED")


def throughput(server, batch, fx, log, jobs, capacity, window, clients=8):
    """`jobs` waiting jobs of TP_TYPE (16 fit on the cluster at once) under a maxCapacity of 0;
    then maxCapacity `capacity`. Measures until every job is handed to Slurm and then for
    `window` s more or until all finished; terminates what is left."""
    env, queue = slot_queue(fx, 0, TP_TYPE)
    t = time.monotonic()

    def submit_range(k):
        f = Fixture(server.client())
        return [submit_slot_job(f, queue, "exit 0", f"tp-{k}-{i}", TP_TYPE)
                for i in range(k, jobs, clients)]
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        ids = [j for part in pool.map(submit_range, range(clients)) for j in part]
    say(f"throughput: {len(ids)} jobs submitted in {time.monotonic() - t:.1f} s "
        f"({clients} clients) under maxCapacity 0")
    log.wait(lambda: all(log.seq(j) is not None and log.first_to(log.seq(j), "RUNNABLE")
                         for j in ids), 60, "all RUNNABLE", interval=0.2)
    seqs = [log.seq(j) for j in ids]
    pid = server.proc.pid
    ctld = slurmctld_pid()
    cpu0, ctld0, mach0 = proc_cpu(pid), proc_cpu(ctld) if ctld else None, machine_cpu()
    me0, threads0 = self_cpu(), thread_sched(pid)
    sampler = Sampler()
    sampler.start()
    kids = ChildSampler(pid)
    kids.start()
    t_open = time.time()
    batch.update_service_environment(
        serviceEnvironment=env, capacityLimits=[{"capacityUnit": TP_TYPE, "maxCapacity": capacity}])
    sub_of = log.ex["executor.submitted"]
    try:
        log.wait(lambda: all(1 in sub_of.get(s, {}) or finished(log, s) for s in seqs), 300,
                 f"{jobs} jobs handed to Slurm", interval=0.25)
        t_handed = time.time()
        kids.stop.set()
        threads1 = thread_sched(pid)
        handoff_mach = machine_cpu()
        with contextlib.suppress(TimeoutError):
            log.wait(lambda: all(finished(log, s) for s in seqs), window,
                     f"{jobs} jobs finished", interval=0.25)
    finally:
        sampler.stop.set()
        kids.stop.set()
    t_end = time.time()
    cpu1, ctld1, mach1 = proc_cpu(pid), proc_cpu(ctld) if ctld else None, machine_cpu()
    me1 = self_cpu()
    wall = t_end - t_open
    # The server's threads by how long they were runnable (on a CPU or waiting for one) during the
    # hand-off: [on CPU, waiting for a CPU] as fractions of the hand-off's wall time.
    span = t_handed - t_open
    busiest = sorted(([(a - threads0.get(t, (0, 0))[0]) / span,
                       (b - threads0.get(t, (0, 0))[1]) / span]
                      for t, (a, b) in threads1.items()), key=lambda x: -(x[0] + x[1]))[:3]
    listed = time_squeue()
    log.poll()
    sub = [sub_of[s][1] for s in seqs if 1 in sub_of.get(s, {})]
    ended_of = log.ex["executor.ended"]
    ended = [ended_of[s][1] for s in seqs if 1 in ended_of.get(s, {})]
    ended = [x for x in ended if x <= t_end]
    failed = [s for s in seqs if log.first_to(s, "FAILED")]
    sub_overall, sub_steady = rate_between(sub, t_open)
    end_steady = rate_between(ended, t_open)[1]
    first = sorted(sub)[:64]
    first_rate = (len(first) / (first[-1] - t_open)) if first else float("nan")
    lag = []
    for s in seqs:
        d = log.first_trans(s, "RUNNABLE->SCHEDULED")
        x = sub_of.get(s, {}).get(1)
        if d is not None and x is not None:
            lag.append(x - d)
    left = [j for j, s in zip(ids, seqs) if not finished(log, s)]
    t_cancel = time.monotonic()
    if left:
        def terminate(k):
            c = server.client()
            for j in left[k::clients]:
                c.terminate_service_job(jobId=j, reason="bench: end of the throughput window")
        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            list(pool.map(terminate, range(clients)))
        log.wait(lambda: all(finished(log, s) for s in seqs), 300, "the rest terminated",
                 interval=0.25)
    cancel_s = time.monotonic() - t_cancel
    res = {
        "jobs": jobs, "capacity": capacity, "slurm_slots": 16, "wall_s": wall,
        "handoff_s": t_handed - t_open,
        "submitted_per_s": sub_overall, "submitted_per_s_steady": sub_steady,
        "first_64_submitted_per_s": first_rate,
        "ended_in_window": len(ended), "ended_per_s": len(ended) / wall,
        "ended_per_s_steady": end_steady,
        "failed_in_window": len([s for s in failed if log.first_to(s, "FAILED") <= t_end]),
        "terminated_after": len(left), "terminate_s": cancel_s,
        "dispatch_to_sbatch_returned": {"p50": pct(lag, 50), "p99": pct(lag, 99)},
        "server_cpu_cores": (cpu1[0] - cpu0[0]) / wall,
        "server_children_cpu_cores": (cpu1[1] - cpu0[1]) / wall,
        "slurmctld_cpu_cores": ((ctld1[0] - ctld0[0]) / wall) if ctld else None,
        "machine_busy_cores": (mach1[0] - mach0[0]) / wall,
        "machine_cores": (mach1[1] - mach0[1]) / wall,
        "squeue_samples": sampler.samples,
        "handoff_sbatch_in_flight_mean": kids.mean("sbatch"),
        "handoff_squeue_running_share": kids.mean("squeue"),
        "handoff_children_samples": kids.samples,
        "handoff_busiest_threads_cores": busiest,
        "handoff_machine_busy_cores": (handoff_mach[0] - mach0[0]) / (t_handed - t_open),
        "bench_cpu_cores": (me1 - me0) / wall,
        "squeue_at_end": listed,
    }
    sq = [x["text_s"] for x in sampler.samples if "text_s" in x]
    res["squeue_text_s_median"] = med(sq)
    res["squeue_json_s_median"] = listed.get("json_s", float("nan"))
    res["squeue_lines_max"] = max((x.get("text_lines", 0) for x in sampler.samples + [listed]),
                                  default=0)
    res["rest_cpu_cores"] = (res["machine_busy_cores"] - res["server_cpu_cores"] -
                             res["server_children_cpu_cores"] - (res["slurmctld_cpu_cores"] or 0) -
                             res["bench_cpu_cores"])
    res["cpu_s_per_completed_job"] = (res["rest_cpu_cores"] * wall / len(ended)
                                      if ended else float("nan"))
    say(f"throughput, {jobs} waiting, maxCapacity 0 -> {capacity} (16 fit in Slurm at once): all "
        f"handed to Slurm in {res['handoff_s']:.1f} s = {sub_overall:.1f}/s (steady "
        f"{sub_steady:.1f}/s, first 64 at {first_rate:.1f}/s; dispatch->sbatch returned p50 "
        f"{fmt_ms(pct(lag, 50))} ms p99 {fmt_ms(pct(lag, 99))} ms); {len(ended)} ended in "
        f"{wall:.1f} s = {res['ended_per_s']:.1f}/s (steady {end_steady:.1f}/s), "
        f"{res['failed_in_window']} failed; server CPU {res['server_cpu_cores']:.2f} cores + "
        f"children {res['server_children_cpu_cores']:.2f}, slurmctld "
        f"{fmt_s(res['slurmctld_cpu_cores'])}, machine busy {res['machine_busy_cores']:.2f} of "
        f"{res['machine_cores']:.2f}; squeue poll {fmt_ms(res['squeue_text_s_median'])} ms "
        f"({res['squeue_lines_max']} lines), --json {fmt_ms(res['squeue_json_s_median'])} ms; "
        f"{len(left)} left terminated in {cancel_s:.1f} s; during the hand-off, sbatch calls in "
        f"flight {res['handoff_sbatch_in_flight_mean']:.2f} on average (4 submitters), a squeue "
        f"running {100 * res['handoff_squeue_running_share']:.0f} % of the time, the server's "
        f"busiest threads on a CPU / waiting for one "
        f"{', '.join(f'{x[0]:.2f}/{x[1]:.2f}' for x in busiest)}, machine "
        f"{res['handoff_machine_busy_cores']:.2f} cores busy; bench driver "
        f"{res['bench_cpu_cores']:.2f} cores; the rest (Slurm daemons and job processes) "
        f"{res['rest_cpu_cores']:.2f} cores = {res['cpu_s_per_completed_job']:.2f} CPU s per "
        f"completed job")
    return res


def plain_sbatch(workdir, n=200, parallel=(1, 4, 8)):
    """sbatch --wrap true, n jobs per level of parallelism, shaped as the throughput part's jobs
    (4 CPUs: 16 at once); then how fast Slurm completes them."""
    d = os.path.join(workdir, "sbatch")
    os.makedirs(d, exist_ok=True)
    args = ["sbatch", "--parsable", "-p", "allot", "-c4", "--mem=200M", f"--chdir={d}",
            "-o", "/dev/null", "-J", "bench-sbatch", "--wrap", "true"]
    out = {}
    all_ids = []
    env = slurm_cluster.slurm_env()
    t_first = time.time()
    for p in parallel:
        def one(_):
            r = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=60, check=False)
            return r.stdout.strip().split(";")[0] if r.returncode == 0 else None
        t = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(p) as pool:
            ids = list(pool.map(one, range(n)))
        dt = time.monotonic() - t
        ok = [i for i in ids if i]
        all_ids += ok
        out[f"x{p}"] = len(ok) / dt
        say(f"plain sbatch --wrap true, {p} in parallel: {len(ok)} jobs in {dt:.2f} s = "
            f"{len(ok) / dt:.1f}/s")
    wanted = {int(i) for i in all_ids}
    deadline = time.monotonic() + 180
    while True:
        jobs = slurm_cluster.squeue_jobs(wanted)
        if all(slurm_cluster.is_finished(j) for j in jobs) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    t_done = time.time()
    ends = [j.get("end_time") for j in jobs if slurm_cluster.is_finished(j)]
    ends = [e.get("number") if isinstance(e, dict) else e for e in ends]
    ends = [e for e in ends if isinstance(e, int) and e > 0]
    out["jobs"] = len(all_ids)
    out["finished"] = len(ends)
    out["completed_per_s"] = len(all_ids) / (t_done - t_first)
    say(f"plain sbatch: {len(all_ids)} jobs submitted and finished in {t_done - t_first:.1f} s = "
        f"{out['completed_per_s']:.1f}/s end to end")
    return out


# --- the run --------------------------------------------------------------------------------------


def git_commit():
    try:
        r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no",
                                "src"], capture_output=True, text=True, timeout=10).stdout.strip()
        return r.stdout.strip() + (" (+ uncommitted src/ changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def summarize(rows):
    v = [r["running"] for r in rows if r.get("running") is not None]
    return {"n": len(v), "median": med(v), "max": max(v) if v else float("nan"),
            "min": min(v) if v else float("nan")}


def print_table(res):
    m = res["machine"]
    print()
    print(f"Allot on Slurm, {m['date']}, commit {m['commit']}, {m['nproc']} cores, load "
          f"{m['load_before']} before / {m['load_after']} after ({m['busy_before_cores']:.2f} "
          f"cores busy before the bench), Slurm {m['slurm']}, total {res['total_s']:.0f} s")
    print()
    print("| measurement | median | max | reps | goal |")
    print("| --- | --- | --- | --- | --- |")
    for kind, rows in res.get("allot_reclaim", {}).items():
        s = summarize(rows)
        goal = (f"< 2 s" if kind == "cooperative" else f"<= {GRACE + 2} s (grace + 2)")
        ok = s["max"] < 2 if kind == "cooperative" else s["max"] <= GRACE + 2
        print(f"| reclaim through Allot, {kind} victim: submit -> preemptor RUNNING | "
              f"{fmt_s(s['median'])} s | {fmt_s(s['max'])} s | {s['n']} | {goal}: "
              f"{'met' if ok else 'NOT met'} |")
    for kind, rows in res.get("slurm_preemption", {}).items():
        s = summarize(rows)
        print(f"| Slurm partition-priority preemption, {kind} victim: submit -> RUNNING | "
              f"{fmt_s(s['median'])} s | {fmt_s(s['max'])} s | {s['n']} | |")
    d = res.get("dispatch")
    if d:
        print(f"| dispatch -> sbatch returned ({d['jobs']} jobs at {d['rate']:g}/s, 64 fit) | "
              f"p50 {fmt_ms(d['to_sbatch_returned']['p50'])} ms | p99 "
              f"{fmt_ms(d['to_sbatch_returned']['p99'])} ms | | |")
        print(f"| dispatch -> RUNNING (same jobs) | p50 {fmt_ms(d['to_running']['p50'])} ms | "
              f"p99 {fmt_ms(d['to_running']['p99'])} ms | | |")
        print(f"| same jobs: failed / machine busy / CPU per job beside server and bench | "
              f"{d['failed']} / {d['machine_busy_cores']:.2f} cores / "
              f"{d['cpu_s_per_job']:.2f} s | | | |")
    for t in res.get("throughput", []):
        print(f"| {t['jobs']} waiting jobs, maxCapacity 0 -> {t['capacity']} (16 run in Slurm at "
              f"once): handed to Slurm | {t['submitted_per_s']:.1f}/s ({t['handoff_s']:.1f} s for "
              f"all; steady {t['submitted_per_s_steady']:.1f}/s, first 64 at "
              f"{t['first_64_submitted_per_s']:.1f}/s) | dispatch -> sbatch returned p50 "
              f"{fmt_ms(t['dispatch_to_sbatch_returned']['p50'])} ms, p99 "
              f"{fmt_ms(t['dispatch_to_sbatch_returned']['p99'])} ms | | |")
        print(f"| same: completed | {t['ended_per_s']:.1f}/s ({t['ended_in_window']} in "
              f"{t['wall_s']:.0f} s; steady {t['ended_per_s_steady']:.1f}/s; "
              f"{t['failed_in_window']} failed) | {t['terminated_after']} left, terminated in "
              f"{t['terminate_s']:.1f} s | | |")
        print(f"| same: CPU, in cores | server {t['server_cpu_cores']:.2f} + its sbatch/squeue "
              f"{t['server_children_cpu_cores']:.2f}; slurmctld {fmt_s(t['slurmctld_cpu_cores'])}; "
              f"machine {t['machine_busy_cores']:.2f} of {t['machine_cores']:.1f}; bench driver "
              f"{t['bench_cpu_cores']:.2f}; the rest (Slurm's node daemons and the jobs' "
              f"processes) {t['rest_cpu_cores']:.2f} = {t['cpu_s_per_completed_job']:.2f} CPU s "
              f"per completed job | | | |")
        print(f"| same, during the hand-off: sbatch calls in flight (of 4 submitters) / share of "
              f"time a squeue poll runs / server's busiest thread: share of the time on a CPU, "
              f"waiting for one / machine | "
              f"{t['handoff_sbatch_in_flight_mean']:.2f} / "
              f"{100 * t['handoff_squeue_running_share']:.0f} % / "
              f"{100 * t['handoff_busiest_threads_cores'][0][0]:.0f} %, "
              f"{100 * t['handoff_busiest_threads_cores'][0][1]:.0f} % / "
              f"{t['handoff_machine_busy_cores']:.2f} cores busy | | | |")
        print(f"| same: one squeue poll, Allot's format / --json | "
              f"{fmt_ms(t['squeue_text_s_median'])} ms / {fmt_ms(t['squeue_json_s_median'])} ms | "
              f"up to {t['squeue_lines_max']} jobs listed | | |")
    p = res.get("plain_sbatch")
    if p:
        print(f"| plain sbatch --wrap true, 1 / 4 / 8 in parallel | {p['x1']:.1f} / "
              f"{p['x4']:.1f} / "
              f"{p['x8']:.1f} jobs/s | | | |")
        print(f"| plain sbatch: {p['jobs']} jobs submitted and finished | "
              f"{p['completed_per_s']:.1f}/s | | | |")
    print()


def main():
    # A SIGTERM (timeout, make) ends the run through its finally blocks, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-slurm: terminated"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="reclaim repetitions per victim kind")
    ap.add_argument("--baseline-reps", type=int, default=3,
                    help="Slurm preemption repetitions per victim kind")
    ap.add_argument("--baseline-kinds", default="selfrequeue,cooperative,stubborn")
    ap.add_argument("--dispatch-jobs", type=int, default=200)
    ap.add_argument("--dispatch-rate", type=float, default=3.0, help="submissions per second")
    ap.add_argument("--throughput-jobs", type=int, default=1000)
    ap.add_argument("--throughput-capacity", type=int, default=None,
                    help="maxCapacity opened for the waiting jobs (default: as many as jobs)")
    ap.add_argument("--throughput-window", type=float, default=20.0,
                    help="seconds measured after the last hand-off before the rest is terminated")
    ap.add_argument("--parts", default="reclaim,dispatch,throughput,sbatch,baseline")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-slurm"))
    ap.add_argument("--keep-cluster", action="store_true",
                    help="leave the bench cluster up (default mode) at the end")
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    os.makedirs(a.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="allot-bench-slurm-")
    os.chmod(workdir, 0o755)

    m0 = machine_cpu()
    time.sleep(2)
    m1 = machine_cpu()
    res = {"machine": {"nproc": os.cpu_count(), "load_before": load_avg(),
                       "busy_before_cores": (m1[0] - m0[0]) / 2,
                       "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                           "%Y-%m-%d %H:%M UTC"),
                       "commit": git_commit(), "allot_bin": os.environ.get("ALLOT_BIN")}}
    say(f"cluster {os.environ['ALLOT_SLURM_DIR']} (default mode), release binary "
        f"{os.environ.get('ALLOT_BIN')}")
    cluster_script("up")
    slurm_cluster.ensure_cluster()
    res["machine"]["slurm"] = slurm("sinfo", "--version").strip()
    try:
        server = None
        try:
            if parts & {"reclaim", "dispatch", "throughput"}:
                server = AllotServer("--log-format", "json", stop_grace_seconds=GRACE,
                                     executor="slurm")
                # The harness wrote the tests' map there; the bench's replaces it.
                slurm_map = os.path.join(os.path.dirname(server.data_dir), "slurm-map.yaml")
                with open(slurm_map, "w") as f:
                    f.write(SLURM_MAP)
                server.start()
                fx_server_pid.append(server.proc.pid)
                log = ServerLog(server._logs[-1])
                batch = server.client()
                fx = Fixture(batch)
                if "reclaim" in parts:
                    res["allot_reclaim"] = {}
                    for kind in ("cooperative", "stubborn"):
                        res["allot_reclaim"][kind] = allot_reclaim(server, fx, log, kind, a.reps)
                if "dispatch" in parts:
                    res["dispatch"] = dispatch_overhead(fx, log, a.dispatch_jobs, a.dispatch_rate)
                if "throughput" in parts:
                    res["throughput"] = [throughput(server, batch, fx, log, a.throughput_jobs,
                                                    a.throughput_capacity or a.throughput_jobs,
                                                    a.throughput_window)]
                log.poll()
                res["server_warnings"] = log.warnings[-20:]
                res["server_events"] = dict(log.other)
            if "sbatch" in parts:
                res["plain_sbatch"] = plain_sbatch(workdir)
        finally:
            if server is not None:
                with contextlib.suppress(Exception):
                    for i, path in enumerate(server._logs):
                        shutil.copy(path, os.path.join(a.out, f"server-{i + 1}.log"))
                t = time.monotonic()
                server.stop()
                t1 = time.monotonic()
                with contextlib.suppress(Exception):
                    server.cancel_slurm_jobs()
                t2 = time.monotonic()
                server.kill_job_processes()
                t3 = time.monotonic()
                if server._own_tmp:  # thousands of job directories: rm is quicker than rmtree
                    subprocess.run(["rm", "-rf", "--one-file-system", server._own_tmp], check=False)
                server.cleanup()
                say(f"server stopped in {t1 - t:.1f} s, its Slurm jobs cancelled in "
                    f"{t2 - t1:.1f} s, "
                    f"its processes ended in {t3 - t2:.1f} s, its files removed in "
                    f"{time.monotonic() - t3:.1f} s")
        if "baseline" in parts:
            say("switching the cluster to baseline mode (Slurm's partition-priority preemption)")
            cluster_script("up", mode="baseline")
            res["slurm_preemption"] = slurm_baseline(a.baseline_kinds.split(","), a.baseline_reps,
                                                     workdir)
    finally:
        # Always, also after a failure or a SIGTERM: the cluster back in its default mode (its
        # jobs cancelled when it goes down), the scratch directory removed.
        try:
            say("switching the cluster back to its default mode")
            cluster_script("up")
            if not a.keep_cluster and os.environ["ALLOT_SLURM_DIR"] != "/tmp/allot-slurm":
                # Purged, so that the next run starts with no job of this one still listed
                # (slurmctld keeps finished jobs MinJobAge = 300 s, across restarts).
                with contextlib.suppress(OSError):
                    shutil.copy(os.path.join(slurm_cluster.cluster_dir(), "log", "slurmctld.log"),
                                a.out)
                cluster_script("down", "--purge")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    res["machine"]["load_after"] = load_avg()
    res["total_s"] = time.monotonic() - T_START
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    print_table(res)
    say(f"results in {a.out}/results.json, the server's log in {a.out}/server-1.log")


if __name__ == "__main__":
    main()
