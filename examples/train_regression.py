#!/usr/bin/env python3
"""A small, real, resumable training job for Allot: linear regression by mini-batch gradient
descent, in pure Python (standard library only).

The data (2,000 points, 8 features, Gaussian noise) come from a fixed seed, and the mini-batch of
step S is drawn from a generator seeded with S alone, so every step is a pure function of the
model and the step number: a run stopped and resumed from a checkpoint computes bit for bit the
model an uninterrupted run computes.

Settings (command-line flag, else hyperparameter, else default):
  --steps             steps             3000   total steps (1..steps)
  --learning-rate     learning_rate     0.05
  --batch-size        batch_size        32
  --checkpoint-every  checkpoint_every  100    a checkpoint every N steps
  --sleep-per-step    sleep_per_step    0      seconds to sleep per step (to make it preemptible)
  --seed              seed              7      the data's seed
Underscore spellings (--learning_rate) work too, as SageMaker passes hyperparameters that way.

Checkpoints: <checkpoint_dir>/checkpoint-<step>.json, written atomically (tmp file + os.replace),
the newest three kept: {"step", "weights", "bias", "batch_seed", "config", "executed_steps"},
where executed_steps lists the inclusive [first, last] step ranges each attempt ran whose results
the checkpoint holds. At start it resumes from the newest readable one ("resumed from step K").

On SIGTERM it finishes the current step, writes a checkpoint and exits 0 if the stop is a
preemption, 143 otherwise. At the end it writes <model_dir>/model.json and prints
"final loss <repr>". On an error it writes <output dir>/failure and exits 1.
"""

import argparse
import json
import os
import random
import re
import sys
import time
import traceback
from pathlib import Path

try:
    import allot
except ImportError:  # run from a checkout: use its python/allot
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    import allot

NUM_POINTS = 2000
NUM_FEATURES = 8
NOISE = 0.1
KEEP_CHECKPOINTS = 3
CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)\.json$")


def parse_settings(argv):
    hps = allot.hyperparameters()

    def hp(name, default):
        return hps.get(name, default)

    parser = argparse.ArgumentParser(description="Resumable linear-regression training.")
    parser.add_argument("--steps", type=int, default=int(hp("steps", 3000)))
    parser.add_argument("--learning-rate", "--learning_rate", dest="learning_rate", type=float,
                        default=float(hp("learning_rate", 0.05)))
    parser.add_argument("--batch-size", "--batch_size", dest="batch_size", type=int,
                        default=int(hp("batch_size", 32)))
    parser.add_argument("--checkpoint-every", "--checkpoint_every", dest="checkpoint_every",
                        type=int, default=int(hp("checkpoint_every", 100)))
    parser.add_argument("--sleep-per-step", "--sleep_per_step", dest="sleep_per_step",
                        type=float, default=float(hp("sleep_per_step", 0)))
    parser.add_argument("--seed", type=int, default=int(hp("seed", 7)))
    args, _unknown = parser.parse_known_args(argv)  # ignore hyperparameters we do not use
    if args.steps < 0 or args.batch_size < 1 or args.checkpoint_every < 1:
        parser.error("steps must be >= 0, batch_size and checkpoint_every >= 1")
    return args


def make_data(seed):
    """Points x (lists of NUM_FEATURES floats) and targets y = w.x + b + noise."""
    rng = random.Random(seed)
    true_w = [rng.uniform(-2.0, 2.0) for _ in range(NUM_FEATURES)]
    true_b = rng.uniform(-1.0, 1.0)
    xs, ys = [], []
    for _ in range(NUM_POINTS):
        x = [rng.gauss(0.0, 1.0) for _ in range(NUM_FEATURES)]
        xs.append(x)
        ys.append(sum(wi * xi for wi, xi in zip(true_w, x)) + true_b + rng.gauss(0.0, NOISE))
    return xs, ys


def batch_seed(seed, step):
    """The seed of step `step`'s mini-batch: a function of the step number only."""
    return seed * 1_000_003 + step


def mse(weights, bias, xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        err = sum(wi * xi for wi, xi in zip(weights, x)) + bias - y
        total += err * err
    return total / len(xs)


def train_step(weights, bias, xs, ys, step, args):
    """One gradient step on step `step`'s mini-batch; returns the new (weights, bias)."""
    rng = random.Random(batch_seed(args.seed, step))
    batch = [rng.randrange(len(xs)) for _ in range(args.batch_size)]
    grad_w = [0.0] * len(weights)
    grad_b = 0.0
    for i in batch:
        x = xs[i]
        err = sum(wi * xi for wi, xi in zip(weights, x)) + bias - ys[i]
        for j, xj in enumerate(x):
            grad_w[j] += err * xj
        grad_b += err
    scale = 2.0 * args.learning_rate / len(batch)
    return [wi - scale * gi for wi, gi in zip(weights, grad_w)], bias - scale * grad_b


def write_json_atomically(path, obj):
    tmp = path.with_name("." + path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def checkpoint_files(directory):
    """(step, path) of every checkpoint in `directory`, newest first."""
    found = []
    for path in directory.iterdir():
        m = CHECKPOINT_RE.match(path.name)
        if m:
            found.append((int(m.group(1)), path))
    return sorted(found, reverse=True)


def load_newest_checkpoint(directory):
    for step, path in checkpoint_files(directory):
        try:
            with open(path, encoding="utf-8") as f:
                state = json.load(f)
            if state["step"] == step and len(state["weights"]) == NUM_FEATURES:
                return state
        except (OSError, ValueError, KeyError, TypeError):
            pass
        print(f"skipping unreadable checkpoint {path.name}", flush=True)
    return None


def save_checkpoint(directory, state):
    write_json_atomically(directory / f"checkpoint-{state['step']:08d}.json", state)
    for _step, old in checkpoint_files(directory)[KEEP_CHECKPOINTS:]:
        try:
            old.unlink()
        except OSError:
            pass


def train(args):
    ckpt_dir = allot.checkpoint_dir()
    config = {"seed": args.seed, "points": NUM_POINTS, "features": NUM_FEATURES,
              "learning_rate": args.learning_rate, "batch_size": args.batch_size}
    allot.on_stop(lambda reason: print(f"stop requested ({reason}); checkpointing", flush=True))

    xs, ys = make_data(args.seed)
    state = load_newest_checkpoint(ckpt_dir)
    if state is None:
        start, weights, bias, executed = 0, [0.0] * NUM_FEATURES, 0.0, []
        print("starting from step 0", flush=True)
    else:
        start, weights, bias = state["step"], state["weights"], state["bias"]
        executed = state.get("executed_steps", [])
        if state.get("config") != config:
            print(f"warning: checkpoint config {state.get('config')} differs from {config}",
                  flush=True)
        print(f"resumed from step {start}", flush=True)

    step = start

    def checkpoint():
        ranges = executed + ([[start + 1, step]] if step > start else [])
        save_checkpoint(ckpt_dir, {"step": step, "weights": weights, "bias": bias,
                                   "batch_seed": batch_seed(args.seed, step + 1),
                                   "config": config, "executed_steps": ranges})

    saved_at = start if state is not None else None
    while step < args.steps and not allot.stop_requested():
        weights, bias = train_step(weights, bias, xs, ys, step + 1, args)
        step += 1
        if args.sleep_per_step > 0:
            time.sleep(args.sleep_per_step)
        if step % 100 == 0:
            print(f"step {step} loss {mse(weights, bias, xs, ys)!r}", flush=True)
        if step % args.checkpoint_every == 0 or step == args.steps:
            checkpoint()
            saved_at = step

    if allot.stop_requested():
        if saved_at != step:
            checkpoint()
        preempted = allot.is_preemption()
        print(f"stopped at step {step} ({allot.stop_reason()}); checkpoint written", flush=True)
        return 0 if preempted else 143

    final_loss = mse(weights, bias, xs, ys)
    write_json_atomically(allot.model_dir() / "model.json",
                          {"steps": step, "weights": weights, "bias": bias,
                           "final_loss": final_loss})
    print(f"final loss {final_loss!r}", flush=True)
    return 0


def main(argv):
    try:
        return train(parse_settings(argv))
    except Exception as e:  # noqa: BLE001 - report any failure the SageMaker way
        traceback.print_exc()
        allot.write_failure(f"train_regression.py: {type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
