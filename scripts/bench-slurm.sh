#!/usr/bin/env bash
# Allot on Slurm, measured side by side in one run (issue 11): reclaim latency through Allot and
# through Slurm's own preemption, dispatch overhead, throughput with 1,000 waiting jobs beside
# plain sbatch. Drives a release `allot server --executor slurm` with boto3 through the
# integration harness (bench/slurm/bench_slurm.py says what each part does) and prints a table.
#
#   scripts/bench-slurm.sh [BUILD_DIR] [bench_slurm.py options]   # BUILD_DIR: build/release
#
# The bench brings up a Slurm cluster of its own (scripts/slurm-cluster.sh with
# ALLOT_SLURM_DIR=/tmp/allot-slurm-bench and ports 18817, 18901-18904, 62001-62999), so that it
# neither disturbs nor is disturbed by tests on the default cluster, and takes it down at the
# end (--keep-cluster leaves it up, in default mode). As root (the cluster's daemons run as
# root); installs the Slurm packages where they are missing. 6-8 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# A BUILD_DIR given wins over $ALLOT_BIN; without either, build/release.
if [[ $# -gt 0 && $1 != -* ]]; then
  build=$1
  shift
  [[ $build == /* ]] || build=$(cd "$build" 2>/dev/null && pwd || echo "$root/$build")
  ALLOT_BIN=$build/bin/allot
fi
export ALLOT_BIN=${ALLOT_BIN:-$root/build/release/bin/allot}
if [[ ! -x $ALLOT_BIN ]]; then
  echo "bench-slurm: no $ALLOT_BIN (cmake --preset release && cmake --build --preset release)" >&2
  exit 1
fi
export ALLOT_SLURM_DIR=${ALLOT_BENCH_SLURM_DIR:-/tmp/allot-slurm-bench}
export ALLOT_SLURM_CTLD_PORT=${ALLOT_BENCH_SLURM_CTLD_PORT:-18817}
export ALLOT_SLURM_SLURMD_PORT0=${ALLOT_BENCH_SLURM_SLURMD_PORT0:-18901}
export ALLOT_SLURM_SRUN_PORTS=${ALLOT_BENCH_SLURM_SRUN_PORTS:-62001-62999}
unset ALLOT_SLURM_MODE ALLOT_TEST_EXECUTOR
exec "$root/scripts/python-with-boto3" "$root/bench/slurm/bench_slurm.py" "$@"
