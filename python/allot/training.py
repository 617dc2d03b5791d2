"""The training-job layout and stop handling behind the `allot` package (see its docstring).

Paths: each helper reads its SM_* variable (or ALLOT_CHECKPOINT_DIR), then the JSON files under
the input config directory, then falls back to the fixed /opt/ml path. Allot sets the variables
for every host, with or without a sandbox, so code that uses these helpers runs in both.

Stops: before the supervisor sends SIGTERM to a host it writes the reason ("preemption",
"termination" or "timeout") to <output dir>/stop-reason. The first call to `stop_requested()` or
`on_stop()` installs a SIGTERM handler (which replaces the default action of dying at once) that
records the reason and runs the callbacks.
"""

import json
import os
import signal
import threading
from pathlib import Path

ML_ROOT = Path("/opt/ml")
STOP_REASON_FILE = "stop-reason"
FAILURE_FILE = "failure"
DEFAULT_STOP_REASON = "termination"
DEFAULT_HOST = "algo-1"


# --- paths and configuration -------------------------------------------------------------------


def _env_path(name, fallback):
    value = os.environ.get(name, "")
    return Path(value) if value else Path(fallback)


def _read_config(name):
    """The parsed <input config dir>/<name>, or None when it is missing or not valid JSON."""
    try:
        with open(input_config_dir() / name, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def input_config_dir():
    """The directory holding hyperparameters.json, resourceconfig.json, inputdataconfig.json and
    checkpointconfig.json: $SM_INPUT_CONFIG_DIR, else /opt/ml/input/config (a pathlib.Path; not
    created)."""
    return _env_path("SM_INPUT_CONFIG_DIR", ML_ROOT / "input" / "config")


def model_dir():
    """Where to write the final model, which Allot keeps after the job: $SM_MODEL_DIR, else
    /opt/ml/model (a pathlib.Path, created if missing)."""
    path = _env_path("SM_MODEL_DIR", ML_ROOT / "model")
    path.mkdir(parents=True, exist_ok=True)
    return path


def output_dir():
    """The attempt's output directory (stop-reason, failure): $SM_OUTPUT_DIR, else /opt/ml/output
    (a pathlib.Path; not created)."""
    return _env_path("SM_OUTPUT_DIR", ML_ROOT / "output")


def output_data_dir():
    """Where to write other output files: $SM_OUTPUT_DATA_DIR, else /opt/ml/output/data (a
    pathlib.Path, created if missing)."""
    path = _env_path("SM_OUTPUT_DATA_DIR", ML_ROOT / "output" / "data")
    path.mkdir(parents=True, exist_ok=True)
    return path


def checkpoint_dir():
    """The job's checkpoint directory, which persists across the attempts of one job:
    $ALLOT_CHECKPOINT_DIR, else LocalPath from checkpointconfig.json, else /opt/ml/checkpoints
    (a pathlib.Path, created if missing)."""
    value = os.environ.get("ALLOT_CHECKPOINT_DIR", "")
    if not value:
        config = _read_config("checkpointconfig.json")
        if isinstance(config, dict) and isinstance(config.get("LocalPath"), str):
            value = config["LocalPath"]
    path = Path(value) if value else ML_ROOT / "checkpoints"
    path.mkdir(parents=True, exist_ok=True)
    return path


def channel_dir(name):
    """The directory of input channel `name`: $SM_CHANNEL_<NAME>, else /opt/ml/input/data/<name>
    (a pathlib.Path; not created)."""
    return _env_path("SM_CHANNEL_" + name.upper(), ML_ROOT / "input" / "data" / name)


def hyperparameters():
    """The job's hyperparameters as a dict: $SM_HPS (JSON) if set, else hyperparameters.json, else
    {}. Values are as given (Allot passes them as strings, like SageMaker), so convert them:
    int(hyperparameters().get("steps", 3000))."""
    value = os.environ.get("SM_HPS", "")
    if value:
        parsed = json.loads(value)
    else:
        parsed = _read_config("hyperparameters.json")
    return dict(parsed) if isinstance(parsed, dict) else {}


def hosts():
    """The names of every host of the job, e.g. ["algo-1", "algo-2"]: $SM_HOSTS (a JSON list),
    else "hosts" from resourceconfig.json, else [current_host()]."""
    value = os.environ.get("SM_HOSTS", "")
    if value:
        parsed = json.loads(value)
        if isinstance(parsed, list):
            return [str(h) for h in parsed]
    config = _read_config("resourceconfig.json")
    if isinstance(config, dict) and isinstance(config.get("hosts"), list):
        return [str(h) for h in config["hosts"]]
    return [current_host()]


def current_host():
    """This host's name, e.g. "algo-1": $SM_CURRENT_HOST, else "current_host" from
    resourceconfig.json, else "algo-1"."""
    value = os.environ.get("SM_CURRENT_HOST", "")
    if value:
        return value
    config = _read_config("resourceconfig.json")
    if isinstance(config, dict) and isinstance(config.get("current_host"), str):
        return config["current_host"]
    return DEFAULT_HOST


def write_failure(message):
    """Writes `message` to <output dir>/failure, SageMaker's convention for why a job failed
    (Allot shows it as the job's status reason); returns that pathlib.Path. Call it before
    exiting non-zero."""
    directory = output_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FAILURE_FILE
    path.write_text(str(message), encoding="utf-8")
    return path


# --- stop handling -----------------------------------------------------------------------------

_stopped = threading.Event()
_reason = None           # the stop reason recorded when SIGTERM arrived
_callbacks = []
_installed = False
_install_lock = threading.Lock()


def _read_stop_reason():
    """The word in <output dir>/stop-reason, or None when there is none."""
    try:
        word = (output_dir() / STOP_REASON_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return word or None


def _handle_sigterm(signum, frame):
    global _reason
    if _stopped.is_set():
        return  # a second SIGTERM: already stopping
    _reason = _read_stop_reason() or DEFAULT_STOP_REASON
    _stopped.set()
    for callback in list(_callbacks):
        callback(_reason)


def _install():
    global _installed
    with _install_lock:
        if _installed:
            return
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError(
                "allot: the first call to stop_requested() or on_stop() must come from the main "
                "thread (only it can install a signal handler)")
        signal.signal(signal.SIGTERM, _handle_sigterm)
        _installed = True


def stop_requested():
    """True once SIGTERM has arrived. The first call installs the SIGTERM handler (from then on
    SIGTERM no longer kills the process: the code must check this and exit)."""
    _install()
    return _stopped.is_set()


def on_stop(callback):
    """Registers callback(reason), called once when SIGTERM arrives (in the main thread, from the
    signal handler, in registration order) with the word from <output dir>/stop-reason, or
    "termination" when there is none. Called at once if SIGTERM already arrived. Installs the
    SIGTERM handler. Returns `callback`, so it also works as a decorator."""
    _install()
    _callbacks.append(callback)
    if _stopped.is_set():
        callback(_reason)
    return callback


def stop_reason():
    """The stop reason recorded when SIGTERM arrived ("preemption", "termination", "timeout"), or
    None if no SIGTERM has arrived (or the handler is not installed)."""
    return _reason if _stopped.is_set() else None


def is_preemption():
    """True if the stop is a preemption: the reason recorded at SIGTERM is "preemption", or, before
    any SIGTERM, <output dir>/stop-reason already says "preemption". A preempted attempt should
    checkpoint and exit 0 quickly; Allot runs the job again later from its checkpoints."""
    if _stopped.is_set():
        return _reason == "preemption"
    return _read_stop_reason() == "preemption"
