"""Shared support for the integration suites: a real `allot server` on a loopback port.

AllotServer starts `$ALLOT_BIN server --data-dir <tmp> --listen 127.0.0.1:<free port>`, waits for
`GET /healthz`, and builds boto3 clients that find their keys the way a user's would: through
AWS_SHARED_CREDENTIALS_FILE=<data-dir>/credentials (written by the server on first start,
profile `default`), region `local`. stop() sends SIGTERM, kill9() SIGKILL; cleanup() also ends
every job process the server started and removes the data directory. Job processes are found
through their supervisors (`allot __supervise --dir <data-dir>/...`, each leading its own
session) and everything below them: the supervisors and the jobs run with a clean environment,
so the marker variable of the server's environment no longer reaches them. Sandboxed jobs may
read the test interpreter's installation (--job-readonly-path), so `sys.executable` runs there.

The executor is `local` unless AllotServer(executor=...) or ALLOT_TEST_EXECUTOR says `slurm`: then
the server runs its jobs on the Slurm test cluster (slurm_cluster.py, started on first use), with
`--executor slurm --slurm-map <tmp>/slurm-map.yaml --slurm-conf $SLURM_CONF --shared-dir
<tmp>/shared`, the data directory being <tmp>/data; cleanup() also cancels the Slurm jobs whose
batch script or working directory lies under the shared directory.

Everything here polls with deadlines; nothing waits without a bound.
"""

import configparser
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.config
import botocore.credentials
import botocore.exceptions
import botocore.session

import slurm_cluster

REGION = "local"
ACCOUNT = "000000000000"
ARN_PREFIX = f"arn:aws:batch:{REGION}:{ACCOUNT}:"
INSTANCE = "ml.g5.xlarge"

# Keys in the test process's own environment would win over the credentials file.
for _var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
             "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BATCH"):
    os.environ.pop(_var, None)

# A job that sleeps until stopped and exits 143 on SIGTERM (at once, not after the sleep).
SLEEPER = "trap 'exit 143' TERM; sleep 30 & wait"

# Shell: the name of a job's first host (algo-1) as the job sees it, whatever the executor calls
# it (the Slurm executor names hosts after their nodes): the first entry of SM_HOSTS.
FIRST_HOST_SH = '"$(echo "$SM_HOSTS" | cut -d\\" -f2)"'



def allot_bin():
    path = os.environ.get("ALLOT_BIN")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "dev", "bin", "allot")
    path = os.path.abspath(path)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"ALLOT_BIN={path} is not an executable allot binary")
    return path


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(fn, timeout=20.0, interval=0.05, what="condition"):
    """Calls fn until it returns something truthy; returns it, or fails after `timeout` s."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")
        time.sleep(interval)


def error_code(exc):
    return exc.response.get("Error", {}).get("Code")


def error_message(exc):
    return exc.response.get("Error", {}).get("Message", "")


def http_status(exc):
    return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")


def mount_tmpfs(test, size):
    """A fresh tmpfs of `size` (e.g. "64m") mounted for `test` (unmounted at its cleanup);
    skips the test where mounting is not allowed. Returns the mount point."""
    mount = tempfile.mkdtemp(prefix="allot-tmpfs-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mount],
                       capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(mount)
        test.skipTest(f"cannot mount a tmpfs here: {r.stderr.strip()}")

    def unmount():
        subprocess.run(["umount", "-l", mount], check=False)
        shutil.rmtree(mount, ignore_errors=True)
    test.addCleanup(unmount)
    return mount


def payload(script="exit 0", instance_type=INSTANCE, count=1, environment=None,
            training_job_name=None, entrypoint=("/bin/sh", "-c"), **extra):
    """A SageMaker CreateTrainingJob request that runs `script` under /bin/sh -c."""
    p = {
        "AlgorithmSpecification": {"TrainingInputMode": "File",
                                   "ContainerEntrypoint": list(entrypoint),
                                   "ContainerArguments": [script]},
        "RoleArn": "arn:aws:iam::000000000000:role/allot-test",
        # An s3:// output path, as the SageMaker SDK sends: Allot ignores it (a file:// one is
        # allowed only under the server's --file-root directories).
        "OutputDataConfig": {"S3OutputPath": "s3://allot-test/output"},
        "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count,
                           "VolumeSizeInGB": 1},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }
    if training_job_name:
        p["TrainingJobName"] = training_job_name
    if environment:
        p["Environment"] = dict(environment)
    p.update(extra)
    return json.dumps(p)


def _read_proc(pid, name):
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _procs_with_marker(marker):
    """Pids of processes whose environment holds marker (the server: it has it from us)."""
    needle = marker.encode()
    me = os.getpid()
    return [int(e) for e in os.listdir("/proc")
            if e.isdigit() and int(e) != me and needle in _read_proc(e, "environ").split(b"\0")]


# The hidden commands a job's host runs under: the local executor's supervisor, and what the Slurm
# executor starts (the batch script's program, and what srun starts on each node).
_SUPERVISOR_COMMANDS = (b"__supervise", b"__slurmbatch", b"__slurmhost")


def _supervisors_and_descendants(*dirs):
    """The supervisors of jobs under the directories (`allot __supervise --dir <dir>/...`) and
    every process below them (bwrap, the job's processes in their own PID namespace)."""
    prefixes = {os.path.join(p, "").encode()
                for d in dirs if d for p in (d, os.path.realpath(d))}
    children = {}
    roots = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        stat = _read_proc(e, "stat")
        try:
            ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(e))
        args = _read_proc(e, "cmdline").split(b"\0")
        if len(args) > 2 and args[1] in _SUPERVISOR_COMMANDS and \
                any(a.startswith(p) for a in args for p in prefixes):
            roots.append(int(e))
    found, pending = [], list(roots)
    while pending:
        pid = pending.pop()
        if pid in found:  # a supervisor below another (__slurmhost starts __supervise)
            continue
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def readonly_runtime_paths():
    """The test interpreter's installation when it lives outside /usr (pyenv, a venv): sandboxed
    jobs run sys.executable, so they must see it."""
    paths = []
    for prefix in {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}:
        if not prefix.startswith("/usr/") and prefix != "/usr" and os.path.isdir(prefix):
            paths.append(prefix)
    return sorted(paths)


class AllotServer:
    """One `allot server` process on a data directory this object owns."""

    def __init__(self, *extra_args, stop_grace_seconds=None, data_dir=None, executor=None,
                 env=None):
        self.bin = allot_bin()
        self.extra_args = list(extra_args)
        self.extra_env = dict(env or {})  # over the test's environment, for every start
        if stop_grace_seconds is not None:
            self.extra_args += ["--stop-grace-seconds", str(stop_grace_seconds)]
        self.executor = executor or os.environ.get("ALLOT_TEST_EXECUTOR") or "local"
        if self.executor not in ("local", "slurm"):
            raise ValueError(f"executor {self.executor!r}: local or slurm")
        self._own_dir = data_dir is None
        self.shared_dir = None
        self._slurm_env = {}
        self._executor_args = []
        if self.executor == "local":
            self.data_dir = data_dir or tempfile.mkdtemp(prefix="allot-it-")
            self._own_tmp = None
        else:
            self._setup_slurm(data_dir)
        self.marker = f"ALLOT_IT_MARKER={uuid.uuid4().hex}"
        self.proc = None
        self.port = None
        self.starts = 0
        self._logs = []
        self._clients = []

    def _setup_slurm(self, data_dir):
        """<tmp>/data, <tmp>/shared (what every node sees) and <tmp>/slurm-map.yaml; <tmp> is the
        data directory's parent when the caller names the data directory."""
        self._slurm_env = slurm_cluster.ensure_cluster()
        if data_dir is None:
            self._own_tmp = tempfile.mkdtemp(prefix="allot-it-")
            os.chmod(self._own_tmp, 0o755)  # the nodes' processes reach the shared directory
            self.data_dir = os.path.join(self._own_tmp, "data")
            os.mkdir(self.data_dir, 0o700)
        else:
            self._own_tmp = None
            self.data_dir = data_dir
        tmp = os.path.dirname(os.path.abspath(self.data_dir))
        self.shared_dir = os.path.join(tmp, "shared")
        os.makedirs(self.shared_dir, exist_ok=True)
        os.chmod(self.shared_dir, 0o755)
        slurm_map = os.path.join(tmp, "slurm-map.yaml")
        with open(slurm_map, "w", encoding="utf-8") as f:
            f.write(slurm_cluster.slurm_map_yaml())
        self._executor_args = ["--executor", "slurm", "--slurm-map", slurm_map,
                               "--slurm-conf", self._slurm_env["SLURM_CONF"],
                               "--shared-dir", self.shared_dir]

    # --- lifecycle ---

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def credentials_file(self):
        return os.path.join(self.data_dir, "credentials")

    def start(self, timeout=30.0):
        assert self.proc is None, "server already running"
        last_error = None
        for _ in range(5):  # a free port can be taken between probe and bind: try another
            self.port = free_port()
            self.starts += 1
            log = os.path.join(self.data_dir, f"server-{self.starts}.log")
            self._logs.append(log)
            env = dict(os.environ)
            env.update(self._slurm_env)
            key, value = self.marker.split("=", 1)
            env[key] = value
            env.update(self.extra_env)
            with open(log, "wb") as out:
                runtime = [a for p in readonly_runtime_paths() for a in ("--job-readonly-path", p)]
                self.proc = subprocess.Popen(
                    [self.bin, "server", "--data-dir", self.data_dir,
                     "--listen", f"127.0.0.1:{self.port}", *runtime, *self._executor_args,
                     *self.extra_args],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
            try:
                self._wait_healthy(timeout)
                return self
            except RuntimeError as e:
                last_error = e
                self._reap(signal.SIGKILL)
                if "cannot listen" not in self.log_text():
                    break
        raise RuntimeError(f"allot server did not start: {last_error}\n{self.log_text()}")

    def _wait_healthy(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.endpoint + "/healthz", timeout=2) as r:
                    if r.status == 200 and os.path.exists(self.credentials_file):
                        return
            except (urllib.error.URLError, ConnectionError, socket.timeout, OSError):
                pass
            time.sleep(0.05)
        raise RuntimeError(f"/healthz not 200 within {timeout}s")

    def _reap(self, sig, timeout=15.0):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        rc = self.proc.returncode
        self.proc = None
        return rc

    def close_clients(self):
        """Closes the clients' pooled connections (a server stops only when its idle
        keep-alive connections are gone, so this saves the keep-alive timeout on each stop)."""
        clients, self._clients = self._clients, []
        for c in clients:
            with contextlib.suppress(Exception):
                c.close()

    def stop(self, timeout=15.0):
        """SIGTERM and wait; returns the exit status (SIGKILL if it does not stop in time)."""
        self.close_clients()
        return self._reap(signal.SIGTERM, timeout)

    def kill9(self):
        """SIGKILL the server (its job processes are left running, as after a crash)."""
        rc = self._reap(signal.SIGKILL)
        self.close_clients()
        return rc

    def restart(self, timeout=30.0):
        self.stop()
        return self.start(timeout)

    def job_processes(self):
        """The job processes this server started that still run (supervisors, bwrap, jobs)."""
        return _supervisors_and_descendants(self.data_dir, self.shared_dir)

    def slurm_jobs(self):
        """This server's Slurm jobs (squeue --json dicts, finished ones included): those whose
        batch script, working directory or output lies under the shared directory."""
        if self.shared_dir is None:
            return []
        prefixes = tuple({os.path.join(p, "") for p in
                          (self.shared_dir, os.path.realpath(self.shared_dir))})

        def ours(job):
            return any(str(job.get(k) or "").startswith(prefixes) for k in
                       ("command", "current_working_directory", "standard_output"))
        return [j for j in slurm_cluster.squeue_jobs() if ours(j)]

    def cancel_slurm_jobs(self):
        """scancel this server's Slurm jobs that still run or wait, until Slurm ends them."""
        if self.shared_dir is None:
            return []
        ids = {j["job_id"] for j in self.slurm_jobs()}
        return slurm_cluster.cancel_jobs(lambda j: j["job_id"] in ids)

    def kill_job_processes(self):
        """Ends what the server started: its supervisors and everything below them (and any
        process with our marker, but the server itself), by pid."""
        for _ in range(3):
            server = {self.proc.pid} if self.proc is not None else set()
            pids = [p for p in self.job_processes() + _procs_with_marker(self.marker)
                    if p not in server]
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    if os.getpgid(pid) == pid:
                        os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)

    def cleanup(self):
        try:
            self.stop()
        finally:
            try:
                if self.executor == "slurm":
                    try:
                        self.cancel_slurm_jobs()
                    finally:
                        self.kill_job_processes()
                else:
                    self.kill_job_processes()
            finally:
                if self._own_dir:
                    shutil.rmtree(self._own_tmp or self.data_dir, ignore_errors=True)

    def log_text(self, tail=4000):
        """The server's log, its last `tail` characters (for messages); tail=None: all of it."""
        parts = []
        for log in self._logs:
            with contextlib.suppress(OSError), open(log, "rb") as f:
                parts.append(f.read().decode(errors="replace"))
        text = "\n".join(parts)
        return text if tail is None else text[-tail:]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()

    # --- clients ---

    def credentials(self):
        cp = configparser.ConfigParser()
        cp.read(self.credentials_file)
        return cp["default"]["aws_access_key_id"], cp["default"]["aws_secret_access_key"]

    def client(self, retries=2, read_timeout=30, connect_timeout=5, **overrides):
        """A boto3 batch client that reads its keys from <data-dir>/credentials."""
        core = botocore.session.Session()
        core.set_config_variable("credentials_file", self.credentials_file)
        core.set_config_variable("config_file", os.devnull)
        core.set_config_variable("profile", "default")
        session = boto3.session.Session(botocore_session=core, region_name=REGION)
        config = botocore.config.Config(
            retries={"total_max_attempts": retries, "mode": "standard"},
            read_timeout=read_timeout, connect_timeout=connect_timeout,
            max_pool_connections=32)
        kwargs = dict(endpoint_url=self.endpoint, config=config)
        kwargs.update(overrides)
        c = session.client("batch", **kwargs)
        assert core.get_credentials().method == "shared-credentials-file", \
            core.get_credentials().method
        self._clients.append(c)
        return c

    def client_with_keys(self, access_key, secret, retries=1):
        config = botocore.config.Config(retries={"total_max_attempts": retries, "mode": "standard"})
        c = boto3.client("batch", endpoint_url=self.endpoint, region_name=REGION,
                         aws_access_key_id=access_key, aws_secret_access_key=secret,
                         config=config)
        self._clients.append(c)
        return c

    def job_dir(self, job_id, *parts):
        """<data-dir>/jobs/<jobId>[/parts...] on this machine (the host side of a job's files);
        with the Slurm executor <shared-dir>/jobs/<jobId>[/parts...]."""
        return os.path.join(self.shared_dir or self.data_dir, "jobs", job_id, *parts)

    def host_dir(self, job_id, attempt=1, host="algo-1", *parts):
        """<data-dir>/jobs/<jobId>/attempt-<N>/<host>[/parts...]: stdout, stderr and ml/ (what the
        job saw as /opt/ml)."""
        return self.job_dir(job_id, f"attempt-{attempt}", host, *parts)

    def raw_get(self, path, query=None):
        """GET <path>?<query> signed with SigV4 (Allot's /allot/v1 extension paths), returning
        (status, parsed JSON body)."""
        key, secret = self.credentials()
        url = self.endpoint + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        req = botocore.awsrequest.AWSRequest(method="GET", url=url)
        botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch",
                                REGION).add_auth(req)
        prepared = req.prepare()
        http = urllib.request.Request(url, method="GET", headers=dict(prepared.headers.items()))
        try:
            with urllib.request.urlopen(http, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def request(self, method, path, body=None, query=None, keys=None):
        """A SigV4-signed request to any path (the /allot/v1 extensions), with the admin's keys
        unless `keys` = (access key id, secret) is given: (status, parsed JSON body, headers)."""
        key, secret = keys or self.credentials()
        url = self.endpoint + path + ("?" + urllib.parse.urlencode(query) if query else "")
        # bytes go as they are (a malformed body); anything else as JSON.
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        req = botocore.awsrequest.AWSRequest(method=method, url=url, data=data,
                                             headers={"Content-Type": "application/json"})
        botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch",
                                REGION).add_auth(req)
        prepared = req.prepare()
        http = urllib.request.Request(url, data=data, method=method,
                                      headers=dict(prepared.headers.items()))
        try:
            with urllib.request.urlopen(http, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}"), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}"), dict(e.headers)

    def raw(self, action, body):
        """POST /v1/<action> signed with SigV4, returning (status, parsed JSON body).

        For the fields Allot adds beyond the AWS model, which boto3 drops when it parses.
        """
        key, secret = self.credentials()
        url = f"{self.endpoint}/v1/{action}"
        data = json.dumps(body).encode()
        req = botocore.awsrequest.AWSRequest(method="POST", url=url, data=data,
                                             headers={"Content-Type": "application/json"})
        botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch",
                                REGION).add_auth(req)
        prepared = req.prepare()
        http = urllib.request.Request(url, data=data, method="POST",
                                      headers=dict(prepared.headers.items()))
        try:
            with urllib.request.urlopen(http, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")


# --- resource helpers ---------------------------------------------------------------------


class Fixture:
    """Builds environments, policies, queues and shares with unique names on one client."""

    def __init__(self, batch):
        self.batch = batch
        self.n = 0

    def unique(self, stem):
        self.n += 1
        return f"{stem}-{self.n}-{uuid.uuid4().hex[:6]}"

    def environment(self, capacity=3, instance_type=INSTANCE, name=None, limits=None):
        name = name or self.unique("env")
        limits = limits or [{"capacityUnit": instance_type, "maxCapacity": capacity}]
        r = self.batch.create_service_environment(
            serviceEnvironmentName=name, serviceEnvironmentType="SAGEMAKER_TRAINING",
            capacityLimits=limits)
        return r["serviceEnvironmentName"]

    def policy(self, name=None):
        name = name or self.unique("policy")
        r = self.batch.create_scheduling_policy(
            name=name, quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
        return r["arn"]

    def queue(self, env, policy_arn=None, name=None, state="ENABLED"):
        name = name or self.unique("queue")
        kwargs = dict(jobQueueName=name, priority=1, state=state,
                      jobQueueType="SAGEMAKER_TRAINING",
                      serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}])
        if policy_arn:
            kwargs["schedulingPolicyArn"] = policy_arn
        self.batch.create_job_queue(**kwargs)
        return name

    def share(self, queue, name=None, capacity=1, strategy="LEND_AND_BORROW", borrow_limit=None,
              in_share="DISABLED", instance_type=INSTANCE, limits=None, state="ENABLED"):
        name = name or self.unique("share")
        sharing = {"strategy": strategy}
        if borrow_limit is not None:
            sharing["borrowLimit"] = borrow_limit
        r = self.batch.create_quota_share(
            quotaShareName=name, jobQueue=queue,
            capacityLimits=limits or [{"capacityUnit": instance_type, "maxCapacity": capacity}],
            resourceSharingConfiguration=sharing,
            preemptionConfiguration={"inSharePreemption": in_share}, state=state)
        return r["quotaShareArn"]

    def qm_queue(self, capacity=3, shares=(("qs", 1),), **share_kwargs):
        """An environment, a quota-share policy, a queue and shares; returns (queue, {share: arn})."""
        env = self.environment(capacity)
        queue = self.queue(env, self.policy())
        arns = {name: self.share(queue, name=name, capacity=cap, **share_kwargs)
                for name, cap in shares}
        return queue, arns

    def submit(self, queue, share=None, script="exit 0", name=None, priority=None, **kwargs):
        body = dict(jobName=name or self.unique("job"), jobQueue=queue,
                    serviceJobType="SAGEMAKER_TRAINING")
        if share is not None:
            body["quotaShareName"] = share
        if priority is not None:
            body["schedulingPriority"] = priority
        if "serviceRequestPayload" not in kwargs:
            body["serviceRequestPayload"] = payload(script)
        body.update(kwargs)
        return self.batch.submit_service_job(**body)

    def describe(self, job_id):
        return self.batch.describe_service_job(jobId=job_id)

    def wait_status(self, job_id, statuses, timeout=30.0):
        if isinstance(statuses, str):
            statuses = (statuses,)

        def check():
            d = self.describe(job_id)
            return d if d["status"] in statuses else None
        try:
            return wait_for(check, timeout, what=f"job {job_id} in {statuses}")
        except AssertionError as e:
            d = self.describe(job_id)
            raise AssertionError(f"{e}; now {d['status']} ({d.get('statusReason')})") from None


class ServerTestCase(unittest.TestCase):
    """A test class that shares one real server: `server`, a boto3 `batch` client and a `fx`."""

    stop_grace_seconds = 2
    # Suites whose jobs write into the test's scratch directory run them unsandboxed: in the
    # sandbox a job writes only to /opt/ml and a private /tmp (tests/integration/test_sandbox.py).
    server_args = ()

    @classmethod
    def setUpClass(cls):
        cls.server = AllotServer(*cls.server_args, stop_grace_seconds=cls.stop_grace_seconds)
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
