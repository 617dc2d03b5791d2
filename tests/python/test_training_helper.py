"""Tests of python/allot (the training-job helper) and examples/train_regression.py.

Run from tests/python:  python3 -m unittest -v test_training_helper
Standard library only; no Allot server. Each test builds a fake SageMaker layout in a temporary
directory and points the SM_* variables at it.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"
EXAMPLE = REPO / "examples" / "train_regression.py"
sys.path.insert(0, str(PYTHON_DIR))

import allot  # noqa: E402
from allot import training  # noqa: E402

STEPS = 600
CHECKPOINT_EVERY = 50
HPS = {"steps": str(STEPS), "learning_rate": "0.05", "checkpoint_every": str(CHECKPOINT_EVERY)}


def base_env():
    """os.environ without any SM_* or ALLOT_* variable."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("SM_") and not k.startswith("ALLOT_")}


def make_attempt(root, name, checkpoint, hps=None, hps_via="env", extra=None):
    """Creates one attempt's layout under root/name (like an Allot host's /opt/ml) and returns
    (env, paths): env is base_env() plus the SM_* variables pointing there."""
    ml = Path(root) / name
    config = ml / "input" / "config"
    paths = {"ml": ml, "config": config, "model": ml / "model", "output": ml / "output",
             "data": ml / "output" / "data", "checkpoint": Path(checkpoint)}
    for key in ("config", "model", "output", "data"):
        paths[key].mkdir(parents=True, exist_ok=True)
    hps = dict(hps or {})
    (config / "hyperparameters.json").write_text(json.dumps(hps))
    (config / "resourceconfig.json").write_text(
        json.dumps({"current_host": "algo-1", "hosts": ["algo-1"]}))
    (config / "inputdataconfig.json").write_text("{}")
    (config / "checkpointconfig.json").write_text(json.dumps({"LocalPath": str(checkpoint)}))
    env = base_env()
    env.update({
        "SM_MODEL_DIR": str(paths["model"]),
        "SM_OUTPUT_DIR": str(paths["output"]),
        "SM_OUTPUT_DATA_DIR": str(paths["data"]),
        "SM_INPUT_CONFIG_DIR": str(config),
        "SM_HOSTS": json.dumps(["algo-1"]),
        "SM_CURRENT_HOST": "algo-1",
        "SM_CHANNELS": "[]",
        "SM_NUM_GPUS": "0",
        "SM_NUM_CPUS": "1",
        "ALLOT_CHECKPOINT_DIR": str(checkpoint),
    })
    if hps_via == "env":
        env["SM_HPS"] = json.dumps(hps)
    env.update(extra or {})
    return env, paths


def checkpoints(directory):
    """{step: parsed checkpoint} of every checkpoint-*.json in directory."""
    found = {}
    for path in Path(directory).glob("checkpoint-*.json"):
        state = json.loads(path.read_text())
        found[state["step"]] = state
    return found


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class HelperTest(unittest.TestCase):
    """The path and configuration helpers, in this process."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.root = Path(self.tmp.name)
        self.ckpt = self.root / "job" / "checkpoints"
        self.env, self.paths = make_attempt(self.root, "ml", self.ckpt,
                                            hps={"steps": "10", "lr": 0.5})
        patcher = mock.patch.dict(os.environ, self.env, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)
        # Fallbacks to /opt/ml land in the temp dir instead.
        self.opt_ml = self.root / "opt_ml"
        patcher = mock.patch.object(training, "ML_ROOT", self.opt_ml)
        patcher.start()
        self.addCleanup(patcher.stop)

    def unset(self, *names):
        for name in names:
            os.environ.pop(name, None)

    def test_dirs_from_variables(self):
        self.assertEqual(allot.model_dir(), self.paths["model"])
        self.assertEqual(allot.output_dir(), self.paths["output"])
        self.assertEqual(allot.output_data_dir(), self.paths["data"])
        self.assertEqual(allot.input_config_dir(), self.paths["config"])
        os.environ["SM_CHANNEL_TRAIN"] = str(self.root / "train")
        self.assertEqual(allot.channel_dir("train"), self.root / "train")

    def test_dirs_fall_back_to_opt_ml(self):
        self.unset("SM_MODEL_DIR", "SM_OUTPUT_DIR", "SM_OUTPUT_DATA_DIR", "SM_INPUT_CONFIG_DIR")
        self.assertEqual(allot.model_dir(), self.opt_ml / "model")
        self.assertTrue((self.opt_ml / "model").is_dir())  # created
        self.assertEqual(allot.output_dir(), self.opt_ml / "output")
        self.assertEqual(allot.output_data_dir(), self.opt_ml / "output" / "data")
        self.assertEqual(allot.input_config_dir(), self.opt_ml / "input" / "config")
        self.assertEqual(allot.channel_dir("train"), self.opt_ml / "input" / "data" / "train")

    def test_checkpoint_dir_order(self):
        self.assertFalse(self.ckpt.exists())
        path = allot.checkpoint_dir()
        self.assertIsInstance(path, Path)
        self.assertEqual(path, self.ckpt)
        self.assertTrue(path.is_dir())
        # Without ALLOT_CHECKPOINT_DIR: checkpointconfig.json's LocalPath.
        other = self.root / "from-config"
        (self.paths["config"] / "checkpointconfig.json").write_text(
            json.dumps({"LocalPath": str(other)}))
        self.unset("ALLOT_CHECKPOINT_DIR")
        self.assertEqual(allot.checkpoint_dir(), other)
        self.assertTrue(other.is_dir())
        # Without either: /opt/ml/checkpoints.
        (self.paths["config"] / "checkpointconfig.json").unlink()
        self.assertEqual(allot.checkpoint_dir(), self.opt_ml / "checkpoints")
        self.assertTrue((self.opt_ml / "checkpoints").is_dir())

    def test_hyperparameters(self):
        self.assertEqual(allot.hyperparameters(), {"steps": "10", "lr": 0.5})  # as given
        os.environ["SM_HPS"] = json.dumps({"steps": 3})
        self.assertEqual(allot.hyperparameters(), {"steps": 3})
        self.unset("SM_HPS")  # hyperparameters.json
        (self.paths["config"] / "hyperparameters.json").write_text(json.dumps({"a": "1"}))
        self.assertEqual(allot.hyperparameters(), {"a": "1"})
        (self.paths["config"] / "hyperparameters.json").unlink()
        self.assertEqual(allot.hyperparameters(), {})

    def test_hosts_and_current_host(self):
        os.environ["SM_HOSTS"] = json.dumps(["algo-1", "algo-2"])
        os.environ["SM_CURRENT_HOST"] = "algo-2"
        self.assertEqual(allot.hosts(), ["algo-1", "algo-2"])
        self.assertEqual(allot.current_host(), "algo-2")
        self.unset("SM_HOSTS", "SM_CURRENT_HOST")  # resourceconfig.json
        (self.paths["config"] / "resourceconfig.json").write_text(json.dumps(
            {"current_host": "algo-3", "hosts": ["algo-1", "algo-2", "algo-3"]}))
        self.assertEqual(allot.hosts(), ["algo-1", "algo-2", "algo-3"])
        self.assertEqual(allot.current_host(), "algo-3")
        (self.paths["config"] / "resourceconfig.json").unlink()
        self.assertEqual(allot.hosts(), ["algo-1"])
        self.assertEqual(allot.current_host(), "algo-1")

    def test_write_failure(self):
        path = allot.write_failure("loss became NaN at step 7")
        self.assertEqual(path, self.paths["output"] / "failure")
        self.assertEqual(path.read_text(), "loss became NaN at step 7")

    def test_is_preemption_reads_stop_reason_before_sigterm(self):
        self.assertFalse(allot.is_preemption())
        (self.paths["output"] / "stop-reason").write_text("preemption\n")
        self.assertTrue(allot.is_preemption())
        (self.paths["output"] / "stop-reason").write_text("timeout")
        self.assertFalse(allot.is_preemption())


STOP_SCRIPT = textwrap.dedent("""
    import json, os, signal, sys
    sys.path.insert(0, sys.argv[1])
    import allot
    calls = []
    mode = sys.argv[2]
    if mode == "lazy":
        before = allot.stop_requested()
    else:
        before = allot.on_stop(calls.append) is not None and allot.stop_requested()
    os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGTERM)  # a second one runs no callback again
    late = []
    allot.on_stop(late.append)  # registered after the stop: called at once
    print(json.dumps({"before": before, "stopped": allot.stop_requested(),
                      "reason": allot.stop_reason(), "preemption": allot.is_preemption(),
                      "calls": calls, "late": late}))
""")


class StopTest(unittest.TestCase):
    """SIGTERM handling, each case in its own Python process."""

    def run_stop(self, reason_text, mode="callback"):
        with tempfile.TemporaryDirectory() as tmp:
            env, paths = make_attempt(tmp, "ml", Path(tmp) / "ckpt")
            if reason_text is not None:
                (paths["output"] / "stop-reason").write_text(reason_text)
            proc = subprocess.run([sys.executable, "-c", STOP_SCRIPT, str(PYTHON_DIR), mode],
                                  env=env, capture_output=True, text=True, timeout=20)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def test_preemption(self):
        got = self.run_stop("preemption\n")
        self.assertEqual(got, {"before": False, "stopped": True, "reason": "preemption",
                               "preemption": True, "calls": ["preemption"],
                               "late": ["preemption"]})

    def test_default_reason_is_termination(self):
        got = self.run_stop(None)
        self.assertEqual(got["reason"], "termination")
        self.assertEqual(got["calls"], ["termination"])
        self.assertFalse(got["preemption"])

    def test_timeout(self):
        got = self.run_stop("timeout")
        self.assertEqual((got["reason"], got["preemption"]), ("timeout", False))

    def test_stop_requested_installs_the_handler(self):
        got = self.run_stop("preemption", mode="lazy")
        self.assertEqual((got["before"], got["stopped"], got["calls"]), (False, True, []))


class TrainRegressionTest(unittest.TestCase):
    """examples/train_regression.py: run to completion, preempt and resume, terminate."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = Path(cls.tmp.name)
        # The reference: one uninterrupted run (hyperparameters through SM_HPS).
        ckpt = cls.root / "reference" / "checkpoints"
        env, paths = make_attempt(cls.root / "reference", "attempt-1", ckpt, hps=HPS)
        cls.reference = subprocess.run([sys.executable, str(EXAMPLE)], env=env,
                                       capture_output=True, text=True, timeout=60)
        cls.reference_ckpt = ckpt
        cls.reference_model = (paths["model"] / "model.json").read_bytes() \
            if (paths["model"] / "model.json").exists() else None

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def start(self, job, attempt, sleep_per_step=0.0, hps_via="env"):
        """Starts one attempt of job `job` (its checkpoint dir shared by all its attempts)."""
        ckpt = self.root / job / "checkpoints"
        hps = dict(HPS, sleep_per_step=str(sleep_per_step))
        env, paths = make_attempt(self.root / job, f"attempt-{attempt}", ckpt, hps=hps,
                                  hps_via=hps_via)
        proc = subprocess.Popen([sys.executable, str(EXAMPLE)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc, paths

    def stop_mid_run(self, proc, paths, reason):
        """Waits for the first checkpoint, writes the stop reason, sends SIGTERM; returns
        (returncode, stdout, seconds from SIGTERM to exit)."""
        wait_for(lambda: checkpoints(paths["checkpoint"]) or proc.poll() is not None, 20,
                 "the first checkpoint")
        self.assertIsNone(proc.poll(), "the run ended before it could be stopped")
        if reason is not None:
            (paths["output"] / "stop-reason").write_text(reason + "\n")
        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=20)
        return proc.returncode, out, err, time.monotonic() - sent

    def test_uninterrupted_run(self):
        self.assertEqual(self.reference.returncode, 0, self.reference.stderr)
        self.assertIn("starting from step 0", self.reference.stdout)
        self.assertRegex(self.reference.stdout, r"step 100 loss \d")
        final = [l for l in self.reference.stdout.splitlines() if l.startswith("final loss ")]
        self.assertEqual(len(final), 1)
        model = json.loads(self.reference_model)
        self.assertEqual(model["steps"], STEPS)
        self.assertEqual(repr(model["final_loss"]), final[0].split()[-1])
        self.assertLess(model["final_loss"], 0.05)  # it learned: the noise variance is 0.01
        newest = checkpoints(self.reference_ckpt)[STEPS]
        self.assertEqual(newest["executed_steps"], [[1, STEPS]])
        self.assertEqual(newest["weights"], model["weights"])

    def test_preempt_and_resume_gives_the_same_model(self):
        self.assertIsNotNone(self.reference_model, self.reference.stderr)
        # Attempt 1: hyperparameters from hyperparameters.json (strings), slow enough to stop.
        proc, paths = self.start("preempted", 1, sleep_per_step=0.005, hps_via="file")
        rc, out, err, took = self.stop_mid_run(proc, paths, "preemption")
        self.assertEqual(rc, 0, err)
        self.assertLess(took, 3.0)
        self.assertIn("stop requested (preemption)", out)
        saved = checkpoints(paths["checkpoint"])
        k = max(saved)
        self.assertTrue(0 < k < STEPS, k)
        self.assertEqual(saved[k]["executed_steps"], [[1, k]])
        self.assertFalse((paths["model"] / "model.json").exists())

        # Attempt 2 on the same checkpoint directory, run to the end.
        proc, paths = self.start("preempted", 2)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn(f"resumed from step {k}\n", out)
        logged = [int(l.split()[1]) for l in out.splitlines() if l.startswith("step ")]
        self.assertTrue(logged and all(s > k for s in logged), logged)
        final = checkpoints(paths["checkpoint"])[STEPS]
        self.assertEqual(final["executed_steps"], [[1, k], [k + 1, STEPS]])  # nothing redone
        self.assertEqual((paths["model"] / "model.json").read_bytes(), self.reference_model)
        self.assertEqual(out.splitlines()[-1],
                         [l for l in self.reference.stdout.splitlines()][-1])  # final loss

    def test_sigterm_without_preemption_exits_143(self):
        for reason in (None, "termination", "timeout"):
            with self.subTest(reason=reason):
                proc, paths = self.start(f"terminated-{reason}", 1, sleep_per_step=0.005)
                rc, out, err, took = self.stop_mid_run(proc, paths, reason)
                self.assertEqual(rc, 143, err)
                self.assertLess(took, 3.0)
                self.assertIn(f"stop requested ({reason or 'termination'})", out)
                saved = checkpoints(paths["checkpoint"])
                k = max(saved)
                self.assertEqual(saved[k]["executed_steps"], [[1, k]])

    def test_bad_hyperparameter_writes_failure(self):
        env, paths = make_attempt(self.root / "bad", "attempt-1", self.root / "bad" / "ckpt",
                                  hps={"steps": "many"})
        proc = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True,
                              text=True, timeout=20)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("ValueError", (paths["output"] / "failure").read_text())


if __name__ == "__main__":
    unittest.main()
