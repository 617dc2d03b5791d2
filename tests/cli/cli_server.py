"""The allot server every CLI test class starts: a real `allot server` on a free loopback port
with its data in a temporary folder, examples/cluster.yaml applied, and the CLI pointed at it
through AWS_ENDPOINT_URL_BATCH and AWS_SHARED_CREDENTIALS_FILE, as a user would."""

import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_YAML = os.path.join(HERE, "..", "..", "examples", "cluster.yaml")


class ServerCase(unittest.TestCase):
    """Subclasses get cls.allot(...), self.submit(...) and self.wait_listed(...)."""

    @classmethod
    def setUpClass(cls):
        cls.bin = os.environ.get("ALLOT_BIN")
        if not cls.bin:
            raise unittest.SkipTest("ALLOT_BIN is not set")
        cls.bin = os.path.abspath(cls.bin)
        cls.tmp = tempfile.mkdtemp(prefix="allot-cli-test-")
        data = os.path.join(cls.tmp, "data")
        cls.log = open(os.path.join(cls.tmp, "server.log"), "w+")
        cls.server = subprocess.Popen(
            [cls.bin, "server", "--data-dir", data, "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=cls.log, text=True)
        first = cls.server.stdout.readline()
        m = re.search(r"listening on (http://[0-9.]+:\d+)", first)
        if not m:
            cls.server.kill()
            raise RuntimeError("allot server did not start: %r" % first)
        cls.endpoint = m.group(1)
        deadline = time.time() + 20
        while True:
            try:
                with urllib.request.urlopen(cls.endpoint + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        cls.env = {k: v for k, v in os.environ.items()
                   if not k.startswith("AWS_")}
        cls.env.update({
            "AWS_SHARED_CREDENTIALS_FILE": os.path.join(data, "credentials"),
            "AWS_ENDPOINT_URL_BATCH": cls.endpoint,
            "AWS_DEFAULT_REGION": "local",
        })
        # The cluster every test uses; test_apply checks the output of applying it.
        cls.first_apply = cls.allot("apply", "-f", CLUSTER_YAML)

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        try:
            cls.server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            cls.server.kill()
            cls.server.wait()
        cls.server.stdout.close()
        cls.log.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def allot(cls, *args, check=True, timeout=120):
        p = subprocess.run([cls.bin, *args], env=cls.env, capture_output=True, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("allot %s exited %d\nstdout:\n%s\nstderr:\n%s" % (
                " ".join(args), p.returncode, p.stdout, p.stderr))
        return p

    def submit(self, *args):
        p = self.allot("submit", *args)
        job_id = p.stdout.strip()
        self.assertRegex(job_id, r"^[0-9a-f-]{36}$")
        return job_id

    def wait_listed(self, job_id, status, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            out = self.allot("jobs", "--queue", "training", "--status", status).stdout
            if job_id in out:
                return out
            time.sleep(0.2)
        self.fail("job %s not %s after %ds:\n%s" % (
            job_id, status, timeout, self.allot("describe", job_id).stdout))
