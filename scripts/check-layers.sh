#!/usr/bin/env bash
# The link graph is the layering, and this check keeps the sources honest: common/ includes only
# common/, model/ only model/ and common/, engine/ only engine/, model/ and common/; none of them
# may include headers for threads, clocks, files or randomness, or call such functions. The
# engine must stay pure: no clock reads, no I/O, no threads. sim/ may use only sim/, engine/,
# model/ and common/ under the same rules (it reads and writes streams the caller opens).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
forbidden_headers='<(thread|chrono|filesystem|fstream|iostream|random|mutex|atomic|future|ctime|condition_variable|sys/.*|unistd\.h)>'
forbidden_calls='std::chrono|random_device|std::thread|getenv|fopen|std::cout|std::cerr|\btime\(|\brand\(|clock_gettime'
check() {  # folder, allowed project folders (regex)
  local folder=$1 allowed=$2
  while IFS= read -r line; do
    echo "layering: $line"
    status=1
  done < <(
    grep -HnE '^#include "' "$root/src/$folder"/*.{h,cc} 2>/dev/null | grep -vE "#include \"($allowed)/"
    grep -HnE "^#include $forbidden_headers" "$root/src/$folder"/*.{h,cc} 2>/dev/null
    grep -HnE "$forbidden_calls" "$root/src/$folder"/*.{h,cc} 2>/dev/null
  )
}
check common 'common'
check model 'model|common'
check engine 'engine|model|common'
# The simulator is a driver, but a deterministic one: streams in and out, no clock, no threads.
check sim 'sim|engine|model|common'
# The IAM policy language is pure too: policies and a request in, a decision out.
check auth 'auth|common'
# The wire layer (src/api) sits below the server: it decodes requests into the typed requests the
# controller takes and never sees the controller, the store or the executors. It may read files
# (the credentials file, the master key), so only its includes are checked.
while IFS= read -r line; do
  echo "layering: $line"
  status=1
done < <(grep -HnE '^#include "' "$root/src/api"/*.{h,cc} 2>/dev/null |
         grep -vE '#include "(api|model|common|env)/')
if [ $status -eq 0 ]; then
  echo "layering: common, model, engine, sim and auth are pure and layered; api is below server"
fi
exit $status
