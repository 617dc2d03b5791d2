"""Engine timers fire on a quiet server (issue 9, item 1).

The sequence users produce: a job runs to its end (it armed a long MaxRuntimeInSeconds timer and
left), then a job with a 2 s attempt timeout is submitted and nobody calls the server again. The
server's loop must wake for the new, earlier deadline by itself.
"""

import time
import unittest

from allot_harness import ServerTestCase, payload


class QuietServerTimers(ServerTestCase):
    server_args = ("--no-sandbox",)

    def test_attempt_timeout_fires_with_no_other_call(self):
        env = self.fx.environment(2)
        queue = self.fx.queue(env)
        first = self.fx.submit(queue, script="exit 0")["jobId"]
        self.fx.wait_status(first, "SUCCEEDED")
        time.sleep(1.5)  # the loop goes back to sleep on the finished job's long timer
        job = self.fx.submit(queue, script="sleep 60",
                             timeoutConfig={"attemptDurationSeconds": 2})["jobId"]
        # No call at all until well after the timeout plus the stop grace (2 s): 15 s, since a
        # stop on Slurm under the sanitizers took 8.4 s from the start (scancel, then the exit's
        # report). A timer that waited for a call would stop the job after this first call.
        time.sleep(15)
        d = self.fx.describe(job)
        self.assertEqual(d["status"], "FAILED", d.get("statusReason"))
        self.assertIn("timeout", d.get("statusReason", "").lower())
        started, stopped = d["attempts"][0]["startedAt"], d["attempts"][0]["stoppedAt"]
        self.assertLess(stopped - started, 14000, "the timeout fired only when a call came")

    def test_timeout_on_a_server_with_no_timer_armed(self):
        """The same on a server that has no timer armed at all before the submission."""
        env = self.fx.environment(1)
        queue = self.fx.queue(env)
        job = self.fx.submit(
            queue, script="sleep 60", timeoutConfig={"attemptDurationSeconds": 1},
            serviceRequestPayload=payload("sleep 60",
                                          StoppingCondition={"MaxRuntimeInSeconds": 86400}))["jobId"]
        time.sleep(13)  # the timeout, the grace and a slow stop, as above
        d = self.fx.describe(job)
        self.assertEqual(d["status"], "FAILED", d.get("statusReason"))


if __name__ == "__main__":
    unittest.main()
