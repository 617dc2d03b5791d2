"""The host map: `allot server --host-map FILE` gives each instance slot its own GPUs
(CUDA_VISIBLE_DEVICES) and CPU set; a job's hosts take distinct free slots and give them back."""

import os
import tempfile
import unittest

from allot_harness import INSTANCE, ServerTestCase, payload

HOST_MAP = f"""{INSTANCE}:
  - gpus: "0"
    cpus: "0"
  - gpus: "1"
    cpus: "1"
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
    server_args = ("--host-map", _map_file.name)

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


if __name__ == "__main__":
    unittest.main()
