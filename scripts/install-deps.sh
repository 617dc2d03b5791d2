#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, only those that are missing.
# With package names as arguments it installs those instead (scripts/install-fuzz-deps.sh).
set -euo pipefail
# libboost1.81-dev: the server's HTTP (Boost.Beast, header-only); the CLI's client is cpp-httplib.
packages=(build-essential cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev
          libcpp-httplib-dev libboost1.81-dev nlohmann-json3-dev libsqlite3-dev sqlite3 libssl-dev libspdlog-dev
          libfmt-dev libcli11-dev libyaml-cpp-dev pkg-config curl bubblewrap
          libseccomp-dev  # the jobs' system call filter (src/exec/syscall_filter.h)
          libgoogle-perftools-dev  # tcmalloc, the allocator of `allot` (src/env/malloc.h)
          lld  # links in a fifth of ld.bfd's time (cmake/linker.cmake)
          time  # /usr/bin/time: the simulator benchmarks report max RSS
          clang-format clang-tidy  # the format and tidy tests (tests/CMakeLists.txt)
          munge slurmctld slurmd slurm-client  # the Slurm test cluster (scripts/slurm-cluster.sh)
          prometheus)  # scrapes GET /metrics in tests/integration/test_prometheus.py
only_these=$#
[ $# -eq 0 ] || packages=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$only_these" -eq 0 ]; then
  # The integration tests drive the real boto3 and AWS CLI; Debian's packages serve where the
  # machine has none of its own.
  if ! python3 -c 'import boto3' 2>/dev/null && ! /usr/bin/python3 -c 'import boto3' 2>/dev/null; then
    missing+=(python3-boto3)
  fi
  command -v aws >/dev/null 2>&1 || missing+=(awscli)
  # The dashboard (web/) is bundled with npm at build time; a node of the machine's own serves.
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  # The dashboard's browser test (tests/ui) drives Debian's chromium headless.
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  # The CLI's tests read YAML with the same interpreter.
  if ! python3 -c 'import yaml' 2>/dev/null && ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
    missing+=(python3-yaml)
  fi
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
