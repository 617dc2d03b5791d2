#!/usr/bin/env bash
# Runs every benchmark of a release build and prints its figures: the engine benchmarks, the
# controller at 100k stored jobs, then durable submissions over HTTP (`allot bench submit`,
# 16 clients) against a fresh server.
set -euo pipefail
build=${1:-build/release}
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(date -u +%Y-%m-%d)"
"$build/bench/engine_benchmark" --benchmark_counters_tabular=true

# The controller at 1M stored jobs (issue 9, section 3): fill through the real controller,
# restart twice (time, records and bytes written, memory per stored job) and ListServiceJobs per
# filter. About 4 minutes and 1.5 GB on 2 cores.
"$build/bench/server_scale_benchmark" --jobs 1000000 --restarts 2

data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$build/bin/allot" server --data-dir "$data" --listen "127.0.0.1:$port" > "$data/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
export AWS_SHARED_CREDENTIALS_FILE=$data/credentials AWS_DEFAULT_REGION=local
# Client and server share the machine: each run also gives the CPU time each spent per
# submission (the server's from /proc/PID/stat, the client's from getrusage via /usr/bin/time),
# and the load average when it started (other work on the machine slows both).
echo "durable submissions over HTTP, fresh server, then with 20k, 40k and 60k jobs already stored"
echo "(16 clients, one connection each, driven by one thread with poll()):"
ticks=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
submit_run() {  # the bench's last line, with CPU per submission; arguments: --threads N
  local load before after user sys line
  load=$(cut -d' ' -f1 /proc/loadavg)
  before=$(server_ticks)
  line=$(/usr/bin/time -f "%U %S" -o "$data/client-time" "$build/bin/allot" bench submit \
    --endpoint "http://127.0.0.1:$port" --clients 16 --jobs 20000 "$@" | tail -1)
  after=$(server_ticks)
  read -r user sys < "$data/client-time"
  awk -v line="$line" -v t="$ticks" -v s=$((after - before)) -v u="$user" -v y="$sys" -v l="$load" \
    'BEGIN { printf "%s; CPU per submission: server %.0f us, client %.0f us (load %s)\n",
             line, s / t / 20000 * 1e6, (u + y) / 20000 * 1e6, l }'
}
for _ in 1 2 3 4; do submit_run --threads 1; done
echo "the same with a thread per client, blocked on its connection (--threads 0), for comparison:"
submit_run --threads 0

# The simulator (docs/sim.md): each line of `allot sim` on standard error gives the wall time of
# one policy's replay. The Philly trace lives beside the repository (../shared/data/traces); the
# 1M-job trace and the Kueue baseline are generated from examples/sim/.
root=$(cd "$(dirname "$0")/.." && pwd)
traces=${ALLOT_TRACES:-$root/../shared/data/traces}
echo "simulator: Kueue scheduler-performance baseline (15,000 workloads), 3 runs:"
for _ in 1 2 3; do "$build/bin/allot" sim --format kueue-baseline -q; done
if [ -f "$traces/philly-pollux/philly.csv" ]; then
  echo "simulator: Philly (82,247 jobs), 1x and 6x arrival rate:"
  for c in 1 6; do
    /usr/bin/time -f "  whole command: %e s, max RSS %M KB" "$build/bin/allot" sim --format philly \
      --trace "$traces/philly-pollux/philly.csv" \
      --vc-config "$traces/philly-vc-config/philly_vc.csv" --compress $c -q
  done
else
  echo "simulator: Philly trace not found under $traces (set ALLOT_TRACES); skipped"
fi
echo "simulator: 1,000,000 jobs, 20 shares (examples/sim/scale-1m.yaml):"
/usr/bin/time -f "  whole command: %e s, max RSS %M KB" "$build/bin/allot" sim \
  --format kueue-baseline --trace "$root/examples/sim/scale-1m.yaml" -q

# Allot on Slurm (issue 11): reclaim latency beside Slurm's own preemption, dispatch overhead, and
# throughput with 1,000 waiting jobs beside plain sbatch, on a Slurm test cluster of the bench's
# own (scripts/bench-slurm.sh, about 8 minutes). Only where the Slurm packages are installed or
# can be (the cluster's daemons run as root; scripts/slurm-cluster.sh installs them with apt-get).
slurm_ready=1
for p in munge slurmctld slurmd slurm-client; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || slurm_ready=0
done
if [ "$(id -u)" -eq 0 ] && { [ "$slurm_ready" = 1 ] || command -v apt-get >/dev/null; }; then
  echo "Allot on Slurm (scripts/bench-slurm.sh):"
  "$root/scripts/bench-slurm.sh" "$build"
else
  echo "Allot on Slurm: skipped (needs root, and the Slurm packages or apt-get to install them)"
fi
