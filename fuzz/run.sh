#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets of fuzz/ with clang (-fsanitize=fuzzer,address,undefined)
# and runs each for FUZZ_SECONDS (default 60), starting from its seeds in fuzz/corpus/<target>/.
# Inputs the fuzzer finds interesting go to build/fuzz/corpus/<target>/ (not checked in);
# crashes and broken properties go to build/fuzz/findings/<target>/ and fail the run (the previous
# run's are kept in build/fuzz/findings/<target>.previous/).
# Settings: FUZZ_SECONDS, FUZZ_TARGETS (default "sigv4 wire_json payload decode"), FUZZ_BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-sigv4 wire_json payload decode}
build=${FUZZ_BUILD_DIR:-build/fuzz}
cxx=${FUZZ_CXX:-clang++}

if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    "$cxx" -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "fuzz: $cxx cannot link libFuzzer; run scripts/install-fuzz-deps.sh (clang, libclang-rt-dev)" >&2
  exit 1
fi

cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" -j2 --target $(for t in $targets; do printf '%s_fuzz ' "$t"; done)

status=0
summary=""
for t in $targets; do
  rm -rf "$build/findings/$t.previous"
  [ -d "$build/findings/$t" ] && mv "$build/findings/$t" "$build/findings/$t.previous"
  mkdir -p "$build/corpus/$t" "$build/findings/$t"
  log="$build/$t.log"
  echo "== $t: ${seconds}s, log $log"
  rc=0
  "$build/${t}_fuzz" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$build/findings/$t/" \
      "$build/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  findings=$(find "$build/findings/$t" -type f | wc -l)
  line="$t: ${execs:-?} executions, ${cov:-cov: ?}, ${added:-?} new inputs"
  line+=" ($(ls "$build/corpus/$t" | wc -l) kept), $findings findings (exit $rc)"
  echo "$line"
  summary+="$line"$'\n'
  if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
    status=1
    grep -E 'FINDING|ERROR: (libFuzzer|AddressSanitizer|UndefinedBehaviorSanitizer)|runtime error|SUMMARY' \
        "$log" | head -5 || true
  fi
done
echo "== fuzz summary"
printf '%s' "$summary"
exit $status
