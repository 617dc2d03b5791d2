#!/usr/bin/env bash
# clang-tidy over every src/**/*.cc with the repository's .clang-tidy (WarningsAsErrors: '*').
# Usage: scripts/check-tidy.sh BUILD_DIR   (BUILD_DIR holds compile_commands.json)
# Fails on any finding. TIDY_JOBS sets the parallelism (default 2).
set -euo pipefail

build_dir=${1:?usage: check-tidy.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(cd "$build_dir" && pwd)
cd "$root"

if [[ ! -f "$build_dir/compile_commands.json" ]]; then
  echo "check-tidy: $build_dir/compile_commands.json is missing (configure with" \
       "CMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
fi
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [[ -z "$tidy" ]]; then
  echo "check-tidy: clang-tidy (14) is not installed" >&2
  exit 2
fi

mapfile -t files < <(find src -name '*.cc' | sort)
echo "check-tidy: $tidy on ${#files[@]} files with -p $build_dir"
start=$(date +%s)
status=0
printf '%s\0' "${files[@]}" |
  xargs -0 -n 1 -P "${TIDY_JOBS:-2}" "$tidy" -p "$build_dir" --quiet || status=$?
echo "check-tidy: $(( $(date +%s) - start ))s"
if (( status != 0 )); then
  echo "check-tidy: FAILED (findings above)" >&2
  exit 1
fi
echo "check-tidy: no findings"
