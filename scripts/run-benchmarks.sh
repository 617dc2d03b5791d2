#!/usr/bin/env bash
# Runs every benchmark program of a release build and prints its figures.
set -euo pipefail
build=${1:-build/release}
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(date -u +%Y-%m-%d)"
"$build/bench/engine_benchmark" --benchmark_counters_tabular=true "${@:2}"
