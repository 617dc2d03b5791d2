#!/usr/bin/env bash
# `make run-slurm` (after the build): `make run` on Slurm. Brings the Slurm test cluster up
# (scripts/slurm-cluster.sh: slurmctld and 4 slurmd on loopback), writes a Slurm map for the
# example instance types, starts `allot server --executor slurm` in the background on
# 127.0.0.1:8743 (beside `make run`'s 8742), applies examples/cluster.yaml, and says how to submit
# a job, watch it in Allot and in Slurm, and stop. A server that already answers on 8743 is
# reused. Its files are under build/run-slurm/ (data/, shared/ = the jobs' directories every node
# sees, slurm-map.yaml, server.log, server.pid).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin="$root/build/dev/bin/allot"
run=build/run-slurm
data=$run/data
shared=$run/shared
map=$run/slurm-map.yaml
port=${ALLOT_SLURM_PORT:-8743}
endpoint=http://127.0.0.1:$port

healthy() { curl -fsS -m 2 "$endpoint/healthz" >/dev/null 2>&1; }

if [ ! -x "$bin" ]; then
  echo "run-slurm.sh: $bin is missing; build first (make build)" >&2
  exit 1
fi

echo "Slurm test cluster (scripts/slurm-cluster.sh up):"
if ! scripts/slurm-cluster.sh up 2>&1 | sed 's/^/  /'; then
  echo "run-slurm.sh: the Slurm test cluster did not start (it runs its daemons as root)" >&2
  exit 1
fi
eval "$(scripts/slurm-cluster.sh env)"

if healthy; then
  echo "A server already answers on $endpoint; reusing it."
  started=""
else
  mkdir -p "$data" "$shared"
  chmod 755 "$run" "$shared"
  # One instance is one node's share: 1 CPU and 1 GiB (and a fake GPU where the nodes have them),
  # so that many fit on the 4 nodes of 16 CPUs and 8 GPUs.
  gpus=$(sinfo -h -o '%G' | sed -n 's/.*gpu:\([0-9]*\).*/\1/p' | head -n 1)
  gpu() { if [ "${gpus:-0}" -ge "$1" ]; then echo ", gres: \"gpu:$1\""; fi; }
  cat >"$map" <<YAML
# Written by scripts/run-slurm.sh: where each instance type runs on the Slurm test cluster.
ml.g5.xlarge: {partition: allot, cpus: 1, memory: 1G$(gpu 1)}
ml.g5.2xlarge: {partition: allot, cpus: 1, memory: 1G$(gpu 1)}
ml.p4d.24xlarge: {partition: allot, cpus: 1, memory: 1G$(gpu 8)}
ml.m5.large: {partition: allot, cpus: 1, memory: 1G}
YAML
  # Sandboxed jobs see only system directories: the examples' training script and the Python
  # training helper are shown to them read-only (docs/security.md).
  nohup "$bin" server --data-dir "$data" --listen "127.0.0.1:$port" \
    --executor slurm --slurm-map "$map" --slurm-conf "$SLURM_CONF" --shared-dir "$root/$shared" \
    --job-readonly-path "$root/examples" --job-readonly-path "$root/python" \
    >"$run/server.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$run/server.pid"
  started=yes
  for _ in $(seq 1 150); do
    healthy && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "run-slurm.sh: allot server exited; its log ($run/server.log):" >&2
      tail -n 20 "$run/server.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if ! healthy; then
    echo "run-slurm.sh: allot server (pid $pid) did not answer $endpoint/healthz within 15 s" >&2
    tail -n 20 "$run/server.log" >&2
    exit 1
  fi
  echo "Started allot server on Slurm (pid $pid, log $run/server.log, data in $data, jobs' files in $shared)."
fi

creds="$root/$data/credentials"
if [ ! -f "$creds" ]; then
  echo "run-slurm.sh: $creds does not exist: the server on $endpoint was not started from $root;" >&2
  echo "        point AWS_SHARED_CREDENTIALS_FILE at the credentials file in its data directory." >&2
  exit 1
fi
export AWS_SHARED_CREDENTIALS_FILE="$creds"
export AWS_ENDPOINT_URL_BATCH="$endpoint"
export AWS_DEFAULT_REGION=local

echo
echo "Applying examples/cluster.yaml:"
"$bin" apply -f examples/cluster.yaml | sed 's/^/  /'

if [ -n "$started" ] || { [ -f "$run/server.pid" ] && kill -0 "$(cat "$run/server.pid")" 2>/dev/null; }; then
  stop="kill \$(cat $run/server.pid)"
else
  stop="kill <pid of the allot server that was already running>"
fi

cat <<TEXT

Allot is running on $endpoint; its jobs run on the Slurm test cluster. In your shell:

  export AWS_SHARED_CREDENTIALS_FILE=$creds
  export AWS_ENDPOINT_URL_BATCH=$endpoint
  export AWS_DEFAULT_REGION=local
  export SLURM_CONF=$SLURM_CONF
  export PATH=$root/build/dev/bin:\$PATH

Submit a job to team-a's share of the queue "training" and watch it, in Allot and in Slurm:

  JOB=\$(allot submit --queue training --share team-a --name hello -- /bin/sh -c 'echo hi from \$SM_CURRENT_HOST; sleep 20')
  allot jobs                      # every job, newest first
  allot describe \$JOB             # attempts, preemptions, why it waits
  allot shares training           # per share: limit, used, borrowed, lent, waiting
  squeue                          # one Slurm job per attempt, --comment = the Allot job id
  sinfo -N                        # the nodes n1..n4
  allot cancel \$JOB               # terminate it (SIGTERM through Slurm, then the kill)

The AWS CLI and boto3 work as with "make run" (scripts/run.sh prints examples). A job's files
(stdout, stderr, /opt/ml) are under $shared/jobs/<job id>/attempt-<N>/algo-<K>/.

Stop the server:   $stop
Stop the cluster:  scripts/slurm-cluster.sh down     (--purge also deletes its state)
TEXT

# The preemption story, once (ALLOT_DEMO=0 skips it): as in `make run`, on Slurm.
if [ "${ALLOT_DEMO:-1}" != 0 ]; then
  echo
  echo "Demo (about 30 s; ALLOT_DEMO=0 make run-slurm skips it):"
  AWS_SHARED_CREDENTIALS_FILE="$creds" AWS_ENDPOINT_URL_BATCH="$endpoint" \
    AWS_DEFAULT_REGION=local scripts/demo-preemption.sh
fi
