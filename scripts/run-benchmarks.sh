#!/usr/bin/env bash
# Runs every benchmark of a release build and prints its figures: the engine benchmarks, then
# durable submissions over HTTP (`allot bench submit`, 16 clients) against a fresh server.
set -euo pipefail
build=${1:-build/release}
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(date -u +%Y-%m-%d)"
"$build/bench/engine_benchmark" --benchmark_counters_tabular=true

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
echo "durable submissions over HTTP, fresh server, then with 20k, 40k and 60k jobs already stored:"
for _ in 1 2 3 4; do
  "$build/bin/allot" bench submit --endpoint "http://127.0.0.1:$port" --clients 16 --jobs 20000 |
    tail -1
done
