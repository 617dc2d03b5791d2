"""The Slurm test cluster for the integration suites (scripts/slurm-cluster.sh, issue 11).

ensure_cluster() runs `scripts/slurm-cluster.sh up` once per process (it installs the Debian
packages where they are missing, starts munged, slurmctld and slurmd n1..n4 on loopback, and
waits until the nodes are idle) and returns the variables a Slurm client needs (SLURM_CONF).
The rest reads and drives the cluster with its own command-line tools, under that SLURM_CONF:
squeue_jobs() (`squeue --json`, which in Slurm 22.05 lists every job slurmctld still holds,
finished ones included, and ignores --jobs and every other filter: filter here), cancel_jobs(),
kill_slurmd()/start_slurmd() for node-failure tests, and wait_nodes_idle().

Everything polls with deadlines; nothing waits without a bound.
"""

import json
import os
import signal
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "slurm-cluster.sh")

# Job states after which Slurm runs nothing of the job any more (COMPLETING is not one).
FINISHED_STATES = frozenset({"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
                             "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"})

_lock = threading.Lock()
_cluster_env = None


class ClusterError(RuntimeError):
    """The cluster could not be started or did not answer (with the script's or tool's output)."""


def cluster_dir():
    """Where the cluster keeps its state ($ALLOT_SLURM_DIR, default /tmp/allot-slurm)."""
    return os.environ.get("ALLOT_SLURM_DIR") or "/tmp/allot-slurm"


def _script(*args, timeout):
    try:
        return subprocess.run([SCRIPT, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        raise ClusterError(f"scripts/slurm-cluster.sh {' '.join(args)} did not finish within "
                           f"{timeout}s:\n{out}") from None


def _cluster_vars():
    """{"SLURM_CONF": ..., "ALLOT_SLURM_DIR": ...} as `scripts/slurm-cluster.sh env` prints."""
    r = _script("env", timeout=30)
    out = r.stdout.decode(errors="replace")
    if r.returncode != 0:
        raise ClusterError(f"scripts/slurm-cluster.sh env failed ({r.returncode}):\n{out}")
    found = {}
    for line in out.splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            found[key] = value.strip().strip("'")
    if "SLURM_CONF" not in found:
        raise ClusterError(f"scripts/slurm-cluster.sh env printed no SLURM_CONF:\n{out}")
    return found


def ensure_cluster(timeout=900):
    """Starts the cluster once per process (later calls return at once) and returns the
    variables a Slurm client needs: {"SLURM_CONF": ..., "ALLOT_SLURM_DIR": ...}. Raises
    ClusterError with the script's output when it fails. The first call may install packages
    (apt-get, as root), hence the long timeout."""
    global _cluster_env
    with _lock:
        if _cluster_env is None:
            r = _script("up", timeout=timeout)
            if r.returncode != 0:
                raise ClusterError(f"scripts/slurm-cluster.sh up failed ({r.returncode}):\n"
                                   f"{r.stdout.decode(errors='replace')}")
            _cluster_env = _cluster_vars()
        return dict(_cluster_env)


def slurm_env(base=None):
    """An environment for Slurm's tools: `base` (default: this process's) plus SLURM_CONF. Does
    not start the cluster (ensure_cluster does)."""
    env = dict(os.environ if base is None else base)
    env.update(_cluster_env if _cluster_env is not None else _cluster_vars())
    return env


def _tool(*argv, timeout=30):
    try:
        r = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=slurm_env(), timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{' '.join(argv)} did not answer within {timeout}s") from None
    if r.returncode != 0:
        raise ClusterError(f"{' '.join(argv)} failed ({r.returncode}): "
                           f"{r.stderr.decode(errors='replace').strip()}")
    return r.stdout.decode(errors="replace")


def squeue_jobs(job_ids=None):
    """Every job slurmctld holds, as `squeue --json` gives them (22.05 field names: job_id, name,
    comment, job_state, state_reason, nodes, batch_host, exit_code, derived_exit_code,
    start_time, end_time, partition, command, current_working_directory, ...). Finished jobs
    stay listed for MinJobAge (300 s). `job_ids` (ints or strings) keeps only those."""
    jobs = json.loads(_tool("squeue", "--json")).get("jobs", [])
    if job_ids is not None:
        wanted = {int(j) for j in job_ids}
        jobs = [j for j in jobs if j.get("job_id") in wanted]
    return jobs


def is_finished(job):
    return job.get("job_state") in FINISHED_STATES


def cancel_jobs(predicate, wait=True, timeout=30.0):
    """scancel every job that is not finished and for which predicate(job) is true (job: a dict
    of squeue_jobs()); with `wait`, until Slurm reports them finished. Returns their ids."""
    ids = [j["job_id"] for j in squeue_jobs() if not is_finished(j) and predicate(j)]
    if not ids:
        return []
    _tool("scancel", *[str(i) for i in ids])
    if wait:
        deadline = time.monotonic() + timeout
        while True:
            left = [j for j in squeue_jobs(ids) if not is_finished(j)]
            if not left:
                break
            if time.monotonic() > deadline:
                raise ClusterError(f"jobs {ids} still not finished {timeout}s after scancel: "
                                   f"{[(j['job_id'], j['job_state']) for j in left]}")
            time.sleep(0.2)
    return ids


# --- nodes --------------------------------------------------------------------------------


def nodes():
    """The nodes as `sinfo --json` gives them: name, address (NodeAddr), hostname, state
    ("idle", "mixed", "allocated", "down", ...), state_flags (["NOT_RESPONDING", "DRAIN"]),
    partitions, cpus, real_memory, gres ("gpu:8"), reason."""
    return json.loads(_tool("sinfo", "--json")).get("nodes", [])


def gpus_per_node():
    """The fake GPUs each node has (0 where the cluster could not make device files)."""
    counts = []
    for n in nodes():
        count = 0
        for gres in (n.get("gres") or "").split(","):
            parts = gres.split(":")
            if parts[0] == "gpu" and parts[-1].split("(")[0].isdigit():
                count = int(parts[-1].split("(")[0])
        counts.append(count)
    return min(counts) if counts else 0


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _slurmd_pid(node):
    """The pid of node's slurmd, from its PID file, if that process is this cluster's slurmd."""
    pidfile = os.path.join(cluster_dir(), "run", f"slurmd.{node}.pid")
    try:
        pid = int(_read(pidfile).strip() or b"0")
    except ValueError:
        return None
    if pid <= 0 or _read(f"/proc/{pid}/comm").strip() != b"slurmd":
        return None
    args = _read(f"/proc/{pid}/cmdline").split(b"\0")
    if node.encode() not in args:
        return None
    return pid


def _step_daemons(node):
    """The slurmstepd processes of node: those listening on a socket under its spool directory
    (<dir>/spool/<node>/<node>_<job>.<step>)."""
    spool = os.path.join(cluster_dir(), "spool", node, "").encode()
    inodes = set()
    for line in _read("/proc/net/unix").splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7].startswith(spool):
            inodes.add(b"socket:[" + fields[6] + b"]")
    found = []
    for e in os.listdir("/proc"):
        if not e.isdigit() or _read(f"/proc/{e}/comm").strip() != b"slurmstepd":
            continue
        try:
            fds = os.listdir(f"/proc/{e}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{e}/fd/{fd}").encode() in inodes:
                    found.append(int(e))
                    break
            except OSError:
                continue
    return found


def _with_descendants(roots):
    children = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            ppid = int(_read(f"/proc/{e}/stat").rsplit(b")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(e))
    found, pending = [], list(roots)
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def kill_slurmd(node, kill_steps=True):
    """SIGKILL node's slurmd, as a node failure would; with kill_steps also its slurmstepd
    processes and everything they started (the job's processes on that node). Slurm marks the
    node DOWN and its jobs NODE_FAIL (reason NodeDown) about 18 s later (SlurmdTimeout=10,
    MessageTimeout=5). Returns the pids killed."""
    ensure_cluster()
    pid = _slurmd_pid(node)
    if pid is None:
        raise ClusterError(f"no running slurmd of {node} in {cluster_dir()}")
    victims = [pid]
    if kill_steps:
        victims += _with_descendants(_step_daemons(node))
    for p in victims:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return victims


def node_ready(node):
    for n in nodes():
        if n.get("name") == node:
            flags = set(n.get("state_flags") or [])
            return n.get("state") in ("idle", "mixed", "allocated") and \
                not flags & {"NOT_RESPONDING", "DRAIN", "FAIL"}
    return False


def start_slurmd(node, timeout=60.0):
    """Starts node's slurmd again (scripts/slurm-cluster.sh up starts the ones missing) and
    waits until the node takes jobs again: back from DOWN by itself (ReturnToService=2), or
    resumed with `scontrol update nodename=<node> state=resume`."""
    ensure_cluster()
    r = _script("up", timeout=300)
    if r.returncode != 0:
        raise ClusterError(f"scripts/slurm-cluster.sh up failed ({r.returncode}):\n"
                           f"{r.stdout.decode(errors='replace')}")
    deadline = time.monotonic() + timeout
    resumed = 0.0
    while not node_ready(node):
        if time.monotonic() > deadline:
            raise ClusterError(f"{node} did not come back within {timeout}s: "
                               f"{[n for n in nodes() if n.get('name') == node]}")
        if time.monotonic() - resumed > 2:
            subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=slurm_env(), timeout=30, check=False)
            resumed = time.monotonic()
        time.sleep(0.2)


def wait_nodes_idle(timeout=60.0):
    """Waits until every node is idle (no job, no flag: not completing, responding, not
    drained); returns the nodes (sinfo --json). Fails with their states after `timeout`."""
    ensure_cluster()
    deadline = time.monotonic() + timeout
    while True:
        current = nodes()
        if current and all(n.get("state") == "idle" and not n.get("state_flags")
                           for n in current):
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"nodes not idle after {timeout}s: " + ", ".join(
                f"{n.get('name')}={n.get('state')}{n.get('state_flags') or ''}" for n in current))
        time.sleep(0.2)


# --- the Slurm map of the tests -----------------------------------------------------------

# Every instance type the integration suites run jobs on, with the GPUs the real one has. Each
# instance takes 1 CPU and 1 GiB of a node (16 CPUs, 16000 MB, 8 fake GPUs), so that many fit.
INSTANCE_GPUS = {"ml.g5.xlarge": 1, "ml.g5.2xlarge": 1, "ml.p4d.24xlarge": 8, "ml.m5.large": 0}


def slurm_map_yaml(partition="allot"):
    """The Slurm map (`allot server --slurm-map`) of INSTANCE_GPUS: instance type ->
    {partition, cpus, memory[, gres]}; gres only where the nodes have GPUs."""
    have = gpus_per_node()
    lines = ["# Slurm map of the integration tests (tests/integration/slurm_cluster.py):",
             "# instance type -> where one instance runs on the test cluster."]
    for itype, gpus in INSTANCE_GPUS.items():
        fields = [f"partition: {partition}", "cpus: 1", "memory: 1G"]
        if gpus and have >= gpus:
            fields.append(f'gres: "gpu:{gpus}"')
        lines.append(f"{itype}: {{{', '.join(fields)}}}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["map"]:
        ensure_cluster()
        sys.stdout.write(slurm_map_yaml())
    else:
        sys.exit("usage: slurm_cluster.py map   (prints the tests' Slurm map)")
