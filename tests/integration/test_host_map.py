"""The host map: `allot server --host-map FILE` gives each instance slot its own GPUs
(CUDA_VISIBLE_DEVICES) and CPU set; a job's hosts take distinct free slots and give them back.
An instance type's `limits` replace the server's own for its hosts, and only for them."""

import os
import tempfile
import unittest

from allot_harness import INSTANCE, ServerTestCase, payload

# A type with limits of its own, smaller than the server's (--job-disk-limit 64MiB,
# --job-file-limit 1000 below).
LIMITED = "ml.c5.xlarge"
HOST_MAP = f"""{INSTANCE}:
  - gpus: "0"
    cpus: "0"
  - gpus: "1"
    cpus: "1"
{LIMITED}:
  limits:
    disk: 4MiB
    files: 200
"""

# Each host records what it was given, then exits.
SCRIPT = ('mkdir -p /opt/ml/output/data 2>/dev/null; out="$SM_OUTPUT_DATA_DIR"; '
          'echo "$CUDA_VISIBLE_DEVICES" > "$out/gpus"; '
          "grep Cpus_allowed_list /proc/self/status | cut -f2 > \"$out/cpus\"; "
          'echo "$SM_NUM_GPUS $SM_NUM_CPUS" > "$out/counts"')

_map_file = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
_map_file.write(HOST_MAP)
_map_file.close()


def tearDownModule():
    os.unlink(_map_file.name)


class HostMapTest(ServerTestCase):
    server_args = ("--host-map", _map_file.name, "--job-disk-limit", "64MiB",
                   "--job-file-limit", "1000")

    def read(self, job_id, host, name, attempt=1):
        path = self.server.host_dir(job_id, attempt, host, "ml", "output", "data", name)
        with open(path) as f:
            return f.read().strip()

    def test_hosts_get_distinct_slots_and_give_them_back(self):
        env = self.fx.environment(2)
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="gpu", capacity=2)
        two = self.fx.submit(queue, "gpu", serviceRequestPayload=payload(SCRIPT, count=2))["jobId"]
        self.assertEqual(self.fx.wait_status(two, ("SUCCEEDED", "FAILED"))["status"], "SUCCEEDED")
        self.assertEqual(self.read(two, "algo-1", "gpus"), "0")
        self.assertEqual(self.read(two, "algo-2", "gpus"), "1")
        self.assertEqual(self.read(two, "algo-1", "cpus"), "0")
        self.assertEqual(self.read(two, "algo-2", "cpus"), "1")
        self.assertEqual(self.read(two, "algo-1", "counts"), "1 1")
        # The slots came back: the next one-host job gets slot 0 again.
        one = self.fx.submit(queue, "gpu", serviceRequestPayload=payload(SCRIPT))["jobId"]
        self.assertEqual(self.fx.wait_status(one, ("SUCCEEDED", "FAILED"))["status"], "SUCCEEDED")
        self.assertEqual(self.read(one, "algo-1", "gpus"), "0")

    def test_a_types_limits_hold_for_its_hosts_only(self):
        env = self.fx.environment(limits=[{"capacityUnit": INSTANCE, "maxCapacity": 2},
                                          {"capacityUnit": LIMITED, "maxCapacity": 2}])
        queue = self.fx.queue(env, self.fx.policy())
        self.fx.share(queue, name="lim", limits=[{"capacityUnit": INSTANCE, "maxCapacity": 2},
                                                 {"capacityUnit": LIMITED, "maxCapacity": 2}])
        cases = {  # name: (script, what a host of LIMITED is told)
            "disk": ("head -c 8M /dev/zero > /opt/ml/model/blob; sleep 30",
                     "exceeded its disk limit of 4 MiB"),
            "files": ("mkdir /opt/ml/model/m && cd /opt/ml/model/m && seq 400 | xargs touch; "
                      "sleep 30", "exceeded its limit of 200 files"),
        }
        for name, (script, reason) in cases.items():
            with self.subTest(name):
                limited = self.fx.submit(queue, "lim", serviceRequestPayload=payload(
                    script, instance_type=LIMITED))["jobId"]
                d = self.fx.wait_status(limited, ("SUCCEEDED", "FAILED"), timeout=60)
                self.assertEqual(d["status"], "FAILED")
                self.assertIn(reason, d["statusReason"])
                # The same job on a type without limits of its own gets the server's.
                other = self.fx.submit(queue, "lim", serviceRequestPayload=payload(
                    script.replace("sleep 30", "exit 0"), instance_type=INSTANCE))["jobId"]
                d = self.fx.wait_status(other, ("SUCCEEDED", "FAILED"), timeout=60)
                self.assertEqual(d["status"], "SUCCEEDED", d.get("statusReason"))


if __name__ == "__main__":
    unittest.main()
