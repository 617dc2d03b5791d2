"""Helpers for training code that runs as an Allot (SageMaker-style) training job.

Standard library only; nothing here talks to an Allot server. Every path comes from the SM_*
variables Allot sets for each host, falling back to the SageMaker container layout under /opt/ml
(which is what the variables point at inside the sandbox):

    from allot import checkpoint_dir, hyperparameters, on_stop, stop_requested, is_preemption

    hps = hyperparameters()
    on_stop(lambda reason: print("stopping:", reason))
    for step in range(start, steps):
        ...
        if stop_requested():
            save_checkpoint(checkpoint_dir())
            sys.exit(0 if is_preemption() else 143)
"""

from .training import (
    channel_dir,
    checkpoint_dir,
    current_host,
    hosts,
    hyperparameters,
    input_config_dir,
    is_preemption,
    model_dir,
    on_stop,
    output_data_dir,
    output_dir,
    stop_reason,
    stop_requested,
    write_failure,
)

__all__ = [
    "channel_dir",
    "checkpoint_dir",
    "current_host",
    "hosts",
    "hyperparameters",
    "input_config_dir",
    "is_preemption",
    "model_dir",
    "on_stop",
    "output_data_dir",
    "output_dir",
    "stop_reason",
    "stop_requested",
    "write_failure",
]
